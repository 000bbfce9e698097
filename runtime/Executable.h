// An executable: everything needed to run a compiled graph without the
// compiler, on the device it was built for (cpu or cuda), as plain data that
// serialises to a self-checking byte string. Layout: header (magic, format
// version, payload length, zlib crc32 of the payload), then the payload:
// device, compiler version, target and features, signature, buffer plan,
// GEMM precision, thunk list and the kernel library.
#ifndef KILN_RUNTIME_EXECUTABLE_H
#define KILN_RUNTIME_EXECUTABLE_H

#include "runtime/Program.h"

#include "absl/status/statusor.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::runtime {

/// The alignment of every arena slot's offset, which the loader checks:
/// kernels may access a slot in 16-byte vectors (the CUDA code generator
/// declares its buffers 16-byte aligned).
inline constexpr uint64_t kSlotAlignment = 64;

/// Where a value lives while the program runs: a caller's input buffer, a
/// range of the executable's arena, or the buffer returned as an output
/// (a donated input's, or one allocated for the run).
struct BufferSlot {
  enum class Kind : uint8_t { input, arena, output };
  Kind kind = Kind::arena;
  uint32_t input = 0;  // Kind::input / Kind::output: the position
  uint64_t offset = 0; // Kind::arena: byte offset, kSlotAlignment-aligned
  uint64_t bytes = 0;
};

/// A constant's bytes, copied into its arena slot once when loading.
struct ConstantInit {
  uint32_t slot = 0;
  std::string bytes;
};

/// Slots of every value. Arena slots of values whose lifetimes (see
/// BufferLiveness.h) do not intersect may share bytes; the compiler's
/// memory planner decides the offsets.
struct BufferPlan {
  uint64_t arenaBytes = 0;
  std::vector<BufferSlot> slots;
  std::vector<ConstantInit> constants;
  std::vector<uint32_t> outputSlots;
  /// Per output with an output slot: the donated input whose buffer it is
  /// written into (in place: only its producing elementwise kernel reads
  /// that input), or -1 for a fresh buffer.
  std::vector<int32_t> outputDonors;
};

/// A kernel call over the index space [0, rangeSize). On cpu:
/// `symbol(void **slotPointers, int64 begin, int64 end)` over ranges of it,
/// split over threads when `splittable`. On cuda: the kernel `symbol` with
/// one pointer parameter per slot (`slots` in order: operands, results),
/// then int64 rangeSize, launched with one thread per index (blocks of
/// kCudaBlockSize threads). Every kernel kiln emits is splittable. `slots` lists the
/// operands' slots, then the last `numResults` entries are the results'.
struct KernelThunk {
  std::string symbol;
  /// What the kernel computes, for people: its op (a fusion lists the ops
  /// inside) and the operand and result types, e.g. "fusion{sub, exp,
  /// reduce_sum, div} (tensor<8x64xf32>) -> tensor<8x64xf32>". Launch
  /// errors and profiles name kernels by it; nothing runs from it.
  std::string label;
  std::vector<uint32_t> slots;
  uint32_t numResults = 1;
  /// Operand positions (indices into `slots`) read strictly elementwise: a
  /// result of the same size may share such an operand's buffer when the
  /// operand dies here (every element is read before it is overwritten).
  std::vector<uint32_t> inPlaceOperands;
  int64_t rangeSize = 0;
  bool splittable = true;
  /// Rough work per index (e.g. a reduction's length), to size the split.
  int64_t workPerIndex = 1;
};

/// The element type of a GEMM's operands. bf16 and f16 inputs (mixed precision)
/// multiply exactly and accumulate in f32, whatever C's type.
enum class GemmType : uint8_t { f32, bf16, f16 };
std::string_view gemmTypeName(GemmType type);
/// Bytes of one element.
inline uint64_t gemmTypeBytes(GemmType type) {
  return type == GemmType::f32 ? 4 : 2;
}

