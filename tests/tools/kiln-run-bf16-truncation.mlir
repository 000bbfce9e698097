// A fused kernel with bf16 results (Llama's attention backward under
// --bf16, cut from its graph: RoPE's gradient halves added, scaled and
// rounded to bf16) runs on the cpu backend as on the reference evaluator.
// On a CPU without AVX512-BF16, LLVM emitted this kernel's f32 → bf16
// rounding as a call of __truncsfbf2, which libgcc lacks before GCC 13, and
// the kernel library failed to load ("undefined symbol: __truncsfbf2");
// each kernel object now defines it (compiler/cpu/CodeGen.cpp).
// RUN: kiln-run --backend cpu --inputs random %s > %t.cpu
// RUN: kiln-run --backend reference --inputs random %s > %t.reference
// RUN: diff %t.cpu %t.reference
// RUN: FileCheck %s < %t.cpu
// CHECK: %result0 = dense<{{.*}}> : tensor<16x32xbf16>
// CHECK: %result1 = dense<{{.*}}> : tensor<16x32xbf16>
func.func @main(%a0: tensor<8x8xf32>, %a1: tensor<2x4x8x8xbf16>, %a2: tensor<2x4x8x4xf32>, %a3: tensor<2x4x8x4xf32>) -> (tensor<16x32xbf16>, tensor<16x32xbf16>) {
    %141:2 = kiln.fusion multi_output(%a0, %a1, %a2, %a3) : (tensor<8x8xf32>, tensor<2x4x8x8xbf16>, tensor<2x4x8x4xf32>, tensor<2x4x8x4xf32>) -> (tensor<16x32xbf16>, tensor<16x32xbf16>) {
    ^bb0(%arg56: tensor<8x8xf32>, %arg57: tensor<2x4x8x8xbf16>, %arg58: tensor<2x4x8x4xf32>, %arg59: tensor<2x4x8x4xf32>):
      %184 = kiln.broadcast_in_dim %arg56, dims = [2, 3] : tensor<8x8xf32> -> tensor<2x4x8x8xf32>
      %185 = kiln.convert %arg57 : tensor<2x4x8x8xbf16> -> tensor<2x4x8x8xf32>
      %186 = kiln.mul %185, %184 : tensor<2x4x8x8xf32>
      %187 = kiln.constant dense<0.000000e+00> : tensor<f32>
      %188 = kiln.pad %arg58, %187, low = [0, 0, 0, 4], high = [0, 0, 0, 0] : tensor<2x4x8x4xf32>, tensor<f32> -> tensor<2x4x8x8xf32>
      %189 = kiln.pad %arg59, %187, low = [0, 0, 0, 0], high = [0, 0, 0, 4] : tensor<2x4x8x4xf32>, tensor<f32> -> tensor<2x4x8x8xf32>
      %190 = kiln.add %189, %188 : tensor<2x4x8x8xf32>
      %191 = kiln.add %190, %186 : tensor<2x4x8x8xf32>
      %192 = kiln.transpose %191, perm = [0, 2, 1, 3] : tensor<2x4x8x8xf32> -> tensor<2x8x4x8xf32>
      %193 = kiln.reshape %192 : tensor<2x8x4x8xf32> -> tensor<2x8x32xf32>
      %194 = kiln.constant dense<2.000000e+00> : tensor<2x8x32xf32>
      %195 = kiln.mul %193, %194 : tensor<2x8x32xf32>
      %196 = kiln.reshape %195 : tensor<2x8x32xf32> -> tensor<16x32xf32>
      %197 = kiln.convert %196 : tensor<16x32xf32> -> tensor<16x32xbf16>
      %198 = kiln.reshape %192 : tensor<2x8x4x8xf32> -> tensor<16x32xf32>
      %199 = kiln.convert %198 : tensor<16x32xf32> -> tensor<16x32xbf16>
      kiln.yield %197, %199 : tensor<16x32xbf16>, tensor<16x32xbf16>
    }
    return %141#0, %141#1 : tensor<16x32xbf16>, tensor<16x32xbf16>
}
