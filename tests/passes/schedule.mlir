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
