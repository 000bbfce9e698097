// kiln-move-ties: a tie (a barrier operand whose result nothing reads)
// moves off a value that would be stored only for it: off a widening
// convert or one only ties read, to the convert's operand; off a fusion
// result nothing else reads, to a read result of the same fusion; off a
// backward value computed elementwise, up to the product or small value it
// waits for. What nothing reads any more goes.
// RUN: kiln-opt %s --split-input-file --kiln-move-ties | FileCheck %s

// A 16-bit product's result widened for its readers (kiln-autocast's
// form): the tie waits for the product itself, and the convert is left to
// its reader, where fusion puts it, instead of being stored.
// CHECK-LABEL: func.func @tie_on_a_widened_product_moves_to_the_product(
// CHECK-SAME: %[[M:[^:]+]]: tensor<16x16xbf16>, %[[W:[^:]+]]: tensor<16x16xf32>
// CHECK-NEXT: %[[G:.+]] = kiln.dot_general %[[M]], %[[M]]
// CHECK-NEXT: %[[C:.+]] = kiln.convert %[[G]] : tensor<16x16xbf16> -> tensor<16x16xf32>
// CHECK-NEXT: %[[B:.+]]:2 = kiln.optimization_barrier %[[W]], %[[G]] : tensor<16x16xf32>, tensor<16x16xbf16>
// CHECK-NEXT: %[[E:.+]] = kiln.exp %[[B]]#0
// CHECK-NEXT: %[[S:.+]] = kiln.add %[[C]], %[[E]]
func.func @tie_on_a_widened_product_moves_to_the_product(%m: tensor<16x16xbf16>, %w: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %g = kiln.dot_general %m, %m, batch = [] x [], contract = [1] x [0] : tensor<16x16xbf16>, tensor<16x16xbf16> -> tensor<16x16xbf16>
  %c = kiln.convert %g : tensor<16x16xbf16> -> tensor<16x16xf32>
  %b:2 = kiln.optimization_barrier %w, %c : tensor<16x16xf32>, tensor<16x16xf32>
  %e = kiln.exp %b#0 : tensor<16x16xf32>
  %s = kiln.add %c, %e : tensor<16x16xf32>
  return %s : tensor<16x16xf32>
}

// -----

// A narrowing convert that something else reads keeps its tie (its
// operand is the larger buffer); a barrier operand whose result is read
// is no tie.
// CHECK-LABEL: func.func @tie_on_a_read_narrowing_convert_stays(
// CHECK: kiln.optimization_barrier %{{.+}}, %{{.+}}, %[[N:.+]] : tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xbf16>
func.func @tie_on_a_read_narrowing_convert_stays(%x: tensor<16x16xf32>, %w: tensor<16x16xf32>) -> (tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xbf16>) {
  %n = kiln.convert %x : tensor<16x16xf32> -> tensor<16x16xbf16>
  %b:3 = kiln.optimization_barrier %w, %x, %n : tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xbf16>
  %e = kiln.exp %b#0 : tensor<16x16xf32>
  return %e, %b#1, %n : tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xbf16>
}

// -----

