// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// CHECK-LABEL: func.func @main
// CHECK: return

// One SGD training step of a two-layer MLP classifier, written by hand in the
// kiln dialect: forward, softmax cross-entropy, the hand-derived backward and
// the parameter update. tests/unit/MlpTrainStepTest.cpp checks every output
// against an independent C++ implementation; the lit tests run it through
// kiln-run.
//
//   h      = x·w1 + b1                                  [B=4, H=16]
//   a      = gelu(h) = 0.5·h·(1 + tanh(c·(h + k·h³)))   c = √(2/π), k = 0.044715
//   logits = a·w2 + b2                                  [B, C=3]
//   loss   = mean_b( logsumexp(logits_b) − logits_b[label_b] )
// Backward:
//   dlogits = (softmax(logits) − onehot(labels)) / B
//   dw2 = aᵀ·dlogits      db2 = Σ_b dlogits      da = dlogits·w2ᵀ
//   gelu'(h) = 0.5·(1 + t) + 0.5·h·(1 − t²)·c·(1 + 3k·h²),  t = tanh(c·(h + k·h³))
//   dh = da ⊙ gelu'(h)
//   dw1 = xᵀ·dh           db1 = Σ_b dh
// Update: p ← p − lr·dp for w1, b1, w2, b2. lr is an input, never a constant.
func.func @main(%x: tensor<4x8xf32>, %labels: tensor<4xi32>,
                %w1: tensor<8x16xf32> {kiln.donate}, %b1: tensor<16xf32> {kiln.donate},
                %w2: tensor<16x3xf32> {kiln.donate}, %b2: tensor<3xf32> {kiln.donate},
                %lr: tensor<f32>)
    -> (tensor<f32>, tensor<8x16xf32>, tensor<16xf32>, tensor<16x3xf32>, tensor<3xf32>) {
  // Constants of the hidden layer's shape.
  %half = kiln.constant dense<0.5> : tensor<4x16xf32>
  %one = kiln.constant dense<1.0> : tensor<4x16xf32>
  %c = kiln.constant dense<0.797884583> : tensor<4x16xf32>
  %k = kiln.constant dense<0.044715> : tensor<4x16xf32>
  %k3 = kiln.constant dense<0.134145> : tensor<4x16xf32>

  // Forward: first layer.
  %xw1 = kiln.dot_general %x, %w1, batch = [] x [], contract = [1] x [0] : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %b1b = kiln.broadcast_in_dim %b1, dims = [1] : tensor<16xf32> -> tensor<4x16xf32>
  %h = kiln.add %xw1, %b1b : tensor<4x16xf32>

  // GELU, tanh approximation.
  %h2 = kiln.mul %h, %h : tensor<4x16xf32>
  %h3 = kiln.mul %h2, %h : tensor<4x16xf32>
  %kh3 = kiln.mul %k, %h3 : tensor<4x16xf32>
  %inner = kiln.add %h, %kh3 : tensor<4x16xf32>
  %u = kiln.mul %c, %inner : tensor<4x16xf32>
  %t = kiln.tanh %u : tensor<4x16xf32>
  %onept = kiln.add %one, %t : tensor<4x16xf32>
  %halfh = kiln.mul %half, %h : tensor<4x16xf32>
  %a = kiln.mul %halfh, %onept : tensor<4x16xf32>

  // Forward: second layer.
  %aw2 = kiln.dot_general %a, %w2, batch = [] x [], contract = [1] x [0] : tensor<4x16xf32>, tensor<16x3xf32> -> tensor<4x3xf32>
  %b2b = kiln.broadcast_in_dim %b2, dims = [1] : tensor<3xf32> -> tensor<4x3xf32>
  %logits = kiln.add %aw2, %b2b : tensor<4x3xf32>

  // Softmax cross-entropy: subtract the row max before exp, log-sum-exp.
  %zmax = kiln.reduce max %logits, dims = [1] : tensor<4x3xf32> -> tensor<4xf32>
  %zmaxb = kiln.broadcast_in_dim %zmax, dims = [0] : tensor<4xf32> -> tensor<4x3xf32>
  %zs = kiln.sub %logits, %zmaxb : tensor<4x3xf32>
  %e = kiln.exp %zs : tensor<4x3xf32>
  %se = kiln.reduce sum %e, dims = [1] : tensor<4x3xf32> -> tensor<4xf32>
  %lse = kiln.log %se : tensor<4xf32>
  %lseb = kiln.broadcast_in_dim %lse, dims = [0] : tensor<4xf32> -> tensor<4x3xf32>
  %logp = kiln.sub %zs, %lseb : tensor<4x3xf32>

  // One-hot labels: iota along the classes compared with the broadcast label.
  %classes = kiln.iota dim = 1 : tensor<4x3xi32>
  %labelsb = kiln.broadcast_in_dim %labels, dims = [0] : tensor<4xi32> -> tensor<4x3xi32>
  %hit = kiln.compare EQ, %classes, %labelsb : tensor<4x3xi32>
  %onehot = kiln.convert %hit : tensor<4x3xi1> -> tensor<4x3xf32>

  // loss = −Σ onehot·logp / B.
  %picked = kiln.mul %onehot, %logp : tensor<4x3xf32>
  %total = kiln.reduce sum %picked, dims = [0, 1] : tensor<4x3xf32> -> tensor<f32>
  %neg_inv_b = kiln.constant dense<-0.25> : tensor<f32>
  %loss = kiln.mul %total, %neg_inv_b : tensor<f32>

  // Backward: dlogits = (softmax − onehot) / B.
  %seb = kiln.broadcast_in_dim %se, dims = [0] : tensor<4xf32> -> tensor<4x3xf32>
  %softmax = kiln.div %e, %seb : tensor<4x3xf32>
  %diff = kiln.sub %softmax, %onehot : tensor<4x3xf32>
  %inv_b = kiln.constant dense<0.25> : tensor<4x3xf32>
  %dlogits = kiln.mul %diff, %inv_b : tensor<4x3xf32>

  // Second layer gradients.
  %dw2 = kiln.dot_general %a, %dlogits, batch = [] x [], contract = [0] x [0] : tensor<4x16xf32>, tensor<4x3xf32> -> tensor<16x3xf32>
  %db2 = kiln.reduce sum %dlogits, dims = [0] : tensor<4x3xf32> -> tensor<3xf32>
  %da = kiln.dot_general %dlogits, %w2, batch = [] x [], contract = [1] x [1] : tensor<4x3xf32>, tensor<16x3xf32> -> tensor<4x16xf32>

  // GELU derivative.
  %t2 = kiln.mul %t, %t : tensor<4x16xf32>
  %one_minus_t2 = kiln.sub %one, %t2 : tensor<4x16xf32>
  %k3h2 = kiln.mul %k3, %h2 : tensor<4x16xf32>
  %one_plus_k3h2 = kiln.add %one, %k3h2 : tensor<4x16xf32>
  %du_dh = kiln.mul %c, %one_plus_k3h2 : tensor<4x16xf32>
  %tail0 = kiln.mul %halfh, %one_minus_t2 : tensor<4x16xf32>
  %tail = kiln.mul %tail0, %du_dh : tensor<4x16xf32>
  %head = kiln.mul %half, %onept : tensor<4x16xf32>
  %gelu_grad = kiln.add %head, %tail : tensor<4x16xf32>
  %dh = kiln.mul %da, %gelu_grad : tensor<4x16xf32>

  // First layer gradients.
  %dw1 = kiln.dot_general %x, %dh, batch = [] x [], contract = [0] x [0] : tensor<4x8xf32>, tensor<4x16xf32> -> tensor<8x16xf32>
  %db1 = kiln.reduce sum %dh, dims = [0] : tensor<4x16xf32> -> tensor<16xf32>

  // SGD: p − lr·dp.
  %lr_w1 = kiln.broadcast_in_dim %lr, dims = [] : tensor<f32> -> tensor<8x16xf32>
  %step_w1 = kiln.mul %lr_w1, %dw1 : tensor<8x16xf32>
  %new_w1 = kiln.sub %w1, %step_w1 : tensor<8x16xf32>
  %lr_b1 = kiln.broadcast_in_dim %lr, dims = [] : tensor<f32> -> tensor<16xf32>
  %step_b1 = kiln.mul %lr_b1, %db1 : tensor<16xf32>
  %new_b1 = kiln.sub %b1, %step_b1 : tensor<16xf32>
  %lr_w2 = kiln.broadcast_in_dim %lr, dims = [] : tensor<f32> -> tensor<16x3xf32>
  %step_w2 = kiln.mul %lr_w2, %dw2 : tensor<16x3xf32>
  %new_w2 = kiln.sub %w2, %step_w2 : tensor<16x3xf32>
  %lr_b2 = kiln.broadcast_in_dim %lr, dims = [] : tensor<f32> -> tensor<3xf32>
  %step_b2 = kiln.mul %lr_b2, %db2 : tensor<3xf32>
  %new_b2 = kiln.sub %b2, %step_b2 : tensor<3xf32>

  return %loss, %new_w1, %new_b1, %new_w2, %new_b2 : tensor<f32>, tensor<8x16xf32>, tensor<16xf32>, tensor<16x3xf32>, tensor<3xf32>
}
