// Invalid kiln IR is rejected with a specific message and never crashes the
// verifier: one case per verifier and type-inference message of
// ir/KilnOps.cpp and ir/KilnDialect.cpp, plus the ODS constraints users hit
// most (element types, operand types, the i1 predicate), the 2^40-element
// size limit, malformed fusions and misplaced `kiln.donate` attributes.
// RUN: kiln-opt %s --split-input-file --verify-diagnostics

//===----------------------------------------------------------------------===//
// Tensor sizes (the BoundedTensorShapes trait)
//===----------------------------------------------------------------------===//

func.func @size_over_limit(%a: tensor<4611686018427387904xf32>) -> tensor<4611686018427387904xf32> {
  // expected-error @+1 {{'kiln.neg' op tensor type tensor<4611686018427387904xf32> exceeds the limit of 2^40 elements}}
  %0 = kiln.neg %a : tensor<4611686018427387904xf32>
  return %0 : tensor<4611686018427387904xf32>
}

// -----

// The product overflows int64 although each dimension is small enough.
func.func @size_product_overflows(%a: tensor<4294967296x4294967296xf32>) -> tensor<4294967296x4294967296xf32> {
  // expected-error @+1 {{'kiln.abs' op tensor type tensor<4294967296x4294967296xf32> exceeds the limit of 2^40 elements}}
  %0 = kiln.abs %a : tensor<4294967296x4294967296xf32>
  return %0 : tensor<4294967296x4294967296xf32>
}

// -----

func.func @size_just_over_limit() -> tensor<1099511627777xi32> {
  // expected-error @+1 {{exceeds the limit of 2^40 elements}}
  %0 = kiln.iota dim = 0 : tensor<1099511627777xi32>
  return %0 : tensor<1099511627777xi32>
}

// -----

func.func @size_checked_on_results(%a: tensor<2xf32>) -> tensor<2x1099511627776xf32> {
  // expected-error @+1 {{'kiln.broadcast_in_dim' op tensor type tensor<2x1099511627776xf32> exceeds the limit of 2^40 elements}}
  %0 = kiln.broadcast_in_dim %a, dims = [0] : tensor<2xf32> -> tensor<2x1099511627776xf32>
  return %0 : tensor<2x1099511627776xf32>
}

// -----

