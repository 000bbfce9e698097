// kiln-fuse-small-products: a product over at most max-contraction (16)
// contracted elements, whose result has at least as many elements as its
// operands, becomes a loop fusion: per k, the operands' slices at k widened
// to f32, broadcast and multiplied, the products added in order of k and
// the sum rounded once to the result type. A tie on the product moves to
// its operand made last, so the pipeline (prefix PIPE) fuses the loop into
// its reader and the result is never a buffer. Left alone: a product whose
// value reaches a reduction or is read by two ops (its points would be
// computed more than once), 17 contracted
// elements, a batch dim, two contracted dims, nothing contracted, a result
// smaller than the operands, an integer product, and the pipeline with
// small-product-contraction=0 (prefix OFF).
// The cases are small: min-result-bytes=0 (its default, 1 MiB, leaves every
// one of them a GEMM: prefix SMALL).
// RUN: kiln-opt %s --split-input-file --kiln-fuse-small-products="min-result-bytes=0" | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-pipeline="small-product-min-result-bytes=0 schedule=false partition=false" | FileCheck %s --check-prefix=PIPE
// RUN: kiln-opt %s --split-input-file --kiln-pipeline="small-product-contraction=0 small-product-min-result-bytes=0 schedule=false partition=false" | FileCheck %s --check-prefix=OFF
// RUN: kiln-opt %s --split-input-file --kiln-fuse-small-products | FileCheck %s --check-prefix=SMALL
// SMALL-NOT: kiln.fusion

// CHECK-LABEL: func.func @lora_up(
// CHECK-SAME: %[[H:[^:]+]]: tensor<64x2xbf16>, %[[B:[^:]+]]: tensor<32x2xbf16>
// CHECK-NOT: kiln.dot_general
// CHECK: %[[P:.+]] = kiln.fusion loop(%[[H]], %[[B]])
// CHECK: ^bb0(%[[A0:[^:]+]]: tensor<64x2xbf16>, %[[B0:[^:]+]]: tensor<32x2xbf16>):
// CHECK: kiln.slice %[[A0]], start = [0, 0], limit = [64, 1]
// CHECK: kiln.convert {{.*}} : tensor<64xbf16> -> tensor<64xf32>
// CHECK: kiln.broadcast_in_dim {{.*}}, dims = [0] : tensor<64xf32> -> tensor<64x32xf32>
// CHECK: kiln.slice %[[B0]], start = [0, 0], limit = [32, 1]
// CHECK: kiln.broadcast_in_dim {{.*}}, dims = [1] : tensor<32xf32> -> tensor<64x32xf32>
// CHECK: %[[T0:.+]] = kiln.mul {{.*}} : tensor<64x32xf32>
// CHECK: kiln.slice %[[A0]], start = [0, 1], limit = [64, 2]
// CHECK: kiln.slice %[[B0]], start = [0, 1], limit = [32, 2]
// CHECK: %[[T1:.+]] = kiln.mul {{.*}} : tensor<64x32xf32>
// CHECK: %[[S:.+]] = kiln.add %[[T0]], %[[T1]] : tensor<64x32xf32>
// CHECK: %[[R:.+]] = kiln.convert %[[S]] : tensor<64x32xf32> -> tensor<64x32xbf16>
// CHECK: kiln.yield %[[R]]
// CHECK: kiln.add %[[P]], %{{.+}} : tensor<64x32xbf16>
// PIPE-LABEL: func.func @lora_up(
// PIPE-NOT: kiln.dot_general
// PIPE: kiln.fusion loop
// PIPE-NOT: kiln.fusion
// PIPE: return
// OFF-LABEL: func.func @lora_up(
// OFF: kiln.dot_general
func.func @lora_up(%h: tensor<64x2xbf16>, %b: tensor<32x2xbf16>, %base: tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  %p = kiln.dot_general %h, %b, batch = [] x [], contract = [1] x [1] : tensor<64x2xbf16>, tensor<32x2xbf16> -> tensor<64x32xbf16>
  %y = kiln.add %p, %base : tensor<64x32xbf16>
  return %y : tensor<64x32xbf16>
}

// -----

