// A cuda kernel's buffer parameters that no other parameter of its launch can
// reach are declared noalias (compiler/KernelAliasing.h); an operand among
// them is also readonly, so NVPTX reads it through the read-only cache
// (`ld.global.nc`). Where a result is written over an operand that dies in
// the kernel, or into the buffer of the donated input it replaces, both stay
// plain pointers (`ld.global`). KILN_CUDA_NOALIAS=0 declares none (the
// GPU's A/B). Each function is compiled on its own (--function).
// RUN: kilnc compile %s --backend cuda --function distinct --emit-ptx %t.distinct.ptx
// RUN: FileCheck %s --check-prefix=DISTINCT < %t.distinct.ptx
// RUN: env KILN_CUDA_NOALIAS=0 kilnc compile %s --backend cuda --function distinct --emit-ptx %t.off.ptx
// RUN: FileCheck %s --check-prefix=OFF < %t.off.ptx
// RUN: env KILN_CUDA_NOALIAS=2 kilnc compile %s --backend cuda --function distinct --emit-ptx %t.bad.ptx 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: kilnc compile %s --backend cuda --function in_place --emit-ptx %t.inplace.ptx
// RUN: FileCheck %s --check-prefix=INPLACE < %t.inplace.ptx
// RUN: kilnc compile %s --backend cuda --function donated --emit-ptx %t.donated.ptx
// RUN: FileCheck %s --check-prefix=DONATED < %t.donated.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90 --warn-on-spills -Werror %t.distinct.ptx -o %t.distinct.cubin %}
// RUN: %if ptxas %{ %ptxas -arch=sm_90 --warn-on-spills -Werror %t.inplace.ptx -o %t.inplace.cubin %}

// Two operands and a result of its own: both read through the cache.
// DISTINCT: .entry kiln_kernel_0(
// DISTINCT-COUNT-2: ld.global.nc.v4.b32
// DISTINCT-NOT: ld.global.v4
// DISTINCT: st.global.v4.b32
// OFF: .entry kiln_kernel_0(
// OFF-NOT: ld.global.nc
// OFF-COUNT-2: ld.global.v4.b32
// OFF-NOT: ld.global.nc
// BAD: warning: KILN_CUDA_NOALIAS must be 1 or 0 (true or false, yes or no, on or off), not '2'; using the default (on)
func.func @distinct(%x: tensor<1024xf32>, %y: tensor<1024xf32>) -> tensor<1024xf32> {
  %p = kiln.mul %x, %y : tensor<1024xf32>
  %e = kiln.exp %p : tensor<1024xf32>
  return %e : tensor<1024xf32>
}

// The exp's result is written over the product it reads, which dies there
// (both arena values between two GEMMs): neither pointer is exclusive.
// INPLACE: .entry kiln_kernel_0(
// INPLACE-NOT: ld.global.nc
// INPLACE: ld.global.b32
// INPLACE-NOT: ld.global.nc
// INPLACE: st.global.b32
func.func @in_place(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %a = kiln.dot_general %x, %w, batch = [] x [], contract = [1] x [0] : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %e = kiln.exp %a : tensor<64x64xf32>
  %b = kiln.dot_general %e, %w, batch = [] x [], contract = [1] x [0] : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %b : tensor<64x64xf32>
}

// A parameter's update written into its own donated buffer: the parameter
// is a plain pointer, the gradient (no result reaches it) is read through
// the cache.
// DONATED: .entry kiln_kernel_0(
// DONATED-DAG: ld.global.nc.v4.b32
// DONATED-DAG: ld.global.v4.b32
// DONATED-NOT: ld.global
// DONATED: st.global.v4.b32
func.func @donated(%g: tensor<1024xf32>, %w: tensor<1024xf32> {kiln.donate, kiln.output_alias = 0 : i64}) -> tensor<1024xf32> {
  %c = kiln.constant dense<0.01> : tensor<1024xf32>
  %s = kiln.mul %g, %c : tensor<1024xf32>
  %n = kiln.sub %w, %s : tensor<1024xf32>
  return %n : tensor<1024xf32>
}
