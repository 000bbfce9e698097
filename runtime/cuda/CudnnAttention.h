// Runs attention thunks with cuDNN's fused attention (its graph API through
// cudnn-frontend, cuDNN loaded with dlopen as the driver is), the
// alternative to kiln's own flash attention kernels that the GPU speed
// issue asks to measure against them. Chosen with
// KILN_CUDA_ATTENTION=cudnn (AttentionRunner.h).
//
// cuDNN takes the same operands kiln's ops have: the forward writes the
// result and each row's log-sum-exp (cuDNN's softmax stats), the gradient
// reads them. Dropout keeps kiln's semantics exactly: cuDNN's own random
// numbers differ from kiln's Philox recipe (docs/IR.md §3), so before each
// forward and each gradient a kiln kernel writes the thunk's mask (1 kept,
// 0 dropped) into one transient [B, H, T, S] buffer that cuDNN reads as a
// custom dropout mask; nothing is kept between the two. Internal to
// runtime/cuda (CudaProgram loads it).
#ifndef KILN_RUNTIME_CUDA_CUDNNATTENTION_H
#define KILN_RUNTIME_CUDA_CUDNNATTENTION_H

#include "runtime/Executable.h"
#include "runtime/cuda/AttentionRunner.h"
#include "runtime/cuda/CudaDriver.h"

#include "absl/status/statusor.h"

#include <functional>
#include <memory>

namespace kiln::runtime::cuda {

class CudnnAttention : public AttentionRunner {
public:
  /// True when this library was built with cudnn-frontend's headers.
  static bool built();

  /// Loads cuDNN, makes a handle on the current context and builds each
  /// attention thunk's graph for its shape, its operands at the slots'
  /// addresses (`slotPointer`). FailedPrecondition when this build has no
  /// cuDNN support, cuDNN or the CUDA runtime cannot be loaded, or cuDNN
  /// has no engine for a thunk (the message names it and says how to use
  /// kiln's kernels instead). The device memory it needs is bind()'s.
  static absl::StatusOr<std::unique_ptr<CudnnAttention>>
  create(std::shared_ptr<const CudaDriver> driver, const Executable &executable,
         const std::function<CUdeviceptr(uint32_t)> &slotPointer);
  ~CudnnAttention() override;
  CudnnAttention(const CudnnAttention &) = delete;
  CudnnAttention &operator=(const CudnnAttention &) = delete;

  /// Device bytes enqueue needs: cuDNN's largest workspace and the
  /// largest dropout mask.
  uint64_t deviceBytes() const;
  /// Gives it deviceBytes() of device memory, before the first enqueue.
  void bind(CUdeviceptr memory);

  absl::Status enqueue(size_t index, CUstream stream) const override;

  struct State; // cuDNN's objects (CudnnAttention.cpp)

private:
  explicit CudnnAttention(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

} // namespace kiln::runtime::cuda

#endif // KILN_RUNTIME_CUDA_CUDNNATTENTION_H