/// Where a GEMM operand's matrices lie in its slot: matrix b (b < batch)
/// starts `offset + b * batchStride` elements in, each one dense and
/// row-major. The default is the slot packed from its start (batchStride 0
/// stands for the matrix's own size); a slice of a larger buffer, such as
/// one chunk of attention's query rows from [B, H, S, D], is read in place
/// (offset: the chunk's first row; batchStride: S * D).
struct GemmOperandView {
  int64_t offset = 0, batchStride = 0;
  bool packed() const { return offset == 0 && batchStride == 0; }
};

/// C[b] = op(A[b]) * op(B[b]) (+ ACC[b]), row-major, for b < batch: A[b]
/// is the m*k (k*m with transA) matrix aView places, B[b] the k*n (n*k)
/// one bView places, C[b] the m*n one cView places. A and B are of
/// `input`, C of `output`: f32 → f32, bf16 → f32 or bf16, f16 → f32 or f16
/// (the sum rounded once).
struct GemmThunk {
  uint32_t a = 0, b = 0, c = 0;
  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool transA = false, transB = false;
  GemmType input = GemmType::f32, output = GemmType::f32;
  GemmOperandView aView, bView;
  /// Where C's matrices lie in C's slot and in the accumulator's, which
  /// then hold batch * cBatchStride() elements each: a product added into
  /// a block of rows of a larger sum (a `kiln.fusion gemm` whose product
  /// is padded with zeros along its rows, docs/IR.md §4). Elements outside
  /// the matrices are the accumulator's, copied when C is not its slot.
  /// Only an accumulating thunk has one.
  GemmOperandView cView;
  /// Elements from one A (B, C) matrix to the next.
  int64_t aBatchStride() const {
    return aView.batchStride ? aView.batchStride : m * k;
  }
  int64_t bBatchStride() const {
    return bView.batchStride ? bView.batchStride : k * n;
  }
  int64_t cBatchStride() const {
    return cView.batchStride ? cView.batchStride : m * n;
  }
  /// The elements of C's slot the thunk defines (and of the accumulator's
  /// it reads): every matrix, and between them what cView leaves out.
  int64_t cElements() const { return batch * cBatchStride(); }
  /// Bytes from the start of A's (B's) slot to its first matrix.
  uint64_t aByteOffset() const { return aView.offset * gemmTypeBytes(input); }
  uint64_t bByteOffset() const { return bView.offset * gemmTypeBytes(input); }
  uint64_t cByteOffset() const { return cView.offset * gemmTypeBytes(output); }
  /// kNoSlot, or an f32 buffer laid out as C's slot (cView included)
  /// added to the product as the library stores it (beta = 1: a
  /// `kiln.fusion gemm`'s add, docs/IR.md §4). It may be C's own slot:
  /// each element of C reads only the same element of ACC, so C may be
  /// written over an ACC that dies here.
  uint32_t accumulator = 0xFFFFFFFFu;
  bool accumulates() const { return accumulator != 0xFFFFFFFFu; }
};

/// dst = src, byte for byte.
struct CopyThunk {
  uint32_t src = 0, dst = 0;
  uint64_t bytes = 0;
};

/// A slot field a thunk leaves unused.
inline constexpr uint32_t kNoSlot = 0xFFFFFFFFu;

