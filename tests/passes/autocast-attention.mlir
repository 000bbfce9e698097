// With an attention kernel (kiln-autocast's attention=true, the pipeline's
// attention-kernel=true), whole attention ops move to the 16-bit type: q,
// k, v and the result gradient are rounded once (the forward and its
// gradient share the copies; the gradient reads the forward's 16-bit
// result), the rng state and the row statistics stay, the results are
// 16-bit and widened back to f32 for their readers; kiln-lower-attention's
// keep-kernel-attention then leaves them whole (PIPE) while it still
// writes out what no kernel runs: a head dim of 256 (WIDE), scores with a
// soft cap (@capped), and every
// attention op without attention=true (NOKERNEL) or without bf16 (F32).
// RUN: kiln-opt %s --split-input-file --kiln-autocast="attention=true" | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-pipeline="precision=bf16 attention-kernel=true fuse=false schedule=false partition=false" | FileCheck %s --check-prefix=PIPE
// RUN: kiln-opt %s --split-input-file --kiln-pipeline="precision=bf16 fuse=false schedule=false partition=false" | FileCheck %s --check-prefix=NOKERNEL
// RUN: kiln-opt %s --split-input-file --kiln-pipeline="attention-kernel=true fuse=false schedule=false partition=false" | FileCheck %s --check-prefix=F32

// CHECK-LABEL: func.func @attention(
// CHECK-SAME: %[[Q:[^:]+]]: tensor<1x2x8x64xf32>, %[[K:[^:]+]]: tensor<1x2x8x64xf32>, %[[V:[^:]+]]: tensor<1x2x8x64xf32>, %[[G:[^:]+]]: tensor<1x2x8x64xf32>, %[[S:[^:]+]]: tensor<2xi64>
// CHECK-DAG: %[[QB:.+]] = kiln.convert %[[Q]] : tensor<1x2x8x64xf32> -> tensor<1x2x8x64xbf16>
// CHECK-DAG: %[[KB:.+]] = kiln.convert %[[K]] : tensor<1x2x8x64xf32> -> tensor<1x2x8x64xbf16>
// CHECK-DAG: %[[VB:.+]] = kiln.convert %[[V]] : tensor<1x2x8x64xf32> -> tensor<1x2x8x64xbf16>
// CHECK-DAG: %[[GB:.+]] = kiln.convert %[[G]] : tensor<1x2x8x64xf32> -> tensor<1x2x8x64xbf16>
// CHECK: %[[OB:[^,]+]], %[[L:[^ ]+]] = kiln.fused_attention %[[QB]], %[[KB]], %[[VB]], rng = %[[S]] {{.*}} -> tensor<1x2x8x64xbf16>, tensor<1x2x8xf32>
// CHECK: %[[O:.+]] = kiln.convert %[[OB]] : tensor<1x2x8x64xbf16> -> tensor<1x2x8x64xf32>
// CHECK: %[[DQ:[^,]+]], %{{[^,]+}}, %[[DV:[^ ]+]] = kiln.fused_attention_grad %[[QB]], %[[KB]], %[[VB]], %[[OB]], %[[L]], %[[GB]], rng = %[[S]] {{.*}} -> tensor<1x2x8x64xbf16>, tensor<1x2x8x64xbf16>, tensor<1x2x8x64xbf16>
// CHECK-DAG: kiln.convert %[[DQ]] : tensor<1x2x8x64xbf16> -> tensor<1x2x8x64xf32>
// CHECK-DAG: kiln.convert %[[DV]] : tensor<1x2x8x64xbf16> -> tensor<1x2x8x64xf32>
// PIPE-LABEL: func.func @attention(
// PIPE: kiln.fused_attention {{.*}} -> tensor<1x2x8x64xbf16>
// PIPE: kiln.fused_attention_grad {{.*}} -> tensor<1x2x8x64xbf16>, tensor<1x2x8x64xbf16>, tensor<1x2x8x64xbf16>
// PIPE-NOT: kiln.dot_general
// NOKERNEL-LABEL: func.func @attention(
// NOKERNEL-NOT: kiln.fused_attention
// NOKERNEL: kiln.dot_general
// F32-LABEL: func.func @attention(
// F32-NOT: kiln.fused_attention
// F32: kiln.dot_general
func.func @attention(%q: tensor<1x2x8x64xf32>, %k: tensor<1x2x8x64xf32>, %v: tensor<1x2x8x64xf32>, %g: tensor<1x2x8x64xf32>, %s: tensor<2xi64>) -> (tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>) {
  %o, %stats_o = kiln.fused_attention %q, %k, %v, rng = %s {causal, dropout = 0.1 : f64, scale = 0.125 : f64} : tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>, tensor<2xi64> -> tensor<1x2x8x64xf32>, tensor<1x2x8xf32>
  %dq, %dk, %dv = kiln.fused_attention_grad %q, %k, %v, %o, %stats_o, %g, rng = %s {causal, dropout = 0.1 : f64, scale = 0.125 : f64} : tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8xf32>, tensor<1x2x8x64xf32>, tensor<2xi64> -> tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>
  return %o, %dq, %dk, %dv : tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>
}

