// kiln-lower-cross-entropy writes the fused linear cross-entropy out chunk
// by chunk: rows split so that one chunk's logits fit max-chunk-bytes (80
// here; a row of 10 f32 logits takes 40 bytes, so 4 rows make two chunks
// of 2). Each chunk reads hidden, weight and labels (and the gradient, the
// incoming loss gradient) through a kiln.optimization_barrier that also
// takes the previous chunk's result, so chunks run one after the other;
// the gradient sums the chunks' weight gradients and concatenates their
// hidden gradients. With the default budget (prefix WHOLE) each op is one
// chunk, the negative twin: nothing is sliced or concatenated. A gradient
// whose loss_grad is not one broadcast scalar (@grad_two_chunks) recomputes
// the logits; one that is (@gradients_in_forward) is computed in the
// forward pass.
// RUN: kiln-opt %s --split-input-file --kiln-lower-cross-entropy="max-chunk-bytes=80" | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-lower-cross-entropy | FileCheck %s --check-prefix=WHOLE
// With vocab-multiple=16 (prefix PAD) the 10 weight rows are padded to 16
// once, the padded logits are −inf before the softmax (the label's logit
// is picked from the unmasked product), and the weight gradient is sliced
// back to 10 rows; WHOLE (multiple 1) is its negative twin: no pad.
// RUN: kiln-opt %s --split-input-file --kiln-lower-cross-entropy="vocab-multiple=16" | FileCheck %s --check-prefix=PAD

// CHECK-LABEL: func.func @loss_two_chunks(
// CHECK-SAME: %[[H:[^:]+]]: tensor<4x3xf32>, %[[W:[^:]+]]: tensor<10x3xf32>, %[[Y:[^:]+]]: tensor<4xi64>
// CHECK-NOT: kiln.fused_linear_cross_entropy
// CHECK: %[[T0:.+]]:3 = kiln.optimization_barrier %[[H]], %[[W]], %[[Y]] :
// CHECK: %[[H0:.+]] = kiln.slice %[[T0]]#0, start = [0, 0], limit = [2, 3]
// CHECK: %[[X0:.+]] = kiln.dot_general %[[H0]], %[[T0]]#1, batch = [] x [], contract = [1] x [1] {{.*}} -> tensor<2x10xf32>
// CHECK: kiln.reduce max %[[X0]], dims = [1]
// CHECK: kiln.exp
// CHECK: kiln.log
// CHECK: %[[Y0:.+]] = kiln.slice %[[T0]]#2, start = [0], limit = [2]
// CHECK: kiln.iota dim = 1 : tensor<2x10xi64>
// CHECK: kiln.compare EQ
// CHECK: kiln.compare NE, %[[Y0]]
// CHECK: %[[L0:.+]] = kiln.select {{.*}} : tensor<2xi1>, tensor<2xf32>
// CHECK: %[[T1:.+]]:4 = kiln.optimization_barrier %[[H]], %[[W]], %[[Y]], %[[L0]] :
// CHECK: kiln.slice %[[T1]]#0, start = [2, 0], limit = [4, 3]
// CHECK: %[[L1:.+]] = kiln.select {{.*}} : tensor<2xi1>, tensor<2xf32>
// CHECK: %[[L:.+]] = kiln.concatenate %[[L0]], %[[L1]], dim = 0
// CHECK: return %[[L]]
// WHOLE-LABEL: func.func @loss_two_chunks(
// WHOLE-NOT: kiln.pad
// WHOLE-NOT: kiln.slice
// WHOLE-NOT: kiln.concatenate
// WHOLE: kiln.dot_general {{.*}} -> tensor<4x10xf32>
// WHOLE-NOT: kiln.fused_linear_cross_entropy
// PAD-LABEL: func.func @loss_two_chunks(
// PAD-SAME: %[[H:[^:]+]]: tensor<4x3xf32>, %[[W:[^:]+]]: tensor<10x3xf32>
// PAD: %[[WP:.+]] = kiln.pad %[[W]], %{{.+}}, low = [0, 0], high = [6, 0] : tensor<10x3xf32>, tensor<f32> -> tensor<16x3xf32>
// PAD: %[[T:.+]]:3 = kiln.optimization_barrier %[[H]], %[[WP]],
// PAD: %[[P:.+]] = kiln.dot_general %[[T]]#0, %[[T]]#1, {{.*}} -> tensor<4x16xf32>
// PAD: %[[REAL:.+]] = kiln.compare LT, %{{.+}}, %{{.+}} : tensor<4x16xi64>
// PAD: %[[NEGINF:.+]] = kiln.constant dense<0xFF800000> : tensor<f32>
// PAD: %[[INF:.+]] = kiln.broadcast_in_dim %[[NEGINF]]
// PAD: %[[L:.+]] = kiln.select %[[REAL]], %[[P]], %[[INF]] : tensor<4x16xi1>, tensor<4x16xf32>
// PAD: kiln.reduce max %[[L]], dims = [1]
// PAD: kiln.select %{{.+}}, %[[P]], %{{.+}} : tensor<4x16xi1>, tensor<4x16xf32>
func.func @loss_two_chunks(%h: tensor<4x3xf32>, %w: tensor<10x3xf32>, %y: tensor<4xi64>) -> tensor<4xf32> {
  %l = kiln.fused_linear_cross_entropy %h, %w, %y {ignore_index = -100 : i64} : tensor<4x3xf32>, tensor<10x3xf32>, tensor<4xi64> -> tensor<4xf32>
  return %l : tensor<4xf32>
}