/// kiln.fused_attention (forward: query, key, value [, rng] → result,
/// rowStats) or kiln.fused_attention_grad (query, key, value, result,
/// rowStats, resultGrad [, rng] → queryGrad, keyGrad, valueGrad) on bf16 or
/// f16 tensors (rowStats f32 [B, H, T]), run whole by a backend's attention
/// kernel (cuda: flash attention); docs/IR.md §2.11 is the semantics.
/// result and rowStats are the forward's results and the gradient's
/// operands. Unused slots are kNoSlot.
struct AttentionThunk {
  bool gradient = false;
  uint32_t query = kNoSlot, key = kNoSlot, value = kNoSlot,
           resultGrad = kNoSlot, rngState = kNoSlot;
  uint32_t result = kNoSlot, rowStats = kNoSlot, queryGrad = kNoSlot,
           keyGrad = kNoSlot, valueGrad = kNoSlot;
  GemmType element = GemmType::bf16;
  int64_t batch = 0, heads = 0, kvHeads = 0, queries = 0, keys = 0,
          headDim = 0;
  double scale = 1, dropout = 0;
  bool causal = false;
  /// Causal only: query i sees keys (i - window, i]; 0: all keys up to i.
  int64_t window = 0;
  /// The slots it reads, then the slots it writes (kNoSlot left out).
  std::vector<uint32_t> readSlots() const;
  std::vector<uint32_t> writtenSlots() const;
  /// For people (profiles, errors, kilnc): e.g. "attention bf16 16x12x512x64
  /// (kv heads 12, keys 512) causal dropout 0.1" or "attention_grad ...".
  std::string label() const;
  /// The model's products: 2 (forward) or 4 (gradient) of 2·D flops per
  /// head and visible (query, key) pair: T·S, about half when causal, fewer
  /// with a window.
  double flops() const;
};

/// kiln.all_reduce: dst = src summed over the processes of the run
/// (support/Collectives.h), `count` elements of `element` (f32, f64, i32
/// or i64). src and dst may be one buffer (then the sum is in place).
struct AllReduceThunk {
  uint32_t src = 0, dst = 0;
  DType element = DType::f32;
  int64_t count = 0;
  uint64_t bytes() const { return uint64_t(count) * byteWidth(element); }
};

struct Thunk {
  enum class Kind : uint8_t { kernel, gemm, copy, attention, allReduce };
  Kind kind = Kind::kernel;
  KernelThunk kernel;
  GemmThunk gemm;
  CopyThunk copy;
  AttentionThunk attention;
  AllReduceThunk allReduce;
};

/// The device an executable's kernels run on.
enum class Device : uint8_t { cpu, cuda };
std::string_view deviceName(Device device);

/// Threads per block of a splittable kernel launched on cuda.
inline constexpr int kCudaBlockSize = 256;

/// Whether slots `a` and `b` of `plan` are one buffer: the same slot, or
/// arena slots the planner gave the same bytes (an in-place result).
inline bool sameBuffer(const BufferPlan &plan, uint32_t a, uint32_t b) {
  const BufferSlot &x = plan.slots[a], &y = plan.slots[b];
  return a == b || (x.kind == BufferSlot::Kind::arena &&
                    y.kind == BufferSlot::Kind::arena && x.offset == y.offset);
}

struct Executable {
  Device device = Device::cpu;
  std::string compilerVersion;
  /// cpu: the host CPU and its "+feature,..." string the kernels need.
  /// cuda: the GPU architecture ("sm_90") and the PTX ISA ("+ptx80").
  std::string targetCpu, targetFeatures;
  ProgramSignature signature;
  BufferPlan plan;
  /// cuda: f32 GEMMs may round their inputs to TF32 (--tf32); exact f32
  /// otherwise, as PyTorch's default.
  bool allowTf32 = false;
  std::vector<Thunk> thunks;
  /// The kernels. cpu: one ELF shared object. cuda: a cubin for targetCpu
  /// (when ptxas was found at compile time) or PTX text the driver compiles.
  std::string kernelLibrary;
};

inline constexpr uint32_t kExecutableFormatVersion = 13;

/// executable → bytes (header + checksummed payload).
std::string serializeExecutable(const Executable &executable);

/// bytes → executable. Refuses a wrong magic or version, a truncated or
/// altered payload (checksum), and any inconsistent field, with a message
/// that says which; never returns a partly read executable.
absl::StatusOr<Executable> deserializeExecutable(std::string_view bytes);

/// Checks internal consistency: slot indices, arena ranges, signature sizes.
absl::Status validateExecutable(const Executable &executable);

} // namespace kiln::runtime

#endif // KILN_RUNTIME_EXECUTABLE_H
