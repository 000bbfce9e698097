// Test cases for kiln's flash attention kernels, shared by the host run
// (FlashAttentionHostTest) and the GPU run (CudaFlashAttentionTest): the
// attention and gradient modules of a shape, their inputs, the tolerances
// and the error measure.
//
// Tolerances, as the worst |error| over a result relative to the RMS of
// the reference's: the reference takes the same inputs, computes in double
// and rounds each result once. The f32 twin (the same kernel bodies with
// float elements: nothing rounded to 16 bits) is held to 1e-4 and measures
// 1e-6 to 8e-6 here, 3.1e-5 for the gradient at seq 512 (its delta is
// dO · O, the forward kernel's f32 output, whose own error it carries):
// that checks the algorithm (tiles, online softmax, masks, dropout,
// grouped heads, the forward's log-sum-exps) at f32 precision. The 16-bit kernels also
// round the probabilities and dS to the input type before their products
// (as FlashAttention does), and dS = p (dP - delta) cancels. In units of
// rounding of the type (2^-8 for bf16, 2^-11 for f16) the measure grows
// with the sequence under a causal mask: the first rows average few keys
// and have the largest results, while the RMS falls as the rows average
// more (about as sqrt(ln S / S)). Measured: 7.8 units forward and 9 to 16 for
// the gradients at seq 70 with dropout, 16.6 and 32.9 at seq 512 (GPT-2's
// length) in both types, the same to three digits on the host run and on
// an H100 (docs/GPU.md, run 9), so the tolerances are 24 units forward and
// 48 for the gradients.
#ifndef KILN_TESTS_UNIT_FLASHATTENTIONCASES_H
#define KILN_TESTS_UNIT_FLASHATTENTIONCASES_H

#include "CpuTestSupport.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace kiln::testing {

constexpr double kF32Tolerance = 1e-4;
constexpr double kForwardUnits = 24, kGradientUnits = 48;

inline double tolerance(DType element, bool grad) {
  double unit = element == DType::bf16  ? 1.0 / 256
                : element == DType::f16 ? 1.0 / 2048
                                        : 0;
  return element == DType::f32 ? kF32Tolerance
                               : unit * (grad ? kGradientUnits : kForwardUnits);
}

struct FlashCase {
  int64_t batch = 2, heads = 4, kvHeads = 2, queries = 70, keys = 70,
          headDim = 64;
  bool causal = true;
  int64_t window = 0; // causal only: query i sees keys (i - window, i]
  double dropout = 0;
  double scale = 0.125;
  DType element = DType::bf16;

  std::string name() const {
    return llvm::formatv("{0} B{1} H{2}/{3} T{4} S{5} D{6}{7}{8} dropout {9}",
                         dtypeName(element), batch, heads, kvHeads, queries,
                         keys, headDim, causal ? " causal" : "",
                         window > 0 ? " window " + std::to_string(window) : "",
                         dropout);
  }
  std::string type(int64_t h, int64_t rows) const {
    return llvm::formatv("tensor<{0}x{1}x{2}x{3}x{4}>", batch, h, rows,
                         headDim, dtypeName(element));
  }
  std::string attrs() const {
    // std::to_string: formatv would print a double with two decimals.
    return llvm::formatv(
        "{{{0}dropout = {1} : f64, scale = {2} : f64{3}}",
        causal ? "causal, " : "", std::to_string(dropout),
        std::to_string(scale),
        window > 0 ? ", window = " + std::to_string(window) + " : i64" : "");
  }
  std::string rng() const { return dropout > 0 ? ", rng = %s" : ""; }
  std::string rngType() const { return dropout > 0 ? ", tensor<2xi64>" : ""; }
  std::string statsType() const {
    return llvm::formatv("tensor<{0}x{1}x{2}xf32>", batch, heads, queries);
  }
  /// The result and the row statistics.
  std::string forwardModule() const {
    std::string q = type(heads, queries), kv = type(kvHeads, keys);
    return llvm::formatv(
        R"(func.func @main(%q: {0}, %k: {1}, %v: {1}, %s: tensor<2xi64>) -> ({0}, {5}) {
  %o, %l = kiln.fused_attention %q, %k, %v{2} {3} : {0}, {1}, {1}{4} -> {0}, {5}
  return %o, %l : {0}, {5}
})",
        q, kv, rng(), attrs(), rngType(), statsType());
  }
  /// The gradient reads the forward's results, as in a training step.
  std::string gradModule() const {
    std::string q = type(heads, queries), kv = type(kvHeads, keys);
    return llvm::formatv(
        R"(func.func @main(%q: {0}, %k: {1}, %v: {1}, %g: {0}, %s: tensor<2xi64>) -> ({0}, {1}, {1}) {
  %o, %l = kiln.fused_attention %q, %k, %v{2} {3} : {0}, {1}, {1}{4} -> {0}, {5}
  %dq, %dk, %dv = kiln.fused_attention_grad %q, %k, %v, %o, %l, %g{2} {3} : {0}, {1}, {1}, {0}, {5}, {0}{4} -> {0}, {1}, {1}
  return %dq, %dk, %dv : {0}, {1}, {1}
})",
        q, kv, rng(), attrs(), rngType(), statsType());
  }
  /// q, k, v, dO, rng state.
  std::vector<HostTensor> inputs(uint32_t seed) const {
    std::mt19937 rng(seed);
    std::vector<HostTensor> in;
    in.push_back(randomTensor(element, {batch, heads, queries, headDim},
                                       rng, 2, false));
    for (int i = 0; i < 2; ++i)
      in.push_back(randomTensor(
          element, {batch, kvHeads, keys, headDim}, rng, 2, false));
    in.push_back(randomTensor(element, {batch, heads, queries, headDim},
                                       rng, 1, false));
    HostTensor state(DType::i64, {2});
    state.setInt(0, 0x1234567890ll + seed);
    state.setInt(1, 77);
    in.push_back(state);
    return in;
  }
};

