// Independent loop kernels are launched as one group kernel (compiler/cpu/
// KernelGroups.h): an optimizer step over three parameters, each updated
// in place (donated, tied to its output) from its gradient and the shared
// learning rate, is one thunk whose range is the three members' ranges,
// each padded to a block of 256 indices (4 elements an index: 192 + 768 +
// 12288 threads become 256 + 768 + 12288). The group's entry point is the
// only one (its members are inlined into it, one body per kind), and the
// members' accesses stay 16-byte ones, the gradients through the
// read-only cache. The cpu, where a kernel is a call, not a launch, does
// not group them (and walks the [64, 768] update in 64 rows of its
// innermost dim). The negative twin, KILN_KERNEL_GROUPS=0 (or off, as every KILN_* switch
// takes): three launches;
// a malformed value is refused with a warning and groups kept.
// RUN: kilnc compile %s --backend cuda --print-thunks -o %t.cuda.kexe | FileCheck %s
// RUN: kilnc compile %s --backend cuda --emit-ptx %t.ptx -o %t.ptx.kexe
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: kilnc compile %s --print-thunks -o %t.cpu.kexe | FileCheck %s --check-prefix=CPU
// RUN: env KILN_KERNEL_GROUPS=0 kilnc compile %s --backend cuda --print-thunks -o %t.off.kexe | FileCheck %s --check-prefix=OFF
// RUN: env KILN_KERNEL_GROUPS=off kilnc compile %s --backend cuda --print-thunks -o %t.off2.kexe | FileCheck %s --check-prefix=OFF
// RUN: env KILN_KERNEL_GROUPS=nope kilnc compile %s --backend cuda --print-thunks -o %t.bad.kexe 2>&1 | FileCheck %s --check-prefixes=BAD,CHECK
// RUN: %if ptxas %{ %ptxas -arch=sm_90 --warn-on-spills -Werror %t.ptx -o %t.cubin %}

// BAD: kiln: warning: KILN_KERNEL_GROUPS must be 1 or 0 (true or false, yes or no, on or off), not 'nope'; using the default (on)
// CHECK: 0 kernel 13312 {{.*}} group of 3 kernels: fusion{broadcast_in_dim, mul, sub} (tensor<f32>, tensor<768xf32>, tensor<768xf32>) -> (tensor<768xf32>); fusion{broadcast_in_dim, mul, sub} (tensor<f32>, tensor<3072xf32>
// CHECK-NOT: 1 kernel

// PTX: .visible .entry kiln_kernel_group_0(
// PTX-NOT: .entry
// PTX: ld.global.nc.b32
// PTX: ld.global.v4.b32
// PTX: ld.global.nc.v4.b32
// PTX: st.global.v4.b32

// CPU-NOT: group
// CPU: 2 kernel 64 2304
// CPU-NOT: group

// OFF-NOT: group
// OFF: 2 kernel 12288
// OFF-NOT: group
func.func @main(%lr: tensor<f32>, %p0: tensor<768xf32> {kiln.donate, kiln.output_alias = 0 : i64}, %g0: tensor<768xf32>, %p1: tensor<3072xf32> {kiln.donate, kiln.output_alias = 1 : i64}, %g1: tensor<3072xf32>, %p2: tensor<64x768xf32> {kiln.donate, kiln.output_alias = 2 : i64}, %g2: tensor<64x768xf32>) -> (tensor<768xf32>, tensor<3072xf32>, tensor<64x768xf32>) {
  %l0 = kiln.broadcast_in_dim %lr, dims = [] : tensor<f32> -> tensor<768xf32>
  %s0 = kiln.mul %l0, %g0 : tensor<768xf32>
  %u0 = kiln.sub %p0, %s0 : tensor<768xf32>
  %l1 = kiln.broadcast_in_dim %lr, dims = [] : tensor<f32> -> tensor<3072xf32>
  %s1 = kiln.mul %l1, %g1 : tensor<3072xf32>
  %u1 = kiln.sub %p1, %s1 : tensor<3072xf32>
  %l2 = kiln.broadcast_in_dim %lr, dims = [] : tensor<f32> -> tensor<64x768xf32>
  %s2 = kiln.mul %l2, %g2 : tensor<64x768xf32>
  %u2 = kiln.sub %p2, %s2 : tensor<64x768xf32>
  return %u0, %u1, %u2 : tensor<768xf32>, tensor<3072xf32>, tensor<64x768xf32>
}
