// kiln-fuse-elementwise: each fusion that must happen with its negative twin,
// the fusion that must not. Refusals are checked through the remarks the
// pass emits with emit-remarks (its statistics count the same reasons, but
// statistics are no-ops in LLVM release builds).
// RUN: kiln-opt %s --split-input-file --verify-diagnostics \
// RUN:   --kiln-fuse-elementwise=emit-remarks | FileCheck %s

// CHECK-LABEL: func.func @bias_add_tanh_fuses(
// CHECK-SAME: %[[X:[^:]+]]: tensor<4x8xf32>, %[[B:[^:]+]]: tensor<8xf32>
// CHECK-NEXT: %[[F:.+]] = kiln.fusion loop(%[[B]], %[[X]]) : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT: ^bb0(%[[A1:.+]]: tensor<8xf32>, %[[A0:.+]]: tensor<4x8xf32>):
// CHECK-NEXT: %[[BB:.+]] = kiln.broadcast_in_dim %[[A1]], dims = [1]
// CHECK-NEXT: %[[S:.+]] = kiln.add %[[A0]], %[[BB]]
// CHECK-NEXT: %[[T:.+]] = kiln.tanh %[[S]]
// CHECK-NEXT: kiln.yield %[[T]]
// CHECK-NEXT: }
// CHECK-NEXT: return %[[F]]
func.func @bias_add_tanh_fuses(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %bb = kiln.broadcast_in_dim %b, dims = [1] : tensor<8xf32> -> tensor<4x8xf32>
  %s = kiln.add %x, %bb : tensor<4x8xf32>
  %t = kiln.tanh %s : tensor<4x8xf32>
  return %t : tensor<4x8xf32>
}

// -----

// A dot_general is never a producer here: the add stays a lone op.
// CHECK-LABEL: func.func @dot_general_producer_stays(
// CHECK-NEXT: %[[D:.+]] = kiln.dot_general
// CHECK-NEXT: %[[S:.+]] = kiln.add %[[D]], %{{.+}} : tensor<4x8xf32>
// CHECK-NEXT: return %[[S]]
// CHECK-NOT: kiln.fusion
func.func @dot_general_producer_stays(%x: tensor<4x2xf32>, %w: tensor<2x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-remark @below {{not fused into 'kiln.add': the producer never fuses here}}
  %d = kiln.dot_general %x, %w, batch = [] x [], contract = [1] x [0] : tensor<4x2xf32>, tensor<2x8xf32> -> tensor<4x8xf32>
  %s = kiln.add %d, %y : tensor<4x8xf32>
  return %s : tensor<4x8xf32>
}

// -----

// The add has two users and is cheap: each consumer gets its own copy.
// CHECK-LABEL: func.func @cheap_shared_producer_is_duplicated(
// CHECK-NEXT: %[[F1:.+]] = kiln.fusion loop
// CHECK: kiln.add
// CHECK-NEXT: kiln.exp
// CHECK: %[[F2:.+]] = kiln.fusion loop
// CHECK: kiln.add
// CHECK-NEXT: kiln.tanh
// CHECK: return %[[F1]], %[[F2]]
func.func @cheap_shared_producer_is_duplicated(%x: tensor<32x32xf32>, %y: tensor<32x32xf32>) -> (tensor<32x32xf32>, tensor<32x32xf32>) {
  %s = kiln.add %x, %y : tensor<32x32xf32>
  %a = kiln.exp %s : tensor<32x32xf32>
  %b = kiln.tanh %s : tensor<32x32xf32>
  return %a, %b : tensor<32x32xf32>, tensor<32x32xf32>
}

// -----

// The exp has two users and is expensive: it stays, computed once.
// CHECK-LABEL: func.func @expensive_shared_producer_stays(
// CHECK-NEXT: %[[E:.+]] = kiln.exp
// CHECK-NEXT: %[[A:.+]] = kiln.add %[[E]]
// CHECK-NEXT: %[[B:.+]] = kiln.mul %[[E]]
// CHECK-NEXT: return %[[A]], %[[B]]
func.func @expensive_shared_producer_stays(%x: tensor<32x32xf32>, %y: tensor<32x32xf32>) -> (tensor<32x32xf32>, tensor<32x32xf32>) {
  // expected-remark @below {{not fused into 'kiln.add': the producer has other users and duplicating it costs too much}}
  // expected-remark @below {{not fused into 'kiln.mul': the producer has other users and duplicating it costs too much}}
  %e = kiln.exp %x : tensor<32x32xf32>
  %a = kiln.add %e, %y : tensor<32x32xf32>
  %b = kiln.mul %e, %y : tensor<32x32xf32>
  return %a, %b : tensor<32x32xf32>, tensor<32x32xf32>
}

// -----

// One-hot labels: iota, a broadcast, a compare and a convert in one loop.
// CHECK-LABEL: func.func @one_hot_fuses(
// CHECK-SAME: %[[L:[^:]+]]: tensor<4xi32>
// CHECK-NEXT: %[[F:.+]] = kiln.fusion loop(%[[L]]) : (tensor<4xi32>) -> tensor<4x3xf32>
// CHECK-DAG: kiln.iota
// CHECK-DAG: kiln.broadcast_in_dim
// CHECK: kiln.compare EQ
// CHECK: kiln.convert
// CHECK: return %[[F]]
func.func @one_hot_fuses(%labels: tensor<4xi32>) -> tensor<4x3xf32> {
  %classes = kiln.iota dim = 1 : tensor<4x3xi32>
  %lb = kiln.broadcast_in_dim %labels, dims = [0] : tensor<4xi32> -> tensor<4x3xi32>
  %hit = kiln.compare EQ, %classes, %lb : tensor<4x3xi32>
  %onehot = kiln.convert %hit : tensor<4x3xi1> -> tensor<4x3xf32>
  return %onehot : tensor<4x3xf32>
}

// -----

