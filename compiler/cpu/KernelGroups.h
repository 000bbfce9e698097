// Independent kernels launched as one: a "multi-tensor" kernel, as PyTorch's
// multi_tensor_apply runs the optimizer over every parameter at once and
// XLA's horizontal loop fusion joins small independent loops. The optimizer
// of a training step is the case that matters: AdamW is one elementwise
// kernel per parameter (148 for GPT-2 124M, 74 of them over 768 elements),
// each a launch on the GPU that fills a block or two. Joined, they are a
// few launches that fill the device.
//
// A group is an ordinary kernel thunk: its slots are its members' operands
// (each slot once) then their results, its range the members' ranges one
// after another, each started on a multiple of runtime::kCudaBlockSize (so
// a GPU block, and a warp, belongs to one member). Its kernel finds the
// member of each index of its range and calls the member's own kernel
// function with that member's buffers, so the cpu splits a group over its
// threads as any kernel and the cuda entry point runs one index a thread.
#ifndef KILN_COMPILER_CPU_KERNELGROUPS_H
#define KILN_COMPILER_CPU_KERNELGROUPS_H

#include "compiler/cpu/KernelEmitter.h"
#include "runtime/Executable.h"

#include "mlir/IR/BuiltinOps.h"

#include <map>
#include <string>

namespace kiln::compiler::cpu {

/// The most buffers one group's kernel takes: cuda's 4 KiB of kernel
/// parameters (PTX ISA 8.0) hold 511 pointers beside the range size.
inline constexpr unsigned kMaxGroupBuffers = 500;

/// How groups are made.
struct KernelGroupOptions {
  unsigned maxBuffers = kMaxGroupBuffers;
  /// The alignment in bytes every buffer pointer has (0: unknown). A group
  /// picks a member's buffers at run time, which hides the alignment the
  /// cuda entry point declares for its parameters from the member's body
  /// (its 4-element accesses were no longer merged into 16-byte ones), so
  /// the group states it again where it picks them.
  unsigned pointerAlignment = 0;
};

/// The options for `device`: cuda's buffers are 16-byte aligned (its
/// loader checks every slot); the cpu's are not all known to be (a
/// borrowed input may be any host memory).
KernelGroupOptions kernelGroupOptionsFor(runtime::Device device);

/// Replaces each run of two or more consecutive kernel thunks of `exe` that
/// may run at once by one thunk of a group kernel, which it adds to
/// `kernels` (the module holding the members' kernel functions). A member
/// must be a splittable loop of one lane an index (`kernelInfo`, by
/// symbol: KernelInfo::loop) and must neither read nor write a buffer an
/// earlier member of its group writes, nor write one an earlier member
/// reads; an output written over its donor input counts as that input's
/// buffer. The group gives up its members' in-place operands (a member's
/// result over another member's operand would race). Runs before the
/// memory plan, which then sees every member's buffers live at the group.
/// Returns the number of groups made.
int groupIndependentKernels(runtime::Executable &exe, mlir::ModuleOp kernels,
                            const std::map<std::string, KernelInfo> &kernelInfo,
                            const KernelGroupOptions &options);

} // namespace kiln::compiler::cpu

#endif // KILN_COMPILER_CPU_KERNELGROUPS_H
