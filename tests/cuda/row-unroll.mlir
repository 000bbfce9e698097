// A thread that walks a row alone (FusionKernelOptions::rowUnroll; here a
// layer norm's weight and bias gradients as partial sums over dims [0, 2],
// beside the next layer norm's bf16 output stored while reducing:
// bench/kernels/layer-norm-grad-partials.mlir at a smaller shape) reads 8
// points of its row, every load, before it stores the first one's result
// (the default since 2026-11-30). With KILN_CUDA_ROW_UNROLL=1, the form
// before, a point's store comes before the next point's loads in the PTX.
// Without exclusive buffers (KILN_CUDA_NOALIAS=0) no one may move a load
// above a store to memory that could be the same, so such a thread has one
// point's loads in flight; with them the loads read through the read-only
// cache, which ptxas may issue early. Any other value is refused with a
// warning. ptxas accepts all three.
// RUN: kilnc compile %s --backend cuda --emit-ptx %t.unrolled.ptx
// RUN: FileCheck %s --check-prefix=UNROLLED < %t.unrolled.ptx
// RUN: env KILN_CUDA_ROW_UNROLL=1 kilnc compile %s --backend cuda --emit-ptx %t.one.ptx
// RUN: FileCheck %s --check-prefix=ONE < %t.one.ptx
// RUN: env KILN_CUDA_ROW_UNROLL=1 KILN_CUDA_NOALIAS=0 kilnc compile %s --backend cuda --emit-ptx %t.plain.ptx
// RUN: FileCheck %s --check-prefix=PLAIN < %t.plain.ptx
// RUN: env KILN_CUDA_ROW_UNROLL=3 kilnc compile %s --backend cuda --emit-ptx %t.bad.ptx 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: %if ptxas %{ %ptxas -arch=sm_90 %t.one.ptx -o %t.one.cubin %}
// RUN: %if ptxas %{ %ptxas -arch=sm_90 %t.unrolled.ptx -o %t.unrolled.cubin %}
// RUN: %if ptxas %{ %ptxas -arch=sm_90 %t.plain.ptx -o %t.plain.cubin %}
// ONE: .entry kiln_kernel_0(
// ONE: ld.global.nc.b16
// ONE-NOT: ld.global.nc.b16
// ONE: st.global.b16
// PLAIN: .entry kiln_kernel_0(
// PLAIN-NOT: ld.global.nc
// PLAIN: ld.global.b16
// PLAIN-NOT: ld.global{{(.nc)?}}.b16
// PLAIN: st.global.b16
// UNROLLED: .entry kiln_kernel_0(
// UNROLLED: ld.global.nc.b16
// UNROLLED-NOT: st.global
// UNROLLED: ld.global.nc.b16
// UNROLLED-NOT: st.global
// UNROLLED: ld.global.nc.b16
// UNROLLED-NOT: st.global
// UNROLLED: ld.global.nc.b16
// UNROLLED-NOT: st.global
// UNROLLED: ld.global.nc.b16
// UNROLLED-NOT: st.global
// UNROLLED: ld.global.nc.b16
// UNROLLED-NOT: st.global
// UNROLLED: ld.global.nc.b16
// UNROLLED-NOT: st.global
// UNROLLED: ld.global.nc.b16
// UNROLLED-NOT: st.global
// UNROLLED-NOT: ld.global{{(.nc)?}}.b16
// UNROLLED: st.global.b16
// BAD: warning: KILN_CUDA_ROW_UNROLL must be 1 or 8, not '3'; using 8
module {
  func.func @main(%a0: tensor<4x64xf32>, %a1: tensor<4x64x96xf32>, %a2: tensor<256x96xbf16>, %a3: tensor<96xf32>, %a4: tensor<96xf32>) -> (tensor<32x96xf64>, tensor<32x96xf64>, tensor<256x96xbf16>) {
    %823:3 = kiln.fusion multi_output(%a0, %a1, %a2, %a3, %a4) : (tensor<4x64xf32>, tensor<4x64x96xf32>, tensor<256x96xbf16>, tensor<96xf32>, tensor<96xf32>) -> (tensor<32x96xf64>, tensor<32x96xf64>, tensor<256x96xbf16>) {
    ^bb0(%arg448: tensor<4x64xf32>, %arg449: tensor<4x64x96xf32>, %arg450: tensor<256x96xbf16>, %arg451: tensor<96xf32>, %arg452: tensor<96xf32>):
      %2560 = kiln.broadcast_in_dim %arg448, dims = [0, 1] : tensor<4x64xf32> -> tensor<4x64x96xf32>
      %2561 = kiln.mul %arg449, %2560 : tensor<4x64x96xf32>
      %2562 = kiln.convert %arg450 : tensor<256x96xbf16> -> tensor<256x96xf32>
      %2563 = kiln.reshape %2562 : tensor<256x96xf32> -> tensor<4x64x96xf32>
      %2564 = kiln.mul %2563, %2561 : tensor<4x64x96xf32>
      %2565 = kiln.convert %2564 : tensor<4x64x96xf32> -> tensor<4x64x96xf64>
      %2566 = kiln.reshape %2565 : tensor<4x64x96xf64> -> tensor<4x32x2x96xf64>
      %2567 = kiln.reduce sum %2566, dims = [0, 2] : tensor<4x32x2x96xf64> -> tensor<32x96xf64>
      %2568 = kiln.convert %2563 : tensor<4x64x96xf32> -> tensor<4x64x96xf64>
      %2569 = kiln.reshape %2568 : tensor<4x64x96xf64> -> tensor<4x32x2x96xf64>
      %2570 = kiln.reduce sum %2569, dims = [0, 2] : tensor<4x32x2x96xf64> -> tensor<32x96xf64>
      %2571 = kiln.broadcast_in_dim %arg451, dims = [2] : tensor<96xf32> -> tensor<4x64x96xf32>
      %2572 = kiln.broadcast_in_dim %arg452, dims = [2] : tensor<96xf32> -> tensor<4x64x96xf32>
      %2573 = kiln.mul %2561, %2572 : tensor<4x64x96xf32>
      %2574 = kiln.add %2573, %2571 : tensor<4x64x96xf32>
      %2575 = kiln.reshape %2574 : tensor<4x64x96xf32> -> tensor<256x96xf32>
      %2576 = kiln.convert %2575 : tensor<256x96xf32> -> tensor<256x96xbf16>
      kiln.yield %2567, %2570, %2576 : tensor<32x96xf64>, tensor<32x96xf64>, tensor<256x96xbf16>
    }
    return %823#0, %823#1, %823#2 : tensor<32x96xf64>, tensor<32x96xf64>, tensor<256x96xbf16>
  }
}
