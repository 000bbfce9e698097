// kiln-fuse-gemm-epilogue: a product with an f32 result whose only reader
// adds it to another stored f32 value, into a sum stored anyway (returned,
// tied, or the next term of a sum of products), becomes one kiln.fusion
// gemm (the backends' GEMM with beta = 1), the product first in the body's
// add. The negative twins: a sum only a loop reads, a product read twice,
// a broadcast or constant accumulator, a 16-bit result, an integer
// product, and the pipeline with
// gemm-epilogue=false (prefix OFF) leave the add alone. kiln-autocast with
// f32-sums (prefix AUTO) keeps the f32 result of a product only such an add
// reads (barriers may tie it too) and rounds the others to bf16; without
// it (AUTOOFF) every product is rounded.
// RUN: kiln-opt %s --split-input-file --kiln-fuse-gemm-epilogue | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-pipeline="gemm-epilogue=false schedule=false partition=false" | FileCheck %s --check-prefix=OFF
// RUN: kiln-opt %s --split-input-file --kiln-autocast="f32-sums=true" | FileCheck %s --check-prefix=AUTO
// RUN: kiln-opt %s --split-input-file --kiln-autocast | FileCheck %s --check-prefix=AUTOOFF

// CHECK-LABEL: func.func @accumulate(
// CHECK-SAME: %[[X:[^:]+]]: tensor<16x8xf32>, %[[DY:[^:]+]]: tensor<16x4xf32>, %[[ACC:[^:]+]]: tensor<8x4xf32>
// CHECK: %[[S:.+]] = kiln.fusion gemm(%[[X]], %[[DY]], %[[ACC]])
// CHECK: ^bb0(%[[A:[^:]+]]: tensor<16x8xf32>, %[[B:[^:]+]]: tensor<16x4xf32>, %[[C:[^:]+]]: tensor<8x4xf32>):
// CHECK-NEXT: %[[P:.+]] = kiln.dot_general %[[A]], %[[B]], batch = [] x [], contract = [0] x [0]
// CHECK-NEXT: %[[R:.+]] = kiln.add %[[P]], %[[C]] : tensor<8x4xf32>
// CHECK-NEXT: kiln.yield %[[R]]
// CHECK: return %[[S]]
// OFF-LABEL: func.func @accumulate(
// OFF-NOT: kiln.fusion gemm
// OFF: kiln.dot_general
// AUTO-LABEL: func.func @accumulate(
// AUTO: kiln.dot_general {{.*}} -> tensor<8x4xf32>
// AUTO-NEXT: kiln.add
// AUTOOFF-LABEL: func.func @accumulate(
// AUTOOFF: kiln.dot_general {{.*}} -> tensor<8x4xbf16>
func.func @accumulate(%x: tensor<16x8xf32>, %dy: tensor<16x4xf32>, %acc: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %p = kiln.dot_general %x, %dy, batch = [] x [], contract = [0] x [0] : tensor<16x8xf32>, tensor<16x4xf32> -> tensor<8x4xf32>
  %s = kiln.add %p, %acc : tensor<8x4xf32>
  return %s : tensor<8x4xf32>
}

// -----

// Two products summed (the loss's first two chunks): the second is the
// GEMM, the first its accumulator; the product on the add's right moves
// to the left of the body's add. Mixed precision: bf16 operands, f32 result.
// CHECK-LABEL: func.func @sum_of_products(
// CHECK: %[[P1:.+]] = kiln.dot_general {{.*}} -> tensor<8x4xf32>
// CHECK: kiln.fusion gemm({{.*}}, %[[P1]])
// CHECK: %[[P2:.+]] = kiln.dot_general {{.*}} : tensor<16x8xbf16>, tensor<16x4xbf16> -> tensor<8x4xf32>
// CHECK-NEXT: kiln.add %[[P2]], %{{.*}} : tensor<8x4xf32>
func.func @sum_of_products(%x1: tensor<16x8xbf16>, %y1: tensor<16x4xbf16>, %x2: tensor<16x8xbf16>, %y2: tensor<16x4xbf16>) -> (tensor<8x4xf32>, tensor<8x4xf32>) {
  %p1 = kiln.dot_general %x1, %y1, batch = [] x [], contract = [0] x [0] : tensor<16x8xbf16>, tensor<16x4xbf16> -> tensor<8x4xf32>
  %p2 = kiln.dot_general %x2, %y2, batch = [] x [], contract = [0] x [0] : tensor<16x8xbf16>, tensor<16x4xbf16> -> tensor<8x4xf32>
  %s = kiln.add %p1, %p2 : tensor<8x4xf32>
  return %s, %p1 : tensor<8x4xf32>, tensor<8x4xf32>
}

