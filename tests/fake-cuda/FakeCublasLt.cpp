// libkiln-fake-cublaslt.so: the subset of cuBLASLt kiln's GEMMs use,
// computed on the host so the CUDA runtime's GEMM path can be checked
// numerically without a GPU. Semantics follow cuBLASLt: D = alpha · op(A) ·
// op(B) + beta · C, each layout describing its matrix as stored (before
// the op), column-major unless CUBLASLT_MATRIX_LAYOUT_ORDER says
// CUBLASLT_ORDER_ROW, leading dimension per order, strided batches
// (BATCH_COUNT, STRIDED_BATCH_OFFSET in elements), host-pointer alpha and
// beta, f32 A and B into f32 C and D, or bf16 (f16) A and B into f32 or
// bf16 (f16) C and D (C and D alike; a 16-bit D is the double sum rounded
// once). Anything
// outside that subset (other types, orders, ops, pointer
// modes, attributes, unequal batch counts, empty sizes) is refused with
// CUBLAS_STATUS_NOT_SUPPORTED, and inconsistent shapes, pointers outside
// device allocations, misalignment against the preference the algorithm
// was chosen with, or a short workspace with CUBLAS_STATUS_INVALID_VALUE:
// a mismatch shows as an error, never as silently wrong numbers.
// CUBLAS_COMPUTE_32F_FAST_TF32 rounds the inputs to TF32 as the hardware
// does; products accumulate in double. Work goes through the fake driver's
// stream (fake_cuda_stream_enqueue), so it is captured into graphs and
// replayed like kernels.
#include "tests/fake-cuda/FakeCuda.h"

#include <cublasLt.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>

