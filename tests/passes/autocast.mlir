// kiln-autocast moves f32 matrix products to bf16: each operand is rounded
// once (a value two products read gets one convert), the product's result
// is bf16 and widened back to f32 for its readers, and a product that
// reads another's widened result reads the bf16 value itself; a value every
// reader rounds through slices and barriers is rounded once where it is
// made (not when one of them reads it in f32). With
// f32-results (prefix F32RES) the product keeps an f32 result and nothing
// is widened. The negative twins: products of other element types (f64,
// i32, already bf16) and non-product ops are untouched, and without bf16
// the pipeline leaves every product in f32 (prefix OFF). With type=f16
// (--fp16; prefixes F16, PIPE16) the same happens in f16, and products
// already in bf16 are another type, left alone. An unknown type or
// precision is an error (BADTYPE, BADPRECISION).
// RUN: kiln-opt %s --split-input-file --kiln-autocast | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-autocast="f32-results=true" | FileCheck %s --check-prefix=F32RES
// RUN: kiln-opt %s --split-input-file --kiln-pipeline="precision=bf16 fuse=false schedule=false partition=false" | FileCheck %s --check-prefix=PIPE
// RUN: kiln-opt %s --split-input-file --kiln-pipeline="fuse=false schedule=false partition=false" | FileCheck %s --check-prefix=OFF
// RUN: kiln-opt %s --split-input-file --kiln-autocast="type=f16" | FileCheck %s --check-prefix=F16
// RUN: kiln-opt %s --split-input-file --kiln-pipeline="precision=f16 fuse=false schedule=false partition=false" | FileCheck %s --check-prefix=PIPE16
// RUN: not kiln-opt %s --split-input-file --kiln-autocast="type=f8" 2>&1 | FileCheck %s --check-prefix=BADTYPE
// RUN: not kiln-opt %s --split-input-file --kiln-pipeline="precision=fp8" 2>&1 | FileCheck %s --check-prefix=BADPRECISION
// BADTYPE: kiln-autocast: type must be bf16 or f16, got 'f8'
// BADPRECISION: kiln-autocast: type must be bf16 or f16, got 'fp8'

// CHECK-LABEL: func.func @linear(
// CHECK-SAME: %[[X:[^:]+]]: tensor<8x4xf32>, %[[W:[^:]+]]: tensor<4x6xf32>
// CHECK-DAG: %[[XB:.+]] = kiln.convert %[[X]] : tensor<8x4xf32> -> tensor<8x4xbf16>
// CHECK-DAG: %[[WB:.+]] = kiln.convert %[[W]] : tensor<4x6xf32> -> tensor<4x6xbf16>
// CHECK: %[[YB:.+]] = kiln.dot_general %[[XB]], %[[WB]], batch = [] x [], contract = [1] x [0] : tensor<8x4xbf16>, tensor<4x6xbf16> -> tensor<8x6xbf16>
// CHECK: %[[Y:.+]] = kiln.convert %[[YB]] : tensor<8x6xbf16> -> tensor<8x6xf32>
// CHECK: %[[R:.+]] = kiln.tanh %[[Y]] : tensor<8x6xf32>
// CHECK: return %[[R]]
// F32RES-LABEL: func.func @linear(
// F32RES: %[[Y:.+]] = kiln.dot_general {{.*}} : tensor<8x4xbf16>, tensor<4x6xbf16> -> tensor<8x6xf32>
// F32RES-NEXT: kiln.tanh %[[Y]] : tensor<8x6xf32>
// PIPE-LABEL: func.func @linear(
// PIPE: kiln.dot_general {{.*}} : tensor<8x4xbf16>, tensor<4x6xbf16> -> tensor<8x6xbf16>
// OFF-LABEL: func.func @linear(
// OFF-NOT: bf16
// OFF: kiln.dot_general {{.*}} : tensor<8x4xf32>, tensor<4x6xf32> -> tensor<8x6xf32>
// F16-LABEL: func.func @linear(
// F16-SAME: %[[X:[^:]+]]: tensor<8x4xf32>, %[[W:[^:]+]]: tensor<4x6xf32>
// F16-DAG: %[[XH:.+]] = kiln.convert %[[X]] : tensor<8x4xf32> -> tensor<8x4xf16>
// F16-DAG: %[[WH:.+]] = kiln.convert %[[W]] : tensor<4x6xf32> -> tensor<4x6xf16>
// F16: %[[YH:.+]] = kiln.dot_general %[[XH]], %[[WH]], batch = [] x [], contract = [1] x [0] : tensor<8x4xf16>, tensor<4x6xf16> -> tensor<8x6xf16>
// F16: %[[Y:.+]] = kiln.convert %[[YH]] : tensor<8x6xf16> -> tensor<8x6xf32>
// F16: kiln.tanh %[[Y]] : tensor<8x6xf32>
// PIPE16-LABEL: func.func @linear(
// PIPE16-NOT: bf16
// PIPE16: kiln.dot_general {{.*}} : tensor<8x4xf16>, tensor<4x6xf16> -> tensor<8x6xf16>
func.func @linear(%x: tensor<8x4xf32>, %w: tensor<4x6xf32>) -> tensor<8x6xf32> {
  %y = kiln.dot_general %x, %w, batch = [] x [], contract = [1] x [0] : tensor<8x4xf32>, tensor<4x6xf32> -> tensor<8x6xf32>
  %r = kiln.tanh %y : tensor<8x6xf32>
  return %r : tensor<8x6xf32>
}