// The lhs contracted along its rows, the rhs along its columns: f32 in and
// out, so nothing is widened or rounded.
// CHECK-LABEL: func.func @f32_transposed(
// CHECK-NOT: kiln.dot_general
// CHECK: kiln.fusion loop
// CHECK: kiln.slice %{{.+}}, start = [0, 0], limit = [1, 48]
// CHECK: kiln.slice %{{.+}}, start = [0, 0], limit = [40, 1]
// CHECK: kiln.broadcast_in_dim {{.*}}, dims = [1] : tensor<40xf32> -> tensor<48x40xf32>
// CHECK-NOT: kiln.convert
// CHECK: kiln.yield
func.func @f32_transposed(%a: tensor<3x48xf32>, %b: tensor<40x3xf32>) -> tensor<48x40xf32> {
  %p = kiln.dot_general %a, %b, batch = [] x [], contract = [0] x [1] : tensor<3x48xf32>, tensor<40x3xf32> -> tensor<48x40xf32>
  return %p : tensor<48x40xf32>
}

// -----

// A tie (a barrier operand whose result nothing reads) on the product moves
// to the operand made last, and the pipeline fuses the loop into its reader.
// CHECK-LABEL: func.func @tied(
// CHECK: %[[D:.+]] = kiln.tanh
// CHECK: %[[P:.+]] = kiln.fusion loop
// CHECK: kiln.optimization_barrier %{{.+}}, %[[D]] : tensor<2xi64>, tensor<64x4xf32>
// PIPE-LABEL: func.func @tied(
// PIPE-NOT: kiln.dot_general
// PIPE: %[[D:.+]] = kiln.tanh
// PIPE: kiln.optimization_barrier %{{.+}}, %[[D]] : tensor<2xi64>, tensor<64x4xf32>
// PIPE: kiln.fusion loop
// PIPE: kiln.rng_uniform
// PIPE: kiln.slice
// PIPE: kiln.mul
// PIPE: return
func.func @tied(%x: tensor<64x4xf32>, %a: tensor<4x32xf32>, %s: tensor<2xi64>) -> tensor<64x32xf32> {
  %d = kiln.tanh %x : tensor<64x4xf32>
  %p = kiln.dot_general %d, %a, batch = [] x [], contract = [1] x [0] : tensor<64x4xf32>, tensor<4x32xf32> -> tensor<64x32xf32>
  %t:2 = kiln.optimization_barrier %s, %p : tensor<2xi64>, tensor<64x32xf32>
  %r, %n = kiln.rng_uniform %t#0 : tensor<2xi64> -> tensor<64x32xf32>
  %y = kiln.mul %p, %r : tensor<64x32xf32>
  return %y : tensor<64x32xf32>
}

// -----

// A loop fused into its readers must compute each point of the product
// once: a product whose value reaches a reduction (a row kernel computes it
// in each of its passes) or is read by two ops (a rotary embedding rotates
// it by halves, so each point's product and its partner's) stays a GEMM.
// CHECK-LABEL: func.func @reaches_a_reduction(
// CHECK: kiln.dot_general
// CHECK-NOT: kiln.fusion
// CHECK: kiln.reduce sum
func.func @reaches_a_reduction(%g: tensor<64x4xf32>, %a: tensor<4x32xf32>, %x: tensor<64x32xf32>) -> tensor<64xf32> {
  %p = kiln.dot_general %g, %a, batch = [] x [], contract = [1] x [0] : tensor<64x4xf32>, tensor<4x32xf32> -> tensor<64x32xf32>
  %m = kiln.mul %p, %x : tensor<64x32xf32>
  %r = kiln.reduce sum %m, dims = [1] : tensor<64x32xf32> -> tensor<64xf32>
  return %r : tensor<64xf32>
}

// -----

