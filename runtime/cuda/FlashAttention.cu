// The GPU instantiations of kiln's flash attention kernels
// (runtime/kernels/FlashAttention.h): bf16 and f16, head dims up to 64 and
// up to 128, three kernels each, and the dropout-mask kernel that cuDNN's
// attention reads its masks from (CudnnAttention.cpp). Built by nvcc into a
// fatbin (sm_80 and sm_90 code, plus compute_80 PTX the driver compiles for
// newer GPUs) that the CUDA runtime embeds and loads next to an
// executable's own kernels.
#include "runtime/kernels/FlashAttention.h"

namespace kiln::flash {
namespace {

template <class E, int D> struct Kernels {
  using C = FlashConfig<D>;
  static __device__ __forceinline__ void forward(const AttentionParams &p) {
    extern __shared__ __align__(128) char shared[];
    attentionForward<E, D, C::forwardRows, C::forwardKeys>(
        p, DeviceBlock{}, shared, blockIdx.x, blockIdx.y);
  }
  static __device__ __forceinline__ void queryGrad(const AttentionParams &p) {
    extern __shared__ __align__(128) char shared[];
    attentionQueryGrad<E, D, C::queryRows, C::queryKeys>(
        p, DeviceBlock{}, shared, blockIdx.x, blockIdx.y);
  }
  static __device__ __forceinline__ void keyValueGrad(const AttentionParams &p) {
    extern __shared__ __align__(128) char shared[];
    attentionKeyValueGrad<E, D, C::keyValueRows, C::keyValueKeys>(
        p, DeviceBlock{}, shared, blockIdx.x, blockIdx.y);
  }
};

} // namespace
} // namespace kiln::flash

// Entry points: kiln_flash_<kernel>_<type>_d<head dim max>, the names
// runtime/cuda/FlashAttention.cpp looks up. At least kFlashMinBlocks
// blocks an SM: their shared memory allows no more than three (64-wide
// heads), and without the hint ptxas held some kernels to 64 registers
// and spilled (with it: 80-120 registers, no spills, sm_80 and sm_90).
constexpr int kFlashMinBlocks = 3;
#define KILN_FLASH_ENTRY_POINTS(TYPE, E, D)                                    \
  extern "C" __global__ void __launch_bounds__(kiln::flash::kFlashThreads, kFlashMinBlocks)     \
      kiln_flash_forward_##TYPE##_d##D(const kiln::flash::AttentionParams p) { \
    kiln::flash::Kernels<E, D>::forward(p);                                    \
  }                                                                            \
  extern "C" __global__ void __launch_bounds__(kiln::flash::kFlashThreads, kFlashMinBlocks)     \
      kiln_flash_query_grad_##TYPE##_d##D(                                     \
          const kiln::flash::AttentionParams p) {                              \
    kiln::flash::Kernels<E, D>::queryGrad(p);                                  \
  }                                                                            \
  extern "C" __global__ void __launch_bounds__(kiln::flash::kFlashThreads, kFlashMinBlocks)     \
      kiln_flash_key_value_grad_##TYPE##_d##D(                                 \
          const kiln::flash::AttentionParams p) {                              \
    kiln::flash::Kernels<E, D>::keyValueGrad(p);                               \
  }

KILN_FLASH_ENTRY_POINTS(bf16, __nv_bfloat16, 64)
KILN_FLASH_ENTRY_POINTS(bf16, __nv_bfloat16, 128)
KILN_FLASH_ENTRY_POINTS(f16, __half, 64)
KILN_FLASH_ENTRY_POINTS(f16, __half, 128)

// The attention dropout's mask as a tensor (writeDropoutMask), for cuDNN's
// attention: one work item a thread (the launch's block size is the
// runner's).
#define KILN_FLASH_DROPOUT_MASK(TYPE, E)                                       \
  extern "C" __global__ void kiln_flash_dropout_mask_##TYPE(                   \
      const kiln::flash::AttentionParams p, E *mask) {                         \
    kiln::flash::writeDropoutMask(                                             \
        p, kiln::flash::DropoutMask::of(p), mask,                              \
        int64_t(blockIdx.x) * blockDim.x + threadIdx.x);                       \
  }

KILN_FLASH_DROPOUT_MASK(bf16, __nv_bfloat16)
KILN_FLASH_DROPOUT_MASK(f16, __half)
