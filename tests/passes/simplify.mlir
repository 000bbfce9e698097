// kiln-simplify: the rewrites that are exact under docs/IR.md, each with a
// negative twin that must stay as it is: lossless convert chains (f32→f16→f32
// rounds), transposes folded into dot_general (not when the free dimensions
// would change order), a transposed product computed with its operands
// swapped (not when the product is read as it is too, nor for a permutation
// that is no swap), reduces of broadcasts (not over a kept dimension, nor
// when the count is not exact in the element type), neg(neg(x)), and the
// dialect's folders (reshape chains, x·1).
// RUN: kiln-opt %s --split-input-file --kiln-simplify | FileCheck %s

// CHECK-LABEL: func.func @convert_f32_f64_f32_is_identity(
// CHECK-SAME: %[[X:[^:]+]]: tensor<4xf32>
// CHECK-NEXT: return %[[X]]
func.func @convert_f32_f64_f32_is_identity(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.convert %x : tensor<4xf32> -> tensor<4xf64>
  %1 = kiln.convert %0 : tensor<4xf64> -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// f16 cannot hold every f32: the round trip rounds, so it stays.
// CHECK-LABEL: func.func @convert_f32_f16_f32_stays(
// CHECK-SAME: %[[X:[^:]+]]: tensor<4xf32>
// CHECK-NEXT: %[[H:.+]] = kiln.convert %[[X]] : tensor<4xf32> -> tensor<4xf16>
// CHECK-NEXT: %[[F:.+]] = kiln.convert %[[H]] : tensor<4xf16> -> tensor<4xf32>
// CHECK-NEXT: return %[[F]]
func.func @convert_f32_f16_f32_stays(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.convert %x : tensor<4xf32> -> tensor<4xf16>
  %1 = kiln.convert %0 : tensor<4xf16> -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @convert_bf16_f32_f16_becomes_one_convert(
// CHECK-SAME: %[[X:[^:]+]]: tensor<4xbf16>
// CHECK-NEXT: %[[C:.+]] = kiln.convert %[[X]] : tensor<4xbf16> -> tensor<4xf16>
// CHECK-NEXT: return %[[C]]
func.func @convert_bf16_f32_f16_becomes_one_convert(%x: tensor<4xbf16>) -> tensor<4xf16> {
  %0 = kiln.convert %x : tensor<4xbf16> -> tensor<4xf32>
  %1 = kiln.convert %0 : tensor<4xf32> -> tensor<4xf16>
  return %1 : tensor<4xf16>
}

// -----

// i64 → i32 keeps the low bits: the chain through i32 is not i64 → f32.
// CHECK-LABEL: func.func @convert_i64_i32_f32_stays(
// CHECK: kiln.convert %{{.+}} : tensor<4xi64> -> tensor<4xi32>
// CHECK-NEXT: kiln.convert %{{.+}} : tensor<4xi32> -> tensor<4xf32>
func.func @convert_i64_i32_f32_stays(%x: tensor<4xi64>) -> tensor<4xf32> {
  %0 = kiln.convert %x : tensor<4xi64> -> tensor<4xi32>
  %1 = kiln.convert %0 : tensor<4xi32> -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// x·Wᵀ written with an explicit transpose of W [N, K]: the transpose folds
// into the rhs contracting dimension.
// CHECK-LABEL: func.func @transpose_into_dot_general_rhs(
// CHECK-SAME: %[[X:[^:]+]]: tensor<4x8xf32>, %[[W:[^:]+]]: tensor<16x8xf32>
// CHECK-NEXT: %[[D:.+]] = kiln.dot_general %[[X]], %[[W]], batch = [] x [], contract = [1] x [1] : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
// CHECK-NEXT: return %[[D]]
func.func @transpose_into_dot_general_rhs(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>) -> tensor<4x16xf32> {
  %wt = kiln.transpose %w, perm = [1, 0] : tensor<16x8xf32> -> tensor<8x16xf32>
  %0 = kiln.dot_general %x, %wt, batch = [] x [], contract = [1] x [0] : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

// A batched lhs [B, K, M] transposed to [B, M, K]: batch and contracting
// dimensions are renumbered.
// CHECK-LABEL: func.func @transpose_into_dot_general_batched_lhs(
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x8x4xf32>, %[[Y:[^:]+]]: tensor<2x8x3xf32>
// CHECK-NEXT: %[[D:.+]] = kiln.dot_general %[[X]], %[[Y]], batch = [0] x [0], contract = [1] x [1] : tensor<2x8x4xf32>, tensor<2x8x3xf32> -> tensor<2x4x3xf32>
// CHECK-NEXT: return %[[D]]
func.func @transpose_into_dot_general_batched_lhs(%x: tensor<2x8x4xf32>, %y: tensor<2x8x3xf32>) -> tensor<2x4x3xf32> {
  %xt = kiln.transpose %x, perm = [0, 2, 1] : tensor<2x8x4xf32> -> tensor<2x4x8xf32>
  %0 = kiln.dot_general %xt, %y, batch = [0] x [0], contract = [2] x [1] : tensor<2x4x8xf32>, tensor<2x8x3xf32> -> tensor<2x4x3xf32>
  return %0 : tensor<2x4x3xf32>
}

// -----

// The transpose swaps the lhs's two free dimensions: the result lists free
// dimensions in ascending order, so folding it would transpose the result.
// CHECK-LABEL: func.func @transpose_swapping_free_dims_stays(
// CHECK: %[[T:.+]] = kiln.transpose
// CHECK-NEXT: kiln.dot_general %[[T]]
func.func @transpose_swapping_free_dims_stays(%x: tensor<3x2x8xf32>, %y: tensor<8x5xf32>) -> tensor<2x3x5xf32> {
  %xt = kiln.transpose %x, perm = [1, 0, 2] : tensor<3x2x8xf32> -> tensor<2x3x8xf32>
  %0 = kiln.dot_general %xt, %y, batch = [] x [], contract = [2] x [0] : tensor<2x3x8xf32>, tensor<8x5xf32> -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// -----

// A weight gradient as autodiff writes it: xᵀ·dy [K, N] transposed to the
// weight's [N, K]. The product is computed as dyᵀ·x: the operands and their
// dimension numbers swap, and no transpose is left.
// CHECK-LABEL: func.func @transposed_product_swaps_operands(
// CHECK-SAME: %[[X:[^:]+]]: tensor<6x4xf32>, %[[DY:[^:]+]]: tensor<6x3xf32>
// CHECK-NEXT: %[[D:.+]] = kiln.dot_general %[[DY]], %[[X]], batch = [] x [], contract = [0] x [0] : tensor<6x3xf32>, tensor<6x4xf32> -> tensor<3x4xf32>
// CHECK-NEXT: return %[[D]]
func.func @transposed_product_swaps_operands(%x: tensor<6x4xf32>, %dy: tensor<6x3xf32>) -> tensor<3x4xf32> {
  %0 = kiln.dot_general %x, %dy, batch = [] x [], contract = [0] x [0] : tensor<6x4xf32>, tensor<6x3xf32> -> tensor<4x3xf32>
  %1 = kiln.transpose %0, perm = [1, 0] : tensor<4x3xf32> -> tensor<3x4xf32>
  return %1 : tensor<3x4xf32>
}

// -----

// Batched, with two free dimensions on the lhs: [B, M1, M2, N] → [B, N, M1,
// M2] is the swapped product's layout.
// CHECK-LABEL: func.func @transposed_batched_product_swaps_operands(
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x3x5x8xf32>, %[[Y:[^:]+]]: tensor<2x8x7xf32>
// CHECK-NEXT: %[[D:.+]] = kiln.dot_general %[[Y]], %[[X]], batch = [0] x [0], contract = [1] x [3] : tensor<2x8x7xf32>, tensor<2x3x5x8xf32> -> tensor<2x7x3x5xf32>
// CHECK-NEXT: return %[[D]]
func.func @transposed_batched_product_swaps_operands(%x: tensor<2x3x5x8xf32>, %y: tensor<2x8x7xf32>) -> tensor<2x7x3x5xf32> {
  %0 = kiln.dot_general %x, %y, batch = [0] x [0], contract = [3] x [1] : tensor<2x3x5x8xf32>, tensor<2x8x7xf32> -> tensor<2x3x5x7xf32>
  %1 = kiln.transpose %0, perm = [0, 3, 1, 2] : tensor<2x3x5x7xf32> -> tensor<2x7x3x5xf32>
  return %1 : tensor<2x7x3x5xf32>
}

// -----

// The same permutation, but the product is also read as it is: swapping
// would compute it twice, so the transpose stays.
// CHECK-LABEL: func.func @transposed_product_read_twice_stays(
// CHECK: %[[D:.+]] = kiln.dot_general
// CHECK-NEXT: kiln.transpose %[[D]]
func.func @transposed_product_read_twice_stays(%x: tensor<6x4xf32>, %dy: tensor<6x3xf32>) -> (tensor<3x4xf32>, tensor<4x3xf32>) {
  %0 = kiln.dot_general %x, %dy, batch = [] x [], contract = [0] x [0] : tensor<6x4xf32>, tensor<6x3xf32> -> tensor<4x3xf32>
  %1 = kiln.transpose %0, perm = [1, 0] : tensor<4x3xf32> -> tensor<3x4xf32>
  return %1, %0 : tensor<3x4xf32>, tensor<4x3xf32>
}

// -----

// A permutation that reorders the lhs's own free dimensions ([B, M2, N,
// M1]) is no operand swap: it stays.
// CHECK-LABEL: func.func @transposed_product_other_permutation_stays(
// CHECK: %[[D:.+]] = kiln.dot_general %{{[^,]+}}, %{{[^,]+}}, batch = [0] x [0], contract = [3] x [1]
// CHECK-NEXT: kiln.transpose %[[D]], perm = [0, 2, 3, 1]
func.func @transposed_product_other_permutation_stays(%x: tensor<2x3x5x8xf32>, %y: tensor<2x8x7xf32>) -> tensor<2x5x7x3xf32> {
  %0 = kiln.dot_general %x, %y, batch = [0] x [0], contract = [3] x [1] : tensor<2x3x5x8xf32>, tensor<2x8x7xf32> -> tensor<2x3x5x7xf32>
  %1 = kiln.transpose %0, perm = [0, 2, 3, 1] : tensor<2x3x5x7xf32> -> tensor<2x5x7x3xf32>
  return %1 : tensor<2x5x7x3xf32>
}

// -----

// Σ over 8 copies of x is x·8, and +0.0 turns a -0.0 into the +0.0 the
// reduce's initial value gives.
// CHECK-LABEL: func.func @reduce_sum_of_broadcast_becomes_multiply(
// CHECK-SAME: %[[X:[^:]+]]: tensor<4xf32>
// CHECK-DAG: %[[N:.+]] = kiln.constant dense<8.000000e+00> : tensor<4xf32>
// CHECK-DAG: %[[Z:.+]] = kiln.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK: %[[M:.+]] = kiln.mul %[[X]], %[[N]]
// CHECK-NEXT: %[[A:.+]] = kiln.add %[[M]], %[[Z]]
// CHECK-NEXT: return %[[A]]
func.func @reduce_sum_of_broadcast_becomes_multiply(%x: tensor<4xf32>) -> tensor<4xf32> {
  %b = kiln.broadcast_in_dim %x, dims = [0] : tensor<4xf32> -> tensor<4x8xf32>
  %0 = kiln.reduce sum %b, dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Integers wrap either way and have no -0: a multiply alone.
// CHECK-LABEL: func.func @reduce_sum_of_broadcast_i32(
// CHECK-SAME: %[[X:[^:]+]]: tensor<4xi32>
// CHECK: %[[N:.+]] = kiln.constant dense<6> : tensor<4xi32>
// CHECK-NEXT: %[[M:.+]] = kiln.mul %[[X]], %[[N]]
// CHECK-NEXT: return %[[M]]
func.func @reduce_sum_of_broadcast_i32(%x: tensor<4xi32>) -> tensor<4xi32> {
  %b = kiln.broadcast_in_dim %x, dims = [1] : tensor<4xi32> -> tensor<2x4x3xi32>
  %0 = kiln.reduce sum %b, dims = [0, 2] : tensor<2x4x3xi32> -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @reduce_max_of_broadcast_is_operand(
// CHECK-SAME: %[[X:[^:]+]]: tensor<4xf32>
// CHECK-NEXT: return %[[X]]
func.func @reduce_max_of_broadcast_is_operand(%x: tensor<4xf32>) -> tensor<4xf32> {
  %b = kiln.broadcast_in_dim %x, dims = [0] : tensor<4xf32> -> tensor<4x8xf32>
  %0 = kiln.reduce max %b, dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// The reduce runs over a dimension x already had: not a sum of copies.
// CHECK-LABEL: func.func @reduce_over_kept_dim_stays(
// CHECK: kiln.broadcast_in_dim
// CHECK-NEXT: kiln.reduce sum
func.func @reduce_over_kept_dim_stays(%x: tensor<4xf32>) -> tensor<8xf32> {
  %b = kiln.broadcast_in_dim %x, dims = [0] : tensor<4xf32> -> tensor<4x8xf32>
  %0 = kiln.reduce sum %b, dims = [0] : tensor<4x8xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// bf16 has 8 significant bits: 257 is not exact, so x·257 would multiply by
// a rounded count.
// CHECK-LABEL: func.func @reduce_sum_of_broadcast_bf16_inexact_count_stays(
// CHECK: kiln.broadcast_in_dim
// CHECK-NEXT: kiln.reduce sum
func.func @reduce_sum_of_broadcast_bf16_inexact_count_stays(%x: tensor<2xbf16>) -> tensor<2xbf16> {
  %b = kiln.broadcast_in_dim %x, dims = [0] : tensor<2xbf16> -> tensor<2x257xbf16>
  %0 = kiln.reduce sum %b, dims = [1] : tensor<2x257xbf16> -> tensor<2xbf16>
  return %0 : tensor<2xbf16>
}

// -----

// The broadcast expands a size-1 dimension that the reduce keeps.
// CHECK-LABEL: func.func @reduce_of_expanding_broadcast_stays(
// CHECK: kiln.broadcast_in_dim
// CHECK-NEXT: kiln.reduce max
func.func @reduce_of_expanding_broadcast_stays(%x: tensor<1xf32>) -> tensor<4xf32> {
  %b = kiln.broadcast_in_dim %x, dims = [0] : tensor<1xf32> -> tensor<4x8xf32>
  %0 = kiln.reduce max %b, dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @neg_neg_is_identity(
// CHECK-SAME: %[[X:[^:]+]]: tensor<4xi32>
// CHECK-NEXT: return %[[X]]
func.func @neg_neg_is_identity(%x: tensor<4xi32>) -> tensor<4xi32> {
  %0 = kiln.neg %x : tensor<4xi32>
  %1 = kiln.neg %0 : tensor<4xi32>
  return %1 : tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @neg_abs_stays(
// CHECK: kiln.abs
// CHECK-NEXT: kiln.neg
func.func @neg_abs_stays(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.abs %x : tensor<4xf32>
  %1 = kiln.neg %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// The dialect's folders run too: a reshape chain and x·1.
// CHECK-LABEL: func.func @reshape_chain_and_multiply_by_one_fold(
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x6xf32>
// CHECK-NEXT: %[[R:.+]] = kiln.reshape %[[X]] : tensor<2x6xf32> -> tensor<3x4xf32>
// CHECK-NEXT: return %[[R]]
func.func @reshape_chain_and_multiply_by_one_fold(%x: tensor<2x6xf32>) -> tensor<3x4xf32> {
  %0 = kiln.reshape %x : tensor<2x6xf32> -> tensor<12xf32>
  %1 = kiln.reshape %0 : tensor<12xf32> -> tensor<3x4xf32>
  %one = kiln.constant dense<1.0> : tensor<3x4xf32>
  %2 = kiln.mul %1, %one : tensor<3x4xf32>
  return %2 : tensor<3x4xf32>
}

// -----

// x + 0.0 is not x (-0.0 + 0.0 is +0.0).
// CHECK-LABEL: func.func @add_positive_zero_stays(
// CHECK: kiln.add
func.func @add_positive_zero_stays(%x: tensor<4xf32>) -> tensor<4xf32> {
  %zero = kiln.constant dense<0.0> : tensor<4xf32>
  %0 = kiln.add %x, %zero : tensor<4xf32>
  return %0 : tensor<4xf32>
}