// -----

// A forward product and the two backward ones of a linear layer: x and w
// are each rounded once and shared; the incoming gradient is rounded once
// for both backward products. Each result is widened once.
// CHECK-LABEL: func.func @linear_backward(
// CHECK-COUNT-3: kiln.convert {{.*}}xf32> -> tensor<{{.*}}xbf16>
// CHECK-NOT: xf32> -> tensor<{{.*}}xbf16>
// CHECK: kiln.dot_general {{.*}} : tensor<8x4xbf16>, tensor<4x6xbf16> -> tensor<8x6xbf16>
// CHECK-NEXT: kiln.convert {{.*}} : tensor<8x6xbf16> -> tensor<8x6xf32>
// CHECK: kiln.dot_general {{.*}} : tensor<8x6xbf16>, tensor<4x6xbf16> -> tensor<8x4xbf16>
// CHECK-NEXT: kiln.convert {{.*}} : tensor<8x4xbf16> -> tensor<8x4xf32>
// CHECK: kiln.dot_general {{.*}} : tensor<8x4xbf16>, tensor<8x6xbf16> -> tensor<4x6xbf16>
// CHECK-NEXT: kiln.convert {{.*}} : tensor<4x6xbf16> -> tensor<4x6xf32>
// F32RES-LABEL: func.func @linear_backward(
// F32RES-COUNT-3: kiln.convert
// F32RES-NOT: kiln.convert
// F32RES: kiln.dot_general {{.*}} -> tensor<8x6xf32>
// F32RES: kiln.dot_general {{.*}} -> tensor<8x4xf32>
// F32RES: kiln.dot_general {{.*}} -> tensor<4x6xf32>
func.func @linear_backward(%x: tensor<8x4xf32>, %w: tensor<4x6xf32>, %dy: tensor<8x6xf32>) -> (tensor<8x6xf32>, tensor<8x4xf32>, tensor<4x6xf32>) {
  %y = kiln.dot_general %x, %w, batch = [] x [], contract = [1] x [0] : tensor<8x4xf32>, tensor<4x6xf32> -> tensor<8x6xf32>
  %dx = kiln.dot_general %dy, %w, batch = [] x [], contract = [1] x [1] : tensor<8x6xf32>, tensor<4x6xf32> -> tensor<8x4xf32>
  %dw = kiln.dot_general %x, %dy, batch = [] x [], contract = [0] x [0] : tensor<8x4xf32>, tensor<8x6xf32> -> tensor<4x6xf32>
  return %y, %dx, %dw : tensor<8x6xf32>, tensor<8x4xf32>, tensor<4x6xf32>
}

