// Every kiln op in its custom assembly form survives print -> parse -> print,
// directly, through the generic form and through bytecode: one function per op
// (per enum value for compare, reduce and fusion), covering each element type
// kiln accepts (f32, f64, f16, bf16, i1, i32, i64), splat and dense constants,
// and a `kiln.donate` argument.
// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// RUN: kiln-opt %s --mlir-print-op-generic | kiln-opt | FileCheck %s
// RUN: kiln-opt %s --emit-bytecode | kiln-opt | FileCheck %s

//===----------------------------------------------------------------------===//
// Binary elementwise
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @binary_add_f32(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2x3xf32>, %[[B:[^:]+]]: tensor<2x3xf32>
// CHECK: %[[R:.+]] = kiln.add %[[A]], %[[B]] : tensor<2x3xf32>
// CHECK: return %[[R]]
func.func @binary_add_f32(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = kiln.add %a, %b : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @binary_add_f64(
// CHECK-SAME: %[[A:[^:]+]]: tensor<3xf64>, %[[B:[^:]+]]: tensor<3xf64>
// CHECK: %[[R:.+]] = kiln.add %[[A]], %[[B]] : tensor<3xf64>
// CHECK: return %[[R]]
func.func @binary_add_f64(%a: tensor<3xf64>, %b: tensor<3xf64>) -> tensor<3xf64> {
  %0 = kiln.add %a, %b : tensor<3xf64>
  return %0 : tensor<3xf64>
}

// CHECK-LABEL: func.func @binary_sub_i32(
// CHECK-SAME: %[[A:[^:]+]]: tensor<4xi32>, %[[B:[^:]+]]: tensor<4xi32>
// CHECK: %[[R:.+]] = kiln.sub %[[A]], %[[B]] : tensor<4xi32>
// CHECK: return %[[R]]
func.func @binary_sub_i32(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  %0 = kiln.sub %a, %b : tensor<4xi32>
  return %0 : tensor<4xi32>
}

// CHECK-LABEL: func.func @binary_mul_f16(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2xf16>, %[[B:[^:]+]]: tensor<2xf16>
// CHECK: %[[R:.+]] = kiln.mul %[[A]], %[[B]] : tensor<2xf16>
// CHECK: return %[[R]]
func.func @binary_mul_f16(%a: tensor<2xf16>, %b: tensor<2xf16>) -> tensor<2xf16> {
  %0 = kiln.mul %a, %b : tensor<2xf16>
  return %0 : tensor<2xf16>
}

// CHECK-LABEL: func.func @binary_div_i64(
// CHECK-SAME: %[[A:[^:]+]]: tensor<3xi64>, %[[B:[^:]+]]: tensor<3xi64>
// CHECK: %[[R:.+]] = kiln.div %[[A]], %[[B]] : tensor<3xi64>
// CHECK: return %[[R]]
func.func @binary_div_i64(%a: tensor<3xi64>, %b: tensor<3xi64>) -> tensor<3xi64> {
  %0 = kiln.div %a, %b : tensor<3xi64>
  return %0 : tensor<3xi64>
}

// CHECK-LABEL: func.func @binary_max_bf16(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2x2xbf16>, %[[B:[^:]+]]: tensor<2x2xbf16>
// CHECK: %[[R:.+]] = kiln.max %[[A]], %[[B]] : tensor<2x2xbf16>
// CHECK: return %[[R]]
func.func @binary_max_bf16(%a: tensor<2x2xbf16>, %b: tensor<2x2xbf16>) -> tensor<2x2xbf16> {
  %0 = kiln.max %a, %b : tensor<2x2xbf16>
  return %0 : tensor<2x2xbf16>
}

// CHECK-LABEL: func.func @binary_min_f32(
// CHECK-SAME: %[[A:[^:]+]]: tensor<f32>, %[[B:[^:]+]]: tensor<f32>
// CHECK: %[[R:.+]] = kiln.min %[[A]], %[[B]] : tensor<f32>
// CHECK: return %[[R]]
func.func @binary_min_f32(%a: tensor<f32>, %b: tensor<f32>) -> tensor<f32> {
  %0 = kiln.min %a, %b : tensor<f32>
  return %0 : tensor<f32>
}

// CHECK-LABEL: func.func @binary_pow_f32(
// CHECK-SAME: %[[A:[^:]+]]: tensor<5xf32>, %[[B:[^:]+]]: tensor<5xf32>
// CHECK: %[[R:.+]] = kiln.pow %[[A]], %[[B]] : tensor<5xf32>
// CHECK: return %[[R]]
func.func @binary_pow_f32(%a: tensor<5xf32>, %b: tensor<5xf32>) -> tensor<5xf32> {
  %0 = kiln.pow %a, %b : tensor<5xf32>
  return %0 : tensor<5xf32>
}

// CHECK-LABEL: func.func @binary_and_i1(
// CHECK-SAME: %[[A:[^:]+]]: tensor<4xi1>, %[[B:[^:]+]]: tensor<4xi1>
// CHECK: %[[R:.+]] = kiln.and %[[A]], %[[B]] : tensor<4xi1>
// CHECK: return %[[R]]
func.func @binary_and_i1(%a: tensor<4xi1>, %b: tensor<4xi1>) -> tensor<4xi1> {
  %0 = kiln.and %a, %b : tensor<4xi1>
  return %0 : tensor<4xi1>
}

// CHECK-LABEL: func.func @binary_or_i32(
// CHECK-SAME: %[[A:[^:]+]]: tensor<4xi32>, %[[B:[^:]+]]: tensor<4xi32>
// CHECK: %[[R:.+]] = kiln.or %[[A]], %[[B]] : tensor<4xi32>
// CHECK: return %[[R]]
func.func @binary_or_i32(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  %0 = kiln.or %a, %b : tensor<4xi32>
  return %0 : tensor<4xi32>
}

//===----------------------------------------------------------------------===//
// Unary elementwise
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @unary_neg_i64(
// CHECK-SAME: %[[A:[^:]+]]: tensor<3xi64>
// CHECK: %[[R:.+]] = kiln.neg %[[A]] : tensor<3xi64>
// CHECK: return %[[R]]
func.func @unary_neg_i64(%a: tensor<3xi64>) -> tensor<3xi64> {
  %0 = kiln.neg %a : tensor<3xi64>
  return %0 : tensor<3xi64>
}

// CHECK-LABEL: func.func @unary_abs_f16(
// CHECK-SAME: %[[A:[^:]+]]: tensor<3xf16>
// CHECK: %[[R:.+]] = kiln.abs %[[A]] : tensor<3xf16>
// CHECK: return %[[R]]
func.func @unary_abs_f16(%a: tensor<3xf16>) -> tensor<3xf16> {
  %0 = kiln.abs %a : tensor<3xf16>
  return %0 : tensor<3xf16>
}

// CHECK-LABEL: func.func @unary_sign_i32(
// CHECK-SAME: %[[A:[^:]+]]: tensor<3xi32>
// CHECK: %[[R:.+]] = kiln.sign %[[A]] : tensor<3xi32>
// CHECK: return %[[R]]
func.func @unary_sign_i32(%a: tensor<3xi32>) -> tensor<3xi32> {
  %0 = kiln.sign %a : tensor<3xi32>
  return %0 : tensor<3xi32>
}

// CHECK-LABEL: func.func @unary_exp_f32(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2x2xf32>
// CHECK: %[[R:.+]] = kiln.exp %[[A]] : tensor<2x2xf32>
// CHECK: return %[[R]]
func.func @unary_exp_f32(%a: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %0 = kiln.exp %a : tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// CHECK-LABEL: func.func @unary_log_bf16(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2xbf16>
// CHECK: %[[R:.+]] = kiln.log %[[A]] : tensor<2xbf16>
// CHECK: return %[[R]]
func.func @unary_log_bf16(%a: tensor<2xbf16>) -> tensor<2xbf16> {
  %0 = kiln.log %a : tensor<2xbf16>
  return %0 : tensor<2xbf16>
}

// CHECK-LABEL: func.func @unary_log1p_f32(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2xf32>
// CHECK: %[[R:.+]] = kiln.log1p %[[A]] : tensor<2xf32>
// CHECK: return %[[R]]
func.func @unary_log1p_f32(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = kiln.log1p %a : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// CHECK-LABEL: func.func @unary_tanh_f16(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2xf16>
// CHECK: %[[R:.+]] = kiln.tanh %[[A]] : tensor<2xf16>
// CHECK: return %[[R]]
func.func @unary_tanh_f16(%a: tensor<2xf16>) -> tensor<2xf16> {
  %0 = kiln.tanh %a : tensor<2xf16>
  return %0 : tensor<2xf16>
}

// CHECK-LABEL: func.func @unary_sqrt_f32(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2xf32>
// CHECK: %[[R:.+]] = kiln.sqrt %[[A]] : tensor<2xf32>
// CHECK: return %[[R]]
func.func @unary_sqrt_f32(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = kiln.sqrt %a : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// CHECK-LABEL: func.func @unary_rsqrt_bf16(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2xbf16>
// CHECK: %[[R:.+]] = kiln.rsqrt %[[A]] : tensor<2xbf16>
// CHECK: return %[[R]]
func.func @unary_rsqrt_bf16(%a: tensor<2xbf16>) -> tensor<2xbf16> {
  %0 = kiln.rsqrt %a : tensor<2xbf16>
  return %0 : tensor<2xbf16>
}

// CHECK-LABEL: func.func @unary_logistic_f32(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2xf32>
// CHECK: %[[R:.+]] = kiln.logistic %[[A]] : tensor<2xf32>
// CHECK: return %[[R]]
func.func @unary_logistic_f32(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = kiln.logistic %a : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// CHECK-LABEL: func.func @unary_erf_f32(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2xf32>
// CHECK: %[[R:.+]] = kiln.erf %[[A]] : tensor<2xf32>
// CHECK: return %[[R]]
func.func @unary_erf_f32(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = kiln.erf %a : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// CHECK-LABEL: func.func @unary_floor_f16(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2xf16>
// CHECK: %[[R:.+]] = kiln.floor %[[A]] : tensor<2xf16>
// CHECK: return %[[R]]
func.func @unary_floor_f16(%a: tensor<2xf16>) -> tensor<2xf16> {
  %0 = kiln.floor %a : tensor<2xf16>
  return %0 : tensor<2xf16>
}

// CHECK-LABEL: func.func @unary_not_i1(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2xi1>
// CHECK: %[[R:.+]] = kiln.not %[[A]] : tensor<2xi1>
// CHECK: return %[[R]]
func.func @unary_not_i1(%a: tensor<2xi1>) -> tensor<2xi1> {
  %0 = kiln.not %a : tensor<2xi1>
  return %0 : tensor<2xi1>
}

// CHECK-LABEL: func.func @unary_not_i64(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2xi64>
// CHECK: %[[R:.+]] = kiln.not %[[A]] : tensor<2xi64>
// CHECK: return %[[R]]
func.func @unary_not_i64(%a: tensor<2xi64>) -> tensor<2xi64> {
  %0 = kiln.not %a : tensor<2xi64>
  return %0 : tensor<2xi64>
}

//===----------------------------------------------------------------------===//
// compare (every direction), select, clamp, convert
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @compare_eq_f32(
// CHECK-SAME: %[[A:[^:]+]]: tensor<4xf32>, %[[B:[^:]+]]: tensor<4xf32>
// CHECK: %[[R:.+]] = kiln.compare EQ, %[[A]], %[[B]] : tensor<4xf32>
// CHECK: return %[[R]] : tensor<4xi1>
func.func @compare_eq_f32(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xi1> {
  %0 = kiln.compare EQ, %a, %b : tensor<4xf32>
  return %0 : tensor<4xi1>
}

// CHECK-LABEL: func.func @compare_ne_f16(
// CHECK-SAME: %[[A:[^:]+]]: tensor<4xf16>, %[[B:[^:]+]]: tensor<4xf16>
// CHECK: %[[R:.+]] = kiln.compare NE, %[[A]], %[[B]] : tensor<4xf16>
// CHECK: return %[[R]] : tensor<4xi1>
func.func @compare_ne_f16(%a: tensor<4xf16>, %b: tensor<4xf16>) -> tensor<4xi1> {
  %0 = kiln.compare NE, %a, %b : tensor<4xf16>
  return %0 : tensor<4xi1>
}

// CHECK-LABEL: func.func @compare_lt_bf16(
// CHECK-SAME: %[[A:[^:]+]]: tensor<4xbf16>, %[[B:[^:]+]]: tensor<4xbf16>
// CHECK: %[[R:.+]] = kiln.compare LT, %[[A]], %[[B]] : tensor<4xbf16>
// CHECK: return %[[R]] : tensor<4xi1>
func.func @compare_lt_bf16(%a: tensor<4xbf16>, %b: tensor<4xbf16>) -> tensor<4xi1> {
  %0 = kiln.compare LT, %a, %b : tensor<4xbf16>
  return %0 : tensor<4xi1>
}

// CHECK-LABEL: func.func @compare_le_i32(
// CHECK-SAME: %[[A:[^:]+]]: tensor<4xi32>, %[[B:[^:]+]]: tensor<4xi32>
// CHECK: %[[R:.+]] = kiln.compare LE, %[[A]], %[[B]] : tensor<4xi32>
// CHECK: return %[[R]] : tensor<4xi1>
func.func @compare_le_i32(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi1> {
  %0 = kiln.compare LE, %a, %b : tensor<4xi32>
  return %0 : tensor<4xi1>
}

// CHECK-LABEL: func.func @compare_gt_i64(
// CHECK-SAME: %[[A:[^:]+]]: tensor<4xi64>, %[[B:[^:]+]]: tensor<4xi64>
// CHECK: %[[R:.+]] = kiln.compare GT, %[[A]], %[[B]] : tensor<4xi64>
// CHECK: return %[[R]] : tensor<4xi1>
func.func @compare_gt_i64(%a: tensor<4xi64>, %b: tensor<4xi64>) -> tensor<4xi1> {
  %0 = kiln.compare GT, %a, %b : tensor<4xi64>
  return %0 : tensor<4xi1>
}

// CHECK-LABEL: func.func @compare_ge_f32(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2x2xf32>, %[[B:[^:]+]]: tensor<2x2xf32>
// CHECK: %[[R:.+]] = kiln.compare GE, %[[A]], %[[B]] : tensor<2x2xf32>
// CHECK: return %[[R]] : tensor<2x2xi1>
func.func @compare_ge_f32(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> tensor<2x2xi1> {
  %0 = kiln.compare GE, %a, %b : tensor<2x2xf32>
  return %0 : tensor<2x2xi1>
}

// CHECK-LABEL: func.func @select_f32(
// CHECK-SAME: %[[P:[^:]+]]: tensor<3xi1>, %[[A:[^:]+]]: tensor<3xf32>, %[[B:[^:]+]]: tensor<3xf32>
// CHECK: %[[R:.+]] = kiln.select %[[P]], %[[A]], %[[B]] : tensor<3xi1>, tensor<3xf32>
// CHECK: return %[[R]]
func.func @select_f32(%p: tensor<3xi1>, %a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  %0 = kiln.select %p, %a, %b : tensor<3xi1>, tensor<3xf32>
  return %0 : tensor<3xf32>
}

// CHECK-LABEL: func.func @select_i1_values(
// CHECK-SAME: %[[P:[^:]+]]: tensor<3xi1>, %[[A:[^:]+]]: tensor<3xi1>, %[[B:[^:]+]]: tensor<3xi1>
// CHECK: %[[R:.+]] = kiln.select %[[P]], %[[A]], %[[B]] : tensor<3xi1>, tensor<3xi1>
// CHECK: return %[[R]]
func.func @select_i1_values(%p: tensor<3xi1>, %a: tensor<3xi1>, %b: tensor<3xi1>) -> tensor<3xi1> {
  %0 = kiln.select %p, %a, %b : tensor<3xi1>, tensor<3xi1>
  return %0 : tensor<3xi1>
}

// CHECK-LABEL: func.func @clamp_i32(
// CHECK-SAME: %[[LO:[^:]+]]: tensor<3xi32>, %[[X:[^:]+]]: tensor<3xi32>, %[[HI:[^:]+]]: tensor<3xi32>
// CHECK: %[[R:.+]] = kiln.clamp %[[LO]], %[[X]], %[[HI]] : tensor<3xi32>
// CHECK: return %[[R]]
func.func @clamp_i32(%lo: tensor<3xi32>, %x: tensor<3xi32>, %hi: tensor<3xi32>) -> tensor<3xi32> {
  %0 = kiln.clamp %lo, %x, %hi : tensor<3xi32>
  return %0 : tensor<3xi32>
}

// CHECK-LABEL: func.func @convert_f32_to_bf16(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2x3xf32>
// CHECK: %[[R:.+]] = kiln.convert %[[A]] : tensor<2x3xf32> -> tensor<2x3xbf16>
// CHECK: return %[[R]]
func.func @convert_f32_to_bf16(%a: tensor<2x3xf32>) -> tensor<2x3xbf16> {
  %0 = kiln.convert %a : tensor<2x3xf32> -> tensor<2x3xbf16>
  return %0 : tensor<2x3xbf16>
}

// CHECK-LABEL: func.func @convert_i1_to_i64(
// CHECK-SAME: %[[A:[^:]+]]: tensor<4xi1>
// CHECK: %[[R:.+]] = kiln.convert %[[A]] : tensor<4xi1> -> tensor<4xi64>
// CHECK: return %[[R]]
func.func @convert_i1_to_i64(%a: tensor<4xi1>) -> tensor<4xi64> {
  %0 = kiln.convert %a : tensor<4xi1> -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @broadcast_in_dim_row(
// CHECK-SAME: %[[A:[^:]+]]: tensor<3xf32>
// CHECK: %[[R:.+]] = kiln.broadcast_in_dim %[[A]], dims = [1] : tensor<3xf32> -> tensor<2x3xf32>
// CHECK: return %[[R]]
func.func @broadcast_in_dim_row(%a: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = kiln.broadcast_in_dim %a, dims = [1] : tensor<3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @broadcast_in_dim_size_one_i1(
// CHECK-SAME: %[[A:[^:]+]]: tensor<1x4xi1>
// CHECK: %[[R:.+]] = kiln.broadcast_in_dim %[[A]], dims = [0, 2] : tensor<1x4xi1> -> tensor<3x5x4xi1>
// CHECK: return %[[R]]
func.func @broadcast_in_dim_size_one_i1(%a: tensor<1x4xi1>) -> tensor<3x5x4xi1> {
  %0 = kiln.broadcast_in_dim %a, dims = [0, 2] : tensor<1x4xi1> -> tensor<3x5x4xi1>
  return %0 : tensor<3x5x4xi1>
}

// CHECK-LABEL: func.func @reshape_i64(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2x3xi64>
// CHECK: %[[R:.+]] = kiln.reshape %[[A]] : tensor<2x3xi64> -> tensor<6xi64>
// CHECK: return %[[R]]
func.func @reshape_i64(%a: tensor<2x3xi64>) -> tensor<6xi64> {
  %0 = kiln.reshape %a : tensor<2x3xi64> -> tensor<6xi64>
  return %0 : tensor<6xi64>
}

// CHECK-LABEL: func.func @transpose_3d_f16(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2x3x4xf16>
// CHECK: %[[R:.+]] = kiln.transpose %[[A]], perm = [2, 0, 1] : tensor<2x3x4xf16> -> tensor<4x2x3xf16>
// CHECK: return %[[R]]
func.func @transpose_3d_f16(%a: tensor<2x3x4xf16>) -> tensor<4x2x3xf16> {
  %0 = kiln.transpose %a, perm = [2, 0, 1] : tensor<2x3x4xf16> -> tensor<4x2x3xf16>
  return %0 : tensor<4x2x3xf16>
}

// CHECK-LABEL: func.func @slice_strided(
// CHECK-SAME: %[[A:[^:]+]]: tensor<8x6xf32>
// CHECK: %[[R:.+]] = kiln.slice %[[A]], start = [1, 0], limit = [8, 6], strides = [3, 2] : tensor<8x6xf32> -> tensor<3x3xf32>
// CHECK: return %[[R]]
func.func @slice_strided(%a: tensor<8x6xf32>) -> tensor<3x3xf32> {
  %0 = kiln.slice %a, start = [1, 0], limit = [8, 6], strides = [3, 2] : tensor<8x6xf32> -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// CHECK-LABEL: func.func @concatenate_three_i32(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2x1xi32>, %[[B:[^:]+]]: tensor<2x3xi32>, %[[C:[^:]+]]: tensor<2x2xi32>
// CHECK: %[[R:.+]] = kiln.concatenate %[[A]], %[[B]], %[[C]], dim = 1 : (tensor<2x1xi32>, tensor<2x3xi32>, tensor<2x2xi32>) -> tensor<2x6xi32>
// CHECK: return %[[R]]
func.func @concatenate_three_i32(%a: tensor<2x1xi32>, %b: tensor<2x3xi32>, %c: tensor<2x2xi32>) -> tensor<2x6xi32> {
  %0 = kiln.concatenate %a, %b, %c, dim = 1 : (tensor<2x1xi32>, tensor<2x3xi32>, tensor<2x2xi32>) -> tensor<2x6xi32>
  return %0 : tensor<2x6xi32>
}

// CHECK-LABEL: func.func @pad_bf16(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2x3xbf16>, %[[V:[^:]+]]: tensor<bf16>
// CHECK: %[[R:.+]] = kiln.pad %[[A]], %[[V]], low = [1, 0], high = [0, 2] : tensor<2x3xbf16>, tensor<bf16> -> tensor<3x5xbf16>
// CHECK: return %[[R]]
func.func @pad_bf16(%a: tensor<2x3xbf16>, %v: tensor<bf16>) -> tensor<3x5xbf16> {
  %0 = kiln.pad %a, %v, low = [1, 0], high = [0, 2] : tensor<2x3xbf16>, tensor<bf16> -> tensor<3x5xbf16>
  return %0 : tensor<3x5xbf16>
}

// CHECK-LABEL: func.func @iota_i32(
// CHECK: %[[R:.+]] = kiln.iota dim = 1 : tensor<2x5xi32>
// CHECK: return %[[R]]
func.func @iota_i32() -> tensor<2x5xi32> {
  %0 = kiln.iota dim = 1 : tensor<2x5xi32>
  return %0 : tensor<2x5xi32>
}

// CHECK-LABEL: func.func @iota_f32(
// CHECK: %[[R:.+]] = kiln.iota dim = 0 : tensor<7xf32>
// CHECK: return %[[R]]
func.func @iota_f32() -> tensor<7xf32> {
  %0 = kiln.iota dim = 0 : tensor<7xf32>
  return %0 : tensor<7xf32>
}

//===----------------------------------------------------------------------===//
// Reductions (every kind), contraction, indexing
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @reduce_sum_f32(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2x3xf32>
// CHECK: %[[R:.+]] = kiln.reduce sum %[[A]], dims = [1] : tensor<2x3xf32> -> tensor<2xf32>
// CHECK: return %[[R]]
func.func @reduce_sum_f32(%a: tensor<2x3xf32>) -> tensor<2xf32> {
  %0 = kiln.reduce sum %a, dims = [1] : tensor<2x3xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// CHECK-LABEL: func.func @reduce_max_i32(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2x3x4xi32>
// CHECK: %[[R:.+]] = kiln.reduce max %[[A]], dims = [0, 2] : tensor<2x3x4xi32> -> tensor<3xi32>
// CHECK: return %[[R]]
func.func @reduce_max_i32(%a: tensor<2x3x4xi32>) -> tensor<3xi32> {
  %0 = kiln.reduce max %a, dims = [0, 2] : tensor<2x3x4xi32> -> tensor<3xi32>
  return %0 : tensor<3xi32>
}

// CHECK-LABEL: func.func @reduce_min_f16(
// CHECK-SAME: %[[A:[^:]+]]: tensor<5xf16>
// CHECK: %[[R:.+]] = kiln.reduce min %[[A]], dims = [0] : tensor<5xf16> -> tensor<f16>
// CHECK: return %[[R]]
func.func @reduce_min_f16(%a: tensor<5xf16>) -> tensor<f16> {
  %0 = kiln.reduce min %a, dims = [0] : tensor<5xf16> -> tensor<f16>
  return %0 : tensor<f16>
}

// CHECK-LABEL: func.func @reduce_prod_i64(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2x3xi64>
// CHECK: %[[R:.+]] = kiln.reduce prod %[[A]], dims = [] : tensor<2x3xi64> -> tensor<2x3xi64>
// CHECK: return %[[R]]
func.func @reduce_prod_i64(%a: tensor<2x3xi64>) -> tensor<2x3xi64> {
  %0 = kiln.reduce prod %a, dims = [] : tensor<2x3xi64> -> tensor<2x3xi64>
  return %0 : tensor<2x3xi64>
}

// CHECK-LABEL: func.func @dot_general_batched(
// CHECK-SAME: %[[A:[^:]+]]: tensor<4x2x3xf32>, %[[B:[^:]+]]: tensor<4x3x5xf32>
// CHECK: %[[R:.+]] = kiln.dot_general %[[A]], %[[B]], batch = [0] x [0], contract = [2] x [1] : tensor<4x2x3xf32>, tensor<4x3x5xf32> -> tensor<4x2x5xf32>
// CHECK: return %[[R]]
func.func @dot_general_batched(%a: tensor<4x2x3xf32>, %b: tensor<4x3x5xf32>) -> tensor<4x2x5xf32> {
  %0 = kiln.dot_general %a, %b, batch = [0] x [0], contract = [2] x [1] : tensor<4x2x3xf32>, tensor<4x3x5xf32> -> tensor<4x2x5xf32>
  return %0 : tensor<4x2x5xf32>
}

// CHECK-LABEL: func.func @dot_general_outer_product_i32(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2xi32>, %[[B:[^:]+]]: tensor<3xi32>
// CHECK: %[[R:.+]] = kiln.dot_general %[[A]], %[[B]], batch = [] x [], contract = [] x [] : tensor<2xi32>, tensor<3xi32> -> tensor<2x3xi32>
// CHECK: return %[[R]]
func.func @dot_general_outer_product_i32(%a: tensor<2xi32>, %b: tensor<3xi32>) -> tensor<2x3xi32> {
  %0 = kiln.dot_general %a, %b, batch = [] x [], contract = [] x [] : tensor<2xi32>, tensor<3xi32> -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// CHECK-LABEL: func.func @gather_rows(
// CHECK-SAME: %[[A:[^:]+]]: tensor<10x4xf16>, %[[I:[^:]+]]: tensor<2x3xi32>
// CHECK: %[[R:.+]] = kiln.gather %[[A]][%[[I]]], axis = 0 : tensor<10x4xf16>, tensor<2x3xi32> -> tensor<2x3x4xf16>
// CHECK: return %[[R]]
func.func @gather_rows(%a: tensor<10x4xf16>, %i: tensor<2x3xi32>) -> tensor<2x3x4xf16> {
  %0 = kiln.gather %a[%i], axis = 0 : tensor<10x4xf16>, tensor<2x3xi32> -> tensor<2x3x4xf16>
  return %0 : tensor<2x3x4xf16>
}

// CHECK-LABEL: func.func @scatter_add_columns(
// CHECK-SAME: %[[A:[^:]+]]: tensor<3x10xf32>, %[[I:[^:]+]]: tensor<5xi64>, %[[U:[^:]+]]: tensor<3x5xf32>
// CHECK: %[[R:.+]] = kiln.scatter_add %[[A]][%[[I]]], %[[U]], axis = 1 : tensor<3x10xf32>, tensor<5xi64>, tensor<3x5xf32>
// CHECK: return %[[R]]
func.func @scatter_add_columns(%a: tensor<3x10xf32>, %i: tensor<5xi64>, %u: tensor<3x5xf32>) -> tensor<3x10xf32> {
  %0 = kiln.scatter_add %a[%i], %u, axis = 1 : tensor<3x10xf32>, tensor<5xi64>, tensor<3x5xf32>
  return %0 : tensor<3x10xf32>
}

//===----------------------------------------------------------------------===//
// Random numbers and constants
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @rng_uniform_bf16(
// CHECK-SAME: %[[S:[^:]+]]: tensor<2xi64>
// CHECK: %[[V:.+]], %[[NS:.+]] = kiln.rng_uniform %[[S]] : tensor<2xi64> -> tensor<3x5xbf16>
// CHECK: return %[[V]], %[[NS]] : tensor<3x5xbf16>, tensor<2xi64>
func.func @rng_uniform_bf16(%s: tensor<2xi64>) -> (tensor<3x5xbf16>, tensor<2xi64>) {
  %v, %ns = kiln.rng_uniform %s : tensor<2xi64> -> tensor<3x5xbf16>
  return %v, %ns : tensor<3x5xbf16>, tensor<2xi64>
}

//===----------------------------------------------------------------------===//
// Fused composites
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @fused_attention_causal_dropout(
// CHECK-SAME: %[[Q:[^:]+]]: tensor<2x4x8x16xbf16>, %[[K:[^:]+]]: tensor<2x2x8x16xbf16>, %[[V:[^:]+]]: tensor<2x2x8x16xbf16>, %[[S:[^:]+]]: tensor<2xi64>
// CHECK: kiln.fused_attention %[[Q]], %[[K]], %[[V]], rng = %[[S]] {causal, dropout = 1.000000e-01 : f64, scale = 2.500000e-01 : f64} : tensor<2x4x8x16xbf16>, tensor<2x2x8x16xbf16>, tensor<2x2x8x16xbf16>, tensor<2xi64> -> tensor<2x4x8x16xbf16>, tensor<2x4x8xf32>
func.func @fused_attention_causal_dropout(%q: tensor<2x4x8x16xbf16>, %k: tensor<2x2x8x16xbf16>, %v: tensor<2x2x8x16xbf16>, %s: tensor<2xi64>) -> tensor<2x4x8x16xbf16> {
  %o, %stats_o = kiln.fused_attention %q, %k, %v, rng = %s {causal, dropout = 0.1 : f64, scale = 0.25 : f64} : tensor<2x4x8x16xbf16>, tensor<2x2x8x16xbf16>, tensor<2x2x8x16xbf16>, tensor<2xi64> -> tensor<2x4x8x16xbf16>, tensor<2x4x8xf32>
  return %o : tensor<2x4x8x16xbf16>
}

// CHECK-LABEL: func.func @fused_attention_window(
// CHECK: kiln.fused_attention %{{.+}}, %{{.+}}, %{{.+}} {causal, scale = 2.500000e-01 : f64, window = 4 : i64}
func.func @fused_attention_window(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %o, %stats_o = kiln.fused_attention %q, %q, %q {causal, scale = 0.25 : f64, window = 4 : i64} : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>, tensor<1x2x8xf32>
  return %o : tensor<1x2x8x16xf32>
}

// CHECK-LABEL: func.func @fused_attention_grad_plain(
// CHECK: %{{.+}}, %{{.+}}, %{{.+}} = kiln.fused_attention_grad %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {scale = 1.250000e-01 : f64} : tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3xf32>, tensor<1x2x3x4xf32> -> tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>
func.func @fused_attention_grad_plain(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x5x4xf32>, %g: tensor<1x2x3x4xf32>) -> (tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>) {
  %fwd1, %stats_fwd1 = kiln.fused_attention %q, %k, %k {scale = 0.125 : f64} : tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32> -> tensor<1x2x3x4xf32>, tensor<1x2x3xf32>
  %dq, %dk, %dv = kiln.fused_attention_grad %q, %k, %k, %fwd1, %stats_fwd1, %g {scale = 0.125 : f64} : tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3xf32>, tensor<1x2x3x4xf32> -> tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>
  return %dq, %dk, %dv : tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>
}

// CHECK-LABEL: func.func @fused_linear_cross_entropy(
// CHECK-SAME: %[[H:[^:]+]]: tensor<6x4xf32>, %[[W:[^:]+]]: tensor<10x4xf32>, %[[Y:[^:]+]]: tensor<6xi64>, %[[G:[^:]+]]: tensor<6xf32>
// CHECK: %[[L:.+]] = kiln.fused_linear_cross_entropy %[[H]], %[[W]], %[[Y]] {ignore_index = -100 : i64} : tensor<6x4xf32>, tensor<10x4xf32>, tensor<6xi64> -> tensor<6xf32>
// CHECK: %[[DH:.+]], %[[DW:.+]] = kiln.fused_linear_cross_entropy_grad %[[H]], %[[W]], %[[Y]], %[[G]] {ignore_index = 0 : i64} : tensor<6x4xf32>, tensor<10x4xf32>, tensor<6xi64>, tensor<6xf32> -> tensor<6x4xf32>, tensor<10x4xf32>
// CHECK: return %[[L]], %[[DH]], %[[DW]]
func.func @fused_linear_cross_entropy(%h: tensor<6x4xf32>, %w: tensor<10x4xf32>, %y: tensor<6xi64>, %g: tensor<6xf32>) -> (tensor<6xf32>, tensor<6x4xf32>, tensor<10x4xf32>) {
  %l = kiln.fused_linear_cross_entropy %h, %w, %y {ignore_index = -100 : i64} : tensor<6x4xf32>, tensor<10x4xf32>, tensor<6xi64> -> tensor<6xf32>
  %dh, %dw = kiln.fused_linear_cross_entropy_grad %h, %w, %y, %g {ignore_index = 0 : i64} : tensor<6x4xf32>, tensor<10x4xf32>, tensor<6xi64>, tensor<6xf32> -> tensor<6x4xf32>, tensor<10x4xf32>
  return %l, %dh, %dw : tensor<6xf32>, tensor<6x4xf32>, tensor<10x4xf32>
}

// CHECK-LABEL: func.func @optimization_barrier(
// CHECK-SAME: %[[A:[^:]+]]: tensor<4xf32>, %[[B:[^:]+]]: tensor<2x3xi1>
// CHECK: %[[T:.+]]:2 = kiln.optimization_barrier %[[A]], %[[B]] : tensor<4xf32>, tensor<2x3xi1>
// CHECK: return %[[T]]#1, %[[T]]#0
func.func @optimization_barrier(%a: tensor<4xf32>, %b: tensor<2x3xi1>) -> (tensor<2x3xi1>, tensor<4xf32>) {
  %t:2 = kiln.optimization_barrier %a, %b : tensor<4xf32>, tensor<2x3xi1>
  return %t#1, %t#0 : tensor<2x3xi1>, tensor<4xf32>
}

// CHECK-LABEL: func.func @constant_splat_f32(
// CHECK: %[[C:.+]] = kiln.constant dense<1.500000e+00> : tensor<2x3xf32>
// CHECK: return %[[C]]
func.func @constant_splat_f32() -> tensor<2x3xf32> {
  %0 = kiln.constant dense<1.5> : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @constant_dense_i32(
// CHECK: %[[C:.+]] = kiln.constant dense<{{\[}}[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
// CHECK: return %[[C]]
func.func @constant_dense_i32() -> tensor<2x3xi32> {
  %0 = kiln.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// CHECK-LABEL: func.func @constant_dense_i1(
// CHECK: %[[C:.+]] = kiln.constant dense<[true, false, true]> : tensor<3xi1>
// CHECK: return %[[C]]
func.func @constant_dense_i1() -> tensor<3xi1> {
  %0 = kiln.constant dense<[true, false, true]> : tensor<3xi1>
  return %0 : tensor<3xi1>
}

// CHECK-LABEL: func.func @constant_scalar_f16(
// CHECK: %[[C:.+]] = kiln.constant dense<-2.500000e+00> : tensor<f16>
// CHECK: return %[[C]]
func.func @constant_scalar_f16() -> tensor<f16> {
  %0 = kiln.constant dense<-2.5> : tensor<f16>
  return %0 : tensor<f16>
}

//===----------------------------------------------------------------------===//
// Fusion (every kind) and donated arguments
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @fusion_loop(
// CHECK-SAME: %[[A:[^:]+]]: tensor<4xf32>, %[[B:[^:]+]]: tensor<4xf32>
// CHECK: %[[F:.+]] = kiln.fusion loop(%[[A]], %[[B]]) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT: ^bb0(%[[X:[^:]+]]: tensor<4xf32>, %[[Y:[^:]+]]: tensor<4xf32>):
// CHECK-NEXT: %[[M:.+]] = kiln.mul %[[X]], %[[Y]] : tensor<4xf32>
// CHECK-NEXT: %[[E:.+]] = kiln.exp %[[M]] : tensor<4xf32>
// CHECK-NEXT: kiln.yield %[[E]] : tensor<4xf32>
// CHECK-NEXT: }
// CHECK: return %[[F]]
func.func @fusion_loop(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.fusion loop(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>, %y: tensor<4xf32>):
    %1 = kiln.mul %x, %y : tensor<4xf32>
    %2 = kiln.exp %1 : tensor<4xf32>
    kiln.yield %2 : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// CHECK-LABEL: func.func @fusion_reduction(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2x8xf32>
// CHECK: %[[F:.+]] = kiln.fusion reduction(%[[A]]) : (tensor<2x8xf32>) -> tensor<2xf32> {
// CHECK-NEXT: ^bb0(%[[X:[^:]+]]: tensor<2x8xf32>):
// CHECK-NEXT: %[[E:.+]] = kiln.exp %[[X]] : tensor<2x8xf32>
// CHECK-NEXT: %[[S:.+]] = kiln.reduce sum %[[E]], dims = [1] : tensor<2x8xf32> -> tensor<2xf32>
// CHECK-NEXT: kiln.yield %[[S]] : tensor<2xf32>
// CHECK: return %[[F]]
func.func @fusion_reduction(%a: tensor<2x8xf32>) -> tensor<2xf32> {
  %0 = kiln.fusion reduction(%a) : (tensor<2x8xf32>) -> tensor<2xf32> {
  ^bb0(%x: tensor<2x8xf32>):
    %1 = kiln.exp %x : tensor<2x8xf32>
    %2 = kiln.reduce sum %1, dims = [1] : tensor<2x8xf32> -> tensor<2xf32>
    kiln.yield %2 : tensor<2xf32>
  }
  return %0 : tensor<2xf32>
}

// CHECK-LABEL: func.func @fusion_multi_output(
// CHECK-SAME: %[[A:[^:]+]]: tensor<4xi32>
// CHECK: %[[F:.+]]:2 = kiln.fusion multi_output(%[[A]]) : (tensor<4xi32>) -> (tensor<4xi32>, tensor<i32>) {
// CHECK-NEXT: ^bb0(%[[X:[^:]+]]: tensor<4xi32>):
// CHECK-NEXT: %[[N:.+]] = kiln.neg %[[X]] : tensor<4xi32>
// CHECK-NEXT: %[[S:.+]] = kiln.reduce max %[[N]], dims = [0] : tensor<4xi32> -> tensor<i32>
// CHECK-NEXT: kiln.yield %[[N]], %[[S]] : tensor<4xi32>, tensor<i32>
// CHECK: return %[[F]]#0, %[[F]]#1
func.func @fusion_multi_output(%a: tensor<4xi32>) -> (tensor<4xi32>, tensor<i32>) {
  %0:2 = kiln.fusion multi_output(%a) : (tensor<4xi32>) -> (tensor<4xi32>, tensor<i32>) {
  ^bb0(%x: tensor<4xi32>):
    %1 = kiln.neg %x : tensor<4xi32>
    %2 = kiln.reduce max %1, dims = [0] : tensor<4xi32> -> tensor<i32>
    kiln.yield %1, %2 : tensor<4xi32>, tensor<i32>
  }
  return %0#0, %0#1 : tensor<4xi32>, tensor<i32>
}

// CHECK-LABEL: func.func @fusion_no_inputs(
// CHECK: %[[F:.+]] = kiln.fusion loop() : () -> tensor<3xi64> {
// CHECK-NEXT: %[[I:.+]] = kiln.iota dim = 0 : tensor<3xi64>
// CHECK-NEXT: kiln.yield %[[I]] : tensor<3xi64>
// CHECK: return %[[F]]
func.func @fusion_no_inputs() -> tensor<3xi64> {
  %0 = kiln.fusion loop() : () -> tensor<3xi64> {
    %1 = kiln.iota dim = 0 : tensor<3xi64>
    kiln.yield %1 : tensor<3xi64>
  }
  return %0 : tensor<3xi64>
}

// CHECK-LABEL: func.func @donated_argument(
// CHECK-SAME: %[[W:[^:]+]]: tensor<4xf32> {kiln.donate}, %[[G:[^:]+]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK: %[[R:.+]] = kiln.sub %[[W]], %[[G]] : tensor<4xf32>
// CHECK: return %[[R]]
func.func @donated_argument(%w: tensor<4xf32> {kiln.donate}, %g: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.sub %w, %g : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// A donated argument whose new value is result #1.
// CHECK-LABEL: func.func @output_alias(
// CHECK-SAME: tensor<4xf32> {kiln.donate, kiln.output_alias = 1 : i64}
func.func @output_alias(%w: tensor<4xf32> {kiln.donate, kiln.output_alias = 1 : i64}, %g: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = kiln.sub %w, %g : tensor<4xf32>
  return %g, %0 : tensor<4xf32>, tensor<4xf32>
}

// CHECK-LABEL: func.func private @donated_declaration(tensor<8xbf16> {kiln.donate})
func.func private @donated_declaration(tensor<8xbf16> {kiln.donate})
