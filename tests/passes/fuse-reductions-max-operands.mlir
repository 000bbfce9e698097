// kiln-fuse-reductions' max-operands option: with a limit of 2 the epilogue
// that brings a third input stays out; with the default it joins.
// RUN: kiln-opt %s --verify-diagnostics \
// RUN:   --kiln-fuse-reductions="max-operands=2 emit-remarks" | FileCheck %s --check-prefix=LIMIT
// RUN: kiln-opt %s --kiln-fuse-reductions | FileCheck %s --check-prefix=DEFAULT

// LIMIT-LABEL: func.func @epilogue_with_a_third_input(
// LIMIT-NEXT: %[[F:.+]] = kiln.fusion reduction(%{{[^,]+}}, %{{[^,]+}}) : (tensor<4x8xf32>, tensor<4xf32>) -> tensor<4xf32>
// LIMIT: %[[M:.+]] = kiln.mul %[[F]]
// LIMIT-NEXT: return %[[M]]
// DEFAULT-LABEL: func.func @epilogue_with_a_third_input(
// DEFAULT-NEXT: %[[F:.+]] = kiln.fusion reduction(%{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}})
// DEFAULT: kiln.mul
// DEFAULT: return %[[F]]
func.func @epilogue_with_a_third_input(%x: tensor<4x8xf32>, %b: tensor<4xf32>, %c: tensor<4xf32>) -> tensor<4xf32> {
  %s = kiln.reduce sum %x, dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
  %a = kiln.add %s, %b : tensor<4xf32>
  // expected-remark @below {{not fused into a reduction: the fusion would exceed max-operands}}
  %m = kiln.mul %a, %c : tensor<4xf32>
  return %m : tensor<4xf32>
}