// -----

// Batched attention products (strided batch dimensions) move too; the same
// value as both operands is rounded once, and the second product reads the
// first one's bf16 result, not a rounding of its widened copy.
// CHECK-LABEL: func.func @batched_chain(
// CHECK: %[[QB:.+]] = kiln.convert %{{.+}} : tensor<2x3x4xf32> -> tensor<2x3x4xbf16>
// CHECK: %[[SB:.+]] = kiln.dot_general %[[QB]], %[[QB]], batch = [0] x [0], contract = [2] x [2] : tensor<2x3x4xbf16>, tensor<2x3x4xbf16> -> tensor<2x3x3xbf16>
// CHECK-NOT: -> tensor<2x3x3xbf16>
// CHECK: kiln.dot_general %[[SB]], %[[QB]], batch = [0] x [0], contract = [2] x [1] : tensor<2x3x3xbf16>, tensor<2x3x4xbf16> -> tensor<2x3x4xbf16>
// F16-LABEL: func.func @batched_chain(
// F16: %[[QH:.+]] = kiln.convert %{{.+}} : tensor<2x3x4xf32> -> tensor<2x3x4xf16>
// F16: %[[SH:.+]] = kiln.dot_general %[[QH]], %[[QH]], {{.*}} -> tensor<2x3x3xf16>
// F16-NOT: -> tensor<2x3x3xf16>
// F16: kiln.dot_general %[[SH]], %[[QH]], {{.*}} : tensor<2x3x3xf16>, tensor<2x3x4xf16> -> tensor<2x3x4xf16>
func.func @batched_chain(%q: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %s = kiln.dot_general %q, %q, batch = [0] x [0], contract = [2] x [2] : tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<2x3x3xf32>
  %o = kiln.dot_general %s, %q, batch = [0] x [0], contract = [2] x [1] : tensor<2x3x3xf32>, tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  return %o : tensor<2x3x4xf32>
}

// -----

// Negative twin: f64, integer and bf16 products, and f32 elementwise work,
// are left as they are.
// CHECK-LABEL: func.func @other_types(
// CHECK-NOT: kiln.convert
// CHECK: kiln.dot_general {{.*}} : tensor<2x2xf64>, tensor<2x2xf64> -> tensor<2x2xf64>
// CHECK: kiln.dot_general {{.*}} : tensor<2x2xi32>, tensor<2x2xi32> -> tensor<2x2xi32>
// CHECK: kiln.dot_general {{.*}} : tensor<2x2xbf16>, tensor<2x2xbf16> -> tensor<2x2xbf16>
// CHECK: kiln.mul {{.*}} : tensor<2x2xf32>
// CHECK-NOT: kiln.convert
// F16-LABEL: func.func @other_types(
// F16-NOT: kiln.convert
// F16: kiln.dot_general {{.*}} : tensor<2x2xbf16>, tensor<2x2xbf16> -> tensor<2x2xbf16>
// F16-NOT: kiln.convert
func.func @other_types(%a: tensor<2x2xf64>, %b: tensor<2x2xi32>, %c: tensor<2x2xbf16>, %d: tensor<2x2xf32>) -> (tensor<2x2xf64>, tensor<2x2xi32>, tensor<2x2xbf16>, tensor<2x2xf32>) {
  %x = kiln.dot_general %a, %a, batch = [] x [], contract = [1] x [0] : tensor<2x2xf64>, tensor<2x2xf64> -> tensor<2x2xf64>
  %y = kiln.dot_general %b, %b, batch = [] x [], contract = [1] x [0] : tensor<2x2xi32>, tensor<2x2xi32> -> tensor<2x2xi32>
  %z = kiln.dot_general %c, %c, batch = [] x [], contract = [1] x [0] : tensor<2x2xbf16>, tensor<2x2xbf16> -> tensor<2x2xbf16>
  %w = kiln.mul %d, %d : tensor<2x2xf32>
  return %x, %y, %z, %w : tensor<2x2xf64>, tensor<2x2xi32>, tensor<2x2xbf16>, tensor<2x2xf32>
}

