// The folders of ir/KilnFolders.cpp under --canonicalize: each fold that must
// happen (x + (-0.0), integer x + 0, x - 0.0, x * 1, x / 1, convert to the same
// type, reshape chains and no-op reshapes, transpose chains and identities,
// broadcasts of splats and identity broadcasts), each with a negative twin that
// must stay as it is; the float x + 0.0 twin must not fold because
// -0.0 + 0.0 is +0.0.
// RUN: kiln-opt %s --canonicalize --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @add_f32_negative_zero_folds(
// CHECK-SAME: %[[A:[^:]+]]: tensor<4xf32>
// CHECK-NOT: kiln.add
// CHECK-NOT: kiln.constant
// CHECK: return %[[A]] : tensor<4xf32>
func.func @add_f32_negative_zero_folds(%a: tensor<4xf32>) -> tensor<4xf32> {
  %c = kiln.constant dense<-0.0> : tensor<4xf32>
  %0 = kiln.add %a, %c : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @add_f16_negative_zero_lhs_folds(
// CHECK-SAME: %[[A:[^:]+]]: tensor<4xf16>
// CHECK-NOT: kiln.add
// CHECK: return %[[A]] : tensor<4xf16>
func.func @add_f16_negative_zero_lhs_folds(%a: tensor<4xf16>) -> tensor<4xf16> {
  %c = kiln.constant dense<-0.0> : tensor<4xf16>
  %0 = kiln.add %c, %a : tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// -0.0 + 0.0 is +0.0, so x + 0.0 is not x.
// CHECK-LABEL: func.func @add_f32_positive_zero_stays(
// CHECK-SAME: %[[A:[^:]+]]: tensor<4xf32>
// CHECK: %[[C:.+]] = kiln.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK: %[[R:.+]] = kiln.add %[[A]], %[[C]] : tensor<4xf32>
// CHECK: return %[[R]]
func.func @add_f32_positive_zero_stays(%a: tensor<4xf32>) -> tensor<4xf32> {
  %c = kiln.constant dense<0.0> : tensor<4xf32>
  %0 = kiln.add %a, %c : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @add_bf16_positive_zero_lhs_stays(
// CHECK-SAME: %[[A:[^:]+]]: tensor<4xbf16>
// CHECK: %[[C:.+]] = kiln.constant dense<0.000000e+00> : tensor<4xbf16>
// CHECK: %[[R:.+]] = kiln.add %[[A]], %[[C]] : tensor<4xbf16>
// CHECK: return %[[R]]
func.func @add_bf16_positive_zero_lhs_stays(%a: tensor<4xbf16>) -> tensor<4xbf16> {
  %c = kiln.constant dense<0.0> : tensor<4xbf16>
  %0 = kiln.add %c, %a : tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

// -----

// CHECK-LABEL: func.func @add_i32_zero_folds(
// CHECK-SAME: %[[A:[^:]+]]: tensor<3xi32>
// CHECK-NOT: kiln.add
// CHECK: return %[[A]] : tensor<3xi32>
func.func @add_i32_zero_folds(%a: tensor<3xi32>) -> tensor<3xi32> {
  %c = kiln.constant dense<0> : tensor<3xi32>
  %0 = kiln.add %a, %c : tensor<3xi32>
  return %0 : tensor<3xi32>
}

// -----

// CHECK-LABEL: func.func @add_i32_one_stays(
// CHECK-SAME: %[[A:[^:]+]]: tensor<3xi32>
// CHECK: %[[C:.+]] = kiln.constant dense<1> : tensor<3xi32>
// CHECK: %[[R:.+]] = kiln.add %[[A]], %[[C]] : tensor<3xi32>
// CHECK: return %[[R]]
func.func @add_i32_one_stays(%a: tensor<3xi32>) -> tensor<3xi32> {
  %c = kiln.constant dense<1> : tensor<3xi32>
  %0 = kiln.add %a, %c : tensor<3xi32>
  return %0 : tensor<3xi32>
}

// -----

// A constant that is zero in only some elements is no identity.
// CHECK-LABEL: func.func @add_i64_non_splat_zero_stays(
// CHECK: kiln.add
func.func @add_i64_non_splat_zero_stays(%a: tensor<2xi64>) -> tensor<2xi64> {
  %c = kiln.constant dense<[0, 1]> : tensor<2xi64>
  %0 = kiln.add %a, %c : tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

// CHECK-LABEL: func.func @sub_f32_positive_zero_folds(
// CHECK-SAME: %[[A:[^:]+]]: tensor<4xf32>
// CHECK-NOT: kiln.sub
// CHECK: return %[[A]] : tensor<4xf32>
func.func @sub_f32_positive_zero_folds(%a: tensor<4xf32>) -> tensor<4xf32> {
  %c = kiln.constant dense<0.0> : tensor<4xf32>
  %0 = kiln.sub %a, %c : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// -0.0 - (-0.0) is +0.0, so x - (-0.0) is not x.
// CHECK-LABEL: func.func @sub_f32_negative_zero_stays(
// CHECK-SAME: %[[A:[^:]+]]: tensor<4xf32>
// CHECK: %[[C:.+]] = kiln.constant dense<-0.000000e+00> : tensor<4xf32>
// CHECK: %[[R:.+]] = kiln.sub %[[A]], %[[C]] : tensor<4xf32>
// CHECK: return %[[R]]
func.func @sub_f32_negative_zero_stays(%a: tensor<4xf32>) -> tensor<4xf32> {
  %c = kiln.constant dense<-0.0> : tensor<4xf32>
  %0 = kiln.sub %a, %c : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @sub_i64_zero_folds(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2xi64>
// CHECK-NOT: kiln.sub
// CHECK: return %[[A]] : tensor<2xi64>
func.func @sub_i64_zero_folds(%a: tensor<2xi64>) -> tensor<2xi64> {
  %c = kiln.constant dense<0> : tensor<2xi64>
  %0 = kiln.sub %a, %c : tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

// 0 - x is -x, not x.
// CHECK-LABEL: func.func @sub_zero_minus_x_stays(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2xi64>
// CHECK: %[[C:.+]] = kiln.constant dense<0> : tensor<2xi64>
// CHECK: %[[R:.+]] = kiln.sub %[[C]], %[[A]] : tensor<2xi64>
// CHECK: return %[[R]]
func.func @sub_zero_minus_x_stays(%a: tensor<2xi64>) -> tensor<2xi64> {
  %c = kiln.constant dense<0> : tensor<2xi64>
  %0 = kiln.sub %c, %a : tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

// CHECK-LABEL: func.func @mul_f32_one_folds(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2x2xf32>
// CHECK-NOT: kiln.mul
// CHECK: return %[[A]] : tensor<2x2xf32>
func.func @mul_f32_one_folds(%a: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %c = kiln.constant dense<1.0> : tensor<2x2xf32>
  %0 = kiln.mul %a, %c : tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// CHECK-LABEL: func.func @mul_bf16_one_lhs_folds(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2xbf16>
// CHECK-NOT: kiln.mul
// CHECK: return %[[A]] : tensor<2xbf16>
func.func @mul_bf16_one_lhs_folds(%a: tensor<2xbf16>) -> tensor<2xbf16> {
  %c = kiln.constant dense<1.0> : tensor<2xbf16>
  %0 = kiln.mul %c, %a : tensor<2xbf16>
  return %0 : tensor<2xbf16>
}

// -----

// CHECK-LABEL: func.func @mul_i32_one_folds(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2xi32>
// CHECK-NOT: kiln.mul
// CHECK: return %[[A]] : tensor<2xi32>
func.func @mul_i32_one_folds(%a: tensor<2xi32>) -> tensor<2xi32> {
  %c = kiln.constant dense<1> : tensor<2xi32>
  %0 = kiln.mul %a, %c : tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

// CHECK-LABEL: func.func @mul_f32_two_stays(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2x2xf32>
// CHECK: %[[C:.+]] = kiln.constant dense<2.000000e+00> : tensor<2x2xf32>
// CHECK: %[[R:.+]] = kiln.mul %[[A]], %[[C]] : tensor<2x2xf32>
// CHECK: return %[[R]]
func.func @mul_f32_two_stays(%a: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %c = kiln.constant dense<2.0> : tensor<2x2xf32>
  %0 = kiln.mul %a, %c : tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// x * 0 is not 0 for floats (NaN, inf, -x) and is not folded either.
// CHECK-LABEL: func.func @mul_f32_zero_stays(
// CHECK: kiln.mul
func.func @mul_f32_zero_stays(%a: tensor<2xf32>) -> tensor<2xf32> {
  %c = kiln.constant dense<0.0> : tensor<2xf32>
  %0 = kiln.mul %a, %c : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// CHECK-LABEL: func.func @div_f16_one_folds(
// CHECK-SAME: %[[A:[^:]+]]: tensor<3xf16>
// CHECK-NOT: kiln.div
// CHECK: return %[[A]] : tensor<3xf16>
func.func @div_f16_one_folds(%a: tensor<3xf16>) -> tensor<3xf16> {
  %c = kiln.constant dense<1.0> : tensor<3xf16>
  %0 = kiln.div %a, %c : tensor<3xf16>
  return %0 : tensor<3xf16>
}

// -----

// CHECK-LABEL: func.func @div_i32_one_folds(
// CHECK-SAME: %[[A:[^:]+]]: tensor<3xi32>
// CHECK-NOT: kiln.div
// CHECK: return %[[A]] : tensor<3xi32>
func.func @div_i32_one_folds(%a: tensor<3xi32>) -> tensor<3xi32> {
  %c = kiln.constant dense<1> : tensor<3xi32>
  %0 = kiln.div %a, %c : tensor<3xi32>
  return %0 : tensor<3xi32>
}

// -----

// 1 / x is a reciprocal, not x.
// CHECK-LABEL: func.func @div_one_by_x_stays(
// CHECK-SAME: %[[A:[^:]+]]: tensor<3xf16>
// CHECK: %[[C:.+]] = kiln.constant dense<1.000000e+00> : tensor<3xf16>
// CHECK: %[[R:.+]] = kiln.div %[[C]], %[[A]] : tensor<3xf16>
// CHECK: return %[[R]]
func.func @div_one_by_x_stays(%a: tensor<3xf16>) -> tensor<3xf16> {
  %c = kiln.constant dense<1.0> : tensor<3xf16>
  %0 = kiln.div %c, %a : tensor<3xf16>
  return %0 : tensor<3xf16>
}

// -----

// CHECK-LABEL: func.func @div_i32_by_minus_one_stays(
// CHECK: kiln.div
func.func @div_i32_by_minus_one_stays(%a: tensor<3xi32>) -> tensor<3xi32> {
  %c = kiln.constant dense<-1> : tensor<3xi32>
  %0 = kiln.div %a, %c : tensor<3xi32>
  return %0 : tensor<3xi32>
}

// -----

// CHECK-LABEL: func.func @convert_same_type_folds(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2xbf16>
// CHECK-NOT: kiln.convert
// CHECK: return %[[A]] : tensor<2xbf16>
func.func @convert_same_type_folds(%a: tensor<2xbf16>) -> tensor<2xbf16> {
  %0 = kiln.convert %a : tensor<2xbf16> -> tensor<2xbf16>
  return %0 : tensor<2xbf16>
}

// -----

// CHECK-LABEL: func.func @convert_other_type_stays(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2xf32>
// CHECK: %[[R:.+]] = kiln.convert %[[A]] : tensor<2xf32> -> tensor<2xf16>
// CHECK: return %[[R]]
func.func @convert_other_type_stays(%a: tensor<2xf32>) -> tensor<2xf16> {
  %0 = kiln.convert %a : tensor<2xf32> -> tensor<2xf16>
  return %0 : tensor<2xf16>
}

// -----

// A round trip f32 -> f16 -> f32 loses precision: it is not the identity.
// CHECK-LABEL: func.func @convert_round_trip_stays(
// CHECK: kiln.convert {{.*}} : tensor<2xf32> -> tensor<2xf16>
// CHECK: kiln.convert {{.*}} : tensor<2xf16> -> tensor<2xf32>
func.func @convert_round_trip_stays(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = kiln.convert %a : tensor<2xf32> -> tensor<2xf16>
  %1 = kiln.convert %0 : tensor<2xf16> -> tensor<2xf32>
  return %1 : tensor<2xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_of_reshape_folds(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2x6xf32>
// CHECK-NEXT: %[[R:.+]] = kiln.reshape %[[A]] : tensor<2x6xf32> -> tensor<4x3xf32>
// CHECK-NEXT: return %[[R]]
func.func @reshape_of_reshape_folds(%a: tensor<2x6xf32>) -> tensor<4x3xf32> {
  %0 = kiln.reshape %a : tensor<2x6xf32> -> tensor<12xf32>
  %1 = kiln.reshape %0 : tensor<12xf32> -> tensor<4x3xf32>
  return %1 : tensor<4x3xf32>
}

// -----

// The inner reshape keeps its other use; the outer one reads %a directly.
// CHECK-LABEL: func.func @reshape_of_shared_reshape(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2x6xi32>
// CHECK-DAG: %[[FLAT:.+]] = kiln.reshape %[[A]] : tensor<2x6xi32> -> tensor<12xi32>
// CHECK-DAG: %[[R:.+]] = kiln.reshape %[[A]] : tensor<2x6xi32> -> tensor<3x4xi32>
// CHECK: return %[[FLAT]], %[[R]]
func.func @reshape_of_shared_reshape(%a: tensor<2x6xi32>) -> (tensor<12xi32>, tensor<3x4xi32>) {
  %0 = kiln.reshape %a : tensor<2x6xi32> -> tensor<12xi32>
  %1 = kiln.reshape %0 : tensor<12xi32> -> tensor<3x4xi32>
  return %0, %1 : tensor<12xi32>, tensor<3x4xi32>
}

// -----

// Reshapes that undo each other vanish.
// CHECK-LABEL: func.func @reshape_round_trip_folds(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2x6xf32>
// CHECK-NOT: kiln.reshape
// CHECK: return %[[A]] : tensor<2x6xf32>
func.func @reshape_round_trip_folds(%a: tensor<2x6xf32>) -> tensor<2x6xf32> {
  %0 = kiln.reshape %a : tensor<2x6xf32> -> tensor<3x4xf32>
  %1 = kiln.reshape %0 : tensor<3x4xf32> -> tensor<2x6xf32>
  return %1 : tensor<2x6xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_same_type_folds(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2x6xf32>
// CHECK-NOT: kiln.reshape
// CHECK: return %[[A]] : tensor<2x6xf32>
func.func @reshape_same_type_folds(%a: tensor<2x6xf32>) -> tensor<2x6xf32> {
  %0 = kiln.reshape %a : tensor<2x6xf32> -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

// A reshape of a transpose is no reshape chain: both stay.
// CHECK-LABEL: func.func @reshape_of_transpose_stays(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2x6xf32>
// CHECK: %[[T:.+]] = kiln.transpose %[[A]], perm = [1, 0] : tensor<2x6xf32> -> tensor<6x2xf32>
// CHECK: %[[R:.+]] = kiln.reshape %[[T]] : tensor<6x2xf32> -> tensor<12xf32>
// CHECK: return %[[R]]
func.func @reshape_of_transpose_stays(%a: tensor<2x6xf32>) -> tensor<12xf32> {
  %0 = kiln.transpose %a, perm = [1, 0] : tensor<2x6xf32> -> tensor<6x2xf32>
  %1 = kiln.reshape %0 : tensor<6x2xf32> -> tensor<12xf32>
  return %1 : tensor<12xf32>
}

// -----

// CHECK-LABEL: func.func @transpose_pair_cancels(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2x3xf32>
// CHECK-NOT: kiln.transpose
// CHECK: return %[[A]] : tensor<2x3xf32>
func.func @transpose_pair_cancels(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = kiln.transpose %a, perm = [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  %1 = kiln.transpose %0, perm = [1, 0] : tensor<3x2xf32> -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}

// -----

// [1, 2, 0] then [2, 0, 1] is the identity.
// CHECK-LABEL: func.func @transpose_rotations_cancel(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2x3x4xf32>
// CHECK-NOT: kiln.transpose
// CHECK: return %[[A]] : tensor<2x3x4xf32>
func.func @transpose_rotations_cancel(%a: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = kiln.transpose %a, perm = [1, 2, 0] : tensor<2x3x4xf32> -> tensor<3x4x2xf32>
  %1 = kiln.transpose %0, perm = [2, 0, 1] : tensor<3x4x2xf32> -> tensor<2x3x4xf32>
  return %1 : tensor<2x3x4xf32>
}

// -----

// [1, 2, 0] twice composes to [2, 0, 1]: one transpose remains.
// CHECK-LABEL: func.func @transpose_pair_composes(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2x3x4xf32>
// CHECK-NEXT: %[[R:.+]] = kiln.transpose %[[A]], perm = [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
// CHECK-NEXT: return %[[R]]
func.func @transpose_pair_composes(%a: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %0 = kiln.transpose %a, perm = [1, 2, 0] : tensor<2x3x4xf32> -> tensor<3x4x2xf32>
  %1 = kiln.transpose %0, perm = [1, 2, 0] : tensor<3x4x2xf32> -> tensor<4x2x3xf32>
  return %1 : tensor<4x2x3xf32>
}

// -----

// [0, 2, 1] then [1, 0, 2]: result dimension k is operand dimension
// inner[outer[k]], so the composition is [2, 0, 1].
// CHECK-LABEL: func.func @transpose_swaps_compose(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2x3x4xi64>
// CHECK-NEXT: %[[R:.+]] = kiln.transpose %[[A]], perm = [2, 0, 1] : tensor<2x3x4xi64> -> tensor<4x2x3xi64>
// CHECK-NEXT: return %[[R]]
func.func @transpose_swaps_compose(%a: tensor<2x3x4xi64>) -> tensor<4x2x3xi64> {
  %0 = kiln.transpose %a, perm = [0, 2, 1] : tensor<2x3x4xi64> -> tensor<2x4x3xi64>
  %1 = kiln.transpose %0, perm = [1, 0, 2] : tensor<2x4x3xi64> -> tensor<4x2x3xi64>
  return %1 : tensor<4x2x3xi64>
}

// -----

// CHECK-LABEL: func.func @transpose_identity_folds(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2x3xi1>
// CHECK-NOT: kiln.transpose
// CHECK: return %[[A]] : tensor<2x3xi1>
func.func @transpose_identity_folds(%a: tensor<2x3xi1>) -> tensor<2x3xi1> {
  %0 = kiln.transpose %a, perm = [0, 1] : tensor<2x3xi1> -> tensor<2x3xi1>
  return %0 : tensor<2x3xi1>
}

// -----

// Same type, but not the identity: a square transpose must stay.
// CHECK-LABEL: func.func @transpose_square_stays(
// CHECK-SAME: %[[A:[^:]+]]: tensor<3x3xf32>
// CHECK: %[[R:.+]] = kiln.transpose %[[A]], perm = [1, 0] : tensor<3x3xf32> -> tensor<3x3xf32>
// CHECK: return %[[R]]
func.func @transpose_square_stays(%a: tensor<3x3xf32>) -> tensor<3x3xf32> {
  %0 = kiln.transpose %a, perm = [1, 0] : tensor<3x3xf32> -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

// CHECK-LABEL: func.func @broadcast_of_splat_folds(
// CHECK-NEXT: %[[C:.+]] = kiln.constant dense<2.500000e+00> : tensor<2x3xf32>
// CHECK-NEXT: return %[[C]]
func.func @broadcast_of_splat_folds() -> tensor<2x3xf32> {
  %c = kiln.constant dense<2.5> : tensor<f32>
  %0 = kiln.broadcast_in_dim %c, dims = [] : tensor<f32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @broadcast_of_splat_vector_folds(
// CHECK-NEXT: %[[C:.+]] = kiln.constant dense<7> : tensor<4x3xi32>
// CHECK-NEXT: return %[[C]]
func.func @broadcast_of_splat_vector_folds() -> tensor<4x3xi32> {
  %c = kiln.constant dense<7> : tensor<3xi32>
  %0 = kiln.broadcast_in_dim %c, dims = [1] : tensor<3xi32> -> tensor<4x3xi32>
  return %0 : tensor<4x3xi32>
}

// -----

// CHECK-LABEL: func.func @broadcast_of_non_splat_stays(
// CHECK: %[[C:.+]] = kiln.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>
// CHECK: %[[R:.+]] = kiln.broadcast_in_dim %[[C]], dims = [1] : tensor<3xf32> -> tensor<2x3xf32>
// CHECK: return %[[R]]
func.func @broadcast_of_non_splat_stays() -> tensor<2x3xf32> {
  %c = kiln.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %0 = kiln.broadcast_in_dim %c, dims = [1] : tensor<3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @broadcast_identity_folds(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2x3xf16>
// CHECK-NOT: kiln.broadcast_in_dim
// CHECK: return %[[A]] : tensor<2x3xf16>
func.func @broadcast_identity_folds(%a: tensor<2x3xf16>) -> tensor<2x3xf16> {
  %0 = kiln.broadcast_in_dim %a, dims = [0, 1] : tensor<2x3xf16> -> tensor<2x3xf16>
  return %0 : tensor<2x3xf16>
}

// -----

// CHECK-LABEL: func.func @broadcast_of_argument_stays(
// CHECK-SAME: %[[A:[^:]+]]: tensor<1x3xf16>
// CHECK: %[[R:.+]] = kiln.broadcast_in_dim %[[A]], dims = [0, 1] : tensor<1x3xf16> -> tensor<2x3xf16>
// CHECK: return %[[R]]
func.func @broadcast_of_argument_stays(%a: tensor<1x3xf16>) -> tensor<2x3xf16> {
  %0 = kiln.broadcast_in_dim %a, dims = [0, 1] : tensor<1x3xf16> -> tensor<2x3xf16>
  return %0 : tensor<2x3xf16>
}

// -----

// Folding inside a fusion body rewires kiln.yield to the block argument.
// CHECK-LABEL: func.func @fold_inside_fusion(
// CHECK: kiln.fusion loop
// CHECK-NEXT: ^bb0(%[[X:[^:]+]]: tensor<4xf32>):
// CHECK-NEXT: kiln.yield %[[X]] : tensor<4xf32>
func.func @fold_inside_fusion(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.fusion loop(%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    %c = kiln.constant dense<1.0> : tensor<4xf32>
    %1 = kiln.mul %x, %c : tensor<4xf32>
    kiln.yield %1 : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}
