// kiln-fuse-siblings: independent consumers of one large input become one
// multi-output fusion; dependent consumers, consumers over another element
// count or another reduction, and consumers of a small input stay apart. A
// producer whose result is also read elsewhere merges into its consumer as
// an extra result, unless a path through other ops joins them. Sibling
// refusals are checked through the remarks emit-remarks adds.
// RUN: kiln-opt %s --split-input-file --verify-diagnostics \
// RUN:   --kiln-fuse-siblings=emit-remarks | FileCheck %s

// CHECK-LABEL: func.func @independent_readers_merge(
// CHECK-SAME: %[[X:[^:]+]]: tensor<16x16xf32>
// CHECK-NEXT: %[[F:.+]]:2 = kiln.fusion multi_output(%[[X]]) : (tensor<16x16xf32>) -> (tensor<16x16xf32>, tensor<16x16xf32>)
// CHECK: kiln.exp
// CHECK-NEXT: kiln.tanh
// CHECK-NEXT: kiln.yield
// CHECK-NEXT: }
// CHECK-NEXT: return %[[F]]#0, %[[F]]#1
func.func @independent_readers_merge(%x: tensor<16x16xf32>) -> (tensor<16x16xf32>, tensor<16x16xf32>) {
  %a = kiln.exp %x : tensor<16x16xf32>
  %b = kiln.tanh %x : tensor<16x16xf32>
  return %a, %b : tensor<16x16xf32>, tensor<16x16xf32>
}

// -----

// The second reader depends on the first through a dot_general: merging
// them would make a cycle.
// CHECK-LABEL: func.func @dependent_readers_stay_apart(
// CHECK-NEXT: %[[A:.+]] = kiln.exp
// CHECK-NEXT: %[[D:.+]] = kiln.dot_general %[[A]]
// CHECK-NEXT: %[[B:.+]] = kiln.add %[[D]]
// CHECK-NEXT: return %[[B]]
func.func @dependent_readers_stay_apart(%x: tensor<16x16xf32>, %w: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %a = kiln.exp %x : tensor<16x16xf32>
  %d = kiln.dot_general %a, %w, batch = [] x [], contract = [1] x [0] : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  // expected-remark @below {{not merged with the sibling at}}
  %b = kiln.add %d, %x : tensor<16x16xf32>
  return %b : tensor<16x16xf32>
}

// -----

// Producer-consumer multi-output fusion: the exp is returned and read by
// the add; one kernel computes both and writes both.
// CHECK-LABEL: func.func @producer_also_returned_merges_as_a_result(
// CHECK-SAME: %[[X:[^:]+]]: tensor<16x16xf32>, %[[Y:[^:]+]]: tensor<16x16xf32>
// CHECK-NEXT: %[[F:.+]]:2 = kiln.fusion multi_output(%[[X]], %[[Y]])
// CHECK: %[[E:.+]] = kiln.exp
// CHECK-NEXT: %[[S:.+]] = kiln.add %[[E]]
// CHECK-NEXT: kiln.yield %[[E]], %[[S]]
// CHECK-NEXT: }
// CHECK-NEXT: return %[[F]]#0, %[[F]]#1
func.func @producer_also_returned_merges_as_a_result(%x: tensor<16x16xf32>, %y: tensor<16x16xf32>) -> (tensor<16x16xf32>, tensor<16x16xf32>) {
  %a = kiln.exp %x : tensor<16x16xf32>
  %b = kiln.add %a, %y : tensor<16x16xf32>
  return %a, %b : tensor<16x16xf32>, tensor<16x16xf32>
}

// -----