namespace {

struct FakeDesc {
  int32_t compute = 0, scale = CUDA_R_32F;
  int32_t pointerMode = CUBLASLT_POINTER_MODE_HOST;
  int32_t transA = CUBLAS_OP_N, transB = CUBLAS_OP_N;
};
struct FakeLayout {
  uint32_t type = CUDA_R_32F;
  int32_t order = CUBLASLT_ORDER_COL;
  uint64_t rows = 0, cols = 0;
  int64_t ld = 0;
  int32_t batch = 1;
  int64_t stride = 0;
};
struct FakePreference {
  uint64_t maxWorkspace = 0;
  uint32_t alignment[4] = {256, 256, 256, 256}; // A, B, C, D
};
struct FakeHandle {};

/// What a heuristic result's algo carries.
constexpr uint64_t kAlgoMagic = 0x6b696c6e414c474full;
/// The workspace the fake "needs" when the preference allows it, so the
/// caller's workspace bookkeeping is exercised.
constexpr uint64_t kWorkspaceNeed = 4096;

struct State {
  std::mutex mutex;
  std::map<std::string, int> calls;
  std::map<std::string, cublasStatus_t> faults;
  std::set<const void *> live;
  int lastComputeType = -1;
  std::atomic<int> executed{0};
};

State &state() {
  static State *s = new State();
  return *s;
}

/// Counts the call and applies a pending fault; the caller holds the lock.
cublasStatus_t enter(const char *name) {
  State &s = state();
  ++s.calls[name];
  auto fault = s.faults.find(name);
  if (fault == s.faults.end())
    return CUBLAS_STATUS_SUCCESS;
  cublasStatus_t status = fault->second;
  s.faults.erase(fault);
  return status;
}

#define FAKE_ENTER(name)                                                       \
  std::lock_guard<std::mutex> lock(state().mutex);                             \
  if (cublasStatus_t entered = enter(name); entered != CUBLAS_STATUS_SUCCESS)  \
    return entered;

template <typename T> T *known(const void *object) {
  return state().live.count(object)
             ? static_cast<T *>(const_cast<void *>(object))
             : nullptr;
}

template <typename Out, typename T> Out *create(T *object) {
  state().live.insert(object);
  return reinterpret_cast<Out *>(object);
}

template <typename T> cublasStatus_t destroy(const void *object) {
  T *fake = known<T>(object);
  if (!fake)
    return CUBLAS_STATUS_INVALID_VALUE;
  state().live.erase(object);
  delete fake;
  return CUBLAS_STATUS_SUCCESS;
}

/// Copies an attribute value of exactly sizeof(T) bytes.
template <typename T>
cublasStatus_t readAttribute(T &target, const void *buf, size_t bytes) {
  if (!buf || bytes != sizeof(T))
    return CUBLAS_STATUS_INVALID_VALUE;
  std::memcpy(&target, buf, sizeof(T));
  return CUBLAS_STATUS_SUCCESS;
}

/// One checked problem: the layouts' shapes agree with the ops.
struct Problem {
  FakeDesc desc;
  FakeLayout a, b, c, d;
  uint64_t m = 0, n = 0, k = 0;
};

bool layoutSupported(const FakeLayout &l) {
  return (l.type == CUDA_R_32F || l.type == CUDA_R_16BF ||
          l.type == CUDA_R_16F) &&
         (l.order == CUBLASLT_ORDER_COL || l.order == CUBLASLT_ORDER_ROW);
}

uint64_t elementBytes(const FakeLayout &l) {
  return l.type == CUDA_R_32F ? 4 : 2;
}

bool leadingDimensionFits(const FakeLayout &l) {
  uint64_t minimum = l.order == CUBLASLT_ORDER_COL ? l.rows : l.cols;
  return l.ld >= 1 && uint64_t(l.ld) >= minimum;
}

cublasStatus_t checkProblem(const FakeDesc &desc, const FakeLayout &a,
                            const FakeLayout &b, const FakeLayout &c,
                            const FakeLayout &d, Problem &p) {
  if ((desc.compute != CUBLAS_COMPUTE_32F &&
       desc.compute != CUBLAS_COMPUTE_32F_FAST_TF32) ||
      desc.scale != CUDA_R_32F ||
      desc.pointerMode != CUBLASLT_POINTER_MODE_HOST ||
      (desc.transA != CUBLAS_OP_N && desc.transA != CUBLAS_OP_T) ||
      (desc.transB != CUBLAS_OP_N && desc.transB != CUBLAS_OP_T))
    return CUBLAS_STATUS_NOT_SUPPORTED;
  for (const FakeLayout *l : {&a, &b, &c, &d})
    if (!layoutSupported(*l) || l->batch != a.batch || l->batch < 1 ||
        l->rows == 0 || l->cols == 0)
      return CUBLAS_STATUS_NOT_SUPPORTED;
  // bf16 and f16 only as both inputs, with exact f32 compute; 16-bit
  // results only from inputs of the same type.
  if (a.type != b.type || c.type != d.type ||
      (d.type != CUDA_R_32F && d.type != a.type) ||
      (a.type != CUDA_R_32F && desc.compute != CUBLAS_COMPUTE_32F))
    return CUBLAS_STATUS_NOT_SUPPORTED;
  for (const FakeLayout *l : {&a, &b, &c, &d})
    if (!leadingDimensionFits(*l) || l->stride < 0)
      return CUBLAS_STATUS_INVALID_VALUE;
  bool ta = desc.transA == CUBLAS_OP_T, tb = desc.transB == CUBLAS_OP_T;
  p.m = ta ? a.cols : a.rows;
  p.k = ta ? a.rows : a.cols;
  uint64_t kB = tb ? b.cols : b.rows;
  p.n = tb ? b.rows : b.cols;
  if (kB != p.k || c.rows != p.m || c.cols != p.n || d.rows != p.m ||
      d.cols != p.n || c.order != d.order || c.ld != d.ld)
    return CUBLAS_STATUS_INVALID_VALUE;
  p.desc = desc;
  p.a = a;
  p.b = b;
  p.c = c;
  p.d = d;
  return CUBLAS_STATUS_SUCCESS;
}

/// Elements a batched matrix spans from its base.
uint64_t extentElements(const FakeLayout &l) {
  uint64_t one = l.order == CUBLASLT_ORDER_COL ? (l.cols - 1) * l.ld + l.rows
                                               : (l.rows - 1) * l.ld + l.cols;
  return one + uint64_t(l.batch - 1) * uint64_t(l.stride);
}

bool aligned(const void *pointer, const FakeLayout &l, uint64_t alignment) {
  uint64_t bits = reinterpret_cast<uintptr_t>(pointer);
  if (l.batch > 1)
    bits |= uint64_t(l.stride) * elementBytes(l);
  return alignment == 0 || bits % alignment == 0;
}

/// An IEEE binary16 value (exact in f32).
float f16Value(uint16_t bits) {
  int exponent = (bits >> 10) & 0x1F, fraction = bits & 0x3FF;
  double magnitude =
      exponent == 0    ? std::ldexp(fraction, -24)
      : exponent == 31 ? (fraction ? NAN : INFINITY)
                       : std::ldexp(1024 + fraction, exponent - 25);
  return static_cast<float>((bits & 0x8000) ? -magnitude : magnitude);
}

float element(const void *base, const FakeLayout &l, int64_t batch,
              uint64_t row, uint64_t col) {
  uint64_t at = batch * l.stride + (l.order == CUBLASLT_ORDER_COL
                                        ? row + col * l.ld
                                        : row * l.ld + col);
  if (l.type == CUDA_R_16BF) {
    // bf16 is the top half of an f32.
    uint32_t bits = uint32_t(static_cast<const uint16_t *>(base)[at]) << 16;
    float value;
    std::memcpy(&value, &bits, sizeof(value));
    return value;
  }
  if (l.type == CUDA_R_16F)
    return f16Value(static_cast<const uint16_t *>(base)[at]);
  return static_cast<const float *>(base)[at];
}

/// IEEE binary16 rounded once from `value` (to nearest even; subnormals,
/// overflow to infinity, NaN kept).
uint16_t roundToF16(double value) {
  uint16_t sign = std::signbit(value) ? 0x8000 : 0;
  double a = std::fabs(value);
  if (std::isnan(value))
    return 0x7E00;
  if (a >= 65520.0) // halfway between 65504 and 2^16 rounds to infinity
    return sign | 0x7C00;
  if (a < std::ldexp(1.0, -14)) // subnormal: multiples of 2^-24
    return sign | static_cast<uint16_t>(std::nearbyint(std::ldexp(a, 24)));
  int exponent = 0;
  std::frexp(a, &exponent); // a = m · 2^exponent, 0.5 <= m < 1
  int e = exponent - 1;     // a = 1.f · 2^e
  double significand = std::nearbyint(std::ldexp(a, 10 - e));
  if (significand == 2048.0)
    significand = 1024.0, ++e;
  return sign | static_cast<uint16_t>(((e + 15) << 10) |
                                      (static_cast<int>(significand) - 1024));
}

/// `value` rounded once to bf16 (8 significant bits, to nearest even; the
/// bf16 subnormal range is not needed here), NaN kept.
uint16_t roundToBf16(double value) {
  if (std::isnan(value))
    return 0x7FC0;
  int exponent = 0;
  double mantissa = std::frexp(value, &exponent); // 0.5 <= |m| < 1
  double rounded =
      std::ldexp(std::nearbyint(std::ldexp(mantissa, 8)), exponent - 8);
  float narrow = static_cast<float>(rounded); // exact: 8 bits
  uint32_t bits;
  std::memcpy(&bits, &narrow, sizeof(bits));
  return static_cast<uint16_t>(bits >> 16);
}

/// Stores `value` into D's element, rounded once to D's type (bf16: to
/// nearest even, NaN kept).
void storeElement(void *base, const FakeLayout &l, int64_t batch,
                  uint64_t row, uint64_t col, double value) {
  uint64_t at = batch * l.stride + (l.order == CUBLASLT_ORDER_COL
                                        ? row + col * l.ld
                                        : row * l.ld + col);
  if (l.type == CUDA_R_32F) {
    static_cast<float *>(base)[at] = static_cast<float>(value);
    return;
  }
  static_cast<uint16_t *>(base)[at] =
      l.type == CUDA_R_16F ? roundToF16(value) : roundToBf16(value);
}

/// TF32 keeps 10 of f32's 23 mantissa bits, rounded to nearest even.
float roundToTf32(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  bits += 0x0FFFu + ((bits >> 13) & 1u);
  bits &= ~0x1FFFu;
  std::memcpy(&value, &bits, sizeof(bits));
  return value;
}

struct Job {
  Problem problem;
  const void *a, *b, *c;
  void *d;
  float alpha, beta;
};

/// KILN_FAKE_CUBLASLT_COMPUTE=0: every call is checked as always but D is
/// left as it is, so a model of real size runs through the runtime (its
/// buffers, plans and memory) in seconds rather than hours of host loops;
/// its numbers are then meaningless.
bool computesProducts() {
  static const bool computes = [] {
    const char *env = std::getenv("KILN_FAKE_CUBLASLT_COMPUTE");
    return !env || std::strcmp(env, "0") != 0;
  }();
  return computes;
}

void runJob(void *argument) {
  const Job &job = *static_cast<const Job *>(argument);
  if (!computesProducts())
    return;
  const Problem &p = job.problem;
  bool ta = p.desc.transA == CUBLAS_OP_T, tb = p.desc.transB == CUBLAS_OP_T;
  bool tf32 = p.desc.compute == CUBLAS_COMPUTE_32F_FAST_TF32;
  auto input = [&](float v) { return tf32 ? roundToTf32(v) : v; };
  for (int64_t batch = 0; batch < p.a.batch; ++batch)
    for (uint64_t i = 0; i < p.m; ++i)
      for (uint64_t j = 0; j < p.n; ++j) {
        double sum = 0;
        for (uint64_t q = 0; q < p.k; ++q) {
          float x = ta ? element(job.a, p.a, batch, q, i)
                       : element(job.a, p.a, batch, i, q);
          float y = tb ? element(job.b, p.b, batch, j, q)
                       : element(job.b, p.b, batch, q, j);
          sum += double(input(x)) * double(input(y));
        }
        double result = double(job.alpha) * sum;
        // As cuBLAS: C is not read when beta is zero.
        if (job.beta != 0.0f)
          result += double(job.beta) * element(job.c, p.c, batch, i, j);
        storeElement(job.d, p.d, batch, i, j, result);
      }
  ++state().executed;
}

} // namespace