// -----

// Negative twins.
// CHECK-LABEL: func.func @read_twice(
// CHECK-NOT: kiln.fusion
// AUTO-LABEL: func.func @read_twice(
// AUTO: kiln.dot_general {{.*}} -> tensor<8x6xbf16>
func.func @read_twice(%x: tensor<8x4xf32>, %w: tensor<4x6xf32>, %r: tensor<8x6xf32>) -> (tensor<8x6xf32>, tensor<8x6xf32>) {
  %p = kiln.dot_general %x, %w, batch = [] x [], contract = [1] x [0] : tensor<8x4xf32>, tensor<4x6xf32> -> tensor<8x6xf32>
  %s = kiln.add %p, %r : tensor<8x6xf32>
  %t = kiln.tanh %p : tensor<8x6xf32>
  return %s, %t : tensor<8x6xf32>, tensor<8x6xf32>
}

// -----

// A sum only a loop reads is computed in that loop from the product's
// bf16 bytes: stored for a GEMM's epilogue it would cost more.
// CHECK-LABEL: func.func @sum_read_by_a_loop(
// CHECK-NOT: kiln.fusion
// AUTO-LABEL: func.func @sum_read_by_a_loop(
// AUTO: kiln.dot_general {{.*}} -> tensor<8x6xbf16>
func.func @sum_read_by_a_loop(%x: tensor<8x4xf32>, %w: tensor<4x6xf32>, %r: tensor<8x6xf32>) -> tensor<8x6xf32> {
  %p = kiln.dot_general %x, %w, batch = [] x [], contract = [1] x [0] : tensor<8x4xf32>, tensor<4x6xf32> -> tensor<8x6xf32>
  %s = kiln.add %p, %r : tensor<8x6xf32>
  %t = kiln.tanh %s : tensor<8x6xf32>
  return %t : tensor<8x6xf32>
}

// -----

// A bias broadcast to every row is read by the add's loop from its 6
// elements: stored whole for a GEMM it would cost more than it saves.
// CHECK-LABEL: func.func @bias(
// CHECK-NOT: kiln.fusion
// AUTO-LABEL: func.func @bias(
// AUTO: kiln.dot_general {{.*}} -> tensor<8x6xbf16>
func.func @bias(%x: tensor<8x4xf32>, %w: tensor<4x6xf32>, %b: tensor<6xf32>) -> tensor<8x6xf32> {
  %p = kiln.dot_general %x, %w, batch = [] x [], contract = [1] x [0] : tensor<8x4xf32>, tensor<4x6xf32> -> tensor<8x6xf32>
  %bb = kiln.broadcast_in_dim %b, dims = [1] : tensor<6xf32> -> tensor<8x6xf32>
  %s = kiln.add %p, %bb : tensor<8x6xf32>
  return %s : tensor<8x6xf32>
}

// -----

// CHECK-LABEL: func.func @constant_accumulator(
// CHECK-NOT: kiln.fusion
func.func @constant_accumulator(%x: tensor<8x4xf32>, %w: tensor<4x6xf32>) -> tensor<8x6xf32> {
  %p = kiln.dot_general %x, %w, batch = [] x [], contract = [1] x [0] : tensor<8x4xf32>, tensor<4x6xf32> -> tensor<8x6xf32>
  %c = kiln.constant dense<1.0> : tensor<8x6xf32>
  %s = kiln.add %p, %c : tensor<8x6xf32>
  return %s : tensor<8x6xf32>
}

