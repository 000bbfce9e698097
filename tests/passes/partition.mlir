// kiln-partition: in a function with a gradient seed, a minimum cut decides
// what the forward keeps for the backward and what the backward recomputes.
// Values here are 32 to 128 bytes: recomputing costs 1 (the default, 64 KiB,
// keeps every value this small; the last case checks that).
// RUN: kiln-opt %s --split-input-file --kiln-partition="recompute-cost=1" | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-partition | FileCheck %s --check-prefix=SMALL

// The backward reads 1 - t² and 2t, both elementwise in t = tanh(h): saving
// t alone is cheaper than saving both, so both are recomputed from t, read
// through a barrier with the incoming gradient, and the forward computes
// neither.
// CHECK-LABEL: func.func @recompute_from_one_saved_value(
// CHECK: %[[T:.+]] = kiln.tanh
// CHECK-NOT: kiln.mul
// CHECK: %[[S:.+]]:2 = kiln.optimization_barrier %{{.+}}, %{{.+}} {gradient_seed}
// CHECK: %[[G:.+]] = kiln.broadcast_in_dim %[[S]]#0
// CHECK: %[[TIED:.+]]:2 = kiln.optimization_barrier %[[T]], %[[S]]#0 :
// CHECK: kiln.mul %[[TIED]]#0, %[[TIED]]#0
// CHECK: kiln.sub
// CHECK: kiln.mul %[[G]],
func.func @recompute_from_one_saved_value(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>) {
  %h = kiln.dot_general %x, %w, batch = [] x [], contract = [1] x [0] : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %t = kiln.tanh %h : tensor<4x8xf32>
  %tt = kiln.mul %t, %t : tensor<4x8xf32>
  %c1 = kiln.constant dense<1.0> : tensor<4x8xf32>
  %d = kiln.sub %c1, %tt : tensor<4x8xf32>
  %c2 = kiln.constant dense<2.0> : tensor<4x8xf32>
  %t2 = kiln.mul %t, %c2 : tensor<4x8xf32>
  %y = kiln.reduce sum %t, dims = [0, 1] : tensor<4x8xf32> -> tensor<f32>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %s:2 = kiln.optimization_barrier %one, %y {gradient_seed} : tensor<f32>, tensor<f32>
  %g = kiln.broadcast_in_dim %s#0, dims = [] : tensor<f32> -> tensor<4x8xf32>
  %dh = kiln.mul %g, %d : tensor<4x8xf32>
  %e = kiln.mul %g, %t2 : tensor<4x8xf32>
  return %dh, %e, %y : tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>
}

// -----

// The twin where recomputing would mean running a GEMM again: the GEMM's
// result is saved and only the elementwise ops move to the backward.
// CHECK-LABEL: func.func @gemm_is_saved_not_recomputed(
// CHECK: %[[H:.+]] = kiln.dot_general
// CHECK-NOT: kiln.dot_general
// CHECK: kiln.optimization_barrier %[[H]], %{{.+}} :
// CHECK-NOT: kiln.dot_general
// CHECK: return
func.func @gemm_is_saved_not_recomputed(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>) {
  %h = kiln.dot_general %x, %w, batch = [] x [], contract = [1] x [0] : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %hh = kiln.mul %h, %h : tensor<4x8xf32>
  %c2 = kiln.constant dense<2.0> : tensor<4x8xf32>
  %h2 = kiln.mul %h, %c2 : tensor<4x8xf32>
  %y = kiln.reduce sum %h, dims = [0, 1] : tensor<4x8xf32> -> tensor<f32>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %s:2 = kiln.optimization_barrier %one, %y {gradient_seed} : tensor<f32>, tensor<f32>
  %g = kiln.broadcast_in_dim %s#0, dims = [] : tensor<f32> -> tensor<4x8xf32>
  %a = kiln.mul %g, %hh : tensor<4x8xf32>
  %b = kiln.mul %g, %h2 : tensor<4x8xf32>
  return %a, %b, %y : tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>
}

// -----