// CHECK-LABEL: func.func @read_twice(
// CHECK: kiln.dot_general
// CHECK-NOT: kiln.fusion
// CHECK: return
func.func @read_twice(%h: tensor<64x4xf32>, %b: tensor<32x4xf32>, %base: tensor<64x32xf32>, %cos: tensor<64x32xf32>) -> tensor<64x32xf32> {
  %p = kiln.dot_general %h, %b, batch = [] x [], contract = [1] x [1] : tensor<64x4xf32>, tensor<32x4xf32> -> tensor<64x32xf32>
  %q = kiln.add %base, %p : tensor<64x32xf32>
  %lo = kiln.slice %q, start = [0, 0], limit = [64, 16], strides = [1, 1] : tensor<64x32xf32> -> tensor<64x16xf32>
  %hi = kiln.slice %q, start = [0, 16], limit = [64, 32], strides = [1, 1] : tensor<64x32xf32> -> tensor<64x16xf32>
  %rot = kiln.concatenate %hi, %lo, dim = 1 : (tensor<64x16xf32>, tensor<64x16xf32>) -> tensor<64x32xf32>
  %c = kiln.mul %q, %cos : tensor<64x32xf32>
  %y = kiln.add %c, %rot : tensor<64x32xf32>
  return %y : tensor<64x32xf32>
}

// -----

// CHECK-LABEL: func.func @left_alone(
// CHECK-COUNT-6: kiln.dot_general
// CHECK-NOT: kiln.fusion
func.func @left_alone(%a17: tensor<64x17xf32>, %b17: tensor<17x64xf32>,
                      %ab: tensor<2x64x4xf32>, %bb: tensor<2x4x64xf32>,
                      %a2: tensor<64x2x2xf32>, %b2: tensor<2x2x64xf32>,
                      %a0: tensor<64x0xf32>, %b0: tensor<0x64xf32>,
                      %tall: tensor<64x8xf32>, %thin: tensor<8x2xf32>,
                      %ai: tensor<64x4xi32>, %bi: tensor<4x64xi32>)
    -> (tensor<64x64xf32>, tensor<2x64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x2xf32>, tensor<64x64xi32>) {
  %p0 = kiln.dot_general %a17, %b17, batch = [] x [], contract = [1] x [0] : tensor<64x17xf32>, tensor<17x64xf32> -> tensor<64x64xf32>
  %p1 = kiln.dot_general %ab, %bb, batch = [0] x [0], contract = [2] x [1] : tensor<2x64x4xf32>, tensor<2x4x64xf32> -> tensor<2x64x64xf32>
  %p2 = kiln.dot_general %a2, %b2, batch = [] x [], contract = [1, 2] x [0, 1] : tensor<64x2x2xf32>, tensor<2x2x64xf32> -> tensor<64x64xf32>
  %p3 = kiln.dot_general %a0, %b0, batch = [] x [], contract = [1] x [0] : tensor<64x0xf32>, tensor<0x64xf32> -> tensor<64x64xf32>
  %p4 = kiln.dot_general %tall, %thin, batch = [] x [], contract = [1] x [0] : tensor<64x8xf32>, tensor<8x2xf32> -> tensor<64x2xf32>
  %p5 = kiln.dot_general %ai, %bi, batch = [] x [], contract = [1] x [0] : tensor<64x4xi32>, tensor<4x64xi32> -> tensor<64x64xi32>
  return %p0, %p1, %p2, %p3, %p4, %p5 : tensor<64x64xf32>, tensor<2x64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x2xf32>, tensor<64x64xi32>
}

// -----

// At the default min-result-bytes (1 MiB): a 512x512 f32 result (1 MiB)
// is written as a loop, a 512x511 one stays a GEMM.
// SMALL-LABEL: func.func @threshold(
// SMALL: kiln.fusion loop
// SMALL: kiln.dot_general {{.*}} -> tensor<512x511xf32>
// CHECK-LABEL: func.func @threshold(
func.func @threshold(%a: tensor<512x8xf32>, %b: tensor<8x512xf32>, %c: tensor<8x511xf32>) -> (tensor<512x512xf32>, tensor<512x511xf32>) {
  %p = kiln.dot_general %a, %b, batch = [] x [], contract = [1] x [0] : tensor<512x8xf32>, tensor<8x512xf32> -> tensor<512x512xf32>
  %q = kiln.dot_general %a, %c, batch = [] x [], contract = [1] x [0] : tensor<512x8xf32>, tensor<8x511xf32> -> tensor<512x511xf32>
  return %p, %q : tensor<512x512xf32>, tensor<512x511xf32>
}