// The same producer also feeds a dot_general the consumer reads.
// CHECK-LABEL: func.func @producer_behind_a_cycle_stays(
// CHECK-NEXT: %[[A:.+]] = kiln.exp
// CHECK-NEXT: %[[D:.+]] = kiln.dot_general %[[A]]
// CHECK-NEXT: %[[B:.+]] = kiln.add %[[A]], %[[D]]
// CHECK-NEXT: return %[[A]], %[[B]]
func.func @producer_behind_a_cycle_stays(%x: tensor<16x16xf32>, %w: tensor<16x16xf32>) -> (tensor<16x16xf32>, tensor<16x16xf32>) {
  %a = kiln.exp %x : tensor<16x16xf32>
  %d = kiln.dot_general %a, %w, batch = [] x [], contract = [1] x [0] : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  %b = kiln.add %a, %d : tensor<16x16xf32>
  return %a, %b : tensor<16x16xf32>, tensor<16x16xf32>
}

// -----

// Row sums and column sums of one input: two reduction structures, two
// kernels.
// CHECK-LABEL: func.func @readers_reducing_differently_stay_apart(
// CHECK-NEXT: %[[R:.+]] = kiln.fusion reduction
// CHECK: dims = [1]
// CHECK: %[[C:.+]] = kiln.fusion reduction
// CHECK: dims = [0]
// CHECK: return %[[R]], %[[C]]
func.func @readers_reducing_differently_stay_apart(%x: tensor<16x16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %r = kiln.fusion reduction(%x) : (tensor<16x16xf32>) -> tensor<16xf32> {
  ^bb0(%a: tensor<16x16xf32>):
    %e = kiln.exp %a : tensor<16x16xf32>
    %s = kiln.reduce sum %e, dims = [1] : tensor<16x16xf32> -> tensor<16xf32>
    kiln.yield %s : tensor<16xf32>
  }
  // expected-remark @below {{the siblings reduce over different shapes}}
  %c = kiln.fusion reduction(%x) : (tensor<16x16xf32>) -> tensor<16xf32> {
  ^bb0(%a: tensor<16x16xf32>):
    %e = kiln.exp %a : tensor<16x16xf32>
    %s = kiln.reduce sum %e, dims = [0] : tensor<16x16xf32> -> tensor<16xf32>
    kiln.yield %s : tensor<16xf32>
  }
  return %r, %c : tensor<16xf32>, tensor<16xf32>
}

// -----

// A loop fusion that broadcasts x walks twice as many elements as the exp.
// CHECK-LABEL: func.func @readers_over_other_sizes_stay_apart(
// CHECK-NEXT: %[[A:.+]] = kiln.exp
// CHECK-NEXT: %[[F:.+]] = kiln.fusion loop
// CHECK: return %[[A]], %[[F]]
func.func @readers_over_other_sizes_stay_apart(%x: tensor<16x16xf32>) -> (tensor<16x16xf32>, tensor<16x16x2xf32>) {
  %a = kiln.exp %x : tensor<16x16xf32>
  // expected-remark @below {{iterate over different element counts}}
  %f = kiln.fusion loop(%x) : (tensor<16x16xf32>) -> tensor<16x16x2xf32> {
  ^bb0(%arg: tensor<16x16xf32>):
    %b = kiln.broadcast_in_dim %arg, dims = [0, 1] : tensor<16x16xf32> -> tensor<16x16x2xf32>
    %t = kiln.tanh %b : tensor<16x16x2xf32>
    kiln.yield %t : tensor<16x16x2xf32>
  }
  return %a, %f : tensor<16x16xf32>, tensor<16x16x2xf32>
}

// -----

