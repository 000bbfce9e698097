// kiln-fuse-reductions' lone-rows-from (set for the GPU, whose fusion
// kernels give a contiguous row a warp while a plain reduce kernel gives it
// one thread): a reduce that groups with nothing becomes a fusion of its
// own when its reduced dims are innermost and a row is long enough; rows
// that are too short, column reductions and every lone reduce without the
// option stay plain reduces.
// RUN: kiln-opt %s --split-input-file \
// RUN:   --kiln-fuse-reductions=lone-rows-from=64 | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-fuse-reductions \
// RUN:   | FileCheck %s --check-prefix=DEFAULT

// The second stage of a split norm: 3072 partial sums into one.
// CHECK-LABEL: func.func @long_row(
// CHECK-NEXT: %[[F:.+]] = kiln.fusion reduction(%{{.+}}) : (tensor<3072xf64>) -> tensor<f64>
// CHECK-NEXT: ^bb0(%[[A:.+]]: tensor<3072xf64>):
// CHECK-NEXT: %[[R:.+]] = kiln.reduce sum %[[A]], dims = [0]
// CHECK-NEXT: kiln.yield %[[R]]
// CHECK: return %[[F]]
// DEFAULT-LABEL: func.func @long_row(
// DEFAULT-NOT: kiln.fusion
// DEFAULT: kiln.reduce sum
func.func @long_row(%x: tensor<3072xf64>) -> tensor<f64> {
  %s = kiln.reduce sum %x, dims = [0] : tensor<3072xf64> -> tensor<f64>
  return %s : tensor<f64>
}

// -----

// Rows of 32: a warp would idle half its lanes.
// CHECK-LABEL: func.func @short_rows(
// CHECK-NOT: kiln.fusion
// CHECK: kiln.reduce max
func.func @short_rows(%x: tensor<128x32xf32>) -> tensor<128xf32> {
  %s = kiln.reduce max %x, dims = [1] : tensor<128x32xf32> -> tensor<128xf32>
  return %s : tensor<128xf32>
}

// -----

// A column sum: its points are strided, a thread per output either way.
// CHECK-LABEL: func.func @columns(
// CHECK-NOT: kiln.fusion
// CHECK: kiln.reduce sum
func.func @columns(%x: tensor<256x768xf64>) -> tensor<768xf64> {
  %s = kiln.reduce sum %x, dims = [0] : tensor<256x768xf64> -> tensor<768xf64>
  return %s : tensor<768xf64>
}