// -----

// A head dim the kernel does not tile stays f32 and is written out.
// CHECK-LABEL: func.func @wide(
// CHECK-NOT: kiln.convert
// CHECK: kiln.fused_attention {{.*}} -> tensor<1x1x4x256xf32>
// PIPE-LABEL: func.func @wide(
// PIPE-NOT: kiln.fused_attention
// PIPE: kiln.dot_general
func.func @wide(%q: tensor<1x1x4x256xf32>, %k: tensor<1x1x4x256xf32>, %v: tensor<1x1x4x256xf32>) -> tensor<1x1x4x256xf32> {
  %o, %stats_o = kiln.fused_attention %q, %k, %v {causal, scale = 0.0625 : f64} : tensor<1x1x4x256xf32>, tensor<1x1x4x256xf32>, tensor<1x1x4x256xf32> -> tensor<1x1x4x256xf32>, tensor<1x1x4xf32>
  return %o : tensor<1x1x4x256xf32>
}

// -----

// A soft cap on the scores (Gemma 2's) is in no kernel: its attention
// stays f32 and is written out, with the cap's tanh; the same op without
// the cap (@uncapped, the negative twin) is kept for the kernel.
// CHECK-LABEL: func.func @capped(
// CHECK-NOT: kiln.convert
// CHECK: kiln.fused_attention {{.*}}softcap = 5.000000e+01 : f64{{.*}} -> tensor<1x1x4x64xf32>
// PIPE-LABEL: func.func @capped(
// PIPE-NOT: kiln.fused_attention
// PIPE: kiln.tanh
// PIPE-LABEL: func.func @uncapped(
// PIPE: kiln.fused_attention {{.*}} -> tensor<1x1x4x64xbf16>
func.func @capped(%q: tensor<1x1x4x64xf32>, %k: tensor<1x1x4x64xf32>, %v: tensor<1x1x4x64xf32>) -> tensor<1x1x4x64xf32> {
  %o, %stats_o = kiln.fused_attention %q, %k, %v {causal, scale = 0.125 : f64, softcap = 50.0 : f64} : tensor<1x1x4x64xf32>, tensor<1x1x4x64xf32>, tensor<1x1x4x64xf32> -> tensor<1x1x4x64xf32>, tensor<1x1x4xf32>
  return %o : tensor<1x1x4x64xf32>
}
func.func @uncapped(%q: tensor<1x1x4x64xf32>, %k: tensor<1x1x4x64xf32>, %v: tensor<1x1x4x64xf32>) -> tensor<1x1x4x64xf32> {
  %o, %stats_o = kiln.fused_attention %q, %k, %v {causal, scale = 0.125 : f64} : tensor<1x1x4x64xf32>, tensor<1x1x4x64xf32>, tensor<1x1x4x64xf32> -> tensor<1x1x4x64xf32>, tensor<1x1x4xf32>
  return %o : tensor<1x1x4x64xf32>
}