//===--- cuBLASLt entry points --------------------------------------------===//

cublasStatus_t cublasLtCreate(cublasLtHandle_t *handle) {
  FAKE_ENTER("cublasLtCreate");
  if (!handle)
    return CUBLAS_STATUS_INVALID_VALUE;
  *handle = create<cublasLtContext>(new FakeHandle());
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtDestroy(cublasLtHandle_t handle) {
  FAKE_ENTER("cublasLtDestroy");
  return destroy<FakeHandle>(handle);
}

const char *cublasLtGetStatusName(cublasStatus_t status) {
  switch (status) {
  case CUBLAS_STATUS_SUCCESS:
    return "CUBLAS_STATUS_SUCCESS";
  case CUBLAS_STATUS_NOT_INITIALIZED:
    return "CUBLAS_STATUS_NOT_INITIALIZED";
  case CUBLAS_STATUS_ALLOC_FAILED:
    return "CUBLAS_STATUS_ALLOC_FAILED";
  case CUBLAS_STATUS_INVALID_VALUE:
    return "CUBLAS_STATUS_INVALID_VALUE";
  case CUBLAS_STATUS_ARCH_MISMATCH:
    return "CUBLAS_STATUS_ARCH_MISMATCH";
  case CUBLAS_STATUS_EXECUTION_FAILED:
    return "CUBLAS_STATUS_EXECUTION_FAILED";
  case CUBLAS_STATUS_INTERNAL_ERROR:
    return "CUBLAS_STATUS_INTERNAL_ERROR";
  case CUBLAS_STATUS_NOT_SUPPORTED:
    return "CUBLAS_STATUS_NOT_SUPPORTED";
  default:
    return "CUBLAS_STATUS_UNKNOWN";
  }
}

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *desc,
                                        cublasComputeType_t compute,
                                        cudaDataType_t scale) {
  FAKE_ENTER("cublasLtMatmulDescCreate");
  if (!desc)
    return CUBLAS_STATUS_INVALID_VALUE;
  auto *fake = new FakeDesc();
  fake->compute = compute;
  fake->scale = scale;
  state().lastComputeType = compute;
  *desc = create<cublasLtMatmulDescOpaque_t>(fake);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc) {
  FAKE_ENTER("cublasLtMatmulDescDestroy");
  return destroy<FakeDesc>(desc);
}