// A tie (a barrier operand whose result nothing reads) on a fusion result
// that nothing else reads moves to the fusion's result that a GEMM reads:
// the same kernel, so the recomputation (the weight's convert) still waits
// for it, and the f32 result is no longer written (the gradient a bf16
// GEMM operand is rounded from, in kiln-autocast's steps).
// CHECK-LABEL: func.func @tie_moves_to_a_read_result_of_its_fusion(
// CHECK-SAME: %[[X:[^:]+]]: tensor<16x16xf32>, %[[W:[^:]+]]: tensor<16x16xf32>
// CHECK-NEXT: %[[F:.+]] = kiln.fusion loop(%[[X]]) : (tensor<16x16xf32>) -> tensor<16x16xbf16>
// CHECK: kiln.exp
// CHECK-NEXT: %[[C:.+]] = kiln.convert
// CHECK-NEXT: kiln.yield %[[C]] : tensor<16x16xbf16>
// CHECK: %[[B:.+]]:2 = kiln.optimization_barrier %[[W]], %[[F]] : tensor<16x16xf32>, tensor<16x16xbf16>
// CHECK-NEXT: %[[WC:.+]] = kiln.convert %[[B]]#0
// CHECK-NEXT: kiln.dot_general %[[F]], %[[WC]]
func.func @tie_moves_to_a_read_result_of_its_fusion(%x: tensor<16x16xf32>, %w: tensor<16x16xf32>) -> tensor<16x16xbf16> {
  %f:2 = kiln.fusion loop(%x) : (tensor<16x16xf32>) -> (tensor<16x16xf32>, tensor<16x16xbf16>) {
  ^bb0(%p: tensor<16x16xf32>):
    %e = kiln.exp %p : tensor<16x16xf32>
    %c = kiln.convert %e : tensor<16x16xf32> -> tensor<16x16xbf16>
    kiln.yield %e, %c : tensor<16x16xf32>, tensor<16x16xbf16>
  }
  %b:2 = kiln.optimization_barrier %w, %f#0 : tensor<16x16xf32>, tensor<16x16xf32>
  %wc = kiln.convert %b#0 : tensor<16x16xf32> -> tensor<16x16xbf16>
  %d = kiln.dot_general %f#1, %wc, batch = [] x [], contract = [1] x [0] : tensor<16x16xbf16>, tensor<16x16xbf16> -> tensor<16x16xbf16>
  return %d : tensor<16x16xbf16>
}

// -----

// The same move when the dropped result is made by a chain after ops the
// fusion keeps: the shrunk fusion loses the abs and the exp (erased from a
// list taken first; erasing the abs under a reverse walk of the block read
// freed memory: a GPT-2 bf16 step crashed here, valgrind shows it here).
// CHECK-LABEL: func.func @dropped_result_after_a_kept_one(
// CHECK: kiln.fusion loop(%{{[^)]+}}) : (tensor<16x16xf32>) -> tensor<16x16xbf16>
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: kiln.neg
// CHECK-NEXT: %[[C:.+]] = kiln.convert
// CHECK-NEXT: kiln.yield %[[C]] : tensor<16x16xbf16>
// CHECK-NOT: kiln.abs
// CHECK-NOT: kiln.exp
func.func @dropped_result_after_a_kept_one(%x: tensor<16x16xf32>, %w: tensor<16x16xf32>) -> tensor<16x16xbf16> {
  %f:2 = kiln.fusion loop(%x) : (tensor<16x16xf32>) -> (tensor<16x16xbf16>, tensor<16x16xf32>) {
  ^bb0(%p: tensor<16x16xf32>):
    %n = kiln.neg %p : tensor<16x16xf32>
    %c = kiln.convert %n : tensor<16x16xf32> -> tensor<16x16xbf16>
    %a = kiln.abs %p : tensor<16x16xf32>
    %e = kiln.exp %a : tensor<16x16xf32>
    kiln.yield %c, %e : tensor<16x16xbf16>, tensor<16x16xf32>
  }
  %b:2 = kiln.optimization_barrier %w, %f#1 : tensor<16x16xf32>, tensor<16x16xf32>
  %wc = kiln.convert %b#0 : tensor<16x16xf32> -> tensor<16x16xbf16>
  %d = kiln.dot_general %f#0, %wc, batch = [] x [], contract = [1] x [0] : tensor<16x16xbf16>, tensor<16x16xbf16> -> tensor<16x16xbf16>
  return %d : tensor<16x16xbf16>
}

// -----

