// What runs a CUDA program's attention thunks: kiln's flash attention
// kernels (FlashAttention) or cuDNN's fused attention (CudnnAttention),
// chosen when the program loads. Both run the same thunks of the same
// executable, so one compiled step (or cache entry) serves either.
// Internal to runtime/cuda.
#ifndef KILN_RUNTIME_CUDA_ATTENTIONRUNNER_H
#define KILN_RUNTIME_CUDA_ATTENTIONRUNNER_H

#include "runtime/cuda/CudaDriver.h"

#include "absl/status/status.h"

#include <cstddef>
#include <string_view>

namespace kiln::runtime::cuda {

class AttentionRunner {
public:
  virtual ~AttentionRunner() = default;
  /// Enqueues attention thunk `index` on `stream`; an error names the
  /// thunk.
  virtual absl::Status enqueue(size_t index, CUstream stream) const = 0;
};

/// Which library runs attention thunks: `KILN_CUDA_ATTENTION=cudnn` asks
/// for cuDNN; anything else (`flash`, unset) for kiln's own kernels.
enum class AttentionLibrary { kiln, cudnn };
AttentionLibrary attentionLibraryFromEnvironment();

/// The fatbin nvcc made from FlashAttention.cu (the flash kernels and the
/// dropout-mask kernel cuDNN's attention reads; FlashAttentionFatbin.cpp):
/// empty when nvcc was not found at build time.
std::string_view flashAttentionFatbin();

} // namespace kiln::runtime::cuda

#endif // KILN_RUNTIME_CUDA_ATTENTIONRUNNER_H