/// max |got - want| / RMS(want).
inline double relativeError(const HostTensor &got, const HostTensor &want) {
  double sq = 0, worst = 0;
  for (int64_t i = 0; i < want.numElements(); ++i) {
    sq += want.getDouble(i) * want.getDouble(i);
    double d = std::abs(got.getDouble(i) - want.getDouble(i));
    worst = std::isnan(d) ? INFINITY : std::max(worst, d);
  }
  double rms = std::sqrt(sq / std::max<int64_t>(1, want.numElements()));
  return worst / std::max(rms, 1e-30);
}

/// The reference evaluator's results for `c` on `in` (FlashCase::inputs):
/// {o, row stats}, or {dq, dk, dv} for the gradient; empty when the module does not
/// parse.
inline std::vector<HostTensor> referenceResults(const FlashCase &c,
                                                std::vector<HostTensor> in,
                                                bool grad) {
  ParsedModule module = parseModule(grad ? c.gradModule() : c.forwardModule());
  EXPECT_TRUE(module.module) << c.name();
  if (!module.module)
    return {};
  if (!grad)
    in.erase(in.begin() + 3); // no result gradient
  return evaluateMain(*module.module, in);
}

/// The largest relativeError over matching results (infinite when the
/// counts differ).
inline double worstRelativeError(const std::vector<HostTensor> &got,
                                 const std::vector<HostTensor> &want) {
  EXPECT_EQ(got.size(), want.size());
  if (got.size() != want.size() || got.empty())
    return INFINITY;
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i)
    worst = std::max(worst, relativeError(got[i], want[i]));
  return worst;
}

/// A program made from an executable (loaded on one device or another).
using ExecutableLoader =
    std::function<absl::StatusOr<std::unique_ptr<runtime::Program>>(
        runtime::Executable)>;

/// Case `c` forward or backward compiled with `pipeline` for `target`,
/// loaded by `load` and run on c.inputs(seed), against the reference:
/// the worst relativeError, after checking that the ops reached the
/// backend whole (an attention thunk each). Infinite on any failure.
inline double compiledError(const FlashCase &c, bool grad, uint32_t seed,
                            const PipelineOptions &pipeline,
                            const compiler::cpu::KernelTarget &target,
                            const ExecutableLoader &load) {
  std::vector<HostTensor> in = c.inputs(seed);
  std::vector<HostTensor> want = referenceResults(c, in, grad);
  if (!grad)
    in.erase(in.begin() + 3);
  ParsedModule parsed = parseModule(grad ? c.gradModule() : c.forwardModule());
  EXPECT_TRUE(parsed.module);
  if (!parsed.module)
    return INFINITY;
  absl::StatusOr<runtime::Executable> exe = compiler::cpu::compileExecutable(
      *parsed.module, "main", nullptr, pipeline, target);
  EXPECT_TRUE(exe.ok()) << exe.status();
  if (!exe.ok())
    return INFINITY;
  int attention = 0;
  for (const runtime::Thunk &t : exe->thunks)
    attention += t.kind == runtime::Thunk::Kind::attention;
  EXPECT_EQ(attention, grad ? 2 : 1);
  absl::StatusOr<std::unique_ptr<runtime::Program>> program =
      load(*std::move(exe));
  EXPECT_TRUE(program.ok()) << program.status();
  if (!program.ok())
    return INFINITY;
  absl::StatusOr<std::vector<HostTensor>> got =
      (*program)->run(runtime::borrowAll(in));
  EXPECT_TRUE(got.ok()) << got.status();
  return got.ok() ? worstRelativeError(*got, want) : INFINITY;
}

} // namespace kiln::testing

#endif // KILN_TESTS_UNIT_FLASHATTENTIONCASES_H