cublasStatus_t
cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc,
                               cublasLtMatmulDescAttributes_t attr,
                               const void *buf, size_t bytes) {
  FAKE_ENTER("cublasLtMatmulDescSetAttribute");
  FakeDesc *fake = known<FakeDesc>(desc);
  if (!fake)
    return CUBLAS_STATUS_INVALID_VALUE;
  switch (attr) {
  case CUBLASLT_MATMUL_DESC_COMPUTE_TYPE:
    if (cublasStatus_t s = readAttribute(fake->compute, buf, bytes);
        s != CUBLAS_STATUS_SUCCESS)
      return s;
    state().lastComputeType = fake->compute;
    return CUBLAS_STATUS_SUCCESS;
  case CUBLASLT_MATMUL_DESC_SCALE_TYPE:
    return readAttribute(fake->scale, buf, bytes);
  case CUBLASLT_MATMUL_DESC_POINTER_MODE:
    return readAttribute(fake->pointerMode, buf, bytes);
  case CUBLASLT_MATMUL_DESC_TRANSA:
    return readAttribute(fake->transA, buf, bytes);
  case CUBLASLT_MATMUL_DESC_TRANSB:
    return readAttribute(fake->transB, buf, bytes);
  default:
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *layout,
                                          cudaDataType type, uint64_t rows,
                                          uint64_t cols, int64_t ld) {
  FAKE_ENTER("cublasLtMatrixLayoutCreate");
  if (!layout)
    return CUBLAS_STATUS_INVALID_VALUE;
  auto *fake = new FakeLayout();
  fake->type = type;
  fake->rows = rows;
  fake->cols = cols;
  fake->ld = ld;
  *layout = create<cublasLtMatrixLayoutOpaque_t>(fake);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout) {
  FAKE_ENTER("cublasLtMatrixLayoutDestroy");
  return destroy<FakeLayout>(layout);
}

cublasStatus_t
cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t layout,
                                 cublasLtMatrixLayoutAttribute_t attr,
                                 const void *buf, size_t bytes) {
  FAKE_ENTER("cublasLtMatrixLayoutSetAttribute");
  FakeLayout *fake = known<FakeLayout>(layout);
  if (!fake)
    return CUBLAS_STATUS_INVALID_VALUE;
  switch (attr) {
  case CUBLASLT_MATRIX_LAYOUT_TYPE:
    return readAttribute(fake->type, buf, bytes);
  case CUBLASLT_MATRIX_LAYOUT_ORDER:
    return readAttribute(fake->order, buf, bytes);
  case CUBLASLT_MATRIX_LAYOUT_ROWS:
    return readAttribute(fake->rows, buf, bytes);
  case CUBLASLT_MATRIX_LAYOUT_COLS:
    return readAttribute(fake->cols, buf, bytes);
  case CUBLASLT_MATRIX_LAYOUT_LD:
    return readAttribute(fake->ld, buf, bytes);
  case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT:
    return readAttribute(fake->batch, buf, bytes);
  case CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET:
    return readAttribute(fake->stride, buf, bytes);
  default:
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
}

cublasStatus_t
cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *pref) {
  FAKE_ENTER("cublasLtMatmulPreferenceCreate");
  if (!pref)
    return CUBLAS_STATUS_INVALID_VALUE;
  *pref = create<cublasLtMatmulPreferenceOpaque_t>(new FakePreference());
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref) {
  FAKE_ENTER("cublasLtMatmulPreferenceDestroy");
  return destroy<FakePreference>(pref);
}