// -----

// The gradient: chunk 1 waits for chunk 0's weight gradient (the barrier
// takes it), recomputes its logits, and adds its weight gradient to it.
// CHECK-LABEL: func.func @grad_two_chunks(
// CHECK-SAME: %[[H:[^:]+]]: tensor<4x3xf32>, %[[W:[^:]+]]: tensor<10x3xf32>, %[[Y:[^:]+]]: tensor<4xi64>, %[[G:[^:]+]]: tensor<4xf32>
// CHECK: %[[T0:.+]]:4 = kiln.optimization_barrier %[[H]], %[[W]], %[[Y]], %[[G]] :
// CHECK: %[[H0:.+]] = kiln.slice %[[T0]]#0, start = [0, 0], limit = [2, 3]
// CHECK: kiln.dot_general %[[H0]], %[[T0]]#1, {{.*}} -> tensor<2x10xf32>
// CHECK: kiln.slice %[[T0]]#3, start = [0], limit = [2]
// CHECK: %[[D0:.+]] = kiln.mul {{.*}} : tensor<2x10xf32>
// CHECK: %[[DH0:.+]] = kiln.dot_general %[[D0]], %[[T0]]#1, batch = [] x [], contract = [1] x [0] {{.*}} -> tensor<2x3xf32>
// CHECK: %[[DW0:.+]] = kiln.dot_general %[[D0]], %[[H0]], batch = [] x [], contract = [0] x [0] {{.*}} -> tensor<10x3xf32>
// CHECK: %[[T1:.+]]:5 = kiln.optimization_barrier %[[H]], %[[W]], %[[Y]], %[[G]], %[[DW0]] :
// CHECK: %[[DH1:.+]] = kiln.dot_general {{.*}} -> tensor<2x3xf32>
// CHECK: %[[DW1:.+]] = kiln.dot_general {{.*}} -> tensor<10x3xf32>
// CHECK: %[[DW:.+]] = kiln.add %[[DW0]], %[[DW1]] : tensor<10x3xf32>
// CHECK: %[[DH:.+]] = kiln.concatenate %[[DH0]], %[[DH1]], dim = 0
// CHECK: return %[[DH]], %[[DW]]
// WHOLE-LABEL: func.func @grad_two_chunks(
// WHOLE-NOT: kiln.pad
// WHOLE-NOT: kiln.concatenate
// WHOLE-NOT: kiln.add {{.*}} : tensor<10x3xf32>
// WHOLE: return
// PAD-LABEL: func.func @grad_two_chunks(
// PAD: kiln.pad {{.*}} -> tensor<16x3xf32>
// PAD: %[[DW:.+]] = kiln.dot_general {{.*}} contract = [0] x [0] : tensor<4x16xf32>, tensor<4x3xf32> -> tensor<16x3xf32>
// PAD: %[[DW10:.+]] = kiln.slice %[[DW]], start = [0, 0], limit = [10, 3]
// PAD: return %{{.+}}, %[[DW10]] : tensor<4x3xf32>, tensor<10x3xf32>
func.func @grad_two_chunks(%h: tensor<4x3xf32>, %w: tensor<10x3xf32>, %y: tensor<4xi64>, %g: tensor<4xf32>) -> (tensor<4x3xf32>, tensor<10x3xf32>) {
  %dh, %dw = kiln.fused_linear_cross_entropy_grad %h, %w, %y, %g {ignore_index = -100 : i64} : tensor<4x3xf32>, tensor<10x3xf32>, tensor<4xi64>, tensor<4xf32> -> tensor<4x3xf32>, tensor<10x3xf32>
  return %dh, %dw : tensor<4x3xf32>, tensor<10x3xf32>
}

// -----