// The one-hot feeds a dot_general: the mask still fuses, the dot stays out.
// CHECK-LABEL: func.func @one_hot_into_dot_general_keeps_the_dot(
// CHECK-NEXT: %[[F:.+]] = kiln.fusion loop
// CHECK: kiln.convert
// CHECK-NOT: kiln.dot_general
// CHECK: kiln.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[D:.+]] = kiln.dot_general %[[F]]
// CHECK-NEXT: return %[[D]]
func.func @one_hot_into_dot_general_keeps_the_dot(%labels: tensor<4xi32>, %table: tensor<3x8xf32>) -> tensor<4x8xf32> {
  %classes = kiln.iota dim = 1 : tensor<4x3xi32>
  %lb = kiln.broadcast_in_dim %labels, dims = [0] : tensor<4xi32> -> tensor<4x3xi32>
  %hit = kiln.compare EQ, %classes, %lb : tensor<4x3xi32>
  %onehot = kiln.convert %hit : tensor<4x3xi1> -> tensor<4x3xf32>
  %rows = kiln.dot_general %onehot, %table, batch = [] x [], contract = [1] x [0] : tensor<4x3xf32>, tensor<3x8xf32> -> tensor<4x8xf32>
  return %rows : tensor<4x8xf32>
}

// -----

// Dropout: the draw fuses and its new state becomes the fusion's second
// result.
// CHECK-LABEL: func.func @rng_uniform_fuses_with_its_state(
// CHECK-SAME: %[[X:[^:]+]]: tensor<16x16xf32>, %[[S:[^:]+]]: tensor<2xi64>
// CHECK-NEXT: %[[F:.+]]:2 = kiln.fusion loop(%[[S]], %[[X]]) : (tensor<2xi64>, tensor<16x16xf32>) -> (tensor<2xi64>, tensor<16x16xf32>)
// CHECK: kiln.rng_uniform
// CHECK: kiln.select
// CHECK: return %[[F]]#1, %[[F]]#0
func.func @rng_uniform_fuses_with_its_state(%x: tensor<16x16xf32>, %s: tensor<2xi64>) -> (tensor<16x16xf32>, tensor<2xi64>) {
  %u, %s2 = kiln.rng_uniform %s : tensor<2xi64> -> tensor<16x16xf32>
  %p = kiln.constant dense<0.1> : tensor<16x16xf32>
  %keep = kiln.compare GE, %u, %p : tensor<16x16xf32>
  %zero = kiln.constant dense<0.0> : tensor<16x16xf32>
  %y = kiln.select %keep, %x, %zero : tensor<16x16xi1>, tensor<16x16xf32>
  return %y, %s2 : tensor<16x16xf32>, tensor<2xi64>
}

// -----

// An attention chunk's Philox offset (the step's state plus a constant)
// read only as the draw's state fuses in: each thread reads the state's
// two words once.
// CHECK-LABEL: func.func @state_offset_fuses_into_its_draw(
// CHECK-SAME: %[[X:[^:]+]]: tensor<16x16xf32>, %[[S:[^:]+]]: tensor<2xi64>
// CHECK-NEXT: %[[F:.+]] = kiln.fusion loop(%[[S]], %[[X]])
// CHECK: kiln.add
// CHECK: kiln.rng_uniform
// CHECK: return %[[F]]
func.func @state_offset_fuses_into_its_draw(%x: tensor<16x16xf32>, %s: tensor<2xi64>) -> tensor<16x16xf32> {
  %k = kiln.constant dense<[0, 4096]> : tensor<2xi64>
  %o = kiln.add %s, %k : tensor<2xi64>
  %u, %s2 = kiln.rng_uniform %o : tensor<2xi64> -> tensor<16x16xf32>
  %p = kiln.constant dense<0.1> : tensor<16x16xf32>
  %keep = kiln.compare GE, %u, %p : tensor<16x16xf32>
  %zero = kiln.constant dense<0.0> : tensor<16x16xf32>
  %y = kiln.select %keep, %x, %zero : tensor<16x16xi1>, tensor<16x16xf32>
  return %y : tensor<16x16xf32>
}

// -----

// The twin: the offset is also read as a value (broadcast to every row),
// which a fused add would repeat per point: it stays a kernel.
// CHECK-LABEL: func.func @state_offset_read_as_a_value_stays(
// CHECK-NEXT: kiln.constant
// CHECK-NEXT: %[[O:.+]] = kiln.add
// CHECK-NEXT: kiln.fusion loop(%[[O]]
func.func @state_offset_read_as_a_value_stays(%x: tensor<8x2xi64>, %s: tensor<2xi64>) -> tensor<8x2xi64> {
  %k = kiln.constant dense<[0, 4096]> : tensor<2xi64>
  // expected-remark @below {{the producer's element count differs from the consumer's}}
  %o = kiln.add %s, %k : tensor<2xi64>
  %u, %s2 = kiln.rng_uniform %o : tensor<2xi64> -> tensor<8x2xf32>
  %b = kiln.broadcast_in_dim %o, dims = [1] : tensor<2xi64> -> tensor<8x2xi64>
  %c = kiln.convert %u : tensor<8x2xf32> -> tensor<8x2xi64>
  %y = kiln.add %c, %b : tensor<8x2xi64>
  %z = kiln.add %y, %x : tensor<8x2xi64>
  return %z : tensor<8x2xi64>
}

// -----

// The draw itself is also returned: duplicating it would draw twice, so it
// stays and the compare reads it.
// CHECK-LABEL: func.func @rng_uniform_with_other_users_stays(
// CHECK-NEXT: %[[U:.+]], %[[S2:.+]] = kiln.rng_uniform
// CHECK-NEXT: %[[C:.+]] = kiln.compare GE, %[[U]]
// CHECK-NEXT: return %[[U]], %[[C]], %[[S2]]
func.func @rng_uniform_with_other_users_stays(%s: tensor<2xi64>, %q: tensor<16x16xf32>) -> (tensor<16x16xf32>, tensor<16x16xi1>, tensor<2xi64>) {
  // expected-remark @below {{not fused into 'kiln.compare': the producer has other users and duplicating it costs too much}}
  %u, %s2 = kiln.rng_uniform %s : tensor<2xi64> -> tensor<16x16xf32>
  %keep = kiln.compare GE, %u, %q : tensor<16x16xf32>
  return %u, %keep, %s2 : tensor<16x16xf32>, tensor<16x16xi1>, tensor<2xi64>
}

// -----

