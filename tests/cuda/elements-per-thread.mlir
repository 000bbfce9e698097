// Elements a thread (FusionKernelOptions::elementsPerIndex), in bf16, where
// the count matters most: 4 consecutive bf16 values are an 8-byte access,
// 8 of them ($KILN_CUDA_ELEMENTS_PER_THREAD=8: two Philox blocks) a 16-byte
// one, as Hopper's memory wants (one GEMM epilogue-like bias and tanh, and
// a warp's softmax rows of 512, 16 points a lane, taken 8 at a time). The
// group's elements share their row's outer indices when the innermost dim
// holds whole groups: one division per thread (the multiply-high of /3072),
// and the broadcast bias's 4 or 8 f32 reads are neighbours, one or two
// 16-byte loads (any other value is refused with a warning:
// fusion-kinds.mlir). ptxas accepts all four kernels.
// RUN: kilnc compile %s --backend cuda --function bias_tanh --emit-ptx %t.bias4.ptx
// RUN: FileCheck %s --check-prefix=BIAS4 < %t.bias4.ptx
// RUN: env KILN_CUDA_ELEMENTS_PER_THREAD=8 kilnc compile %s --backend cuda --function bias_tanh --emit-ptx %t.bias8.ptx
// RUN: FileCheck %s --check-prefix=BIAS8 < %t.bias8.ptx
// RUN: kilnc compile %s --backend cuda --function softmax --emit-ptx %t.softmax4.ptx
// RUN: FileCheck %s --check-prefix=SOFTMAX4 < %t.softmax4.ptx
// RUN: env KILN_CUDA_ELEMENTS_PER_THREAD=8 kilnc compile %s --backend cuda --function softmax --emit-ptx %t.softmax8.ptx
// RUN: FileCheck %s --check-prefix=SOFTMAX8 < %t.softmax8.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90 %t.bias4.ptx -o %t.bias4.cubin %}
// RUN: %if ptxas %{ %ptxas -arch=sm_90 %t.bias8.ptx -o %t.bias8.cubin %}
// RUN: %if ptxas %{ %ptxas -arch=sm_90 %t.softmax4.ptx -o %t.softmax4.cubin %}
// RUN: %if ptxas %{ %ptxas -arch=sm_90 %t.softmax8.ptx -o %t.softmax8.cubin %}
// BIAS4: .entry kiln_kernel_0(
// BIAS4: mul.hi
// BIAS4-NOT: mul.hi
// BIAS4: ld.global.nc.v4.b16
// BIAS4: ld.global.nc.v4.b32
// BIAS4-NOT: ld.global
// BIAS4: st.global.v4.b16
// BIAS4-NOT: st.global
// BIAS8: .entry kiln_kernel_0(
// BIAS8: mul.hi
// BIAS8-NOT: mul.hi
// BIAS8: ld.global.nc.v4.b32
// BIAS8: ld.global.nc.v4.b32
// BIAS8: ld.global.nc.v4.b32
// BIAS8-NOT: ld.global
// BIAS8: st.global.v4.b32
// BIAS8-NOT: st.global
// SOFTMAX4: .entry kiln_kernel_0(
// SOFTMAX4-COUNT-4: ld.global.nc.v4.b16
// SOFTMAX4-NOT: ld.global
// SOFTMAX4-COUNT-4: st.global.v4.b16
// SOFTMAX4-NOT: st.global
// SOFTMAX8: .entry kiln_kernel_0(
// SOFTMAX8-COUNT-2: ld.global.nc.v4.b32
// SOFTMAX8-NOT: ld.global
// SOFTMAX8-COUNT-2: st.global.v4.b32
// SOFTMAX8-NOT: st.global

func.func @bias_tanh(%x: tensor<16x3072xbf16>, %bias: tensor<3072xf32>) -> tensor<16x3072xbf16> {
  %xf = kiln.convert %x : tensor<16x3072xbf16> -> tensor<16x3072xf32>
  %b = kiln.broadcast_in_dim %bias, dims = [1] : tensor<3072xf32> -> tensor<16x3072xf32>
  %s = kiln.add %xf, %b : tensor<16x3072xf32>
  %t = kiln.tanh %s : tensor<16x3072xf32>
  %y = kiln.convert %t : tensor<16x3072xf32> -> tensor<16x3072xbf16>
  return %y : tensor<16x3072xbf16>
}

func.func @softmax(%x: tensor<64x512xbf16>) -> tensor<64x512xbf16> {
  %xf = kiln.convert %x : tensor<64x512xbf16> -> tensor<64x512xf32>
  %m = kiln.reduce max %xf, dims = [1] : tensor<64x512xf32> -> tensor<64xf32>
  %mb = kiln.broadcast_in_dim %m, dims = [0] : tensor<64xf32> -> tensor<64x512xf32>
  %d = kiln.sub %xf, %mb : tensor<64x512xf32>
  %e = kiln.exp %d : tensor<64x512xf32>
  %s = kiln.reduce sum %e, dims = [1] : tensor<64x512xf32> -> tensor<64xf32>
  %sb = kiln.broadcast_in_dim %s, dims = [0] : tensor<64xf32> -> tensor<64x512xf32>
  %y = kiln.div %e, %sb : tensor<64x512xf32>
  %yb = kiln.convert %y : tensor<64x512xf32> -> tensor<64x512xbf16>
  return %yb : tensor<64x512xbf16>
}