// bf16 operands: logits and softmax in f32, the result converted back.
// CHECK-LABEL: func.func @bf16_computes_in_f32(
// CHECK: kiln.convert {{.*}} : tensor<4x3xbf16> -> tensor<4x3xf32>
// CHECK: kiln.dot_general {{.*}} -> tensor<2x10xf32>
// CHECK: kiln.convert {{.*}} : tensor<4xf32> -> tensor<4xbf16>
func.func @bf16_computes_in_f32(%h: tensor<4x3xbf16>, %w: tensor<10x3xbf16>, %y: tensor<4xi32>) -> tensor<4xbf16> {
  %l = kiln.fused_linear_cross_entropy %h, %w, %y {ignore_index = -100 : i64} : tensor<4x3xbf16>, tensor<10x3xbf16>, tensor<4xi32> -> tensor<4xbf16>
  return %l : tensor<4xbf16>
}

// -----

// A training step: the gradient's loss_grad is one scalar broadcast to
// every row (a mean's gradient), and the forward op with the same operands
// comes first. The forward then computes each chunk's unit gradients (three
// GEMMs per chunk: logits, hidden gradient, weight gradient) and the
// gradient op becomes two scalings: no logits are recomputed after %s.
// CHECK-LABEL: func.func @gradients_in_forward(
// CHECK-SAME: %[[H:[^:]+]]: tensor<4x3xf32>, %[[W:[^:]+]]: tensor<10x3xf32>, %[[Y:[^:]+]]: tensor<4xi64>, %[[S:[^:]+]]: tensor<f32>
// CHECK: %[[T0:.+]]:3 = kiln.optimization_barrier %[[H]], %[[W]], %[[Y]] :
// CHECK: kiln.dot_general {{.*}} contract = [1] x [1] {{.*}} -> tensor<2x10xf32>
// CHECK: %[[DH0:.+]] = kiln.dot_general {{.*}} contract = [1] x [0] {{.*}} -> tensor<2x3xf32>
// CHECK: %[[DW0:.+]] = kiln.dot_general {{.*}} contract = [0] x [0] {{.*}} -> tensor<10x3xf32>
// CHECK: kiln.optimization_barrier %[[H]], %[[W]], %[[Y]], %[[DW0]] :
// CHECK: %[[DW1:.+]] = kiln.dot_general {{.*}} -> tensor<10x3xf32>
// CHECK: %[[DW:.+]] = kiln.add %[[DW0]], %[[DW1]]
// CHECK: %[[DH:.+]] = kiln.concatenate %[[DH0]], %{{.+}}, dim = 0
// CHECK: %[[G:.+]] = kiln.broadcast_in_dim %[[S]], dims = [] : tensor<f32> -> tensor<4xf32>
// CHECK-NOT: kiln.dot_general
// CHECK: %[[SH:.+]] = kiln.broadcast_in_dim %[[S]], dims = [] : tensor<f32> -> tensor<4x3xf32>
// CHECK: kiln.mul %[[DH]], %[[SH]]
// CHECK: %[[SW:.+]] = kiln.broadcast_in_dim %[[S]], dims = [] : tensor<f32> -> tensor<10x3xf32>
// CHECK: kiln.mul %[[DW]], %[[SW]]
// CHECK-NOT: kiln.dot_general
// CHECK: return
func.func @gradients_in_forward(%h: tensor<4x3xf32>, %w: tensor<10x3xf32>, %y: tensor<4xi64>, %s: tensor<f32>) -> (tensor<4xf32>, tensor<4x3xf32>, tensor<10x3xf32>) {
  %l = kiln.fused_linear_cross_entropy %h, %w, %y {ignore_index = -100 : i64} : tensor<4x3xf32>, tensor<10x3xf32>, tensor<4xi64> -> tensor<4xf32>
  %g = kiln.broadcast_in_dim %s, dims = [] : tensor<f32> -> tensor<4xf32>
  %dh, %dw = kiln.fused_linear_cross_entropy_grad %h, %w, %y, %g {ignore_index = -100 : i64} : tensor<4x3xf32>, tensor<10x3xf32>, tensor<4xi64>, tensor<4xf32> -> tensor<4x3xf32>, tensor<10x3xf32>
  return %l, %dh, %dw : tensor<4xf32>, tensor<4x3xf32>, tensor<10x3xf32>
}

// -----