// -----

// A 16-bit result: the body would round the product to bf16 before the
// add, which an f32 epilogue does not.
// CHECK-LABEL: func.func @bf16_result(
// CHECK-NOT: kiln.fusion
func.func @bf16_result(%x: tensor<8x4xbf16>, %w: tensor<4x6xbf16>, %r: tensor<8x6xbf16>) -> tensor<8x6xbf16> {
  %p = kiln.dot_general %x, %w, batch = [] x [], contract = [1] x [0] : tensor<8x4xbf16>, tensor<4x6xbf16> -> tensor<8x6xbf16>
  %s = kiln.add %p, %r : tensor<8x6xbf16>
  return %s : tensor<8x6xbf16>
}

// -----

// CHECK-LABEL: func.func @integer(
// CHECK-NOT: kiln.fusion
func.func @integer(%x: tensor<8x4xi32>, %w: tensor<4x6xi32>, %r: tensor<8x6xi32>) -> tensor<8x6xi32> {
  %p = kiln.dot_general %x, %w, batch = [] x [], contract = [1] x [0] : tensor<8x4xi32>, tensor<4x6xi32> -> tensor<8x6xi32>
  %s = kiln.add %p, %r : tensor<8x6xi32>
  return %s : tensor<8x6xi32>
}

// -----

// kiln-autocast: a product a barrier ties and one add reads keeps f32
// (the loss's first chunk); the add's other operand, a widened bf16 value,
// is read from its 2 bytes by a loop, so the product beside it stays bf16.
// AUTO-LABEL: func.func @tied_term(
// AUTO: %[[P:.+]] = kiln.dot_general {{.*}} -> tensor<8x6xf32>
// AUTO: kiln.optimization_barrier %[[P]]
// AUTO: kiln.add %[[P]]
// AUTO-LABEL: func.func @widened_neighbour(
// AUTO: kiln.dot_general {{.*}} -> tensor<8x6xbf16>
func.func @tied_term(%x: tensor<8x4xf32>, %w: tensor<4x6xf32>, %r: tensor<8x6xf32>) -> (tensor<8x6xf32>, tensor<8x6xf32>) {
  %p = kiln.dot_general %x, %w, batch = [] x [], contract = [1] x [0] : tensor<8x4xf32>, tensor<4x6xf32> -> tensor<8x6xf32>
  %t = kiln.optimization_barrier %p : tensor<8x6xf32>
  %s = kiln.add %p, %r : tensor<8x6xf32>
  return %s, %t : tensor<8x6xf32>, tensor<8x6xf32>
}
func.func @widened_neighbour(%x: tensor<8x4xf32>, %w: tensor<4x6xf32>, %h: tensor<8x6xbf16>) -> tensor<8x6xf32> {
  %p = kiln.dot_general %x, %w, batch = [] x [], contract = [1] x [0] : tensor<8x4xf32>, tensor<4x6xf32> -> tensor<8x6xf32>
  %r = kiln.convert %h : tensor<8x6xbf16> -> tensor<8x6xf32>
  %s = kiln.add %p, %r : tensor<8x6xf32>
  return %s : tensor<8x6xf32>
}

// -----

