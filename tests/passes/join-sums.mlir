// kiln-join-sums: a scalar sum of full reductions becomes one reduction of
// the pieces concatenated: a split tree contributes its first stage (not
// the gradient it reads), an f32 leaf joins the f32 pieces and an f64 one
// (behind kiln-split-reductions' narrowing convert) the f64 pieces; a leaf
// that is not such a sum is added to the result. Negative twins: two
// leaves only, a sum read twice, a partial reduction (a column sum) and a
// reduction over more than 2^18 elements stay as they are.
// RUN: kiln-opt %s --split-input-file --kiln-join-sums | FileCheck %s

// CHECK-LABEL: func.func @norm(
// CHECK-SAME: %[[X:[^:]+]]: tensor<768xf32>, %[[Y:[^:]+]]: tensor<2304xf32>, %[[G:[^:]+]]: tensor<768x2304xf64>, %[[L:[^:]+]]: tensor<f32>
// CHECK: %[[P:.+]] = kiln.reduce sum %[[G]], dims = [0] : tensor<768x2304xf64> -> tensor<2304xf64>
// CHECK-NOT: kiln.reduce
// CHECK: %[[J:.+]] = kiln.concatenate %[[X]], %[[Y]], dim = 0 : (tensor<768xf32>, tensor<2304xf32>) -> tensor<3072xf32>
// CHECK: %[[S:.+]] = kiln.reduce sum %[[J]], dims = [0] : tensor<3072xf32> -> tensor<f32>
// CHECK: %[[T:.+]] = kiln.reduce sum %[[P]], dims = [0] : tensor<2304xf64> -> tensor<f64>
// CHECK: %[[C:.+]] = kiln.convert %[[T]] : tensor<f64> -> tensor<f32>
// CHECK: %[[A:.+]] = kiln.add %[[S]], %[[C]] : tensor<f32>
// CHECK: %[[B:.+]] = kiln.add %[[A]], %[[L]] : tensor<f32>
// CHECK-NOT: kiln.add
// CHECK: return %[[B]]
func.func @norm(%x: tensor<768xf32>, %y: tensor<2304xf32>, %g: tensor<768x2304xf64>, %l: tensor<f32>) -> tensor<f32> {
  %a = kiln.reduce sum %x, dims = [0] : tensor<768xf32> -> tensor<f32>
  %b = kiln.reduce sum %y, dims = [0] : tensor<2304xf32> -> tensor<f32>
  %p = kiln.reduce sum %g, dims = [0] : tensor<768x2304xf64> -> tensor<2304xf64>
  %q = kiln.reshape %p : tensor<2304xf64> -> tensor<72x32xf64>
  %r = kiln.reduce sum %q, dims = [1] : tensor<72x32xf64> -> tensor<72xf64>
  %t = kiln.reduce sum %r, dims = [0] : tensor<72xf64> -> tensor<f64>
  %c = kiln.convert %t : tensor<f64> -> tensor<f32>
  %s1 = kiln.add %a, %b : tensor<f32>
  %s2 = kiln.add %s1, %l : tensor<f32>
  %s3 = kiln.add %s2, %c : tensor<f32>
  return %s3 : tensor<f32>
}

// -----

// Matrices are flattened; the order is the tree's.
// CHECK-LABEL: func.func @flatten(
// CHECK: %[[R:.+]] = kiln.reshape %{{.+}} : tensor<24x64xf32> -> tensor<1536xf32>
// CHECK: kiln.concatenate %{{.+}}, %{{.+}}, %[[R]], dim = 0 : (tensor<768xf32>, tensor<2304xf32>, tensor<1536xf32>) -> tensor<4608xf32>
// CHECK: kiln.reduce sum %{{.+}}, dims = [0] : tensor<4608xf32> -> tensor<f32>
// CHECK-NOT: kiln.add
func.func @flatten(%x: tensor<768xf32>, %y: tensor<2304xf32>, %z: tensor<24x64xf32>) -> tensor<f32> {
  %a = kiln.reduce sum %x, dims = [0] : tensor<768xf32> -> tensor<f32>
  %b = kiln.reduce sum %y, dims = [0] : tensor<2304xf32> -> tensor<f32>
  %c = kiln.reduce sum %z, dims = [0, 1] : tensor<24x64xf32> -> tensor<f32>
  %s = kiln.add %a, %b : tensor<f32>
  %t = kiln.add %s, %c : tensor<f32>
  return %t : tensor<f32>
}

// -----

// CHECK-LABEL: func.func @two_leaves(
// CHECK-NOT: kiln.concatenate
// CHECK: return
func.func @two_leaves(%x: tensor<768xf32>, %y: tensor<2304xf32>, %l: tensor<f32>) -> tensor<f32> {
  %a = kiln.reduce sum %x, dims = [0] : tensor<768xf32> -> tensor<f32>
  %b = kiln.reduce sum %y, dims = [0] : tensor<2304xf32> -> tensor<f32>
  %s = kiln.add %a, %b : tensor<f32>
  %t = kiln.add %s, %l : tensor<f32>
  return %t : tensor<f32>
}

// -----

// A sum read twice, a max, and a sum of 2^18 + 1 elements are not leaves
// that join: each tree keeps two joinable leaves.
// CHECK-LABEL: func.func @read_twice(
// CHECK-NOT: kiln.concatenate
// CHECK: return
func.func @read_twice(%x: tensor<768xf32>, %y: tensor<2304xf32>, %z: tensor<64xf32>) -> (tensor<f32>, tensor<f32>) {
  %a = kiln.reduce sum %x, dims = [0] : tensor<768xf32> -> tensor<f32>
  %b = kiln.reduce sum %y, dims = [0] : tensor<2304xf32> -> tensor<f32>
  %c = kiln.reduce sum %z, dims = [0] : tensor<64xf32> -> tensor<f32>
  %s = kiln.add %a, %b : tensor<f32>
  %t = kiln.add %s, %c : tensor<f32>
  return %t, %c : tensor<f32>, tensor<f32>
}

// -----

// CHECK-LABEL: func.func @max(
// CHECK-NOT: kiln.concatenate
// CHECK: return
func.func @max(%x: tensor<768xf32>, %y: tensor<2304xf32>, %z: tensor<64xf32>) -> tensor<f32> {
  %a = kiln.reduce sum %x, dims = [0] : tensor<768xf32> -> tensor<f32>
  %b = kiln.reduce sum %y, dims = [0] : tensor<2304xf32> -> tensor<f32>
  %c = kiln.reduce max %z, dims = [0] : tensor<64xf32> -> tensor<f32>
  %s = kiln.add %a, %b : tensor<f32>
  %t = kiln.add %s, %c : tensor<f32>
  return %t : tensor<f32>
}

// -----

// CHECK-LABEL: func.func @big(
// CHECK-NOT: kiln.concatenate
// CHECK: return
func.func @big(%x: tensor<768xf32>, %y: tensor<2304xf32>, %big: tensor<262145xf32>) -> tensor<f32> {
  %a = kiln.reduce sum %x, dims = [0] : tensor<768xf32> -> tensor<f32>
  %b = kiln.reduce sum %y, dims = [0] : tensor<2304xf32> -> tensor<f32>
  %c = kiln.reduce sum %big, dims = [0] : tensor<262145xf32> -> tensor<f32>
  %s = kiln.add %a, %b : tensor<f32>
  %t = kiln.add %s, %c : tensor<f32>
  return %t : tensor<f32>
}