// A tie on a lone convert that only ties read moves to the convert's
// operand (a GEMM's result, a buffer already), and the convert goes.
// CHECK-LABEL: func.func @tie_on_a_lone_convert_moves_to_its_operand(
// CHECK-SAME: %[[M:[^:]+]]: tensor<16x16xbf16>, %[[W:[^:]+]]: tensor<16x16xf32>
// CHECK-NEXT: %[[G:.+]] = kiln.dot_general %[[M]], %[[M]]
// CHECK-NEXT: %[[B:.+]]:2 = kiln.optimization_barrier %[[W]], %[[G]] : tensor<16x16xf32>, tensor<16x16xbf16>
// CHECK-NOT: kiln.convert
// CHECK: return
func.func @tie_on_a_lone_convert_moves_to_its_operand(%m: tensor<16x16xbf16>, %w: tensor<16x16xf32>) -> (tensor<16x16xf32>, tensor<16x16xbf16>) {
  %g = kiln.dot_general %m, %m, batch = [] x [], contract = [1] x [0] : tensor<16x16xbf16>, tensor<16x16xbf16> -> tensor<16x16xbf16>
  %c = kiln.convert %g : tensor<16x16xbf16> -> tensor<16x16xf32>
  %b:2 = kiln.optimization_barrier %w, %c : tensor<16x16xf32>, tensor<16x16xf32>
  %s = kiln.exp %b#0 : tensor<16x16xf32>
  return %s, %g : tensor<16x16xf32>, tensor<16x16xbf16>
}

// -----

// A tie whose new value the barrier already carries is dropped (a result
// aliases its operand's buffer: one operand per value); a barrier operand
// whose result is read is no tie and stays.
// CHECK-LABEL: func.func @tie_on_a_value_the_barrier_carries_is_dropped(
// CHECK-SAME: %[[X:[^:]+]]: tensor<16x16xf32>, %[[W:[^:]+]]: tensor<16x16xf32>
// CHECK-NEXT: %[[F:.+]] = kiln.fusion loop(%[[X]]) : (tensor<16x16xf32>) -> tensor<16x16xbf16>
// CHECK: %[[B:.+]]:2 = kiln.optimization_barrier %[[W]], %[[F]] : tensor<16x16xf32>, tensor<16x16xbf16>
// CHECK: kiln.dot_general %[[B]]#1
func.func @tie_on_a_value_the_barrier_carries_is_dropped(%x: tensor<16x16xf32>, %w: tensor<16x16xf32>) -> tensor<16x16xbf16> {
  %f:2 = kiln.fusion loop(%x) : (tensor<16x16xf32>) -> (tensor<16x16xf32>, tensor<16x16xbf16>) {
  ^bb0(%p: tensor<16x16xf32>):
    %e = kiln.exp %p : tensor<16x16xf32>
    %c = kiln.convert %e : tensor<16x16xf32> -> tensor<16x16xbf16>
    kiln.yield %e, %c : tensor<16x16xf32>, tensor<16x16xbf16>
  }
  %b:3 = kiln.optimization_barrier %w, %f#1, %f#0 : tensor<16x16xf32>, tensor<16x16xbf16>, tensor<16x16xf32>
  %wc = kiln.convert %b#0 : tensor<16x16xf32> -> tensor<16x16xbf16>
  %d = kiln.dot_general %b#1, %wc, batch = [] x [], contract = [1] x [0] : tensor<16x16xbf16>, tensor<16x16xbf16> -> tensor<16x16xbf16>
  return %d : tensor<16x16xbf16>
}

// -----

// A backward value computed elementwise (an optimizer's update, from the
// gradient a product made): a tie on it would make the update's kernel
// store it. The tie climbs to the latest backward value it waits for that
// is a buffer anyway, the product; the recomputation (the decayed weight)
// still runs in the backward pass, after the gradient, and the update
// fuses whole.
// CHECK-LABEL: func.func @tie_on_a_backward_value_climbs_to_its_product(
// CHECK-SAME: %[[X:[^:]+]]: tensor<256x256xf32>, %[[W:[^:]+]]: tensor<256x256xf32>
// CHECK: %[[S:.+]]:2 = kiln.optimization_barrier %{{.+}}, %[[X]] {gradient_seed}
// CHECK-NEXT: %[[G:.+]] = kiln.dot_general %[[S]]#1, %[[S]]#1
// CHECK-NEXT: %[[U:.+]] = kiln.mul %[[G]], %[[G]]
// CHECK-NEXT: %[[B:.+]]:2 = kiln.optimization_barrier %[[W]], %[[G]] : tensor<256x256xf32>, tensor<256x256xf32>
// CHECK-NEXT: %[[D:.+]] = kiln.mul %[[B]]#0, %[[B]]#0
// CHECK-NEXT: %[[N:.+]] = kiln.sub %[[D]], %[[U]]
func.func @tie_on_a_backward_value_climbs_to_its_product(%x: tensor<256x256xf32>, %w: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %one = kiln.constant dense<1.0> : tensor<f32>
  %s:2 = kiln.optimization_barrier %one, %x {gradient_seed} : tensor<f32>, tensor<256x256xf32>
  %g = kiln.dot_general %s#1, %s#1, batch = [] x [], contract = [1] x [0] : tensor<256x256xf32>, tensor<256x256xf32> -> tensor<256x256xf32>
  %u = kiln.mul %g, %g : tensor<256x256xf32>
  %b:2 = kiln.optimization_barrier %w, %u : tensor<256x256xf32>, tensor<256x256xf32>
  %d = kiln.mul %b#0, %b#0 : tensor<256x256xf32>
  %n = kiln.sub %d, %u : tensor<256x256xf32>
  return %n : tensor<256x256xf32>
}

