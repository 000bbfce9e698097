// kiln-lower-attention writes fused attention out chunk by chunk: query rows
// split so that one chunk's scores fit max-chunk-bytes (256 here; a row of
// [1, 2, ·, 8] f32 scores takes 64 bytes, so 8 rows make two chunks of 4),
// causal chunks take only the keys up to their last row, dropout draws each
// chunk's values at its own counter, and the gradient sums key/value
// gradients over chunks. Each chunk reads q, k, v (and the rng state, the
// incoming gradient) through a kiln.optimization_barrier that also takes
// the previous chunk's results, so chunks run one after the other and a
// recomputation is never merged with the forward's. The gradient recomputes
// from the scores; a forward op read only by gradients goes with them. With the default budget
// (prefix WHOLE) each op is one chunk, the negative twin: nothing is
// sliced, concatenated or padded.
// RUN: kiln-opt %s --split-input-file --kiln-lower-attention="max-chunk-bytes=256" | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-lower-attention | FileCheck %s --check-prefix=WHOLE

// Two chunks of 4 rows (a row of scores is 1·2·8·4 = 64 bytes): the first
// reads keys [0, 4), the second all 8; the results are concatenated.
// CHECK-LABEL: func.func @causal_two_chunks(
// CHECK-SAME: %[[Q:[^:]+]]: tensor<1x2x8x4xf32>, %[[K:[^:]+]]: tensor<1x2x8x4xf32>, %[[V:[^:]+]]: tensor<1x2x8x4xf32>
// CHECK-NOT: kiln.fused_attention
// CHECK: %[[T0:.+]]:3 = kiln.optimization_barrier %[[Q]], %[[K]], %[[V]] :
// CHECK: %[[Q0:.+]] = kiln.slice %[[T0]]#0, start = [0, 0, 0, 0], limit = [1, 2, 4, 4]
// CHECK: %[[K0:.+]] = kiln.slice %[[T0]]#1, start = [0, 0, 0, 0], limit = [1, 2, 4, 4]
// CHECK: kiln.dot_general %[[Q0]], %[[K0]], batch = [0, 1] x [0, 1], contract = [3] x [3] {{.*}} -> tensor<1x2x4x4xf32>
// CHECK: kiln.compare GT
// CHECK: kiln.reduce max
// CHECK: kiln.exp
// CHECK: %[[O0:.+]] = kiln.dot_general {{.*}} -> tensor<1x2x4x4xf32>
// CHECK: %[[T1:.+]]:4 = kiln.optimization_barrier %[[Q]], %[[K]], %[[V]], %[[O0]] :
// CHECK: %[[Q1:.+]] = kiln.slice %[[T1]]#0, start = [0, 0, 4, 0], limit = [1, 2, 8, 4]
// CHECK: kiln.dot_general %[[Q1]], %[[T1]]#1, batch = [0, 1] x [0, 1], contract = [3] x [3] {{.*}} -> tensor<1x2x4x8xf32>
// CHECK: %[[O1:.+]] = kiln.dot_general {{.*}} -> tensor<1x2x4x4xf32>
// CHECK: %[[O:.+]] = kiln.concatenate %[[O0]], %[[O1]], dim = 2
// CHECK-NOT: kiln.log
// CHECK: return %[[O]]
// WHOLE-LABEL: func.func @causal_two_chunks(
// WHOLE-NOT: kiln.slice
// WHOLE-NOT: kiln.concatenate
// WHOLE: kiln.dot_general {{.*}} -> tensor<1x2x8x8xf32>
// WHOLE-NOT: kiln.fused_attention
func.func @causal_two_chunks(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x8x4xf32>, %v: tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32> {
  %o, %stats_o = kiln.fused_attention %q, %k, %v {causal, scale = 0.5 : f64} : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>, tensor<1x2x8xf32>
  return %o : tensor<1x2x8x4xf32>
}

// -----

// Dropout: chunk 0 draws at the state itself, chunk 1 at counter + 4 rows ·
// (1·2·8 values per row / 4) = + 16; the mask compares with p.
// CHECK-LABEL: func.func @dropout_counters(
// CHECK-SAME: %[[S:[^:]+]]: tensor<2xi64>
// CHECK: %[[T0:.+]]:4 = kiln.optimization_barrier %{{.+}}, %{{.+}}, %{{.+}}, %[[S]] :
// CHECK: kiln.rng_uniform %[[T0]]#3 : tensor<2xi64> -> tensor<4x16xf32>
// CHECK: kiln.compare GE
// CHECK: %[[T1:.+]]:5 = kiln.optimization_barrier %{{.+}}, %{{.+}}, %{{.+}}, %[[S]], %{{.+}} :
// CHECK: %[[OFF:.+]] = kiln.constant dense<[0, 16]> : tensor<2xi64>
// CHECK: %[[S1:.+]] = kiln.add %[[T1]]#3, %[[OFF]] : tensor<2xi64>
// CHECK: kiln.rng_uniform %[[S1]] : tensor<2xi64> -> tensor<4x16xf32>
// WHOLE-LABEL: func.func @dropout_counters(
// WHOLE: kiln.rng_uniform %{{.+}} : tensor<2xi64> -> tensor<8x16xf32>
// WHOLE-NOT: kiln.rng_uniform
func.func @dropout_counters(%q: tensor<1x2x8x4xf32>, %s: tensor<2xi64>) -> tensor<1x2x8x4xf32> {
  %o, %stats_o = kiln.fused_attention %q, %q, %q, rng = %s {causal, dropout = 0.1 : f64, scale = 0.5 : f64} : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<2xi64> -> tensor<1x2x8x4xf32>, tensor<1x2x8xf32>
  return %o : tensor<1x2x8x4xf32>
}

// -----

// The row statistics, where something reads them: per chunk, the softmax's
// max + log of its sum ([1, 2, 4] each), concatenated. (Without a reader,
// as above, there is no kiln.log.)
// CHECK-LABEL: func.func @row_stats(
// CHECK: %[[M0:.+]] = kiln.reduce max {{.*}} -> tensor<1x2x4xf32>
// CHECK: %[[S0:.+]] = kiln.reduce sum {{.*}} -> tensor<1x2x4xf32>
// CHECK: %[[L0:.+]] = kiln.log %[[S0]]
// CHECK: %[[R0:.+]] = kiln.add %[[M0]], %[[L0]]
// CHECK: kiln.log
// CHECK: %[[R1:.+]] = kiln.add
// CHECK: %[[R:.+]] = kiln.concatenate %[[R0]], %[[R1]], dim = 2 : {{.*}} -> tensor<1x2x8xf32>
// CHECK: return %{{.+}}, %[[R]]
// WHOLE-LABEL: func.func @row_stats(
// WHOLE-COUNT-1: kiln.log
// WHOLE-NOT: kiln.log
// WHOLE-NOT: kiln.concatenate
func.func @row_stats(%q: tensor<1x2x8x4xf32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8xf32>) {
  %o, %l = kiln.fused_attention %q, %q, %q {causal, scale = 0.5 : f64} : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>, tensor<1x2x8xf32>
  return %o, %l : tensor<1x2x8x4xf32>, tensor<1x2x8xf32>
}

// -----

// The gradient: per chunk, five products (scores again, dP, dQ, dK, dV),
// the last chunk first: its key and value gradients reach every key and
// start the sums unpadded; the first chunk's cover keys [0, 4) and are
// padded to 8 before they are added; dQ is concatenated in row order. The
// recomputation reads q, k, v through a tie with the incoming gradient,
// the first chunk's also with the last chunk's key and value gradients.
// CHECK-LABEL: func.func @grad_two_chunks(
// CHECK-SAME: %[[Q:[^:]+]]: tensor<1x2x8x4xf32>, %[[G:[^:]+]]: tensor<1x2x8x4xf32>
// CHECK-NOT: kiln.fused_attention_grad
// CHECK: kiln.optimization_barrier %[[Q]], %[[Q]], %[[Q]], %[[G]] :
// CHECK-COUNT-2: kiln.dot_general
// CHECK: %[[DQ1:.+]] = kiln.dot_general
// CHECK: %[[DK1:.+]] = kiln.dot_general
// CHECK: %[[DV1:.+]] = kiln.dot_general
// CHECK-NOT: kiln.pad
// CHECK: kiln.optimization_barrier %[[Q]], %[[Q]], %[[Q]], %[[G]], %[[DK1]], %[[DV1]] :
// CHECK-COUNT-2: kiln.dot_general
// CHECK: %[[DQ0:.+]] = kiln.dot_general
// CHECK-COUNT-2: kiln.dot_general
// CHECK: kiln.pad {{.*}} high = [0, 0, 4, 0]
// CHECK: kiln.add {{.*}} : tensor<1x2x8x4xf32>
// CHECK: kiln.concatenate %[[DQ0]], %[[DQ1]], dim = 2
// WHOLE-LABEL: func.func @grad_two_chunks(
// WHOLE-COUNT-5: kiln.dot_general
// WHOLE-NOT: kiln.dot_general
// WHOLE-NOT: kiln.pad
func.func @grad_two_chunks(%q: tensor<1x2x8x4xf32>, %g: tensor<1x2x8x4xf32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) {
  %fwd1, %stats_fwd1 = kiln.fused_attention %q, %q, %q {causal, scale = 0.5 : f64} : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>, tensor<1x2x8xf32>
  %dq, %dk, %dv = kiln.fused_attention_grad %q, %q, %q, %fwd1, %stats_fwd1, %g {causal, scale = 0.5 : f64} : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>
  return %dq, %dk, %dv : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>
}

// -----

// A window of 3 keys: chunk 1 (rows [4, 8)) sees keys [2, 8) only, masked
// twice (key > query, key + 3 <= query); its key and value gradients cover
// those keys and are padded before them (low 2), chunk 0's after them.
// CHECK-LABEL: func.func @window_two_chunks(
// CHECK: kiln.slice %{{.+}}, start = [0, 0, 4, 0], limit = [1, 2, 8, 4]
// CHECK: kiln.slice %{{.+}}, start = [0, 0, 2, 0], limit = [1, 2, 8, 4]
// CHECK: kiln.compare GT
// CHECK: kiln.compare LE
// CHECK: kiln.pad %{{.+}} low = [0, 0, 2, 0], high = [0, 0, 0, 0]
// CHECK: kiln.pad %{{.+}} low = [0, 0, 0, 0], high = [0, 0, 4, 0]
// WHOLE-LABEL: func.func @window_two_chunks(
// WHOLE: kiln.compare GT
// WHOLE: kiln.compare LE
// WHOLE-NOT: kiln.pad
func.func @window_two_chunks(%q: tensor<1x2x8x4xf32>, %g: tensor<1x2x8x4xf32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) {
  %fwd1, %stats_fwd1 = kiln.fused_attention %q, %q, %q {causal, scale = 0.5 : f64, window = 3 : i64} : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>, tensor<1x2x8xf32>
  %dq, %dk, %dv = kiln.fused_attention_grad %q, %q, %q, %fwd1, %stats_fwd1, %g {causal, scale = 0.5 : f64, window = 3 : i64} : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>
  return %dq, %dk, %dv : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>
}

// -----

// Grouped-query attention: one kv head serves 2 query heads. The products
// read the queries as [1, 1 kv head, 2 query heads, rows, 4], so k and v are
// never repeated per query head (no broadcast of them), and the key and value
// gradients are summed over the kv head's query heads by their products
// (contracted over the query heads and rows), with no reduce. Two causal
// chunks of 4 rows (a row of scores is 1·2·8·4 = 64 bytes): q and the output
// gradient are put in chunk-major order once each, [chunks, B, H, rows, D],
// so that a chunk's rows are one slice of dim 0, which products read in
// place.
// CHECK-LABEL: func.func @grouped_query_heads(
// CHECK-NOT: kiln.broadcast_in_dim %{{[0-9]+}}#
// CHECK: %[[G:.+]] = kiln.reshape %arg2 : tensor<1x2x8x4xf32> -> tensor<1x2x2x4x4xf32>
// CHECK-NEXT: kiln.transpose %[[G]], perm = [2, 0, 1, 3, 4] : tensor<1x2x2x4x4xf32> -> tensor<2x1x2x4x4xf32>
// CHECK-NEXT: %[[Q:.+]] = kiln.reshape %arg0 : tensor<1x2x8x4xf32> -> tensor<1x2x2x4x4xf32>
// CHECK-NEXT: kiln.transpose %[[Q]], perm = [2, 0, 1, 3, 4] : tensor<1x2x2x4x4xf32> -> tensor<2x1x2x4x4xf32>
// CHECK-NOT: kiln.transpose
// CHECK: %[[C:.+]] = kiln.slice %{{.+}}, start = [1, 0, 0, 0, 0], limit = [2, 1, 2, 4, 4]
// CHECK-NEXT: kiln.dot_general %[[C]], %{{.+}}, batch = [0, 1] x [0, 1], contract = [4] x [3] : tensor<1x1x2x4x4xf32>, tensor<1x1x8x4xf32> -> tensor<1x1x2x4x8xf32>
// CHECK: kiln.dot_general %{{.+}}, %{{.+}}, batch = [0, 1] x [0, 1], contract = [2, 3] x [2, 3] : tensor<1x1x2x4x8xf32>, tensor<1x1x2x4x4xf32> -> tensor<1x1x8x4xf32>
// CHECK: kiln.dot_general %{{.+}}, %{{.+}}, batch = [0, 1] x [0, 1], contract = [2, 3] x [2, 3] : tensor<1x1x2x4x4xf32>, tensor<1x1x2x4x4xf32> -> tensor<1x1x4x4xf32>
// CHECK-NEXT: kiln.constant
// CHECK-NEXT: kiln.pad %{{.+}} low = [0, 0, 0, 0], high = [0, 0, 4, 0] : tensor<1x1x4x4xf32>, tensor<f32> -> tensor<1x1x8x4xf32>
// CHECK-NOT: kiln.reduce sum %{{.+}} tensor<1x1x2x
// CHECK-NOT: kiln.transpose
// CHECK: return
// One chunk (the twin): the same products over all 8 rows; nothing padded,
// sliced or put in chunk-major order.
// WHOLE-LABEL: func.func @grouped_query_heads(
// WHOLE-NOT: kiln.broadcast_in_dim %{{[0-9]+}}#
// WHOLE-NOT: kiln.transpose
// WHOLE: kiln.dot_general %{{.+}}, batch = [0, 1] x [0, 1], contract = [4] x [3] : tensor<1x1x2x8x4xf32>, tensor<1x1x8x4xf32> -> tensor<1x1x2x8x8xf32>
// WHOLE: kiln.dot_general %{{.+}}, batch = [0, 1] x [0, 1], contract = [2, 3] x [2, 3] : tensor<1x1x2x8x8xf32>, tensor<1x1x2x8x4xf32> -> tensor<1x1x8x4xf32>
// WHOLE-NOT: kiln.pad
// WHOLE-NOT: kiln.slice
func.func @grouped_query_heads(%q: tensor<1x2x8x4xf32>, %k: tensor<1x1x8x4xf32>, %g: tensor<1x2x8x4xf32>) -> tensor<1x1x8x4xf32> {
  %fwd2, %stats_fwd2 = kiln.fused_attention %q, %k, %k {causal, scale = 0.5 : f64} : tensor<1x2x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32> -> tensor<1x2x8x4xf32>, tensor<1x2x8xf32>
  %dq, %dk, %dv = kiln.fused_attention_grad %q, %k, %k, %fwd2, %stats_fwd2, %g {causal, scale = 0.5 : f64} : tensor<1x2x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>
  return %dk : tensor<1x1x8x4xf32>
}

// -----

// A forward op and its gradient read the same chunk-major q: one transpose of
// it, made where q is, so that q's producer can write it in that order.
// CHECK-LABEL: func.func @grouped_forward_and_gradient_share_one_order(
// CHECK: %[[G:.+]] = kiln.reshape %arg2 : tensor<1x2x8x4xf32> -> tensor<1x2x2x4x4xf32>
// CHECK-NEXT: kiln.transpose %[[G]], perm = [2, 0, 1, 3, 4]
// CHECK-NEXT: %[[Q:.+]] = kiln.reshape %arg0 : tensor<1x2x8x4xf32> -> tensor<1x2x2x4x4xf32>
// CHECK-NEXT: kiln.transpose %[[Q]], perm = [2, 0, 1, 3, 4]
// CHECK-NOT: kiln.transpose
// CHECK-NOT: kiln.reshape %arg0
// CHECK: return
func.func @grouped_forward_and_gradient_share_one_order(%q: tensor<1x2x8x4xf32>, %k: tensor<1x1x8x4xf32>, %g: tensor<1x2x8x4xf32>) -> (tensor<1x2x8x4xf32>, tensor<1x1x8x4xf32>) {
  %fwd2, %stats_fwd2 = kiln.fused_attention %q, %k, %k {causal, scale = 0.5 : f64} : tensor<1x2x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32> -> tensor<1x2x8x4xf32>, tensor<1x2x8xf32>
  %dq, %dk, %dv = kiln.fused_attention_grad %q, %k, %k, %fwd2, %stats_fwd2, %g {causal, scale = 0.5 : f64} : tensor<1x2x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>
  return %fwd2, %dk : tensor<1x2x8x4xf32>, tensor<1x1x8x4xf32>
}