// Dropout: the backward regenerates the mask from the rng state (an
// argument, free to read) instead of keeping it from the forward.
// CHECK-LABEL: func.func @dropout_mask_regenerated(
// CHECK-SAME: %[[X:[^:]+]]: tensor<4x8xf32>, %[[STATE:[^:]+]]: tensor<2xi64>
// CHECK: kiln.rng_uniform %[[STATE]]
// CHECK: kiln.optimization_barrier %{{.+}}, %{{.+}} {gradient_seed}
// CHECK: %[[TIED:.+]]:2 = kiln.optimization_barrier %[[STATE]], %{{.+}} :
// CHECK: kiln.rng_uniform %[[TIED]]#0
func.func @dropout_mask_regenerated(%x: tensor<4x8xf32>, %state: tensor<2xi64>) -> (tensor<4x8xf32>, tensor<f32>) {
  %u, %ns = kiln.rng_uniform %state : tensor<2xi64> -> tensor<4x8xf32>
  %p = kiln.constant dense<0.1> : tensor<4x8xf32>
  %keep = kiln.compare GE, %u, %p : tensor<4x8xf32>
  %zero = kiln.constant dense<0.0> : tensor<4x8xf32>
  %y = kiln.select %keep, %x, %zero : tensor<4x8xi1>, tensor<4x8xf32>
  %l = kiln.reduce sum %y, dims = [0, 1] : tensor<4x8xf32> -> tensor<f32>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %s:2 = kiln.optimization_barrier %one, %l {gradient_seed} : tensor<f32>, tensor<f32>
  %g = kiln.broadcast_in_dim %s#0, dims = [] : tensor<f32> -> tensor<4x8xf32>
  %dx = kiln.select %keep, %g, %zero : tensor<4x8xi1>, tensor<4x8xf32>
  return %dx, %l : tensor<4x8xf32>, tensor<f32>
}

// -----

// Without a gradient seed there is no backward pass: nothing changes.
// CHECK-LABEL: func.func @no_seed_no_change(
// CHECK: kiln.tanh
// CHECK-NEXT: kiln.mul
// CHECK-NEXT: kiln.sub
// CHECK-NOT: kiln.optimization_barrier
// CHECK: return
func.func @no_seed_no_change(%h: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %t = kiln.tanh %h : tensor<4x8xf32>
  %tt = kiln.mul %t, %t : tensor<4x8xf32>
  %d = kiln.sub %h, %tt : tensor<4x8xf32>
  return %d : tensor<4x8xf32>
}

// -----

// With the default recompute-cost (64 KiB), a 128-byte value is kept: the
// first case again, where nothing moves to the backward pass.
// SMALL-LABEL: func.func @small_values_are_kept(
// SMALL: kiln.tanh
// SMALL: kiln.mul
// SMALL: kiln.sub
// SMALL: {gradient_seed}
// SMALL-NOT: kiln.tanh
// SMALL-NOT: kiln.optimization_barrier
// SMALL: return
func.func @small_values_are_kept(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>) {
  %h = kiln.dot_general %x, %w, batch = [] x [], contract = [1] x [0] : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %t = kiln.tanh %h : tensor<4x8xf32>
  %tt = kiln.mul %t, %t : tensor<4x8xf32>
  %c1 = kiln.constant dense<1.0> : tensor<4x8xf32>
  %d = kiln.sub %c1, %tt : tensor<4x8xf32>
  %c2 = kiln.constant dense<2.0> : tensor<4x8xf32>
  %t2 = kiln.mul %t, %c2 : tensor<4x8xf32>
  %y = kiln.reduce sum %t, dims = [0, 1] : tensor<4x8xf32> -> tensor<f32>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %s:2 = kiln.optimization_barrier %one, %y {gradient_seed} : tensor<f32>, tensor<f32>
  %g = kiln.broadcast_in_dim %s#0, dims = [] : tensor<f32> -> tensor<4x8xf32>
  %dh = kiln.mul %g, %d : tensor<4x8xf32>
  %e = kiln.mul %g, %t2 : tensor<4x8xf32>
  return %dh, %e, %y : tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>
}

// -----

