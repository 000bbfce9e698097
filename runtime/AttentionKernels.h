// Attention thunks and kiln's flash attention kernels
// (runtime/kernels/FlashAttention.h): the kernels' parameter for a thunk
// (both devices' runtimes build it here), and the kernels' host run,
// compiled for the CPU: one thread per block (HostBlock) with loop
// products, the blocks spread over a ThreadPool. The cpu executor runs
// attention thunks with the host run when a
// pipeline keeps attention whole for it (PipelineOptions::attentionKernel,
// which tests set; tools leave it to the GPU): the same kernel bodies the
// GPU runs, checked end to end through the compiler on a machine without
// one. Not a fast CPU attention: the products are scalar loops.
#ifndef KILN_RUNTIME_ATTENTIONKERNELS_H
#define KILN_RUNTIME_ATTENTIONKERNELS_H

#include "runtime/Executable.h"
#include "runtime/ThreadPool.h"
#include "runtime/kernels/FlashAttention.h"

#include "absl/status/status.h"

#include <functional>

namespace kiln::runtime {

/// The kernels' parameter for thunk `a`: each slot's address from
/// `address` (null for kNoSlot), its shape and attributes; the gradient's
/// row statistics are the caller's to set. Both devices' runtimes use it.
flash::AttentionParams
attentionParams(const AttentionThunk &a,
                const std::function<void *(uint32_t slot)> &address);

/// Runs the kernels of one attention thunk (forward, or the gradient's
/// query side then key side) for `params`, whose pointers are host
/// memory; the gradient's row statistics go to scratch of its own.
/// InvalidArgument for a head dim the kernels do not tile.
absl::Status runAttentionOnHost(GemmType element, bool gradient,
                                flash::AttentionParams params,
                                ThreadPool &pool);

} // namespace kiln::runtime

#endif // KILN_RUNTIME_ATTENTIONKERNELS_H