// -----

// Chunks reading the weight through their barriers (as the lowered loss
// does): the weight is rounded once, before the first barrier, and each
// barrier carries the rounded copy as one more operand, so the chunks keep
// their order and no chunk converts the weight again.
// CHECK-LABEL: func.func @chunks_through_barriers(
// CHECK-SAME: %[[H:[^:]+]]: tensor<4x3xf32>, %[[W:[^:]+]]: tensor<10x3xf32>
// CHECK: %[[WB:.+]] = kiln.convert %[[W]] : tensor<10x3xf32> -> tensor<10x3xbf16>
// CHECK: %[[T0:.+]]:3 = kiln.optimization_barrier %[[H]], %[[W]], %[[WB]] :
// CHECK: kiln.dot_general %{{.+}}, %[[T0]]#2, {{.*}} : tensor<2x3xbf16>, tensor<10x3xbf16> -> tensor<2x10xbf16>
// CHECK: %[[T1:.+]]:4 = kiln.optimization_barrier %[[H]], %[[W]], %{{.+}}, %[[WB]] :
// CHECK: kiln.dot_general %{{.+}}, %[[T1]]#3, {{.*}} : tensor<2x3xbf16>, tensor<10x3xbf16> -> tensor<2x10xbf16>
// CHECK-NOT: -> tensor<10x3xbf16>
// F32RES-LABEL: func.func @chunks_through_barriers(
// F32RES: kiln.convert %{{.+}} : tensor<10x3xf32> -> tensor<10x3xbf16>
// F32RES-NOT: -> tensor<10x3xbf16>
// F16-LABEL: func.func @chunks_through_barriers(
// F16: kiln.convert %{{.+}} : tensor<10x3xf32> -> tensor<10x3xf16>
// F16-NOT: -> tensor<10x3xf16>
func.func @chunks_through_barriers(%h: tensor<4x3xf32>, %w: tensor<10x3xf32>) -> (tensor<2x10xf32>, tensor<2x10xf32>) {
  %t0:2 = kiln.optimization_barrier %h, %w : tensor<4x3xf32>, tensor<10x3xf32>
  %h0 = kiln.slice %t0#0, start = [0, 0], limit = [2, 3], strides = [1, 1] : tensor<4x3xf32> -> tensor<2x3xf32>
  %l0 = kiln.dot_general %h0, %t0#1, batch = [] x [], contract = [1] x [1] : tensor<2x3xf32>, tensor<10x3xf32> -> tensor<2x10xf32>
  %t1:3 = kiln.optimization_barrier %h, %w, %l0 : tensor<4x3xf32>, tensor<10x3xf32>, tensor<2x10xf32>
  %h1 = kiln.slice %t1#0, start = [2, 0], limit = [4, 3], strides = [1, 1] : tensor<4x3xf32> -> tensor<2x3xf32>
  %l1 = kiln.dot_general %h1, %t1#1, batch = [] x [], contract = [1] x [1] : tensor<2x3xf32>, tensor<10x3xf32> -> tensor<2x10xf32>
  return %t1#2, %l1 : tensor<2x10xf32>, tensor<2x10xf32>
}

// -----