// A trained parameter (an argument the step updates: it has an output
// alias) rounded to bf16 for its products: the rounded copy is saved for
// the backward pass, never recomputed from the weight, which would be a
// kernel every step for a copy that does not grow with the batch (as
// torch.autocast keeps the casts of weights that require grad).
// CHECK-LABEL: func.func @trained_weight_rounded_once(
// CHECK: %[[WB:.+]] = kiln.convert %{{.+}} : tensor<8x8xf32> -> tensor<8x8xbf16>
// CHECK-NOT: tensor<8x8xf32> -> tensor<8x8xbf16>
// CHECK: {gradient_seed}
// CHECK-NOT: tensor<8x8xf32> -> tensor<8x8xbf16>
// CHECK: kiln.dot_general %{{.+}}, %[[WB]], batch = [] x [], contract = [1] x [1]
// CHECK: return
func.func @trained_weight_rounded_once(%x: tensor<4x8xbf16>, %w: tensor<8x8xf32> {kiln.donate, kiln.output_alias = 1 : i64}) -> (tensor<4x8xf32>, tensor<8x8xf32>, tensor<f32>) {
  %wb = kiln.convert %w : tensor<8x8xf32> -> tensor<8x8xbf16>
  %h = kiln.dot_general %x, %wb, batch = [] x [], contract = [1] x [0] : tensor<4x8xbf16>, tensor<8x8xbf16> -> tensor<4x8xbf16>
  %hf = kiln.convert %h : tensor<4x8xbf16> -> tensor<4x8xf32>
  %y = kiln.reduce sum %hf, dims = [0, 1] : tensor<4x8xf32> -> tensor<f32>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %s:2 = kiln.optimization_barrier %one, %y {gradient_seed} : tensor<f32>, tensor<f32>
  %g = kiln.broadcast_in_dim %s#0, dims = [] : tensor<f32> -> tensor<4x8xf32>
  %gb = kiln.convert %g : tensor<4x8xf32> -> tensor<4x8xbf16>
  %dx = kiln.dot_general %gb, %wb, batch = [] x [], contract = [1] x [1] : tensor<4x8xbf16>, tensor<8x8xbf16> -> tensor<4x8xbf16>
  %dxf = kiln.convert %dx : tensor<4x8xbf16> -> tensor<4x8xf32>
  %w2 = kiln.add %w, %w : tensor<8x8xf32>
  return %dxf, %w2, %y : tensor<4x8xf32>, tensor<8x8xf32>, tensor<f32>
}

// -----

// Its twin: a frozen weight (no output alias, a LoRA base in f32) is
// rounded again in the backward pass, from the weight read through a
// barrier with the gradient: its copy would be half its own size, held
// from the forward pass to the backward.
// CHECK-LABEL: func.func @frozen_weight_rounded_again(
// CHECK: kiln.convert %{{.+}} : tensor<8x8xf32> -> tensor<8x8xbf16>
// CHECK: {gradient_seed}
// CHECK: %[[TIED:.+]]:2 = kiln.optimization_barrier
// CHECK: %[[WB:.+]] = kiln.convert %[[TIED]]#0 : tensor<8x8xf32> -> tensor<8x8xbf16>
// CHECK: kiln.dot_general %{{.+}}, %[[WB]], batch = [] x [], contract = [1] x [1]
// CHECK: return
func.func @frozen_weight_rounded_again(%x: tensor<4x8xbf16>, %w: tensor<8x8xf32>) -> (tensor<4x8xf32>, tensor<f32>) {
  %wb = kiln.convert %w : tensor<8x8xf32> -> tensor<8x8xbf16>
  %h = kiln.dot_general %x, %wb, batch = [] x [], contract = [1] x [0] : tensor<4x8xbf16>, tensor<8x8xbf16> -> tensor<4x8xbf16>
  %hf = kiln.convert %h : tensor<4x8xbf16> -> tensor<4x8xf32>
  %y = kiln.reduce sum %hf, dims = [0, 1] : tensor<4x8xf32> -> tensor<f32>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %s:2 = kiln.optimization_barrier %one, %y {gradient_seed} : tensor<f32>, tensor<f32>
  %g = kiln.broadcast_in_dim %s#0, dims = [] : tensor<f32> -> tensor<4x8xf32>
  %gb = kiln.convert %g : tensor<4x8xf32> -> tensor<4x8xbf16>
  %dx = kiln.dot_general %gb, %wb, batch = [] x [], contract = [1] x [1] : tensor<4x8xbf16>, tensor<8x8xbf16> -> tensor<4x8xbf16>
  %dxf = kiln.convert %dx : tensor<4x8xbf16> -> tensor<4x8xf32>
  return %dxf, %y : tensor<4x8xf32>, tensor<f32>
}