// A small transpose is cheap even though it moves the innermost dimension.
// CHECK-LABEL: func.func @small_transpose_fuses(
// CHECK-NEXT: %[[F:.+]] = kiln.fusion loop
// CHECK: kiln.transpose
// CHECK-NEXT: kiln.exp
// CHECK: return %[[F]]
func.func @small_transpose_fuses(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
  %t = kiln.transpose %x, perm = [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  %e = kiln.exp %t : tensor<8x4xf32>
  return %e : tensor<8x4xf32>
}

// -----

// A large transpose of the innermost dimension reads memory with a stride:
// it stays a kernel of its own.
// CHECK-LABEL: func.func @large_transpose_stays(
// CHECK-NEXT: %[[T:.+]] = kiln.transpose
// CHECK-NEXT: %[[E:.+]] = kiln.exp %[[T]]
// CHECK-NEXT: return %[[E]]
func.func @large_transpose_stays(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-remark @below {{not fused into 'kiln.exp': the transpose is expensive}}
  %t = kiln.transpose %x, perm = [1, 0] : tensor<64x64xf32> -> tensor<64x64xf32>
  %e = kiln.exp %t : tensor<64x64xf32>
  return %e : tensor<64x64xf32>
}

// -----

// The exp runs over 4 elements, its consumer over 32: fusing it would
// recompute it for every broadcast element. The broadcast fuses.
// CHECK-LABEL: func.func @smaller_producer_behind_broadcast_stays(
// CHECK-NEXT: %[[E:.+]] = kiln.exp
// CHECK-NEXT: %[[F:.+]] = kiln.fusion loop(%[[E]]
// CHECK: kiln.broadcast_in_dim
// CHECK-NEXT: kiln.add
// CHECK: return %[[F]]
func.func @smaller_producer_behind_broadcast_stays(%x: tensor<4xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-remark @below {{not fused into 'kiln.fusion': the producer's element count differs from the consumer's}}
  %e = kiln.exp %x : tensor<4xf32>
  %b = kiln.broadcast_in_dim %e, dims = [0] : tensor<4xf32> -> tensor<4x8xf32>
  %s = kiln.add %b, %y : tensor<4x8xf32>
  return %s : tensor<4x8xf32>
}

// -----

// Converts of fewer elements than their consumer, read only through a
// concatenation (attention's chunk outputs, widened by kiln-autocast): each
// point reads one element of one of them, so they fuse and the kernel reads
// the 16-bit chunks. One read through a slice does not fuse: it would bring
// its own operands of its size along.
// CHECK-LABEL: func.func @chunks_read_through_a_concatenation_fuse(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2x8xbf16>, %[[B:[^:]+]]: tensor<2x8xbf16>
// CHECK-NEXT: %[[F:.+]] = kiln.fusion loop(%[[B]], %[[A]]) : (tensor<2x8xbf16>, tensor<2x8xbf16>) -> tensor<4x8xf32>
// CHECK: kiln.convert
// CHECK: kiln.convert
// CHECK: kiln.concatenate
// CHECK: kiln.exp
// CHECK: return %[[F]]
func.func @chunks_read_through_a_concatenation_fuse(%a: tensor<2x8xbf16>, %b: tensor<2x8xbf16>) -> tensor<4x8xf32> {
  %wa = kiln.convert %a : tensor<2x8xbf16> -> tensor<2x8xf32>
  %wb = kiln.convert %b : tensor<2x8xbf16> -> tensor<2x8xf32>
  %c = kiln.concatenate %wa, %wb, dim = 0 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<4x8xf32>
  %e = kiln.exp %c : tensor<4x8xf32>
  return %e : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @larger_producer_read_through_a_slice_stays(
// CHECK-NEXT: %[[E:.+]] = kiln.exp
// CHECK-NEXT: %[[F:.+]] = kiln.fusion loop(%[[E]]
// CHECK: kiln.slice
// CHECK: return %[[F]]
func.func @larger_producer_read_through_a_slice_stays(%x: tensor<8x8xf32>) -> tensor<4x8xf32> {
  // expected-remark @below {{not fused into 'kiln.fusion': the producer's element count differs from the consumer's}}
  %e = kiln.exp %x : tensor<8x8xf32>
  %s = kiln.slice %e, start = [0, 0], limit = [4, 8], strides = [1, 1] : tensor<8x8xf32> -> tensor<4x8xf32>
  %t = kiln.tanh %s : tensor<4x8xf32>
  return %t : tensor<4x8xf32>
}

// -----

// A small producer shared by two consumers fuses once and stays a result
// of the fusion for the other consumer.
// CHECK-LABEL: func.func @small_shared_producer_fuses_once(
// CHECK-NEXT: %[[F:.+]]:2 = kiln.fusion loop
// CHECK: kiln.exp
// CHECK-NOT: kiln.exp
// CHECK: return
func.func @small_shared_producer_fuses_once(%x: tensor<2x2xf32>, %y: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %p = kiln.exp %x : tensor<2x2xf32>
  %a = kiln.add %p, %y : tensor<2x2xf32>
  %b = kiln.mul %p, %y : tensor<2x2xf32>
  return %a, %b : tensor<2x2xf32>, tensor<2x2xf32>
}

// -----

// The same small producer also feeds a dot_general whose result the
// consumer reads: fusing would make a cycle through the dot.
// CHECK-LABEL: func.func @producer_behind_a_cycle_stays(
// CHECK-NEXT: %[[P:.+]] = kiln.exp
// CHECK-NEXT: %[[D:.+]] = kiln.dot_general %[[P]]
// CHECK-NEXT: %[[S:.+]] = kiln.add %[[P]], %[[D]]
// CHECK-NEXT: return %[[S]]
func.func @producer_behind_a_cycle_stays(%x: tensor<2x2xf32>, %w: tensor<2x2xf32>) -> tensor<2x2xf32> {
  // expected-remark @below {{not fused into 'kiln.add': fusing would create a cycle}}
  %p = kiln.exp %x : tensor<2x2xf32>
  // expected-remark @below {{not fused into 'kiln.add': the producer never fuses here}}
  %d = kiln.dot_general %p, %w, batch = [] x [], contract = [1] x [0] : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
  %s = kiln.add %p, %d : tensor<2x2xf32>
  return %s : tensor<2x2xf32>
}

// -----

// The shared add reads another add: copying it would make that add shared
// too, and copies would climb the whole chain (a residual stream copied
// into every layer). It stays, computed once; each consumer still fuses
// what it alone reads.
// CHECK-LABEL: func.func @shared_op_reading_a_cheap_chain_stays(
// CHECK-NEXT: %[[S2:.+]] = kiln.fusion loop
// CHECK: kiln.add
// CHECK-NEXT: kiln.add
// CHECK: %[[E:.+]] = kiln.exp %[[S2]]
// CHECK-NEXT: %[[T:.+]] = kiln.tanh %[[S2]]
// CHECK-NEXT: return %[[E]], %[[T]]
func.func @shared_op_reading_a_cheap_chain_stays(%x: tensor<32x32xf32>, %y: tensor<32x32xf32>, %z: tensor<32x32xf32>) -> (tensor<32x32xf32>, tensor<32x32xf32>) {
  %s1 = kiln.add %x, %y : tensor<32x32xf32>
  // expected-remark @below {{not fused into 'kiln.exp': the producer has other users and duplicating it costs too much}}
  // expected-remark @below {{not fused into 'kiln.tanh': the producer has other users and duplicating it costs too much}}
  %s2 = kiln.add %s1, %z : tensor<32x32xf32>
  %a = kiln.exp %s2 : tensor<32x32xf32>
  %b = kiln.tanh %s2 : tensor<32x32xf32>
  return %a, %b : tensor<32x32xf32>, tensor<32x32xf32>
}

// -----

// A shared select reading a widened 16-bit value and a mask made from an
// iota: copying it makes the convert and the compare shared, but each copy
// reads 2 bytes (the bf16 operand) per element where the stored f32 select
// would be written once and read 4 bytes per element by each consumer. So
// both consumers recompute the whole chain from the bf16 operand (the
// loss's masked logits, read by its max, its exps and its gradient) and no
// f32 value is stored.
// CHECK-LABEL: func.func @widened_masked_value_is_recomputed(
// CHECK-SAME: %[[P:[^:]+]]: tensor<16x16xbf16>
// CHECK-NEXT: %[[F1:.+]] = kiln.fusion loop(%[[P]]) :
// CHECK: kiln.convert
// CHECK: kiln.iota
// CHECK: kiln.select
// CHECK: kiln.exp
// CHECK: %[[F2:.+]] = kiln.fusion loop(%[[P]]) :
// CHECK: kiln.convert
// CHECK: kiln.iota
// CHECK: kiln.select
// CHECK: kiln.tanh
// CHECK: return %[[F1]], %[[F2]]
func.func @widened_masked_value_is_recomputed(%p: tensor<16x16xbf16>) -> (tensor<16x16xf32>, tensor<16x16xf32>) {
  %w = kiln.convert %p : tensor<16x16xbf16> -> tensor<16x16xf32>
  %i = kiln.iota dim = 1 : tensor<16x16xi64>
  %c = kiln.constant dense<5> : tensor<i64>
  %cb = kiln.broadcast_in_dim %c, dims = [] : tensor<i64> -> tensor<16x16xi64>
  %real = kiln.compare LT, %i, %cb : tensor<16x16xi64>
  %inf = kiln.constant dense<0xFF800000> : tensor<f32>
  %infb = kiln.broadcast_in_dim %inf, dims = [] : tensor<f32> -> tensor<16x16xf32>
  %m = kiln.select %real, %w, %infb : tensor<16x16xi1>, tensor<16x16xf32>
  %a = kiln.exp %m : tensor<16x16xf32>
  %b = kiln.tanh %m : tensor<16x16xf32>
  return %a, %b : tensor<16x16xf32>, tensor<16x16xf32>
}

// -----

// Narrowed, the other way: the shared select reads an f32 value rounded to
// bf16, whose copies would read 4 bytes per element to make 2. It stays.
// CHECK-LABEL: func.func @narrowed_value_stays(
// CHECK-NEXT: %[[M:.+]] = kiln.fusion loop
// CHECK: kiln.convert
// CHECK: kiln.select
// CHECK: %[[A:.+]] = kiln.convert %[[M]]
// CHECK: %[[B:.+]] = kiln.fusion loop(%[[M]])
// CHECK: return %[[A]], %[[B]]
func.func @narrowed_value_stays(%x: tensor<16x16xf32>, %y: tensor<16x16xf32>) -> (tensor<16x16xf32>, tensor<16x16xf32>) {
  %s = kiln.add %x, %y : tensor<16x16xf32>
  %n = kiln.convert %s : tensor<16x16xf32> -> tensor<16x16xbf16>
  %i = kiln.iota dim = 1 : tensor<16x16xi64>
  %c = kiln.constant dense<5> : tensor<i64>
  %cb = kiln.broadcast_in_dim %c, dims = [] : tensor<i64> -> tensor<16x16xi64>
  %real = kiln.compare LT, %i, %cb : tensor<16x16xi64>
  %z = kiln.constant dense<0.0> : tensor<bf16>
  %zb = kiln.broadcast_in_dim %z, dims = [] : tensor<bf16> -> tensor<16x16xbf16>
  // expected-remark @+2 {{not fused into 'kiln.convert': the producer has other users and duplicating it costs too much}}
  // expected-remark @+1 {{not fused into 'kiln.fusion': the producer has other users and duplicating it costs too much}}
  %m = kiln.select %real, %n, %zb : tensor<16x16xi1>, tensor<16x16xbf16>
  %a = kiln.convert %m : tensor<16x16xbf16> -> tensor<16x16xf32>
  %b = kiln.convert %m : tensor<16x16xbf16> -> tensor<16x16xf32>
  %t = kiln.tanh %b : tensor<16x16xf32>
  return %a, %t : tensor<16x16xf32>, tensor<16x16xf32>
}

// -----

// Attention's gradients per head, widened and transposed to [B, S, H, D],
// reshaped to rows and padded into the rows of the joint q/k/v projection
// (3x the elements): reshapes and transposes only rename elements, so the
// kernel still reads each point from one of them, and the 16-bit
// gradients fuse in instead of being stored widened.
// CHECK-LABEL: func.func @heads_reshaped_then_padded_fuse(
// CHECK-SAME: %[[Q:[^:]+]]: tensor<2x4x8x16xbf16>, %[[K:[^:]+]]: tensor<2x4x8x16xbf16>
// CHECK-NEXT: %[[F:.+]] = kiln.fusion loop(
// CHECK-SAME: (tensor<2x4x8x16xbf16>, tensor<2x4x8x16xbf16>) -> tensor<16x128xbf16>
// CHECK: kiln.transpose
// CHECK: kiln.pad
// CHECK: return %[[F]]
func.func @heads_reshaped_then_padded_fuse(%q: tensor<2x4x8x16xbf16>, %k: tensor<2x4x8x16xbf16>) -> tensor<16x128xbf16> {
  %qw = kiln.convert %q : tensor<2x4x8x16xbf16> -> tensor<2x4x8x16xf32>
  %qt = kiln.transpose %qw, perm = [0, 2, 1, 3] : tensor<2x4x8x16xf32> -> tensor<2x8x4x16xf32>
  %kw = kiln.convert %k : tensor<2x4x8x16xbf16> -> tensor<2x4x8x16xf32>
  %kt = kiln.transpose %kw, perm = [0, 2, 1, 3] : tensor<2x4x8x16xf32> -> tensor<2x8x4x16xf32>
  %qr = kiln.reshape %qt : tensor<2x8x4x16xf32> -> tensor<16x64xf32>
  %kr = kiln.reshape %kt : tensor<2x8x4x16xf32> -> tensor<16x64xf32>
  %z = kiln.constant dense<0.0> : tensor<f32>
  %qp = kiln.pad %qr, %z, low = [0, 0], high = [0, 64] : tensor<16x64xf32>, tensor<f32> -> tensor<16x128xf32>
  %kp = kiln.pad %kr, %z, low = [0, 64], high = [0, 0] : tensor<16x64xf32>, tensor<f32> -> tensor<16x128xf32>
  %s = kiln.add %qp, %kp : tensor<16x128xf32>
  %n = kiln.convert %s : tensor<16x128xf32> -> tensor<16x128xbf16>
  return %n : tensor<16x128xbf16>
}

// -----

// An optimizer's step: the new moment is returned (written whatever fuses)
// and read by the update, which the function returns too. The moment
// becomes a second result of the update's kernel instead of a kernel of
// its own whose result the update reads back.
// CHECK-LABEL: func.func @returned_producer_is_a_result_of_its_consumer(
// CHECK-NEXT: %[[F:.+]]:2 = kiln.fusion loop
// CHECK: kiln.sqrt
// CHECK: return %[[F]]#{{[01]}}, %[[F]]#{{[01]}}
func.func @returned_producer_is_a_result_of_its_consumer(%p: tensor<64x64xf32>, %g: tensor<64x64xf32>, %v: tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>) {
  %gg = kiln.mul %g, %g : tensor<64x64xf32>
  %v1 = kiln.add %v, %gg : tensor<64x64xf32>
  %r = kiln.sqrt %v1 : tensor<64x64xf32>
  %d = kiln.div %g, %r : tensor<64x64xf32>
  %p1 = kiln.sub %p, %d : tensor<64x64xf32>
  return %p1, %v1 : tensor<64x64xf32>, tensor<64x64xf32>
}

// -----

// The returned product is also summed: the reduction's operand is reshaped
// (kiln-split-reductions' form), a consumer of another shape, which the
// product does not join as a result (the kernel could not join the
// reduction any more); a copy of the cheap product fuses in instead.
// CHECK-LABEL: func.func @returned_producer_is_copied_into_a_reshape(
// CHECK-SAME: %[[X:[^:]+]]: tensor<64x64xf32>, %[[Y:[^:]+]]: tensor<64x64xf32>
// CHECK-NEXT: %[[M:.+]] = kiln.mul %[[X]], %[[Y]]
// CHECK-NEXT: %[[F:.+]] = kiln.fusion loop(%[[X]], %[[Y]]) : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x8x8xf32>
// CHECK: kiln.reduce sum %[[F]]
func.func @returned_producer_is_copied_into_a_reshape(%x: tensor<64x64xf32>, %y: tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<64x8xf32>) {
  %m = kiln.mul %x, %y : tensor<64x64xf32>
  %r = kiln.reshape %m : tensor<64x64xf32> -> tensor<64x8x8xf32>
  %s = kiln.reduce sum %r, dims = [2] : tensor<64x8x8xf32> -> tensor<64x8xf32>
  return %m, %s : tensor<64x64xf32>, tensor<64x8xf32>
}

// -----

// A pad that nothing fuses into further (a chunk's key gradient padded to
// every key, then tied by a barrier) is a root itself: the convert that
// widened its operand fuses in, and the kernel reads the 16-bit product.
// Its twin: a product (not fusible) stays outside, the pad stays alone.
// CHECK-LABEL: func.func @widened_operand_fuses_into_a_lone_pad(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2x8xbf16>
// CHECK-NEXT: %[[F:.+]] = kiln.fusion loop(%[[A]]) : (tensor<2x8xbf16>) -> tensor<4x8xf32>
// CHECK: kiln.convert
// CHECK: kiln.pad
// CHECK: kiln.optimization_barrier %[[F]]
func.func @widened_operand_fuses_into_a_lone_pad(%a: tensor<2x8xbf16>) -> tensor<4x8xf32> {
  %w = kiln.convert %a : tensor<2x8xbf16> -> tensor<2x8xf32>
  %z = kiln.constant dense<0.0> : tensor<f32>
  %p = kiln.pad %w, %z, low = [0, 0], high = [2, 0] : tensor<2x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %t = kiln.optimization_barrier %p : tensor<4x8xf32>
  return %t : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @product_stays_outside_a_lone_pad(
// CHECK: %[[D:.+]] = kiln.dot_general
// CHECK-NOT: kiln.fusion
// CHECK: kiln.pad %[[D]]
func.func @product_stays_outside_a_lone_pad(%a: tensor<2x8xf32>, %b: tensor<8x8xf32>) -> tensor<4x8xf32> {
  // expected-remark @+1 {{not fused into 'kiln.pad': the producer never fuses here}}
  %d = kiln.dot_general %a, %b, batch = [] x [], contract = [1] x [0] : tensor<2x8xf32>, tensor<8x8xf32> -> tensor<2x8xf32>
  %z = kiln.constant dense<0.0> : tensor<f32>
  %p = kiln.pad %d, %z, low = [0, 0], high = [2, 0] : tensor<2x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %t = kiln.optimization_barrier %p : tensor<4x8xf32>
  return %t : tensor<4x8xf32>
}

// -----

// The same for a lone concatenation (attention's query gradients, widened
// chunk by chunk, joined and stored for the q/k/v projection's gradient).
// CHECK-LABEL: func.func @widened_chunks_fuse_into_a_lone_concatenation(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2x8xbf16>, %[[B:[^:]+]]: tensor<2x8xbf16>
// CHECK-NEXT: %[[F:.+]] = kiln.fusion loop(%[[B]], %[[A]]) : (tensor<2x8xbf16>, tensor<2x8xbf16>) -> tensor<4x8xf32>
// CHECK: kiln.convert
// CHECK: kiln.convert
// CHECK: kiln.concatenate
// CHECK: kiln.optimization_barrier %[[F]]
func.func @widened_chunks_fuse_into_a_lone_concatenation(%a: tensor<2x8xbf16>, %b: tensor<2x8xbf16>) -> tensor<4x8xf32> {
  %wa = kiln.convert %a : tensor<2x8xbf16> -> tensor<2x8xf32>
  %wb = kiln.convert %b : tensor<2x8xbf16> -> tensor<2x8xf32>
  %c = kiln.concatenate %wa, %wb, dim = 0 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<4x8xf32>
  %t = kiln.optimization_barrier %c : tensor<4x8xf32>
  return %t : tensor<4x8xf32>
}

// -----

// The last chunk's key gradient (all keys: no pad of its own), widened and
// added to the other chunks' sum before the heads are padded into the
// joint projection's rows: an elementwise op reads each element for one
// point, so the convert fuses in through the add, and the kernel reads
// the 16-bit product instead of a stored f32 copy. Its twin: through a
// broadcast each element would be widened for two points, so the convert
// stays a kernel of its own.
// CHECK-LABEL: func.func @widened_chunk_added_then_padded_fuses(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2x8xbf16>, %[[S:[^:]+]]: tensor<2x8xf32>, %[[O:[^:]+]]: tensor<4x8xf32>
// CHECK-NEXT: %[[F:.+]] = kiln.fusion loop(
// CHECK-SAME: -> tensor<4x8xf32>
// CHECK: kiln.convert
// CHECK: kiln.pad
// CHECK: return %[[F]]
func.func @widened_chunk_added_then_padded_fuses(%a: tensor<2x8xbf16>, %s: tensor<2x8xf32>, %o: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %w = kiln.convert %a : tensor<2x8xbf16> -> tensor<2x8xf32>
  %x = kiln.add %s, %w : tensor<2x8xf32>
  %z = kiln.constant dense<0.0> : tensor<f32>
  %p = kiln.pad %x, %z, low = [0, 0], high = [2, 0] : tensor<2x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %r = kiln.add %p, %o : tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @widened_value_broadcast_then_padded_stays(
// CHECK-SAME: %[[A:[^:]+]]: tensor<8xbf16>
// CHECK-NEXT: %[[W:.+]] = kiln.convert %[[A]]
// CHECK-NEXT: %[[F:.+]] = kiln.fusion loop(%[[W]],
// CHECK-NOT: kiln.convert
// CHECK: return %[[F]]
func.func @widened_value_broadcast_then_padded_stays(%a: tensor<8xbf16>, %o: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-remark @+1 {{not fused into 'kiln.fusion': the producer's element count differs from the consumer's}}
  %w = kiln.convert %a : tensor<8xbf16> -> tensor<8xf32>
  %b = kiln.broadcast_in_dim %w, dims = [1] : tensor<8xf32> -> tensor<2x8xf32>
  %z = kiln.constant dense<0.0> : tensor<f32>
  %p = kiln.pad %b, %z, low = [0, 0], high = [2, 0] : tensor<2x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %r = kiln.add %p, %o : tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// The first chunk's key gradient (keys [0, 2) of 8: padded to every key),
// added last to the other chunks' sum before the heads are padded into the
// joint projection's rows: the pad is an index remapping each of whose
// elements the kernel reads for one point, so it fuses in through the add,
// and the kernel reads the chunk's 2 rows instead of a stored padded copy.
// Its twin: through a broadcast each element would be read for two points,
// so the pad stays a kernel of its own.
// CHECK-LABEL: func.func @padded_chunk_added_then_padded_fuses(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2x8xf32>, %[[S:[^:]+]]: tensor<8x8xf32>, %[[O:[^:]+]]: tensor<8x16xf32>
// CHECK-NEXT: %[[F:.+]] = kiln.fusion loop(
// CHECK-SAME: -> tensor<8x16xf32>
// CHECK-COUNT-2: kiln.pad
// CHECK: return %[[F]]
func.func @padded_chunk_added_then_padded_fuses(%a: tensor<2x8xf32>, %s: tensor<8x8xf32>, %o: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %z = kiln.constant dense<0.0> : tensor<f32>
  %c = kiln.pad %a, %z, low = [0, 0], high = [6, 0] : tensor<2x8xf32>, tensor<f32> -> tensor<8x8xf32>
  %x = kiln.add %s, %c : tensor<8x8xf32>
  %p = kiln.pad %x, %z, low = [0, 0], high = [0, 8] : tensor<8x8xf32>, tensor<f32> -> tensor<8x16xf32>
  %r = kiln.add %p, %o : tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

// CHECK-LABEL: func.func @padded_chunk_broadcast_then_padded_stays(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2x8xf32>
// CHECK-NEXT: %[[Z:.+]] = kiln.constant
// CHECK-NEXT: %[[C:.+]] = kiln.pad %[[A]]
// CHECK-NEXT: %[[F:.+]] = kiln.fusion loop(%[[C]],
// CHECK: return %[[F]]
func.func @padded_chunk_broadcast_then_padded_stays(%a: tensor<2x8xf32>, %o: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %z = kiln.constant dense<0.0> : tensor<f32>
  // expected-remark @+1 {{not fused into 'kiln.fusion': the producer's element count differs from the consumer's}}
  %c = kiln.pad %a, %z, low = [0, 0], high = [2, 0] : tensor<2x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %b = kiln.broadcast_in_dim %c, dims = [0, 2] : tensor<4x8xf32> -> tensor<4x2x8xf32>
  %x = kiln.reshape %b : tensor<4x2x8xf32> -> tensor<8x8xf32>
  %p = kiln.pad %x, %z, low = [0, 0], high = [0, 8] : tensor<8x8xf32>, tensor<f32> -> tensor<8x16xf32>
  %r = kiln.add %p, %o : tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

// -----

// A concatenation read only through a transpose, a reshape and a pad
// (attention's query gradient, chunk by chunk, widened and joined with the
// key and value gradients into the q/k/v projection's rows): each point of
// the join reads at most one element of it, so it fuses in with the
// chunks' widenings, and the kernel reads the 16-bit chunks instead of a
// stored f32 copy (in GPT-2 124M's bf16 step, a kernel and 50 MB of
// traffic a layer). Its twin: read through a broadcast, each element would
// be read for two points, so the concatenation stays a kernel of its own.
// CHECK-LABEL: func.func @concatenated_chunks_transposed_then_padded_fuse(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2x2x4xbf16>, %[[B:[^:]+]]: tensor<2x2x4xbf16>, %[[O:[^:]+]]: tensor<4x24xf32>
// CHECK-NEXT: %[[F:.+]] = kiln.fusion loop(
// CHECK-SAME: -> tensor<4x24xf32>
// CHECK: kiln.concatenate
// CHECK: kiln.pad
// CHECK: return %[[F]]
func.func @concatenated_chunks_transposed_then_padded_fuse(%a: tensor<2x2x4xbf16>, %b: tensor<2x2x4xbf16>, %o: tensor<4x24xf32>) -> tensor<4x24xf32> {
  %z = kiln.constant dense<0.0> : tensor<f32>
  %wa = kiln.convert %a : tensor<2x2x4xbf16> -> tensor<2x2x4xf32>
  %wb = kiln.convert %b : tensor<2x2x4xbf16> -> tensor<2x2x4xf32>
  %c = kiln.concatenate %wa, %wb, dim = 1 : (tensor<2x2x4xf32>, tensor<2x2x4xf32>) -> tensor<2x4x4xf32>
  %t = kiln.transpose %c, perm = [1, 0, 2] : tensor<2x4x4xf32> -> tensor<4x2x4xf32>
  %r = kiln.reshape %t : tensor<4x2x4xf32> -> tensor<4x8xf32>
  %p = kiln.pad %r, %z, low = [0, 0], high = [0, 16] : tensor<4x8xf32>, tensor<f32> -> tensor<4x24xf32>
  %s = kiln.add %p, %o : tensor<4x24xf32>
  return %s : tensor<4x24xf32>
}

// CHECK-LABEL: func.func @concatenated_chunks_broadcast_then_padded_stay(
// CHECK: %[[C:.+]] = kiln.fusion loop(
// CHECK: kiln.concatenate
// CHECK: %[[F:.+]] = kiln.fusion loop(%[[C]],
// CHECK: return %[[F]]
func.func @concatenated_chunks_broadcast_then_padded_stay(%a: tensor<2x4xbf16>, %b: tensor<2x4xbf16>, %o: tensor<8x24xf32>) -> tensor<8x24xf32> {
  %z = kiln.constant dense<0.0> : tensor<f32>
  %wa = kiln.convert %a : tensor<2x4xbf16> -> tensor<2x4xf32>
  %wb = kiln.convert %b : tensor<2x4xbf16> -> tensor<2x4xf32>
  // expected-remark @+1 {{not fused into 'kiln.fusion': the producer's element count differs from the consumer's}}
  %c = kiln.concatenate %wa, %wb, dim = 0 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<4x4xf32>
  %bc = kiln.broadcast_in_dim %c, dims = [0, 2] : tensor<4x4xf32> -> tensor<4x2x4xf32>
  %r = kiln.reshape %bc : tensor<4x2x4xf32> -> tensor<8x4xf32>
  %p = kiln.pad %r, %z, low = [0, 0], high = [0, 20] : tensor<8x4xf32>, tensor<f32> -> tensor<8x24xf32>
  %s = kiln.add %p, %o : tensor<8x24xf32>
  return %s : tensor<8x24xf32>
}

// -----

// Llama's rotary embedding: rotate_half(x) concatenates -x's second half
// and x's first half, both slices of x. A slice read only through
// elementwise ops and a concatenation (or a pad) fuses in as a pad does:
// each point reads one element of it, and the kernel reads x where it is
// instead of a stored copy of each half (in Llama-3-8B's LoRA step, 14
// kernels and 0.46 GB a layer at batch 1 × 1024 tokens, forward and
// backward). Its twin: read through a broadcast, each element would be
// read for two points, so the slice stays a kernel of its own.
// CHECK-LABEL: func.func @rotate_half_slices_fuse(
// CHECK-NEXT: %[[F:.+]] = kiln.fusion loop(
// CHECK-SAME: -> tensor<2x4xf32>
// CHECK-COUNT-2: kiln.slice
// CHECK: kiln.concatenate
// CHECK: return %[[F]]
func.func @rotate_half_slices_fuse(%x: tensor<2x4xf32>, %c: tensor<2x4xf32>, %s: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %x1 = kiln.slice %x, start = [0, 0], limit = [2, 2], strides = [1, 1] : tensor<2x4xf32> -> tensor<2x2xf32>
  %x2 = kiln.slice %x, start = [0, 2], limit = [2, 4], strides = [1, 1] : tensor<2x4xf32> -> tensor<2x2xf32>
  %n = kiln.neg %x2 : tensor<2x2xf32>
  %h = kiln.concatenate %n, %x1, dim = 1 : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x4xf32>
  %xc = kiln.mul %x, %c : tensor<2x4xf32>
  %hs = kiln.mul %h, %s : tensor<2x4xf32>
  %y = kiln.add %xc, %hs : tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// CHECK-LABEL: func.func @slice_broadcast_then_concatenated_stays(
// CHECK: %[[S:.+]] = kiln.slice
// CHECK: kiln.fusion loop(%[[S]]
// CHECK: return
func.func @slice_broadcast_then_concatenated_stays(%x: tensor<2x4xf32>, %o: tensor<2x6xf32>) -> tensor<2x6xf32> {
  // expected-remark @+1 {{not fused into 'kiln.fusion': the producer's element count differs from the consumer's}}
  %x1 = kiln.slice %x, start = [0, 0], limit = [1, 2], strides = [1, 1] : tensor<2x4xf32> -> tensor<1x2xf32>
  %b = kiln.broadcast_in_dim %x1, dims = [0, 1] : tensor<1x2xf32> -> tensor<2x2xf32>
  %h = kiln.concatenate %b, %x, dim = 1 : (tensor<2x2xf32>, tensor<2x4xf32>) -> tensor<2x6xf32>
  %y = kiln.add %h, %o : tensor<2x6xf32>
  return %y : tensor<2x6xf32>
}

// -----

// A slice read through a lone reshape (attention's chunk of grouped queries
// in chunk-major order, read by products) stays a slice: fused, the two would
// be a kernel copying it, which the slice alone is at most; the reshape is no
// kernel, and products read a slice that is one run of its source in place.
// Its twin: the same slice reshaped and read by an elementwise op fuses into
// that op's kernel (the op takes the reshape first, then the slice).
// CHECK-LABEL: func.func @slice_through_lone_reshape_stays(
// CHECK-NEXT: %[[S:.+]] = kiln.slice
// CHECK-NEXT: %[[R:.+]] = kiln.reshape %[[S]]
// CHECK-NEXT: kiln.dot_general %[[R]]
// CHECK-NOT: kiln.fusion
func.func @slice_through_lone_reshape_stays(%x: tensor<4x1x4x2x3xf32>, %k: tensor<1x2x5x3xf32>) -> tensor<1x2x2x2x5xf32> {
  // expected-remark @+1 {{not fused into 'kiln.reshape': a reshape alone is no kernel, and a product may read the slice in place}}
  %c = kiln.slice %x, start = [1, 0, 0, 0, 0], limit = [2, 1, 4, 2, 3], strides = [1, 1, 1, 1, 1] : tensor<4x1x4x2x3xf32> -> tensor<1x1x4x2x3xf32>
  %g = kiln.reshape %c : tensor<1x1x4x2x3xf32> -> tensor<1x2x2x2x3xf32>
  %s = kiln.dot_general %g, %k, batch = [0, 1] x [0, 1], contract = [4] x [3] : tensor<1x2x2x2x3xf32>, tensor<1x2x5x3xf32> -> tensor<1x2x2x2x5xf32>
  return %s : tensor<1x2x2x2x5xf32>
}

// CHECK-LABEL: func.func @slice_reshaped_into_elementwise_fuses(
// CHECK-NEXT: %[[F:.+]] = kiln.fusion loop(
// CHECK: kiln.slice
// CHECK: kiln.reshape
// CHECK: kiln.exp
// CHECK: return %[[F]]
func.func @slice_reshaped_into_elementwise_fuses(%x: tensor<4x1x4x2x3xf32>) -> tensor<1x2x2x2x3xf32> {
  %c = kiln.slice %x, start = [1, 0, 0, 0, 0], limit = [2, 1, 4, 2, 3], strides = [1, 1, 1, 1, 1] : tensor<4x1x4x2x3xf32> -> tensor<1x1x4x2x3xf32>
  %g = kiln.reshape %c : tensor<1x1x4x2x3xf32> -> tensor<1x2x2x2x3xf32>
  %e = kiln.exp %g : tensor<1x2x2x2x3xf32>
  return %e : tensor<1x2x2x2x3xf32>
}

// -----

// A loop fusion made before a lone pad (the hidden states' gradient from
// the loss: chunks widened, joined, scaled and reshaped to [B, T - 1, H],
// then padded to T rows) fuses into the pad whole: each of its elements is
// read once, so nothing is computed twice, and the kernel writes the
// padded value instead of an unpadded copy the pad reads back.
// CHECK-LABEL: func.func @loop_fusion_fuses_into_a_lone_pad(
// CHECK-NEXT: %[[F:.+]] = kiln.fusion loop({{.*}}) : (tensor<f32>, tensor<4x8xbf16>, tensor<2x8xbf16>) -> tensor<2x4x8xf32>
// CHECK: kiln.concatenate
// CHECK: kiln.mul
// CHECK: kiln.reshape
// CHECK: kiln.pad
// CHECK: kiln.optimization_barrier %[[F]]
func.func @loop_fusion_fuses_into_a_lone_pad(%a: tensor<2x8xbf16>, %b: tensor<4x8xbf16>, %s: tensor<f32>) -> tensor<2x4x8xf32> {
  %wa = kiln.convert %a : tensor<2x8xbf16> -> tensor<2x8xf32>
  %wb = kiln.convert %b : tensor<4x8xbf16> -> tensor<4x8xf32>
  %c = kiln.concatenate %wa, %wb, dim = 0 : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<6x8xf32>
  %sb = kiln.broadcast_in_dim %s, dims = [] : tensor<f32> -> tensor<6x8xf32>
  %m = kiln.mul %c, %sb : tensor<6x8xf32>
  %r = kiln.reshape %m : tensor<6x8xf32> -> tensor<2x3x8xf32>
  %z = kiln.constant dense<0.0> : tensor<f32>
  %p = kiln.pad %r, %z, low = [0, 0, 0], high = [0, 1, 0] : tensor<2x3x8xf32>, tensor<f32> -> tensor<2x4x8xf32>
  %t = kiln.optimization_barrier %p : tensor<2x4x8xf32>
  return %t : tensor<2x4x8xf32>
}

// -----

// Its twin: a lone concatenation takes a widening in, not a loop fusion
// made before it (a loss chunk's tail, which its reduction takes later).
// CHECK-LABEL: func.func @loop_fusion_stays_outside_a_lone_concatenation(
// CHECK: %[[M:.+]] = kiln.fusion loop({{.*}}) : (tensor<f32>, tensor<2x8xbf16>) -> tensor<2x8xf32>
// CHECK: %[[C:.+]] = kiln.fusion loop({{.*}}, %[[M]]) : (tensor<2x8xbf16>, tensor<2x8xf32>) -> tensor<4x8xf32>
// CHECK: kiln.optimization_barrier %[[C]]
func.func @loop_fusion_stays_outside_a_lone_concatenation(%a: tensor<2x8xbf16>, %b: tensor<2x8xbf16>, %s: tensor<f32>) -> tensor<4x8xf32> {
  %wa = kiln.convert %a : tensor<2x8xbf16> -> tensor<2x8xf32>
  %sb = kiln.broadcast_in_dim %s, dims = [] : tensor<f32> -> tensor<2x8xf32>
  // expected-remark @+1 {{not fused into 'kiln.fusion': the producer's element count differs from the consumer's}}
  %m = kiln.mul %wa, %sb : tensor<2x8xf32>
  %wb = kiln.convert %b : tensor<2x8xbf16> -> tensor<2x8xf32>
  %c = kiln.concatenate %m, %wb, dim = 0 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<4x8xf32>
  %t = kiln.optimization_barrier %c : tensor<4x8xf32>
  return %t : tensor<4x8xf32>
}