// -----

// The latest value the update waits for is a small one (a clipping
// coefficient from the gradients' norm, made by a reduction): the tie
// stops there, storing a few bytes; it would not climb into the reduction,
// which fusion keeps in a kernel.
// CHECK-LABEL: func.func @tie_climbing_stops_at_a_small_value(
// CHECK: %[[C:.+]] = kiln.sqrt
// CHECK-NEXT: %[[CB:.+]] = kiln.broadcast_in_dim %[[C]]
// CHECK-NEXT: %[[U:.+]] = kiln.mul %{{.+}}, %[[CB]]
// CHECK-NEXT: kiln.optimization_barrier %{{.+}}, %[[C]] : tensor<256x256xf32>, tensor<f32>
func.func @tie_climbing_stops_at_a_small_value(%x: tensor<256x256xf32>, %w: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %one = kiln.constant dense<1.0> : tensor<f32>
  %s:2 = kiln.optimization_barrier %one, %x {gradient_seed} : tensor<f32>, tensor<256x256xf32>
  %g = kiln.dot_general %s#1, %s#1, batch = [] x [], contract = [1] x [0] : tensor<256x256xf32>, tensor<256x256xf32> -> tensor<256x256xf32>
  %sq = kiln.mul %g, %g : tensor<256x256xf32>
  %r = kiln.reduce sum %sq, dims = [0, 1] : tensor<256x256xf32> -> tensor<f32>
  %c = kiln.sqrt %r : tensor<f32>
  %cb = kiln.broadcast_in_dim %c, dims = [] : tensor<f32> -> tensor<256x256xf32>
  %u = kiln.mul %g, %cb : tensor<256x256xf32>
  %b:2 = kiln.optimization_barrier %w, %u : tensor<256x256xf32>, tensor<256x256xf32>
  %d = kiln.mul %b#0, %b#0 : tensor<256x256xf32>
  %n = kiln.sub %d, %u : tensor<256x256xf32>
  return %n : tensor<256x256xf32>
}

// -----

// A large backward value whose latest source is a pad (fusion keeps pads
// in kernels too): the tie stays where it is.
// CHECK-LABEL: func.func @tie_climbing_to_a_pad_stays(
// CHECK: %[[U:.+]] = kiln.mul
// CHECK-NEXT: kiln.optimization_barrier %{{.+}}, %[[U]] : tensor<256x256xf32>, tensor<256x256xf32>
func.func @tie_climbing_to_a_pad_stays(%x: tensor<256x128xf32>, %w: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %one = kiln.constant dense<1.0> : tensor<f32>
  %s:2 = kiln.optimization_barrier %one, %x {gradient_seed} : tensor<f32>, tensor<256x128xf32>
  %z = kiln.constant dense<0.0> : tensor<f32>
  %p = kiln.pad %s#1, %z, low = [0, 0], high = [0, 128] : tensor<256x128xf32>, tensor<f32> -> tensor<256x256xf32>
  %u = kiln.mul %p, %p : tensor<256x256xf32>
  %b:2 = kiln.optimization_barrier %w, %u : tensor<256x256xf32>, tensor<256x256xf32>
  %d = kiln.mul %b#0, %b#0 : tensor<256x256xf32>
  %n = kiln.sub %d, %u : tensor<256x256xf32>
  return %n : tensor<256x256xf32>
}