// A product padded with zeros along its rows (attention's key gradient of a
// chunk of queries, padded to every key) adds into those rows of a stored
// sum: the pad joins the fusion, which the backends run as one GEMM whose C
// is a view of the sum's rows. kiln-autocast keeps its f32 result.
// CHECK-LABEL: func.func @padded_rows(
// CHECK-SAME: %[[ACC:[^:]+]]: tensor<2x8x4xf32>
// CHECK: %[[S:.+]] = kiln.fusion gemm(%{{.*}}, %{{.*}}, %[[ACC]])
// CHECK: %[[P:.+]] = kiln.dot_general {{.*}} -> tensor<2x3x4xf32>
// CHECK: %[[Z:.+]] = kiln.pad %[[P]], %{{.*}}, low = [0, 1, 0], high = [0, 4, 0]
// CHECK-NEXT: %[[R:.+]] = kiln.add %[[Z]], %{{.*}} : tensor<2x8x4xf32>
// CHECK-NEXT: kiln.yield %[[R]]
// CHECK: return %[[S]]
// OFF-LABEL: func.func @padded_rows(
// OFF-NOT: kiln.fusion gemm
// AUTO-LABEL: func.func @padded_rows(
// AUTO: kiln.dot_general {{.*}} -> tensor<2x3x4xf32>
// AUTO-NEXT: kiln.constant
// AUTO-NEXT: kiln.pad
// AUTOOFF-LABEL: func.func @padded_rows(
// AUTOOFF: kiln.dot_general {{.*}} -> tensor<2x3x4xbf16>
func.func @padded_rows(%g: tensor<2x5x3xf32>, %q: tensor<2x5x4xf32>, %acc: tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
  %p = kiln.dot_general %g, %q, batch = [0] x [0], contract = [1] x [1] : tensor<2x5x3xf32>, tensor<2x5x4xf32> -> tensor<2x3x4xf32>
  %zero = kiln.constant dense<0.000000e+00> : tensor<f32>
  %z = kiln.pad %p, %zero, low = [0, 1, 0], high = [0, 4, 0] : tensor<2x3x4xf32>, tensor<f32> -> tensor<2x8x4xf32>
  %s = kiln.add %acc, %z : tensor<2x8x4xf32>
  return %s : tensor<2x8x4xf32>
}

// -----

// Its negative twins: padded along the columns (no block of rows), with a
// padding value that is not zero, or padded in a batch dim; each keeps its
// pad and add, and kiln-autocast rounds the product.
// CHECK-LABEL: func.func @padded_otherwise(
// CHECK-NOT: kiln.fusion gemm
// AUTO-LABEL: func.func @padded_otherwise(
// AUTO-COUNT-3: kiln.dot_general {{.*}}xbf16>
func.func @padded_otherwise(%g: tensor<2x5x3xf32>, %q: tensor<2x5x4xf32>, %acc: tensor<2x3x8xf32>, %acc2: tensor<2x8x4xf32>, %acc3: tensor<3x3x4xf32>) -> (tensor<2x3x8xf32>, tensor<2x8x4xf32>, tensor<3x3x4xf32>) {
  %p = kiln.dot_general %g, %q, batch = [0] x [0], contract = [1] x [1] : tensor<2x5x3xf32>, tensor<2x5x4xf32> -> tensor<2x3x4xf32>
  %zero = kiln.constant dense<0.000000e+00> : tensor<f32>
  %z = kiln.pad %p, %zero, low = [0, 0, 0], high = [0, 0, 4] : tensor<2x3x4xf32>, tensor<f32> -> tensor<2x3x8xf32>
  %s = kiln.add %acc, %z : tensor<2x3x8xf32>
  %p2 = kiln.dot_general %g, %q, batch = [0] x [0], contract = [1] x [1] : tensor<2x5x3xf32>, tensor<2x5x4xf32> -> tensor<2x3x4xf32>
  %one = kiln.constant dense<1.000000e+00> : tensor<f32>
  %z2 = kiln.pad %p2, %one, low = [0, 0, 0], high = [0, 5, 0] : tensor<2x3x4xf32>, tensor<f32> -> tensor<2x8x4xf32>
  %s2 = kiln.add %acc2, %z2 : tensor<2x8x4xf32>
  %p3 = kiln.dot_general %g, %q, batch = [0] x [0], contract = [1] x [1] : tensor<2x5x3xf32>, tensor<2x5x4xf32> -> tensor<2x3x4xf32>
  %z3 = kiln.pad %p3, %zero, low = [0, 0, 0], high = [1, 0, 0] : tensor<2x3x4xf32>, tensor<f32> -> tensor<3x3x4xf32>
  %s3 = kiln.add %acc3, %z3 : tensor<3x3x4xf32>
  return %s, %s2, %s3 : tensor<2x3x8xf32>, tensor<2x8x4xf32>, tensor<3x3x4xf32>
}