// 64 bytes read twice is cheaper than a bigger kernel: below min-bytes.
// CHECK-LABEL: func.func @readers_of_a_small_input_stay_apart(
// CHECK-NEXT: kiln.exp
// CHECK-NEXT: kiln.tanh
// CHECK-NOT: kiln.fusion
func.func @readers_of_a_small_input_stay_apart(%x: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %a = kiln.exp %x : tensor<4x4xf32>
  %b = kiln.tanh %x : tensor<4x4xf32>
  return %a, %b : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// Fusions that read nothing but one constant: each clones the constant it
// reads, so they share nothing worth merging, and the walk skips the
// constant (a merge used to erase it under the walk: a crash, found when
// kiln-partition started cloning constants into the backward pass).
// CHECK-LABEL: func.func @siblings_reading_only_a_constant(
// CHECK: kiln.fusion loop
// CHECK: kiln.exp
// CHECK: kiln.fusion loop
// CHECK: kiln.tanh
func.func @siblings_reading_only_a_constant(%x: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  %c = kiln.constant dense<2.0> : tensor<64xf32>
  %a = kiln.fusion loop(%c) : (tensor<64xf32>) -> tensor<64xf32> {
  ^bb0(%p: tensor<64xf32>):
    %m = kiln.exp %p : tensor<64xf32>
    kiln.yield %m : tensor<64xf32>
  }
  %b = kiln.fusion loop(%c) : (tensor<64xf32>) -> tensor<64xf32> {
  ^bb0(%p: tensor<64xf32>):
    %m = kiln.tanh %p : tensor<64xf32>
    kiln.yield %m : tensor<64xf32>
  }
  return %a, %b : tensor<64xf32>, tensor<64xf32>
}

// -----

// A reduction kernel writes results the size of its walk or of its
// reduces': a slice of its full-sized result (the loss's shifted hidden
// states after GPT-2's last layer norm) stays a kernel of its own, where
// the merged fusion would have had none and run op by op.
// CHECK-LABEL: func.func @slice_of_a_reduction_stays_apart(
// CHECK-NEXT: %[[R:.+]]:2 = kiln.fusion reduction
// CHECK: %[[S:.+]] = kiln.fusion loop(%[[R]]#0)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: kiln.slice
// CHECK: return %[[R]]#1, %[[S]]
func.func @slice_of_a_reduction_stays_apart(%x: tensor<16x16xf32>) -> (tensor<16xf32>, tensor<15x16xf32>) {
  %r:2 = kiln.fusion reduction(%x) : (tensor<16x16xf32>) -> (tensor<16x16xf32>, tensor<16xf32>) {
  ^bb0(%a: tensor<16x16xf32>):
    %e = kiln.exp %a : tensor<16x16xf32>
    %s = kiln.reduce sum %e, dims = [1] : tensor<16x16xf32> -> tensor<16xf32>
    kiln.yield %e, %s : tensor<16x16xf32>, tensor<16xf32>
  }
  %t = kiln.fusion loop(%r#0) : (tensor<16x16xf32>) -> tensor<15x16xf32> {
  ^bb0(%a: tensor<16x16xf32>):
    %l = kiln.slice %a, start = [0, 0], limit = [15, 16], strides = [1, 1] : tensor<16x16xf32> -> tensor<15x16xf32>
    kiln.yield %l : tensor<15x16xf32>
  }
  return %r#1, %t : tensor<16xf32>, tensor<15x16xf32>
}

// -----

// The twin: a reader of the whole result merges.
// CHECK-LABEL: func.func @whole_reader_of_a_reduction_merges(
// CHECK-NEXT: %[[F:.+]]:2 = kiln.fusion multi_output
// CHECK: kiln.reduce sum
// CHECK: kiln.tanh
// CHECK: return %[[F]]#0, %[[F]]#1
func.func @whole_reader_of_a_reduction_merges(%x: tensor<16x16xf32>) -> (tensor<16xf32>, tensor<16x16xf32>) {
  %r:2 = kiln.fusion reduction(%x) : (tensor<16x16xf32>) -> (tensor<16x16xf32>, tensor<16xf32>) {
  ^bb0(%a: tensor<16x16xf32>):
    %e = kiln.exp %a : tensor<16x16xf32>
    %s = kiln.reduce sum %e, dims = [1] : tensor<16x16xf32> -> tensor<16xf32>
    kiln.yield %e, %s : tensor<16x16xf32>, tensor<16xf32>
  }
  %t = kiln.fusion loop(%r#0) : (tensor<16x16xf32>) -> tensor<16x16xf32> {
  ^bb0(%a: tensor<16x16xf32>):
    %h = kiln.tanh %a : tensor<16x16xf32>
    kiln.yield %h : tensor<16x16xf32>
  }
  return %r#1, %t : tensor<16xf32>, tensor<16x16xf32>
}

// -----

// A layer norm's statistics reach the normalization through a reshape
// ([B, T, 1] -> [B, T]): the reshape is a renaming, copied into the merge
// (and kept for its other reader), so it no longer keeps the two kernels
// apart as a path between them.
// CHECK-LABEL: func.func @producer_behind_a_reshape_merges(
// CHECK-NEXT: %[[F:.+]]:2 = kiln.fusion multi_output
// CHECK: kiln.reduce sum
// CHECK: kiln.reshape
// CHECK: kiln.mul
// CHECK: kiln.yield
// CHECK: %[[S:.+]] = kiln.reshape %[[F]]#0
// CHECK: return %[[S]], %[[F]]#1
func.func @producer_behind_a_reshape_merges(%x: tensor<16x16xf32>) -> (tensor<16xf32>, tensor<16x16xf32>) {
  %r:2 = kiln.fusion reduction(%x) : (tensor<16x16xf32>) -> (tensor<16x16xf32>, tensor<16x1xf32>) {
  ^bb0(%a: tensor<16x16xf32>):
    %e = kiln.exp %a : tensor<16x16xf32>
    %s = kiln.reduce sum %e, dims = [1] : tensor<16x16xf32> -> tensor<16xf32>
    %t = kiln.reshape %s : tensor<16xf32> -> tensor<16x1xf32>
    kiln.yield %e, %t : tensor<16x16xf32>, tensor<16x1xf32>
  }
  %s = kiln.reshape %r#1 : tensor<16x1xf32> -> tensor<16xf32>
  %n = kiln.fusion loop(%s, %r#0) : (tensor<16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32> {
  ^bb0(%a: tensor<16xf32>, %b: tensor<16x16xf32>):
    %c = kiln.broadcast_in_dim %a, dims = [0] : tensor<16xf32> -> tensor<16x16xf32>
    %d = kiln.mul %b, %c : tensor<16x16xf32>
    kiln.yield %d : tensor<16x16xf32>
  }
  return %s, %n : tensor<16xf32>, tensor<16x16xf32>
}

// -----

// The twin: a computation between them (not a renaming) keeps them apart.
// CHECK-LABEL: func.func @producer_behind_a_computation_stays(
// CHECK-NEXT: %[[R:.+]]:2 = kiln.fusion reduction
// CHECK: kiln.exp %[[R]]#1
// CHECK: kiln.fusion loop
func.func @producer_behind_a_computation_stays(%x: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %r:2 = kiln.fusion reduction(%x) : (tensor<16x16xf32>) -> (tensor<16x16xf32>, tensor<16xf32>) {
  ^bb0(%a: tensor<16x16xf32>):
    %e = kiln.exp %a : tensor<16x16xf32>
    %s = kiln.reduce sum %e, dims = [1] : tensor<16x16xf32> -> tensor<16xf32>
    kiln.yield %e, %s : tensor<16x16xf32>, tensor<16xf32>
  }
  %s = kiln.exp %r#1 : tensor<16xf32>
  %n = kiln.fusion loop(%s, %r#0) : (tensor<16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32> {
  ^bb0(%a: tensor<16xf32>, %b: tensor<16x16xf32>):
    %c = kiln.broadcast_in_dim %a, dims = [0] : tensor<16xf32> -> tensor<16x16xf32>
    %d = kiln.mul %b, %c : tensor<16x16xf32>
    kiln.yield %d : tensor<16x16xf32>
  }
  return %n : tensor<16x16xf32>
}