func.func @size_dynamic_dimension(%a: tensor<?x3xf32>) -> tensor<?x3xf32> {
  // expected-error @+1 {{'kiln.exp' op dynamic dimensions are not supported, got tensor<?x3xf32>}}
  %0 = kiln.exp %a : tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

//===----------------------------------------------------------------------===//
// ODS constraints: element types, operand types, the select predicate
//===----------------------------------------------------------------------===//

// -----

func.func @float_only_op_on_integers(%a: tensor<2xi32>) -> tensor<2xi32> {
  // expected-error @+1 {{'kiln.exp' op operand #0 must be ranked tensor of 32-bit float}}
  %0 = kiln.exp %a : tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

func.func @numeric_op_on_i1(%a: tensor<2xi1>) -> tensor<2xi1> {
  // expected-error @+1 {{'kiln.add' op operand #0 must be ranked tensor of}}
  %0 = kiln.add %a, %a : tensor<2xi1>
  return %0 : tensor<2xi1>
}

// -----

func.func @logical_op_on_floats(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'kiln.and' op operand #0 must be ranked tensor of 1-bit signless integer or 32-bit signless integer or 64-bit signless integer values, but got 'tensor<2xf32>'}}
  %0 = kiln.and %a, %a : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @unsupported_element_type(%a: tensor<2xi8>) -> tensor<2xi8> {
  // expected-error @+1 {{'kiln.neg' op operand #0 must be ranked tensor of}}
  %0 = kiln.neg %a : tensor<2xi8>
  return %0 : tensor<2xi8>
}

// -----

func.func @unranked_operand(%a: tensor<*xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'kiln.tanh' op operand #0 must be ranked tensor of}}
  %0 = "kiln.tanh"(%a) : (tensor<*xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @binary_operand_types_differ(%a: tensor<2xf32>, %b: tensor<3xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'kiln.mul' op all non-scalar operands/results must have the same shape and base type}}
  %0 = "kiln.mul"(%a, %b) : (tensor<2xf32>, tensor<3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @binary_element_types_differ(%a: tensor<2xf32>, %b: tensor<2xf16>) -> tensor<2xf32> {
  // expected-error @+1 {{'kiln.sub' op requires the same type for all operands and results}}
  %0 = "kiln.sub"(%a, %b) : (tensor<2xf32>, tensor<2xf16>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @select_pred_not_i1(%p: tensor<3xi32>, %a: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'kiln.select' op operand #0 must be ranked tensor of 1-bit signless integer values, but got 'tensor<3xi32>'}}
  %0 = kiln.select %p, %a, %a : tensor<3xi32>, tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @select_pred_shape_differs(%p: tensor<4xi1>, %a: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'kiln.select' op all non-scalar operands/results must have the same shape and base type}}
  %0 = kiln.select %p, %a, %a : tensor<4xi1>, tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @select_branch_types_differ(%p: tensor<3xi1>, %a: tensor<3xf32>, %b: tensor<3xf16>) -> tensor<3xf32> {
  // expected-error @+1 {{'kiln.select' op failed to verify that all of {on_true, on_false, result} have same type}}
  %0 = "kiln.select"(%p, %a, %b) : (tensor<3xi1>, tensor<3xf32>, tensor<3xf16>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @compare_operand_types_differ(%a: tensor<3xf32>, %b: tensor<3xi32>) -> tensor<3xi1> {
  // expected-error @+1 {{'kiln.compare' op failed to verify that all of {lhs, rhs} have same type}}
  %0 = "kiln.compare"(%a, %b) <{direction = 0 : i32}> : (tensor<3xf32>, tensor<3xi32>) -> tensor<3xi1>
  return %0 : tensor<3xi1>
}

// -----

func.func @compare_result_not_i1(%a: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'kiln.compare' op result #0 must be ranked tensor of 1-bit signless integer values, but got 'tensor<3xf32>'}}
  %0 = "kiln.compare"(%a, %a) <{direction = 0 : i32}> : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @compare_unknown_direction(%a: tensor<3xf32>) -> tensor<3xi1> {
  // expected-error @+1 {{custom op 'kiln.compare' expected string or keyword containing one of the following enum values for attribute 'direction' [EQ, NE, LT, LE, GT, GE]}}
  %0 = kiln.compare LTE, %a, %a : tensor<3xf32>
  return %0 : tensor<3xi1>
}

// -----

func.func @convert_shape_changes(%a: tensor<2xf32>) -> tensor<3xi32> {
  // expected-error @+1 {{'kiln.convert' op all non-scalar operands/results must have the same shape and base type}}
  %0 = kiln.convert %a : tensor<2xf32> -> tensor<3xi32>
  return %0 : tensor<3xi32>
}

// -----

func.func @clamp_bounds_type_differs(%lo: tensor<3xbf16>, %a: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'kiln.clamp' op requires the same type for all operands and results}}
  %0 = "kiln.clamp"(%lo, %a, %a) : (tensor<3xbf16>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @compare_shapes_differ(%a: tensor<3xf32>) -> tensor<4xi1> {
  // expected-error @+1 {{'kiln.compare' op all non-scalar operands/results must have the same shape and base type}}
  %0 = "kiln.compare"(%a, %a) <{direction = 2 : i32}> : (tensor<3xf32>, tensor<3xf32>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

//===----------------------------------------------------------------------===//
// broadcast_in_dim
//===----------------------------------------------------------------------===//

// -----

func.func @broadcast_dims_wrong_length(%a: tensor<2x3xf32>) -> tensor<2x3x4xf32> {
  // expected-error @+1 {{'kiln.broadcast_in_dim' op broadcast_dimensions [0] must have one entry per operand dimension of 'tensor<2x3xf32>'}}
  %0 = kiln.broadcast_in_dim %a, dims = [0] : tensor<2x3xf32> -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

func.func @broadcast_dims_out_of_range(%a: tensor<3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'kiln.broadcast_in_dim' op broadcast_dimensions [2] must be distinct dimensions of 'tensor<2x3xf32>'}}
  %0 = kiln.broadcast_in_dim %a, dims = [2] : tensor<3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @broadcast_dims_negative(%a: tensor<3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{broadcast_dimensions [-1] must be distinct dimensions of 'tensor<2x3xf32>'}}
  %0 = kiln.broadcast_in_dim %a, dims = [-1] : tensor<3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @broadcast_dims_repeated(%a: tensor<3x3xf32>) -> tensor<3x3xf32> {
  // expected-error @+1 {{broadcast_dimensions [1, 1] must be distinct dimensions of 'tensor<3x3xf32>'}}
  %0 = kiln.broadcast_in_dim %a, dims = [1, 1] : tensor<3x3xf32> -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

func.func @broadcast_dims_decreasing(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{'kiln.broadcast_in_dim' op broadcast_dimensions [1, 0] must be increasing (use kiln.transpose to reorder)}}
  %0 = kiln.broadcast_in_dim %a, dims = [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @broadcast_size_mismatch(%a: tensor<2xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{'kiln.broadcast_in_dim' op operand dimension 0 of 'tensor<2xf32>' (size 2) cannot broadcast to result dimension 1 of 'tensor<4x3xf32>' (size 3)}}
  %0 = kiln.broadcast_in_dim %a, dims = [1] : tensor<2xf32> -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @broadcast_element_type_changes(%a: tensor<3xf32>) -> tensor<2x3xf16> {
  // expected-error @+1 {{'kiln.broadcast_in_dim' op failed to verify that all of {operand, result} have same element type}}
  %0 = kiln.broadcast_in_dim %a, dims = [1] : tensor<3xf32> -> tensor<2x3xf16>
  return %0 : tensor<2x3xf16>
}

//===----------------------------------------------------------------------===//
// reshape, transpose
//===----------------------------------------------------------------------===//

// -----

func.func @reshape_element_count_differs(%a: tensor<2x3xf32>) -> tensor<5xf32> {
  // expected-error @+1 {{'kiln.reshape' op cannot reshape 'tensor<2x3xf32>' (6 elements) to 'tensor<5xf32>' (5 elements)}}
  %0 = kiln.reshape %a : tensor<2x3xf32> -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

func.func @reshape_element_type_changes(%a: tensor<6xf32>) -> tensor<6xi32> {
  // expected-error @+1 {{'kiln.reshape' op failed to verify that all of {operand, result} have same element type}}
  %0 = kiln.reshape %a : tensor<6xf32> -> tensor<6xi32>
  return %0 : tensor<6xi32>
}

// -----

func.func @transpose_perm_too_short(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+2 {{'kiln.transpose' op permutation [1] is not a permutation of the dimensions of 'tensor<2x3xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.transpose %a, perm = [1] : tensor<2x3xf32> -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @transpose_perm_repeated(%a: tensor<2x3xf32>) -> tensor<3x3xf32> {
  // expected-error @+2 {{permutation [1, 1] is not a permutation of the dimensions of 'tensor<2x3xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.transpose %a, perm = [1, 1] : tensor<2x3xf32> -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

func.func @transpose_perm_out_of_range(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+2 {{permutation [1, 2] is not a permutation of the dimensions of 'tensor<2x3xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.transpose %a, perm = [1, 2] : tensor<2x3xf32> -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @transpose_result_shape_differs(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+2 {{'kiln.transpose' op inferred type(s) 'tensor<3x2xf32>' are incompatible with return type(s) of operation 'tensor<2x3xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.transpose %a, perm = [1, 0] : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @transpose_missing_permutation(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{'kiln.transpose' op requires attribute 'permutation'}}
  %0 = "kiln.transpose"(%a) : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

//===----------------------------------------------------------------------===//
// slice
//===----------------------------------------------------------------------===//

// -----

func.func @slice_lists_wrong_length(%a: tensor<4x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+2 {{'kiln.slice' op start [0], limit [2, 4] and strides [1, 1] must each have 2 entries for 'tensor<4x4xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.slice %a, start = [0], limit = [2, 4], strides = [1, 1] : tensor<4x4xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @slice_stride_zero(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{'kiln.slice' op dimension 0 of 'tensor<4xf32>': need 0 <= start (0) <= limit (4) <= size and stride (0) > 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.slice %a, start = [0], limit = [4], strides = [0] : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @slice_stride_negative(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{need 0 <= start (0) <= limit (4) <= size and stride (-1) > 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.slice %a, start = [0], limit = [4], strides = [-1] : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @slice_limit_past_end(%a: tensor<4x4xf32>) -> tensor<4x5xf32> {
  // expected-error @+2 {{'kiln.slice' op dimension 1 of 'tensor<4x4xf32>': need 0 <= start (0) <= limit (5) <= size and stride (1) > 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.slice %a, start = [0, 0], limit = [4, 5], strides = [1, 1] : tensor<4x4xf32> -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

func.func @slice_start_after_limit(%a: tensor<4xf32>) -> tensor<0xf32> {
  // expected-error @+2 {{need 0 <= start (3) <= limit (2) <= size and stride (1) > 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.slice %a, start = [3], limit = [2], strides = [1] : tensor<4xf32> -> tensor<0xf32>
  return %0 : tensor<0xf32>
}

// -----

func.func @slice_start_negative(%a: tensor<4xf32>) -> tensor<3xf32> {
  // expected-error @+2 {{need 0 <= start (-1) <= limit (2) <= size and stride (1) > 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.slice %a, start = [-1], limit = [2], strides = [1] : tensor<4xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @slice_result_shape_differs(%a: tensor<8xf32>) -> tensor<3xf32> {
  // expected-error @+2 {{'kiln.slice' op inferred type(s) 'tensor<4xf32>' are incompatible with return type(s) of operation 'tensor<3xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.slice %a, start = [0], limit = [8], strides = [2] : tensor<8xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

//===----------------------------------------------------------------------===//
// concatenate
//===----------------------------------------------------------------------===//

// -----

func.func @concatenate_no_inputs() -> tensor<0xf32> {
  // expected-error @+2 {{'kiln.concatenate' op needs at least one input}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = "kiln.concatenate"() <{dimension = 0 : i64}> : () -> tensor<0xf32>
  return %0 : tensor<0xf32>
}

// -----

func.func @concatenate_dim_out_of_range(%a: tensor<2x3xf32>) -> tensor<2x6xf32> {
  // expected-error @+2 {{'kiln.concatenate' op dimension 2 is out of range for 'tensor<2x3xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.concatenate %a, %a, dim = 2 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

func.func @concatenate_dim_negative(%a: tensor<2x3xf32>) -> tensor<2x6xf32> {
  // expected-error @+2 {{'kiln.concatenate' op dimension -1 is out of range for 'tensor<2x3xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.concatenate %a, %a, dim = -1 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

func.func @concatenate_scalar(%a: tensor<f32>) -> tensor<f32> {
  // expected-error @+2 {{'kiln.concatenate' op dimension 0 is out of range for 'tensor<f32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.concatenate %a, dim = 0 : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @concatenate_rank_mismatch(%a: tensor<2x3xf32>, %b: tensor<2x3x1xf32>) -> tensor<2x6xf32> {
  // expected-error @+2 {{'kiln.concatenate' op input 'tensor<2x3x1xf32>' does not match 'tensor<2x3xf32>' outside dimension 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.concatenate %a, %b, dim = 1 : (tensor<2x3xf32>, tensor<2x3x1xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

func.func @concatenate_size_mismatch(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>) -> tensor<2x6xf32> {
  // expected-error @+2 {{input 'tensor<4x3xf32>' does not match 'tensor<2x3xf32>' outside dimension 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.concatenate %a, %b, dim = 1 : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

func.func @concatenate_element_type_mismatch(%a: tensor<2x3xf32>, %b: tensor<2x3xf16>) -> tensor<2x6xf32> {
  // expected-error @+2 {{input 'tensor<2x3xf16>' does not match 'tensor<2x3xf32>' outside dimension 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.concatenate %a, %b, dim = 1 : (tensor<2x3xf32>, tensor<2x3xf16>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

func.func @concatenate_missing_dim(%a: tensor<2xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{expected ', dim = <dimension>' after the inputs}}
  %0 = kiln.concatenate %a, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

//===----------------------------------------------------------------------===//
// pad, iota
//===----------------------------------------------------------------------===//

// -----

func.func @pad_value_not_scalar(%a: tensor<2xf32>, %v: tensor<1xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{'kiln.pad' op padding value must be a rank-0 tensor of the operand's element type, got 'tensor<1xf32>' for 'tensor<2xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.pad %a, %v, low = [1], high = [1] : tensor<2xf32>, tensor<1xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @pad_value_element_type(%a: tensor<2xf32>, %v: tensor<f16>) -> tensor<4xf32> {
  // expected-error @+2 {{padding value must be a rank-0 tensor of the operand's element type, got 'tensor<f16>' for 'tensor<2xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.pad %a, %v, low = [1], high = [1] : tensor<2xf32>, tensor<f16> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @pad_lists_wrong_length(%a: tensor<2x2xf32>, %v: tensor<f32>) -> tensor<4x2xf32> {
  // expected-error @+2 {{'kiln.pad' op low [1, 0] and high [1] must each have 2 entries for 'tensor<2x2xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.pad %a, %v, low = [1, 0], high = [1] : tensor<2x2xf32>, tensor<f32> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @pad_negative(%a: tensor<4xf32>, %v: tensor<f32>) -> tensor<3xf32> {
  // expected-error @+2 {{'kiln.pad' op padding of dimension 0 must be in [0, 2^40], got low -1 and high 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.pad %a, %v, low = [-1], high = [0] : tensor<4xf32>, tensor<f32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Huge padding must not overflow the result shape's arithmetic.
func.func @pad_huge(%a: tensor<4xf32>, %v: tensor<f32>) -> tensor<4xf32> {
  // expected-error @+2 {{padding of dimension 0 must be in [0, 2^40], got low 0 and high 9223372036854775807}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.pad %a, %v, low = [0], high = [9223372036854775807] : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @pad_result_shape_differs(%a: tensor<4xf32>, %v: tensor<f32>) -> tensor<4xf32> {
  // expected-error @+2 {{'kiln.pad' op inferred type(s) 'tensor<7xf32>' are incompatible with return type(s) of operation 'tensor<4xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.pad %a, %v, low = [1], high = [2] : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @iota_dimension_out_of_range() -> tensor<2x3xi32> {
  // expected-error @+1 {{'kiln.iota' op iota_dimension 2 is out of range for 'tensor<2x3xi32>'}}
  %0 = kiln.iota dim = 2 : tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

func.func @iota_scalar() -> tensor<f32> {
  // expected-error @+1 {{'kiln.iota' op iota_dimension 0 is out of range for 'tensor<f32>'}}
  %0 = kiln.iota dim = 0 : tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @iota_dimension_negative() -> tensor<3xi32> {
  // expected-error @+1 {{'kiln.iota' op iota_dimension -1 is out of range for 'tensor<3xi32>'}}
  %0 = kiln.iota dim = -1 : tensor<3xi32>
  return %0 : tensor<3xi32>
}

// -----

func.func @iota_i1() -> tensor<3xi1> {
  // expected-error @+1 {{'kiln.iota' op result #0 must be ranked tensor of}}
  %0 = kiln.iota dim = 0 : tensor<3xi1>
  return %0 : tensor<3xi1>
}

//===----------------------------------------------------------------------===//
// reduce
//===----------------------------------------------------------------------===//

// -----

func.func @reduce_dims_out_of_range(%a: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error @+2 {{'kiln.reduce' op dimensions [2] must be distinct dimensions of 'tensor<2x3xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.reduce sum %a, dims = [2] : tensor<2x3xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @reduce_dims_negative(%a: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error @+2 {{'kiln.reduce' op dimensions [-1] must be distinct dimensions of 'tensor<2x3xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.reduce max %a, dims = [-1] : tensor<2x3xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @reduce_dims_repeated(%a: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error @+2 {{'kiln.reduce' op dimensions [1, 1] must be distinct dimensions of 'tensor<2x3xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.reduce min %a, dims = [1, 1] : tensor<2x3xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @reduce_result_shape_differs(%a: tensor<2x3xf32>) -> tensor<3xf32> {
  // expected-error @+2 {{'kiln.reduce' op inferred type(s) 'tensor<2xf32>' are incompatible with return type(s) of operation 'tensor<3xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.reduce prod %a, dims = [1] : tensor<2x3xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @reduce_unknown_kind(%a: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{custom op 'kiln.reduce' expected string or keyword containing one of the following enum values for attribute 'kind' [sum, max, min, prod]}}
  %0 = kiln.reduce mean %a, dims = [1] : tensor<2x3xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @reduce_of_i1(%a: tensor<2x3xi1>) -> tensor<2xi1> {
  // expected-error @+1 {{'kiln.reduce' op operand #0 must be ranked tensor of}}
  %0 = kiln.reduce sum %a, dims = [1] : tensor<2x3xi1> -> tensor<2xi1>
  return %0 : tensor<2xi1>
}

//===----------------------------------------------------------------------===//
// dot_general
//===----------------------------------------------------------------------===//

// -----

func.func @dot_general_element_types_differ(%a: tensor<2x3xf32>, %b: tensor<3x4xf16>) -> tensor<2x4xf32> {
  // expected-error @+2 {{'kiln.dot_general' op element types of 'tensor<2x3xf32>' and 'tensor<3x4xf16>' differ}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.dot_general %a, %b, batch = [] x [], contract = [1] x [0] : tensor<2x3xf32>, tensor<3x4xf16> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// Only 16-bit float operands may widen their result, and only to f32.
func.func @dot_general_f32_result_narrowed(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xbf16> {
  // expected-error @+2 {{'kiln.dot_general' op inferred type(s) 'tensor<2x4xf32>' are incompatible with return type(s) of operation 'tensor<2x4xbf16>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.dot_general %a, %b, batch = [] x [], contract = [1] x [0] : tensor<2x3xf32>, tensor<3x4xf32> -> tensor<2x4xbf16>
  return %0 : tensor<2x4xbf16>
}

// -----

func.func @dot_general_bf16_result_f64(%a: tensor<2x3xbf16>, %b: tensor<3x4xbf16>) -> tensor<2x4xf64> {
  // expected-error @+2 {{'kiln.dot_general' op inferred type(s) 'tensor<2x4xbf16>' are incompatible with return type(s) of operation 'tensor<2x4xf64>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.dot_general %a, %b, batch = [] x [], contract = [1] x [0] : tensor<2x3xbf16>, tensor<3x4xbf16> -> tensor<2x4xf64>
  return %0 : tensor<2x4xf64>
}

// -----

func.func @dot_general_bf16_result_shape(%a: tensor<2x3xbf16>, %b: tensor<3x4xbf16>) -> tensor<2x5xf32> {
  // expected-error @+2 {{'kiln.dot_general' op inferred type(s) 'tensor<2x4xbf16>' are incompatible with return type(s) of operation 'tensor<2x5xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.dot_general %a, %b, batch = [] x [], contract = [1] x [0] : tensor<2x3xbf16>, tensor<3x4xbf16> -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @dot_general_dims_do_not_pair(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+2 {{'kiln.dot_general' op batch dims [] x [] and contracting dims [1] x [0, 1] must pair up}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.dot_general %a, %b, batch = [] x [], contract = [1] x [0, 1] : tensor<2x3xf32>, tensor<3x4xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @dot_general_batch_do_not_pair(%a: tensor<5x2x3xf32>, %b: tensor<5x3x4xf32>) -> tensor<5x2x4xf32> {
  // expected-error @+2 {{batch dims [0] x [] and contracting dims [2] x [1] must pair up}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.dot_general %a, %b, batch = [0] x [], contract = [2] x [1] : tensor<5x2x3xf32>, tensor<5x3x4xf32> -> tensor<5x2x4xf32>
  return %0 : tensor<5x2x4xf32>
}

// -----

func.func @dot_general_contract_out_of_range(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+2 {{'kiln.dot_general' op batch and contracting dims [2] of 'tensor<2x3xf32>' and [0] of 'tensor<3x4xf32>' must be distinct and in range}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.dot_general %a, %b, batch = [] x [], contract = [2] x [0] : tensor<2x3xf32>, tensor<3x4xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @dot_general_rhs_dim_negative(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+2 {{batch and contracting dims [1] of 'tensor<2x3xf32>' and [-1] of 'tensor<3x4xf32>' must be distinct and in range}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.dot_general %a, %b, batch = [] x [], contract = [1] x [-1] : tensor<2x3xf32>, tensor<3x4xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @dot_general_batch_also_contracted(%a: tensor<3x3xf32>, %b: tensor<3x3xf32>) -> tensor<3xf32> {
  // expected-error @+2 {{batch and contracting dims [0, 0] of 'tensor<3x3xf32>' and [0, 1] of 'tensor<3x3xf32>' must be distinct and in range}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.dot_general %a, %b, batch = [0] x [0], contract = [0] x [1] : tensor<3x3xf32>, tensor<3x3xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @dot_general_contract_sizes_differ(%a: tensor<2x3xf32>, %b: tensor<4x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+2 {{'kiln.dot_general' op lhs dimension 1 of 'tensor<2x3xf32>' (size 3) does not match rhs dimension 0 of 'tensor<4x4xf32>' (size 4)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.dot_general %a, %b, batch = [] x [], contract = [1] x [0] : tensor<2x3xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @dot_general_batch_sizes_differ(%a: tensor<5x2x3xf32>, %b: tensor<6x3x4xf32>) -> tensor<5x2x4xf32> {
  // expected-error @+2 {{lhs dimension 0 of 'tensor<5x2x3xf32>' (size 5) does not match rhs dimension 0 of 'tensor<6x3x4xf32>' (size 6)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.dot_general %a, %b, batch = [0] x [0], contract = [2] x [1] : tensor<5x2x3xf32>, tensor<6x3x4xf32> -> tensor<5x2x4xf32>
  return %0 : tensor<5x2x4xf32>
}

// -----

func.func @dot_general_result_shape_differs(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<4x2xf32> {
  // expected-error @+2 {{'kiln.dot_general' op inferred type(s) 'tensor<2x4xf32>' are incompatible with return type(s) of operation 'tensor<4x2xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.dot_general %a, %b, batch = [] x [], contract = [1] x [0] : tensor<2x3xf32>, tensor<3x4xf32> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

//===----------------------------------------------------------------------===//
// gather, scatter_add
//===----------------------------------------------------------------------===//

// -----

func.func @gather_axis_out_of_range(%a: tensor<4x5xf32>, %i: tensor<3xi32>) -> tensor<4x3xf32> {
  // expected-error @+2 {{'kiln.gather' op axis 2 is out of range for 'tensor<4x5xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.gather %a[%i], axis = 2 : tensor<4x5xf32>, tensor<3xi32> -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @gather_axis_negative(%a: tensor<4x5xf32>, %i: tensor<3xi32>) -> tensor<4x3xf32> {
  // expected-error @+2 {{'kiln.gather' op axis -1 is out of range for 'tensor<4x5xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.gather %a[%i], axis = -1 : tensor<4x5xf32>, tensor<3xi32> -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @gather_float_indices(%a: tensor<4x5xf32>, %i: tensor<3xf32>) -> tensor<3x5xf32> {
  // expected-error @+1 {{'kiln.gather' op operand #1 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<3xf32>'}}
  %0 = kiln.gather %a[%i], axis = 0 : tensor<4x5xf32>, tensor<3xf32> -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

// The gathered shape is checked against the size limit before it is compared
// with the declared one.
func.func @gather_result_over_limit(%a: tensor<1x1099511627776xf32>, %i: tensor<2xi32>) -> tensor<2xf32> {
  // expected-error @+2 {{'kiln.gather' op tensor type tensor<2x1099511627776xf32> exceeds the limit of 2^40 elements}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = "kiln.gather"(%a, %i) <{axis = 0 : i64}> : (tensor<1x1099511627776xf32>, tensor<2xi32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @gather_result_shape_differs(%a: tensor<4x5xf32>, %i: tensor<3xi32>) -> tensor<3x4xf32> {
  // expected-error @+2 {{'kiln.gather' op inferred type(s) 'tensor<3x5xf32>' are incompatible with return type(s) of operation 'tensor<3x4xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.gather %a[%i], axis = 0 : tensor<4x5xf32>, tensor<3xi32> -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @gather_from_empty_axis(%a: tensor<0x5xf32>, %i: tensor<3xi32>) -> tensor<3x5xf32> {
  // expected-error @+2 {{'kiln.gather' op axis 0 of 'tensor<0x5xf32>' is empty, so indices 'tensor<3xi32>' have nothing to gather}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.gather %a[%i], axis = 0 : tensor<0x5xf32>, tensor<3xi32> -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

func.func @scatter_add_axis_out_of_range(%a: tensor<4x5xf32>, %i: tensor<3xi32>, %u: tensor<4x3xf32>) -> tensor<4x5xf32> {
  // expected-error @+1 {{'kiln.scatter_add' op axis 2 is out of range for 'tensor<4x5xf32>'}}
  %0 = kiln.scatter_add %a[%i], %u, axis = 2 : tensor<4x5xf32>, tensor<3xi32>, tensor<4x3xf32>
  return %0 : tensor<4x5xf32>
}

// -----

func.func @scatter_add_updates_shape(%a: tensor<4x5xf32>, %i: tensor<3xi32>, %u: tensor<4x3xf32>) -> tensor<4x5xf32> {
  // expected-error @+1 {{'kiln.scatter_add' op updates must have type 'tensor<3x5xf32>' for operand 'tensor<4x5xf32>' and indices 'tensor<3xi32>', got 'tensor<4x3xf32>'}}
  %0 = kiln.scatter_add %a[%i], %u, axis = 0 : tensor<4x5xf32>, tensor<3xi32>, tensor<4x3xf32>
  return %0 : tensor<4x5xf32>
}

// -----

func.func @scatter_add_updates_element_type(%a: tensor<4xf32>, %i: tensor<3xi64>, %u: tensor<3xf16>) -> tensor<4xf32> {
  // expected-error @+1 {{updates must have type 'tensor<3xf32>' for operand 'tensor<4xf32>' and indices 'tensor<3xi64>', got 'tensor<3xf16>'}}
  %0 = kiln.scatter_add %a[%i], %u, axis = 0 : tensor<4xf32>, tensor<3xi64>, tensor<3xf16>
  return %0 : tensor<4xf32>
}

//===----------------------------------------------------------------------===//
// rng_uniform, constant
//===----------------------------------------------------------------------===//

// -----

func.func @rng_state_wrong_length(%s: tensor<3xi64>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.rng_uniform' op state must be tensor<2xi64> ([key, counter]), got 'tensor<3xi64>'}}
  %v, %ns = kiln.rng_uniform %s : tensor<3xi64> -> tensor<4xf32>
  return %v : tensor<4xf32>
}

// -----

func.func @rng_state_wrong_type(%s: tensor<2xi32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.rng_uniform' op operand #0 must be 1D tensor of 64-bit signless integer values, but got 'tensor<2xi32>'}}
  %v, %ns = kiln.rng_uniform %s : tensor<2xi32> -> tensor<4xf32>
  return %v : tensor<4xf32>
}

// -----

func.func @rng_state_rank_two(%s: tensor<1x2xi64>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.rng_uniform' op operand #0 must be 1D tensor of 64-bit signless integer values}}
  %v, %ns = kiln.rng_uniform %s : tensor<1x2xi64> -> tensor<4xf32>
  return %v : tensor<4xf32>
}

// -----

func.func @rng_integer_values(%s: tensor<2xi64>) -> tensor<4xi32> {
  // expected-error @+1 {{'kiln.rng_uniform' op result #0 must be ranked tensor of}}
  %v, %ns = kiln.rng_uniform %s : tensor<2xi64> -> tensor<4xi32>
  return %v : tensor<4xi32>
}

// -----

func.func @rng_new_state_type(%s: tensor<2xi64>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.rng_uniform' op failed to verify that all of {state, new_state} have same type}}
  %v, %ns = "kiln.rng_uniform"(%s) : (tensor<2xi64>) -> (tensor<4xf32>, tensor<3xi64>)
  return %v : tensor<4xf32>
}

// -----

func.func @constant_value_not_a_tensor() -> tensor<2xf32> {
  // expected-error @+2 {{'kiln.constant' op value must be a ranked tensor}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = "kiln.constant"() <{value = dense<1.0> : vector<2xf32>}> : () -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @constant_of_a_vector() -> vector<2xf32> {
  // expected-error @+1 {{'kiln.constant' op result #0 must be ranked tensor of}}
  %0 = kiln.constant dense<1.0> : vector<2xf32>
  return %0 : vector<2xf32>
}

// -----

func.func @constant_scalar_attribute() -> tensor<f32> {
  // expected-error @+1 {{invalid kind of attribute specified}}
  %0 = kiln.constant 1.0 : f32
  return %0 : tensor<f32>
}

// -----

func.func @constant_type_differs_from_value() -> tensor<3xf32> {
  // expected-error @+2 {{'kiln.constant' op inferred type(s) 'tensor<2xf32>' are incompatible with return type(s) of operation 'tensor<3xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = "kiln.constant"() <{value = dense<1.0> : tensor<2xf32>}> : () -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @constant_unsupported_element_type() -> tensor<2xi8> {
  // expected-error @+1 {{'kiln.constant' op result #0 must be ranked tensor of}}
  %0 = kiln.constant dense<1> : tensor<2xi8>
  return %0 : tensor<2xi8>
}

// -----

func.func @constant_sparse() -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.constant' op value must be a dense<...> attribute of ints or floats, got sparse elements attribute}}
  %0 = kiln.constant sparse<[[1]], [2.0]> : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @constant_dense_resource() -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.constant' op value must be a dense<...> attribute of ints or floats, got dense_resource elements attribute}}
  %0 = kiln.constant dense_resource<weights> : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @constant_value_given_twice() -> tensor<2xf32> {
  // expected-error @+1 {{attribute 'value' occurs more than once in the attribute list}}
  %0 = kiln.constant {value = dense<1.0> : tensor<2xf32>} dense<2.0> : tensor<2xf32>
  return %0 : tensor<2xf32>
}

//===----------------------------------------------------------------------===//
// fusion, yield
//===----------------------------------------------------------------------===//

// -----

func.func @fusion_argument_types(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.fusion' op body arguments must match the inputs' types}}
  %0 = kiln.fusion loop(%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf16>):
    %1 = kiln.convert %x : tensor<4xf16> -> tensor<4xf32>
    kiln.yield %1 : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @fusion_argument_count(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.fusion' op body arguments must match the inputs' types}}
  %0 = kiln.fusion loop(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    kiln.yield %x : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @fusion_without_yield(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.fusion' op body must end in kiln.yield}}
  %0 = kiln.fusion loop(%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    %1 = kiln.neg %x : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @fusion_ends_in_return(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.fusion' op body must end in kiln.yield}}
  %0 = kiln.fusion loop(%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    func.return %x : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @fusion_empty_body(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.fusion' op expects a non-empty block}}
  %0 = kiln.fusion loop(%a) : (tensor<4xf32>) -> tensor<4xf32> {
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @fusion_no_region(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.fusion' op region #0 ('body') failed to verify constraint: region with 1 blocks}}
  %0 = "kiln.fusion"(%a) <{kind = 0 : i32}> ({
  }) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @fusion_two_blocks(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.fusion' op expects region #0 to have 0 or 1 blocks}}
  %0 = kiln.fusion loop(%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    kiln.yield %x : tensor<4xf32>
  ^bb1:
    kiln.yield %x : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @fusion_yield_type(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.fusion' op kiln.yield types must match the fusion's result types}}
  %0 = kiln.fusion loop(%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    %1 = kiln.convert %x : tensor<4xf32> -> tensor<4xf16>
    kiln.yield %1 : tensor<4xf16>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @fusion_yield_count(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-error @+1 {{'kiln.fusion' op kiln.yield types must match the fusion's result types}}
  %0:2 = kiln.fusion multi_output(%a) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%x: tensor<4xf32>):
    kiln.yield %x : tensor<4xf32>
  }
  return %0#0, %0#1 : tensor<4xf32>, tensor<4xf32>
}

// -----

func.func @fusion_uses_outer_value(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-note @+1 {{required by region isolation constraints}}
  %0 = kiln.fusion loop() : () -> tensor<4xf32> {
    // expected-error @+1 {{'kiln.neg' op using value defined outside the region}}
    %1 = kiln.neg %a : tensor<4xf32>
    kiln.yield %1 : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @fusion_unknown_kind(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{custom op 'kiln.fusion' expected string or keyword containing one of the following enum values for attribute 'kind' [loop, reduction, multi_output, gemm]}}
  %0 = kiln.fusion input(%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    kiln.yield %x : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @yield_outside_fusion(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.yield' op expects parent op 'kiln.fusion'}}
  kiln.yield %a : tensor<4xf32>
}

//===----------------------------------------------------------------------===//
// kiln.donate and other kiln attributes
//===----------------------------------------------------------------------===//

// -----

// expected-error @+1 {{'func.func' op 'kiln.donate' on argument #1 of non-tensor type 'i32'}}
func.func @donate_non_tensor(%a: tensor<4xf32>, %n: i32 {kiln.donate}) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}

// -----

// expected-error @+1 {{'func.func' op 'kiln.donate' on argument #0 of non-tensor type 'i64'}}
func.func private @donate_non_tensor_declaration(i64 {kiln.donate}, tensor<2xf32> {kiln.donate})

// -----

// expected-error @+1 {{'func.func' op 'kiln.donate' must be a unit attribute, got true}}
func.func @donate_with_value(%a: tensor<4xf32> {kiln.donate = true}) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}

// -----

// expected-error @+1 {{'func.func' op unknown kiln argument attribute 'kiln.donated'}}
func.func @donate_misspelled(%a: tensor<4xf32> {kiln.donated}) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}

// -----

// expected-error @+1 {{'func.func' op 'kiln.output_alias' on argument #0, which is not donated}}
func.func @alias_without_donate(%a: tensor<4xf32> {kiln.output_alias = 0 : i64}) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}

// -----

// expected-error @+1 {{'func.func' op 'kiln.output_alias' on argument #0 names result #1 of 1}}
func.func @alias_out_of_range(%a: tensor<4xf32> {kiln.donate, kiln.output_alias = 1 : i64}) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}

// -----

// expected-error @+1 {{'func.func' op 'kiln.output_alias' on argument #0 of type 'tensor<4xf32>' names result #0 of type 'tensor<2xf32>'}}
func.func @alias_other_type(%a: tensor<4xf32> {kiln.donate, kiln.output_alias = 0 : i64}) -> tensor<2xf32> {
  %0 = kiln.slice %a, start = [0], limit = [2], strides = [1] : tensor<4xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// expected-error @+1 {{'func.func' op 'kiln.output_alias' must be an integer, got "p"}}
func.func @alias_not_an_integer(%a: tensor<4xf32> {kiln.donate, kiln.output_alias = "p"}) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}

// -----

// expected-error @+1 {{'func.func' op 'kiln.donate' on result #0: only arguments can be donated}}
func.func @donate_on_result(%a: tensor<4xf32>) -> (tensor<4xf32> {kiln.donate}) {
  return %a : tensor<4xf32>
}

// -----

// expected-error @+1 {{'func.func' op unknown kiln result attribute 'kiln.aliased'}}
func.func @unknown_result_attribute(%a: tensor<4xf32>) -> (tensor<4xf32> {kiln.aliased}) {
  return %a : tensor<4xf32>
}

// -----

func.func @donate_on_an_op(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.neg' op 'kiln.donate' marks a function argument and cannot be placed on an operation}}
  %0 = kiln.neg %a {kiln.donate} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// expected-error @+1 {{'func.func' op 'kiln.donate' marks a function argument and cannot be placed on an operation}}
func.func @donate_on_a_function(%a: tensor<4xf32>) -> tensor<4xf32> attributes {kiln.donate} {
  return %a : tensor<4xf32>
}

// -----
// fused_linear_cross_entropy, fused_linear_cross_entropy_grad

func.func @cross_entropy_ranks(%h: tensor<2x6x4xf32>, %w: tensor<10x4xf32>, %y: tensor<6xi64>) -> tensor<6xf32> {
  // expected-error @+1 {{'kiln.fused_linear_cross_entropy' op expected hidden [N, C], weight [V, C] and labels [N], got 'tensor<2x6x4xf32>', 'tensor<10x4xf32>', 'tensor<6xi64>'}}
  %l = kiln.fused_linear_cross_entropy %h, %w, %y {ignore_index = -100 : i64} : tensor<2x6x4xf32>, tensor<10x4xf32>, tensor<6xi64> -> tensor<6xf32>
  return %l : tensor<6xf32>
}

// -----

func.func @cross_entropy_element_types(%h: tensor<6x4xf32>, %w: tensor<10x4xf64>, %y: tensor<6xi64>) -> tensor<6xf32> {
  // expected-error @+1 {{'kiln.fused_linear_cross_entropy' op expected hidden and weight of one element type, got 'tensor<6x4xf32>' and 'tensor<10x4xf64>'}}
  %l = kiln.fused_linear_cross_entropy %h, %w, %y {ignore_index = -100 : i64} : tensor<6x4xf32>, tensor<10x4xf64>, tensor<6xi64> -> tensor<6xf32>
  return %l : tensor<6xf32>
}

// -----

func.func @cross_entropy_width(%h: tensor<6x4xf32>, %w: tensor<10x5xf32>, %y: tensor<6xi64>) -> tensor<6xf32> {
  // expected-error @+1 {{'kiln.fused_linear_cross_entropy' op expected hidden and weight to agree in C, got 'tensor<6x4xf32>' and 'tensor<10x5xf32>'}}
  %l = kiln.fused_linear_cross_entropy %h, %w, %y {ignore_index = -100 : i64} : tensor<6x4xf32>, tensor<10x5xf32>, tensor<6xi64> -> tensor<6xf32>
  return %l : tensor<6xf32>
}

// -----

func.func @cross_entropy_labels(%h: tensor<6x4xf32>, %w: tensor<10x4xf32>, %y: tensor<5xi64>) -> tensor<6xf32> {
  // expected-error @+1 {{'kiln.fused_linear_cross_entropy' op expected one label per hidden row, got 'tensor<6x4xf32>' and 'tensor<5xi64>'}}
  %l = kiln.fused_linear_cross_entropy %h, %w, %y {ignore_index = -100 : i64} : tensor<6x4xf32>, tensor<10x4xf32>, tensor<5xi64> -> tensor<6xf32>
  return %l : tensor<6xf32>
}

// -----

func.func @cross_entropy_no_classes(%h: tensor<6x4xf32>, %w: tensor<0x4xf32>, %y: tensor<6xi64>) -> tensor<6xf32> {
  // expected-error @+1 {{'kiln.fused_linear_cross_entropy' op expected at least one class, got 'tensor<0x4xf32>'}}
  %l = kiln.fused_linear_cross_entropy %h, %w, %y {ignore_index = -100 : i64} : tensor<6x4xf32>, tensor<0x4xf32>, tensor<6xi64> -> tensor<6xf32>
  return %l : tensor<6xf32>
}

// -----

func.func @cross_entropy_result(%h: tensor<6x4xf32>, %w: tensor<10x4xf32>, %y: tensor<6xi64>) -> tensor<6x10xf32> {
  // expected-error @+1 {{'kiln.fused_linear_cross_entropy' op expected loss of type 'tensor<6xf32>', got 'tensor<6x10xf32>'}}
  %l = kiln.fused_linear_cross_entropy %h, %w, %y {ignore_index = -100 : i64} : tensor<6x4xf32>, tensor<10x4xf32>, tensor<6xi64> -> tensor<6x10xf32>
  return %l : tensor<6x10xf32>
}

// -----

func.func @cross_entropy_grad_weight(%h: tensor<6x4xf32>, %w: tensor<10x4xf32>, %y: tensor<6xi64>, %g: tensor<6xf32>) -> tensor<6x4xf32> {
  // expected-error @+1 {{'kiln.fused_linear_cross_entropy_grad' op expected weight_grad of type 'tensor<10x4xf32>', got 'tensor<6x4xf32>'}}
  %dh, %dw = kiln.fused_linear_cross_entropy_grad %h, %w, %y, %g {ignore_index = -100 : i64} : tensor<6x4xf32>, tensor<10x4xf32>, tensor<6xi64>, tensor<6xf32> -> tensor<6x4xf32>, tensor<6x4xf32>
  return %dh : tensor<6x4xf32>
}

// -----

func.func @cross_entropy_grad_loss_grad(%h: tensor<6x4xf32>, %w: tensor<10x4xf32>, %y: tensor<6xi64>, %g: tensor<6x1xf32>) -> tensor<6x4xf32> {
  // expected-error @+1 {{'kiln.fused_linear_cross_entropy_grad' op expected loss_grad of type 'tensor<6xf32>', got 'tensor<6x1xf32>'}}
  %dh, %dw = kiln.fused_linear_cross_entropy_grad %h, %w, %y, %g {ignore_index = -100 : i64} : tensor<6x4xf32>, tensor<10x4xf32>, tensor<6xi64>, tensor<6x1xf32> -> tensor<6x4xf32>, tensor<10x4xf32>
  return %dh : tensor<6x4xf32>
}

// -----
// fused_attention, fused_attention_grad

func.func @attention_rank(%q: tensor<2x8x4xf32>, %k: tensor<1x2x8x4xf32>) -> tensor<2x8x4xf32> {
  // expected-error @+1 {{'kiln.fused_attention' op expected query, key and value of rank 4 ([batch, heads, sequence, head_dim]), got 'tensor<2x8x4xf32>', 'tensor<1x2x8x4xf32>', 'tensor<1x2x8x4xf32>'}}
  %o, %stats_o = kiln.fused_attention %q, %k, %k {scale = 1.0 : f64} : tensor<2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<2x8x4xf32>, tensor<2x8xf32>
  return %o : tensor<2x8x4xf32>
}

// -----

func.func @attention_element_types(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x8x4xf64>) -> tensor<1x2x8x4xf32> {
  // expected-error @+1 {{'kiln.fused_attention' op expected query, key and value of one element type, got 'tensor<1x2x8x4xf32>', 'tensor<1x2x8x4xf64>', 'tensor<1x2x8x4xf64>'}}
  %o, %stats_o = kiln.fused_attention %q, %k, %k {scale = 1.0 : f64} : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf64>, tensor<1x2x8x4xf64> -> tensor<1x2x8x4xf32>, tensor<1x2x8xf32>
  return %o : tensor<1x2x8x4xf32>
}

// -----

func.func @attention_key_value_shapes(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x8x4xf32>, %v: tensor<1x2x6x4xf32>) -> tensor<1x2x8x4xf32> {
  // expected-error @+1 {{'kiln.fused_attention' op expected key and value of one shape, got 'tensor<1x2x8x4xf32>' and 'tensor<1x2x6x4xf32>'}}
  %o, %stats_o = kiln.fused_attention %q, %k, %v {scale = 1.0 : f64} : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x6x4xf32> -> tensor<1x2x8x4xf32>, tensor<1x2x8xf32>
  return %o : tensor<1x2x8x4xf32>
}

// -----

func.func @attention_head_dim(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x8x5xf32>) -> tensor<1x2x8x4xf32> {
  // expected-error @+1 {{'kiln.fused_attention' op expected query and key to agree in batch and head_dim, got 'tensor<1x2x8x4xf32>' and 'tensor<1x2x8x5xf32>'}}
  %o, %stats_o = kiln.fused_attention %q, %k, %k {scale = 1.0 : f64} : tensor<1x2x8x4xf32>, tensor<1x2x8x5xf32>, tensor<1x2x8x5xf32> -> tensor<1x2x8x4xf32>, tensor<1x2x8xf32>
  return %o : tensor<1x2x8x4xf32>
}

// -----

func.func @attention_heads(%q: tensor<1x3x8x4xf32>, %k: tensor<1x2x8x4xf32>) -> tensor<1x3x8x4xf32> {
  // expected-error @+1 {{'kiln.fused_attention' op expected the query heads (3) to be a multiple of the key/value heads (2)}}
  %o, %stats_o = kiln.fused_attention %q, %k, %k {scale = 1.0 : f64} : tensor<1x3x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x3x8x4xf32>, tensor<1x3x8xf32>
  return %o : tensor<1x3x8x4xf32>
}

// -----

func.func @attention_no_keys(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x0x4xf32>) -> tensor<1x2x8x4xf32> {
  // expected-error @+1 {{'kiln.fused_attention' op expected at least one key, got 'tensor<1x2x0x4xf32>'}}
  %o, %stats_o = kiln.fused_attention %q, %k, %k {scale = 1.0 : f64} : tensor<1x2x8x4xf32>, tensor<1x2x0x4xf32>, tensor<1x2x0x4xf32> -> tensor<1x2x8x4xf32>, tensor<1x2x8xf32>
  return %o : tensor<1x2x8x4xf32>
}

// -----

func.func @attention_causal_lengths(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x6x4xf32>) -> tensor<1x2x8x4xf32> {
  // expected-error @+1 {{'kiln.fused_attention' op causal attention needs as many queries as keys, got 8 and 6}}
  %o, %stats_o = kiln.fused_attention %q, %k, %k {causal, scale = 1.0 : f64} : tensor<1x2x8x4xf32>, tensor<1x2x6x4xf32>, tensor<1x2x6x4xf32> -> tensor<1x2x8x4xf32>, tensor<1x2x8xf32>
  return %o : tensor<1x2x8x4xf32>
}

// -----

func.func @attention_window_without_causal(%q: tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32> {
  // expected-error @+1 {{'kiln.fused_attention' op expected a window of 0 (none) or, with causal, at least 1 key, got 3 without causal}}
  %o, %stats_o = kiln.fused_attention %q, %q, %q {scale = 1.0 : f64, window = 3 : i64} : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>, tensor<1x2x8xf32>
  return %o : tensor<1x2x8x4xf32>
}

// -----

func.func @attention_grad_negative_window(%q: tensor<1x2x8x4xf32>, %l: tensor<1x2x8xf32>) -> tensor<1x2x8x4xf32> {
  // expected-error @+1 {{'kiln.fused_attention_grad' op expected a window of 0 (none) or, with causal, at least 1 key, got -2}}
  %dq, %dk, %dv = kiln.fused_attention_grad %q, %q, %q, %q, %l, %q {causal, scale = 1.0 : f64, window = -2 : i64} : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>
  return %dq : tensor<1x2x8x4xf32>
}

// -----

func.func @attention_scale(%q: tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32> {
  // expected-error @+1 {{'kiln.fused_attention' op expected a finite scale, got INF}}
  %o, %stats_o = kiln.fused_attention %q, %q, %q {scale = 0x7FF0000000000000 : f64} : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>, tensor<1x2x8xf32>
  return %o : tensor<1x2x8x4xf32>
}

// -----

func.func @attention_dropout_range(%q: tensor<1x2x8x4xf32>, %s: tensor<2xi64>) -> tensor<1x2x8x4xf32> {
  // expected-error @+1 {{'kiln.fused_attention' op expected dropout in [0, 1), got 1}}
  %o, %stats_o = kiln.fused_attention %q, %q, %q, rng = %s {dropout = 1.0 : f64, scale = 1.0 : f64} : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<2xi64> -> tensor<1x2x8x4xf32>, tensor<1x2x8xf32>
  return %o : tensor<1x2x8x4xf32>
}

// -----

func.func @attention_dropout_without_state(%q: tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32> {
  // expected-error @+1 {{'kiln.fused_attention' op dropout needs an rng state}}
  %o, %stats_o = kiln.fused_attention %q, %q, %q {dropout = 0.1 : f64, scale = 1.0 : f64} : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>, tensor<1x2x8xf32>
  return %o : tensor<1x2x8x4xf32>
}

// -----

func.func @attention_state_without_dropout(%q: tensor<1x2x8x4xf32>, %s: tensor<2xi64>) -> tensor<1x2x8x4xf32> {
  // expected-error @+1 {{'kiln.fused_attention' op an rng state without dropout}}
  %o, %stats_o = kiln.fused_attention %q, %q, %q, rng = %s {scale = 1.0 : f64} : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<2xi64> -> tensor<1x2x8x4xf32>, tensor<1x2x8xf32>
  return %o : tensor<1x2x8x4xf32>
}

// -----

func.func @attention_state_shape(%q: tensor<1x2x8x4xf32>, %s: tensor<3xi64>) -> tensor<1x2x8x4xf32> {
  // expected-error @+1 {{'kiln.fused_attention' op rng state must be tensor<2xi64> ([key, counter]), got 'tensor<3xi64>'}}
  %o, %stats_o = kiln.fused_attention %q, %q, %q, rng = %s {dropout = 0.1 : f64, scale = 1.0 : f64} : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<3xi64> -> tensor<1x2x8x4xf32>, tensor<1x2x8xf32>
  return %o : tensor<1x2x8x4xf32>
}

// -----

func.func @attention_result_type(%q: tensor<1x2x8x4xf32>) -> tensor<1x2x8x8xf32> {
  // expected-error @+1 {{'kiln.fused_attention' op expected result of type 'tensor<1x2x8x4xf32>', got 'tensor<1x2x8x8xf32>'}}
  %o, %stats_o = kiln.fused_attention %q, %q, %q {scale = 1.0 : f64} : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x8xf32>, tensor<1x2x8xf32>
  return %o : tensor<1x2x8x8xf32>
}

// -----

func.func @attention_grad_types(%q: tensor<1x4x8x4xf32>, %k: tensor<1x2x8x4xf32>, %l: tensor<1x4x8xf32>) -> tensor<1x4x8x4xf32> {
  // expected-error @+1 {{'kiln.fused_attention_grad' op expected key_grad of type 'tensor<1x2x8x4xf32>', got 'tensor<1x4x8x4xf32>'}}
  %dq, %dk, %dv = kiln.fused_attention_grad %q, %k, %k, %q, %l, %q {scale = 1.0 : f64} : tensor<1x4x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x4x8x4xf32>, tensor<1x4x8xf32>, tensor<1x4x8x4xf32> -> tensor<1x4x8x4xf32>, tensor<1x4x8x4xf32>, tensor<1x2x8x4xf32>
  return %dq : tensor<1x4x8x4xf32>
}

// -----

func.func @attention_grad_result_grad(%q: tensor<1x2x8x4xf32>, %l: tensor<1x2x8xf32>, %g: tensor<1x2x8x2xf32>) -> tensor<1x2x8x4xf32> {
  // expected-error @+1 {{'kiln.fused_attention_grad' op expected result_grad of type 'tensor<1x2x8x4xf32>', got 'tensor<1x2x8x2xf32>'}}
  %dq, %dk, %dv = kiln.fused_attention_grad %q, %q, %q, %q, %l, %g {scale = 1.0 : f64} : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8xf32>, tensor<1x2x8x2xf32> -> tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>
  return %dq : tensor<1x2x8x4xf32>
}

// -----

func.func @attention_grad_result(%q: tensor<1x2x8x4xf32>, %o: tensor<1x2x8x4xbf16>, %l: tensor<1x2x8xf32>) -> tensor<1x2x8x4xf32> {
  // expected-error @+1 {{'kiln.fused_attention_grad' op expected result of type 'tensor<1x2x8x4xf32>', got 'tensor<1x2x8x4xbf16>'}}
  %dq, %dk, %dv = kiln.fused_attention_grad %q, %q, %q, %o, %l, %q {scale = 1.0 : f64} : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xbf16>, tensor<1x2x8xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>
  return %dq : tensor<1x2x8x4xf32>
}

// -----

func.func @attention_grad_row_stats(%q: tensor<1x2x8x4xf32>, %l: tensor<1x2x4xf32>) -> tensor<1x2x8x4xf32> {
  // expected-error @+1 {{'kiln.fused_attention_grad' op expected row_stats of type 'tensor<1x2x8xf32>', got 'tensor<1x2x4xf32>'}}
  %dq, %dk, %dv = kiln.fused_attention_grad %q, %q, %q, %q, %l, %q {scale = 1.0 : f64} : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>
  return %dq : tensor<1x2x8x4xf32>
}

// -----

func.func @attention_row_stats_type(%q: tensor<1x2x8x4xbf16>) -> tensor<1x2x8x4xbf16> {
  // expected-error @+1 {{'kiln.fused_attention' op expected row_stats of type 'tensor<1x2x8xf32>', got 'tensor<1x2x4xf32>'}}
  %o, %l = kiln.fused_attention %q, %q, %q {scale = 1.0 : f64} : tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16> -> tensor<1x2x8x4xbf16>, tensor<1x2x4xf32>
  return %o : tensor<1x2x8x4xbf16>
}

// -----
// optimization_barrier

func.func @gradient_seed_operands(%a: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'kiln.optimization_barrier' op a gradient seed barrier takes the seed and the value it differentiates, got 1 operands}}
  %t = kiln.optimization_barrier %a {gradient_seed} : tensor<f32>
  return %t : tensor<f32>
}

// -----

// A 16-bit sum over processes would round at every process: widen it first.
func.func @all_reduce_bf16(%a: tensor<4xbf16>) -> tensor<4xbf16> {
  // expected-error @+1 {{'kiln.all_reduce' op sums f32, f64, i32 or i64 elements, not 'bf16'}}
  %0 = kiln.all_reduce %a : tensor<4xbf16>
  return %0 : tensor<4xbf16>
}
