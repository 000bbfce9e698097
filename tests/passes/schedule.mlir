// kiln-schedule: the list scheduler interleaves independent chains so each
// large temporary dies before the next is allocated; an order that is
// already best stays. The estimated peaks are checked through the remark
// emit-remarks adds (arguments are the caller's and not counted).
// RUN: kiln-opt %s --split-input-file --verify-diagnostics \
// RUN:   --kiln-schedule=emit-remarks | FileCheck %s

// Two exps of 16 KiB each reduced to 256 bytes: in the input order both
// exps are live at once (33024 bytes); interleaved, one at a time (16896).
// CHECK-LABEL: func.func @independent_chains_interleave(
// CHECK-NEXT: %[[E1:.+]] = kiln.exp %arg0
// CHECK-NEXT: %[[R1:.+]] = kiln.reduce sum %[[E1]]
// CHECK-NEXT: %[[E2:.+]] = kiln.exp %arg1
// CHECK-NEXT: %[[R2:.+]] = kiln.reduce sum %[[E2]]
// CHECK-NEXT: return %[[R1]], %[[R2]]
// expected-remark @below {{estimated peak live bytes: 33024 before, 16896 after}}
func.func @independent_chains_interleave(%x: tensor<64x64xf32>, %y: tensor<64x64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  %e1 = kiln.exp %x : tensor<64x64xf32>
  %e2 = kiln.exp %y : tensor<64x64xf32>
  %r1 = kiln.reduce sum %e1, dims = [1] : tensor<64x64xf32> -> tensor<64xf32>
  %r2 = kiln.reduce sum %e2, dims = [1] : tensor<64x64xf32> -> tensor<64xf32>
  return %r1, %r2 : tensor<64xf32>, tensor<64xf32>
}

// -----

// Already interleaved: nothing moves.
// CHECK-LABEL: func.func @interleaved_chains_stay(
// CHECK-NEXT: %[[E1:.+]] = kiln.exp %arg0
// CHECK-NEXT: %[[R1:.+]] = kiln.reduce sum %[[E1]]
// CHECK-NEXT: %[[E2:.+]] = kiln.exp %arg1
// CHECK-NEXT: %[[R2:.+]] = kiln.reduce sum %[[E2]]
// CHECK-NEXT: return %[[R1]], %[[R2]]
// expected-remark @below {{estimated peak live bytes: 16896 before, 16896 after}}
func.func @interleaved_chains_stay(%x: tensor<64x64xf32>, %y: tensor<64x64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  %e1 = kiln.exp %x : tensor<64x64xf32>
  %r1 = kiln.reduce sum %e1, dims = [1] : tensor<64x64xf32> -> tensor<64xf32>
  %e2 = kiln.exp %y : tensor<64x64xf32>
  %r2 = kiln.reduce sum %e2, dims = [1] : tensor<64x64xf32> -> tensor<64xf32>
  return %r1, %r2 : tensor<64xf32>, tensor<64xf32>
}

// -----

// A value returned by the function is never freed: computing the returned
// exp early or late peaks the same, so the input order stays.
// CHECK-LABEL: func.func @returned_values_stay_live(
// CHECK-NEXT: %[[E1:.+]] = kiln.exp %arg0
// CHECK-NEXT: %[[E2:.+]] = kiln.exp %arg1
// CHECK-NEXT: %[[R2:.+]] = kiln.reduce sum %[[E2]]
// CHECK-NEXT: return %[[E1]], %[[R2]]
// expected-remark @below {{estimated peak live bytes: 33024 before, 33024 after}}
func.func @returned_values_stay_live(%x: tensor<64x64xf32>, %y: tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<64xf32>) {
  %e1 = kiln.exp %x : tensor<64x64xf32>
  %e2 = kiln.exp %y : tensor<64x64xf32>
  %r2 = kiln.reduce sum %e2, dims = [1] : tensor<64x64xf32> -> tensor<64xf32>
  return %e1, %r2 : tensor<64x64xf32>, tensor<64xf32>
}

// -----