// Keys made in the step (an add), which two chunks slice through the
// barriers that order them, as lowered attention does: rounded once where
// they are made, so the barriers carry and the slices move bf16 (half the
// bytes to keep and to slice), and no chunk rounds its own slice.
// CHECK-LABEL: func.func @keys_rounded_where_made(
// CHECK: %[[K:.+]] = kiln.add
// CHECK-NEXT: %[[KB:.+]] = kiln.convert %[[K]] : tensor<4x3xf32> -> tensor<4x3xbf16>
// CHECK-NEXT: %[[T0:.+]]:3 = kiln.optimization_barrier %[[KB]], {{.*}} : tensor<4x3xbf16>, tensor<2x3xf32>, tensor<2x3xbf16>
// CHECK-NEXT: %[[S0:.+]] = kiln.slice %[[T0]]#0, {{.*}} : tensor<4x3xbf16> -> tensor<2x3xbf16>
// CHECK-NEXT: kiln.dot_general %[[T0]]#2, %[[S0]], {{.*}} : tensor<2x3xbf16>, tensor<2x3xbf16> -> tensor<2x2xbf16>
// CHECK: %[[T1:.+]]:3 = kiln.optimization_barrier %[[KB]], {{.*}} : tensor<4x3xbf16>, tensor<2x3xf32>, tensor<2x3xbf16>
// CHECK-NEXT: %[[S1:.+]] = kiln.slice %[[T1]]#0, {{.*}} : tensor<4x3xbf16> -> tensor<2x3xbf16>
// CHECK-NEXT: kiln.dot_general %[[T1]]#2, %[[S1]], {{.*}} : tensor<2x3xbf16>, tensor<2x3xbf16> -> tensor<2x2xbf16>
// CHECK-NOT: tensor<4x3xf32> -> tensor<4x3xbf16>
// CHECK: return
func.func @keys_rounded_where_made(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>, %q: tensor<2x3xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %k = kiln.add %a, %b : tensor<4x3xf32>
  %t0:2 = kiln.optimization_barrier %k, %q : tensor<4x3xf32>, tensor<2x3xf32>
  %k0 = kiln.slice %t0#0, start = [0, 0], limit = [2, 3], strides = [1, 1] : tensor<4x3xf32> -> tensor<2x3xf32>
  %s0 = kiln.dot_general %t0#1, %k0, batch = [] x [], contract = [1] x [1] : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x2xf32>
  %t1:2 = kiln.optimization_barrier %k, %q : tensor<4x3xf32>, tensor<2x3xf32>
  %k1 = kiln.slice %t1#0, start = [2, 0], limit = [4, 3], strides = [1, 1] : tensor<4x3xf32> -> tensor<2x3xf32>
  %s1 = kiln.dot_general %t1#1, %k1, batch = [] x [], contract = [1] x [1] : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x2xf32>
  return %s0, %s1 : tensor<2x2xf32>, tensor<2x2xf32>
}

// -----

// The negative twin: one chunk's slice is also read in f32 (an exp), so the
// keys stay f32 and each product rounds its own slice.
// CHECK-LABEL: func.func @keys_read_in_f32_stay(
// CHECK: %[[K:.+]] = kiln.add
// CHECK-NEXT: kiln.optimization_barrier %[[K]], {{.*}} : tensor<4x3xf32>, tensor<2x3xf32>
// CHECK: kiln.convert %{{.+}} : tensor<2x3xf32> -> tensor<2x3xbf16>
// CHECK-NOT: tensor<4x3xbf16>
// CHECK: return
func.func @keys_read_in_f32_stay(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>, %q: tensor<2x3xf32>) -> (tensor<2x2xf32>, tensor<2x3xf32>) {
  %k = kiln.add %a, %b : tensor<4x3xf32>
  %t0:2 = kiln.optimization_barrier %k, %q : tensor<4x3xf32>, tensor<2x3xf32>
  %k0 = kiln.slice %t0#0, start = [0, 0], limit = [2, 3], strides = [1, 1] : tensor<4x3xf32> -> tensor<2x3xf32>
  %s0 = kiln.dot_general %t0#1, %k0, batch = [] x [], contract = [1] x [1] : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x2xf32>
  %e = kiln.exp %k0 : tensor<2x3xf32>
  return %s0, %e : tensor<2x2xf32>, tensor<2x3xf32>
}
