// Function declarations have no body: every pass of the pipeline leaves
// them alone, and the defined function beside them is still fused.
// RUN: kiln-opt %s --kiln-pipeline | FileCheck %s

// CHECK-LABEL: func.func private @external(tensor<4xf32>) -> tensor<4xf32>
func.func private @external(tensor<4xf32>) -> tensor<4xf32>

// CHECK-LABEL: func.func @defined(
// CHECK-NEXT: kiln.fusion loop
func.func @defined(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = kiln.exp %x : tensor<4xf32>
  %t = kiln.tanh %e : tensor<4xf32>
  return %t : tensor<4xf32>
}