// Sums over the processes run as soon as their operands exist, each still
// after the one it is tied to: the second gradient's sum moves up past the
// third gradient's exp, so under ZeRO stage 2 a gradient this process does
// not own (its sum read by nothing but the next tie) dies there. The list
// order alone would keep the input order here: the peak is the first exp's,
// whatever comes after it.
// CHECK-LABEL: func.func @sums_run_as_soon_as_their_operands_exist(
// CHECK-NEXT: %[[BIG:.+]] = kiln.exp %arg3
// CHECK-NEXT: %[[R:.+]] = kiln.reduce sum %[[BIG]]
// CHECK-NEXT: %[[G1:.+]] = kiln.exp %arg0
// CHECK-NEXT: %[[S1:.+]] = kiln.all_reduce %[[G1]]
// CHECK-NEXT: %[[G2:.+]] = kiln.exp %arg1
// CHECK-NEXT: %[[T2:.+]]:2 = kiln.optimization_barrier %[[G2]], %[[S1]]
// CHECK-NEXT: %[[S2:.+]] = kiln.all_reduce %[[T2]]#0
// CHECK-NEXT: %[[G3:.+]] = kiln.exp %arg2
// CHECK-NEXT: %[[T3:.+]]:2 = kiln.optimization_barrier %[[G3]], %[[S2]]
// CHECK-NEXT: %[[S3:.+]] = kiln.all_reduce %[[T3]]#0
// CHECK-NEXT: return %[[R]], %[[S3]]
// expected-remark @below {{estimated peak live bytes: 263168 before, 263168 after}}
func.func @sums_run_as_soon_as_their_operands_exist(%x: tensor<64x64xf32>, %y: tensor<64x64xf32>, %z: tensor<64x64xf32>, %w: tensor<256x256xf32>) -> (tensor<256xf32>, tensor<64x64xf32>) {
  %big = kiln.exp %w : tensor<256x256xf32>
  %r = kiln.reduce sum %big, dims = [1] : tensor<256x256xf32> -> tensor<256xf32>
  %g1 = kiln.exp %x : tensor<64x64xf32>
  %s1 = kiln.all_reduce %g1 : tensor<64x64xf32>
  %g2 = kiln.exp %y : tensor<64x64xf32>
  %g3 = kiln.exp %z : tensor<64x64xf32>
  %t2:2 = kiln.optimization_barrier %g2, %s1 : tensor<64x64xf32>, tensor<64x64xf32>
  %s2 = kiln.all_reduce %t2#0 : tensor<64x64xf32>
  %t3:2 = kiln.optimization_barrier %g3, %s2 : tensor<64x64xf32>, tensor<64x64xf32>
  %s3 = kiln.all_reduce %t3#0 : tensor<64x64xf32>
  return %r, %s3 : tensor<256xf32>, tensor<64x64xf32>
}

// -----

// A sum tied to one before it that comes late waits for it: the tie holds
// the order every process makes its exchanges in.
// CHECK-LABEL: func.func @a_sum_waits_for_the_sum_it_is_tied_to(
// CHECK-NEXT: %[[G1:.+]] = kiln.exp %arg0
// CHECK-NEXT: %[[G2:.+]] = kiln.exp %arg1
// CHECK-NEXT: %[[S2:.+]] = kiln.all_reduce %[[G2]]
// CHECK-NEXT: %[[T1:.+]]:2 = kiln.optimization_barrier %[[G1]], %[[S2]]
// CHECK-NEXT: %[[S1:.+]] = kiln.all_reduce %[[T1]]#0
// CHECK-NEXT: return %[[S1]]
// expected-remark @below {{estimated peak live bytes}}
func.func @a_sum_waits_for_the_sum_it_is_tied_to(%x: tensor<64x64xf32>, %y: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %g1 = kiln.exp %x : tensor<64x64xf32>
  %g2 = kiln.exp %y : tensor<64x64xf32>
  %s2 = kiln.all_reduce %g2 : tensor<64x64xf32>
  %t1:2 = kiln.optimization_barrier %g1, %s2 : tensor<64x64xf32>, tensor<64x64xf32>
  %s1 = kiln.all_reduce %t1#0 : tensor<64x64xf32>
  return %s1 : tensor<64x64xf32>
}