// A frozen weight (LoRA's lm_head): nothing reads the weight gradient, so
// neither lowering computes it, no [V, C] GEMM or sum at all; a chunk waits
// for the previous chunk's hidden gradient instead.
// CHECK-LABEL: func.func @frozen_weight_in_forward(
// CHECK: kiln.dot_general {{.*}} contract = [1] x [1] {{.*}} -> tensor<2x10xf32>
// CHECK: %[[DH0:.+]] = kiln.dot_general {{.*}} contract = [1] x [0] {{.*}} -> tensor<2x3xf32>
// CHECK: kiln.optimization_barrier {{.*}}, %[[DH0]] :
// CHECK-NOT: -> tensor<10x3xf32>
// CHECK: return
func.func @frozen_weight_in_forward(%h: tensor<4x3xf32>, %w: tensor<10x3xf32>, %y: tensor<4xi64>, %s: tensor<f32>) -> (tensor<4xf32>, tensor<4x3xf32>) {
  %l = kiln.fused_linear_cross_entropy %h, %w, %y {ignore_index = -100 : i64} : tensor<4x3xf32>, tensor<10x3xf32>, tensor<4xi64> -> tensor<4xf32>
  %g = kiln.broadcast_in_dim %s, dims = [] : tensor<f32> -> tensor<4xf32>
  %dh, %dw = kiln.fused_linear_cross_entropy_grad %h, %w, %y, %g {ignore_index = -100 : i64} : tensor<4x3xf32>, tensor<10x3xf32>, tensor<4xi64>, tensor<4xf32> -> tensor<4x3xf32>, tensor<10x3xf32>
  return %l, %dh : tensor<4xf32>, tensor<4x3xf32>
}

// -----

// CHECK-LABEL: func.func @frozen_weight_gradient(
// CHECK: %[[DH0:.+]] = kiln.dot_general {{.*}} contract = [1] x [0] {{.*}} -> tensor<2x3xf32>
// CHECK: kiln.optimization_barrier {{.*}}, %[[DH0]] :
// CHECK-NOT: -> tensor<10x3xf32>
// CHECK: return
func.func @frozen_weight_gradient(%h: tensor<4x3xf32>, %w: tensor<10x3xf32>, %y: tensor<4xi64>, %g: tensor<4xf32>) -> tensor<4x3xf32> {
  %dh, %dw = kiln.fused_linear_cross_entropy_grad %h, %w, %y, %g {ignore_index = -100 : i64} : tensor<4x3xf32>, tensor<10x3xf32>, tensor<4xi64>, tensor<4xf32> -> tensor<4x3xf32>, tensor<10x3xf32>
  return %dh : tensor<4x3xf32>
}

// -----

// A row of 256 logits is summed in two parts of 128 (one chunk, with the WHOLE
// prefix): each part's max and its sum of exp(x − that max), in one pass
// over the part once fused, then the row's max over the parts' maxima and
// the parts' sums rescaled to it; the label's logit is summed by part too,
// so no reduction reads a whole row. The negative twin: a row of 10
// (@loss_one_part_of_ten) keeps one max and one sum over the row.
// WHOLE-LABEL: func.func @logsumexp_in_parts(
// WHOLE: %[[X:.+]] = kiln.reshape %{{.+}} : tensor<4x256xf32> -> tensor<4x2x128xf32>
// WHOLE: %[[M:.+]] = kiln.reduce max %[[X]], dims = [2] : tensor<4x2x128xf32> -> tensor<4x2xf32>
// WHOLE: kiln.reduce sum %{{.+}}, dims = [2] : tensor<4x2x128xf32> -> tensor<4x2xf32>
// WHOLE: kiln.reduce max %[[M]], dims = [1] : tensor<4x2xf32> -> tensor<4xf32>
// WHOLE: kiln.reduce sum %{{.+}}, dims = [1] : tensor<4x2xf32> -> tensor<4xf32>
// WHOLE: kiln.log
// WHOLE: kiln.reduce sum %{{.+}}, dims = [2] : tensor<4x2x128xf32> -> tensor<4x2xf32>
// WHOLE-NOT: dims = [1] : tensor<4x256xf32>
// WHOLE: return
func.func @logsumexp_in_parts(%h: tensor<4x3xf32>, %w: tensor<256x3xf32>, %y: tensor<4xi64>) -> tensor<4xf32> {
  %l = kiln.fused_linear_cross_entropy %h, %w, %y {ignore_index = -100 : i64} : tensor<4x3xf32>, tensor<256x3xf32>, tensor<4xi64> -> tensor<4xf32>
  return %l : tensor<4xf32>
}

// -----

// WHOLE-LABEL: func.func @loss_one_part_of_ten(
// WHOLE-NOT: kiln.reshape
// WHOLE: kiln.reduce max %{{.+}}, dims = [1] : tensor<4x10xf32> -> tensor<4xf32>
// WHOLE: kiln.reduce sum %{{.+}}, dims = [1] : tensor<4x10xf32> -> tensor<4xf32>
// WHOLE: return
func.func @loss_one_part_of_ten(%h: tensor<4x3xf32>, %w: tensor<10x3xf32>, %y: tensor<4xi64>) -> tensor<4xf32> {
  %l = kiln.fused_linear_cross_entropy %h, %w, %y {ignore_index = -100 : i64} : tensor<4x3xf32>, tensor<10x3xf32>, tensor<4xi64> -> tensor<4xf32>
  return %l : tensor<4xf32>
}
