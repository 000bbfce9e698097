// LoRA's up-projection ([4096, 8] x [1024, 8]^T in bf16, an 8 MiB result)
// added to the base projection's output: on cuda, kiln-fuse-small-products
// makes it one kernel and no GEMM, which reads the operands' rows of 8 bf16
// as 16-byte loads and never stores the product; with
// KILN_SMALL_PRODUCTS=0, a cuBLASLt GEMM and the add's kernel, which reads
// the stored product back. ptxas accepts the kernel.
// RUN: kilnc compile %s --backend cuda --print-thunks -o %t.kexe | FileCheck %s --check-prefix=LOOP
// RUN: env KILN_SMALL_PRODUCTS=0 kilnc compile %s --backend cuda --print-thunks -o %t.off.kexe | FileCheck %s --check-prefix=GEMM
// RUN: kilnc compile %s --backend cuda --emit-ptx %t.ptx -o %t.kexe
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90 %t.ptx -o %t.cubin %}
// LOOP: 0 kernel {{.*}} fusion{slice, reshape, convert, broadcast_in_dim, mul, add} (tensor<4096x8xbf16>, tensor<1024x8xbf16>, tensor<4096x1024xbf16>) -> (tensor<4096x1024xbf16>)
// LOOP-NOT: gemm
// GEMM: 0 gemm batch 1 m 4096 n 1024 k 8 transB bf16->bf16
// GEMM-NEXT: 1 kernel {{.*}} add (tensor<4096x1024xbf16>, tensor<4096x1024xbf16>)
// PTX: .entry kiln_kernel_0(
// PTX: ld.global.nc.v4.b32
// PTX: ld.global.nc.v4.b32
// PTX: st.global.v4.b16
// PTX-NOT: .entry
func.func @main(%h: tensor<4096x8xbf16>, %b: tensor<1024x8xbf16>, %base: tensor<4096x1024xbf16>) -> tensor<4096x1024xbf16> {
  %p = kiln.dot_general %h, %b, batch = [] x [], contract = [1] x [1] : tensor<4096x8xbf16>, tensor<1024x8xbf16> -> tensor<4096x1024xbf16>
  %y = kiln.add %base, %p : tensor<4096x1024xbf16>
  return %y : tensor<4096x1024xbf16>
}