cublasStatus_t
cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
                                     cublasLtMatmulPreferenceAttributes_t attr,
                                     const void *buf, size_t bytes) {
  FAKE_ENTER("cublasLtMatmulPreferenceSetAttribute");
  FakePreference *fake = known<FakePreference>(pref);
  if (!fake)
    return CUBLAS_STATUS_INVALID_VALUE;
  uint32_t ignored;
  switch (attr) {
  case CUBLASLT_MATMUL_PREF_SEARCH_MODE:
    return readAttribute(ignored, buf, bytes);
  case CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES:
    return readAttribute(fake->maxWorkspace, buf, bytes);
  case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES:
    return readAttribute(fake->alignment[0], buf, bytes);
  case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES:
    return readAttribute(fake->alignment[1], buf, bytes);
  case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES:
    return readAttribute(fake->alignment[2], buf, bytes);
  case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES:
    return readAttribute(fake->alignment[3], buf, bytes);
  default:
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
}

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(
    cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
    cublasLtMatrixLayout_t aDesc, cublasLtMatrixLayout_t bDesc,
    cublasLtMatrixLayout_t cDesc, cublasLtMatrixLayout_t dDesc,
    cublasLtMatmulPreference_t pref, int requested,
    cublasLtMatmulHeuristicResult_t results[], int *returned) {
  FAKE_ENTER("cublasLtMatmulAlgoGetHeuristic");
  FakeDesc *d = known<FakeDesc>(desc);
  FakeLayout *a = known<FakeLayout>(aDesc), *b = known<FakeLayout>(bDesc),
             *c = known<FakeLayout>(cDesc), *dd = known<FakeLayout>(dDesc);
  FakePreference *p = known<FakePreference>(pref);
  if (!known<FakeHandle>(handle) || !d || !a || !b || !c || !dd || !p ||
      requested <= 0 || !results || !returned)
    return CUBLAS_STATUS_INVALID_VALUE;
  *returned = 0;
  Problem problem;
  if (cublasStatus_t s = checkProblem(*d, *a, *b, *c, *dd, problem);
      s != CUBLAS_STATUS_SUCCESS)
    return CUBLAS_STATUS_NOT_SUPPORTED; // "no heuristic for this problem"
  cublasLtMatmulHeuristicResult_t result{};
  uint64_t need = p->maxWorkspace >= kWorkspaceNeed ? kWorkspaceNeed : 0;
  result.algo.data[0] = kAlgoMagic;
  result.algo.data[1] = need;
  for (int i = 0; i < 4; ++i)
    result.algo.data[2 + i] = p->alignment[i];
  result.workspaceSize = need;
  result.state = CUBLAS_STATUS_SUCCESS;
  result.wavesCount = 1.0f;
  results[0] = result;
  *returned = 1;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasLtMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
               const void *alpha, const void *A, cublasLtMatrixLayout_t aDesc,
               const void *B, cublasLtMatrixLayout_t bDesc, const void *beta,
               const void *C, cublasLtMatrixLayout_t cDesc, void *D,
               cublasLtMatrixLayout_t dDesc, const cublasLtMatmulAlgo_t *algo,
               void *workspace, size_t workspaceBytes, cudaStream_t stream) {
  FAKE_ENTER("cublasLtMatmul");
  FakeDesc *d = known<FakeDesc>(desc);
  FakeLayout *a = known<FakeLayout>(aDesc), *b = known<FakeLayout>(bDesc),
             *c = known<FakeLayout>(cDesc), *dd = known<FakeLayout>(dDesc);
  if (!known<FakeHandle>(handle) || !d || !a || !b || !c || !dd || !alpha ||
      !beta || !algo || algo->data[0] != kAlgoMagic)
    return CUBLAS_STATUS_INVALID_VALUE;
  Problem problem;
  if (cublasStatus_t s = checkProblem(*d, *a, *b, *c, *dd, problem);
      s != CUBLAS_STATUS_SUCCESS)
    return s;
  float alphaValue, betaValue;
  std::memcpy(&alphaValue, alpha, sizeof(float));
  std::memcpy(&betaValue, beta, sizeof(float));
  uint64_t need = algo->data[1];
  if (workspaceBytes < need ||
      (need > 0 && !fake_cuda_check_device_range(
                       reinterpret_cast<uintptr_t>(workspace), need)))
    return CUBLAS_STATUS_INVALID_VALUE;
  // The algorithm was chosen for these alignments (preference).
  if (!aligned(A, *a, algo->data[2]) || !aligned(B, *b, algo->data[3]) ||
      !aligned(C, *c, algo->data[4]) || !aligned(D, *dd, algo->data[5]))
    return CUBLAS_STATUS_INVALID_VALUE;
  auto inDevice = [](const void *p, const FakeLayout &l) {
    return fake_cuda_check_device_range(reinterpret_cast<uintptr_t>(p),
                                        extentElements(l) * elementBytes(l)) ==
           1;
  };
  if (!inDevice(A, *a) || !inDevice(B, *b) || !inDevice(D, *dd) ||
      (betaValue != 0.0f && !inDevice(C, *c)))
    return CUBLAS_STATUS_INVALID_VALUE;
  auto *job = new Job{problem,
                      A,
                      B,
                      C,
                      D,
                      alphaValue,
                      betaValue};
  int result = fake_cuda_stream_enqueue(
      stream, runJob, job, [](void *p) { delete static_cast<Job *>(p); });
  return result == 0 ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_EXECUTION_FAILED;
}

//===--- Control and introspection (FakeCuda.h) ---------------------------===//

extern "C" void fake_cublaslt_reset(void) {
  std::lock_guard<std::mutex> lock(state().mutex);
  state().calls.clear();
  state().faults.clear();
  state().lastComputeType = -1;
  state().executed = 0;
}

extern "C" void fake_cublaslt_fail_next(const char *name, int status) {
  std::lock_guard<std::mutex> lock(state().mutex);
  state().faults[name] = static_cast<cublasStatus_t>(status);
}

extern "C" int fake_cublaslt_calls_of(const char *name) {
  std::lock_guard<std::mutex> lock(state().mutex);
  auto it = state().calls.find(name);
  return it == state().calls.end() ? 0 : it->second;
}

extern "C" int fake_cublaslt_matmuls_executed(void) {
  return state().executed.load();
}

extern "C" int fake_cublaslt_last_compute_type(void) {
  std::lock_guard<std::mutex> lock(state().mutex);
  return state().lastComputeType;
}

extern "C" int fake_cublaslt_live_objects(void) {
  std::lock_guard<std::mutex> lock(state().mutex);
  return static_cast<int>(state().live.size());
}
