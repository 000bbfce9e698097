// kiln-fuse-reductions: each fusion that must happen with its negative twin.
// Refusals are checked through the remarks emit-remarks adds (the pass's
// statistics count the same reasons but are no-ops in LLVM release builds).
// tests/passes/composites.mlir checks softmax, layer norm and cross-entropy
// through the whole pipeline.
// RUN: kiln-opt %s --split-input-file --verify-diagnostics \
// RUN:   --kiln-fuse-reductions=emit-remarks | FileCheck %s

// A mean: the exp producer and the divide epilogue join the reduce.
// CHECK-LABEL: func.func @producer_and_epilogue_join_the_reduce(
// CHECK-SAME: %[[X:[^:]+]]: tensor<4x8xf32>
// CHECK-NEXT: %[[F:.+]] = kiln.fusion reduction(%[[X]]) : (tensor<4x8xf32>) -> tensor<4xf32>
// CHECK: kiln.exp
// CHECK-NEXT: kiln.reduce sum
// CHECK-NEXT: kiln.div
// CHECK-NEXT: kiln.yield
// CHECK-NEXT: }
// CHECK-NEXT: return %[[F]]
func.func @producer_and_epilogue_join_the_reduce(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %e = kiln.exp %x : tensor<4x8xf32>
  %s = kiln.reduce sum %e, dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
  %n = kiln.constant dense<8.0> : tensor<4xf32>
  %m = kiln.div %s, %n : tensor<4xf32>
  return %m : tensor<4xf32>
}

// -----

// A dot_general never joins: the reduce stays a lone kernel.
// CHECK-LABEL: func.func @dot_general_producer_stays(
// CHECK-NEXT: %[[D:.+]] = kiln.dot_general
// CHECK-NEXT: %[[S:.+]] = kiln.reduce sum %[[D]]
// CHECK-NEXT: return %[[S]]
func.func @dot_general_producer_stays(%x: tensor<4x2xf32>, %w: tensor<2x8xf32>) -> tensor<4xf32> {
  // expected-remark @below {{not fused into a reduction: the op never fuses into a reduction}}
  %d = kiln.dot_general %x, %w, batch = [] x [], contract = [1] x [0] : tensor<4x2xf32>, tensor<2x8xf32> -> tensor<4x8xf32>
  %s = kiln.reduce sum %d, dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

// Two chained reduces over the same rows (the max and the sum of a softmax)
// make one fusion.
// CHECK-LABEL: func.func @chained_reduces_of_one_signature_fuse(
// CHECK-NEXT: %[[F:.+]] = kiln.fusion reduction
// CHECK: kiln.reduce max
// CHECK: kiln.reduce sum
// CHECK: kiln.yield
// CHECK-NEXT: }
// CHECK-NEXT: return %[[F]]
func.func @chained_reduces_of_one_signature_fuse(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %m = kiln.reduce max %x, dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
  %mb = kiln.broadcast_in_dim %m, dims = [0] : tensor<4xf32> -> tensor<4x8xf32>
  %z = kiln.sub %x, %mb : tensor<4x8xf32>
  %e = kiln.exp %z : tensor<4x8xf32>
  %s = kiln.reduce sum %e, dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

// A reduce over rows then one over the result: another signature, so a
// second kernel; the lone second reduce is not wrapped.
// CHECK-LABEL: func.func @reduce_of_another_signature_stays(
// CHECK-NEXT: %[[F:.+]] = kiln.fusion reduction
// CHECK: kiln.reduce sum %{{.+}}, dims = [1]
// CHECK-NEXT: kiln.exp
// CHECK: kiln.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[T:.+]] = kiln.reduce sum %[[F]], dims = [0]
// CHECK-NEXT: return %[[T]]
func.func @reduce_of_another_signature_stays(%x: tensor<4x8xf32>) -> tensor<f32> {
  %r = kiln.reduce sum %x, dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
  // expected-remark @below {{not fused into a reduction: the op never fuses into a reduction}}
  %e = kiln.exp %r : tensor<4xf32>
  // expected-remark @below {{not fused into a reduction: the reduce has another operand shape or dimensions}}
  %t = kiln.reduce sum %e, dims = [0] : tensor<4xf32> -> tensor<f32>
  return %t : tensor<f32>
}

// -----

// The producer is also returned: it stays a result of the fusion.
// CHECK-LABEL: func.func @shared_producer_becomes_a_result(
// CHECK-NEXT: %[[F:.+]]:2 = kiln.fusion reduction
// CHECK: kiln.exp
// CHECK-NEXT: kiln.reduce sum
// CHECK: return %[[F]]#0, %[[F]]#1
func.func @shared_producer_becomes_a_result(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  %e = kiln.exp %x : tensor<4x8xf32>
  %s = kiln.reduce sum %e, dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
  return %e, %s : tensor<4x8xf32>, tensor<4xf32>
}

// -----

// Broadcasting the sums into a rank-3 shape is neither the full, the
// reduced nor the kept shape of the group.
// CHECK-LABEL: func.func @consumer_of_another_shape_stays(
// CHECK-NEXT: %[[S:.+]] = kiln.reduce sum
// CHECK-NEXT: %[[B:.+]] = kiln.broadcast_in_dim %[[S]]
// CHECK-NEXT: return %[[B]]
func.func @consumer_of_another_shape_stays(%x: tensor<4x8xf32>) -> tensor<4x8x2xf32> {
  %s = kiln.reduce sum %x, dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
  // expected-remark @below {{not fused into a reduction: a result is outside the group's full and reduced shapes}}
  %b = kiln.broadcast_in_dim %s, dims = [0] : tensor<4xf32> -> tensor<4x8x2xf32>
  return %b : tensor<4x8x2xf32>
}

// -----

// The epilogue add reads a dot_general of the fused producer: joining it
// would make a cycle through the dot. The broadcast feeding only the add is
// left out too (as a result it would write 8 times the sums' bytes).
// CHECK-LABEL: func.func @epilogue_behind_a_cycle_stays(
// CHECK-NEXT: %[[F:.+]]:2 = kiln.fusion reduction
// CHECK: kiln.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[B:.+]] = kiln.broadcast_in_dim %[[F]]#1
// CHECK-NEXT: %[[D:.+]] = kiln.dot_general %[[F]]#0
// CHECK-NEXT: %[[A:.+]] = kiln.add %[[B]], %[[D]]
// CHECK-NEXT: return %[[A]]
func.func @epilogue_behind_a_cycle_stays(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %p = kiln.exp %x : tensor<4x8xf32>
  %r = kiln.reduce sum %p, dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
  %rb = kiln.broadcast_in_dim %r, dims = [0] : tensor<4xf32> -> tensor<4x8xf32>
  // expected-remark @below {{not fused into a reduction: the op never fuses into a reduction}}
  %d = kiln.dot_general %p, %w, batch = [] x [], contract = [1] x [0] : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  // expected-remark @below {{not fused into a reduction: fusing would create a cycle}}
  %c = kiln.add %rb, %d : tensor<4x8xf32>
  return %c : tensor<4x8xf32>
}
