// kiln-fuse-elementwise's max-operands option: with a limit of 3 the
// four-input chain stops growing (the mul stays out), with the default it
// is one fusion of four inputs.
// RUN: kiln-opt %s --split-input-file --verify-diagnostics \
// RUN:   --kiln-fuse-elementwise="max-operands=3 emit-remarks" | FileCheck %s --check-prefix=LIMIT
// RUN: kiln-opt %s --split-input-file --kiln-fuse-elementwise | FileCheck %s --check-prefix=DEFAULT

// LIMIT-LABEL: func.func @four_inputs(
// LIMIT-NEXT: %[[M:.+]] = kiln.mul
// LIMIT-NEXT: %[[F:.+]] = kiln.fusion loop({{.*}}%[[M]]{{.*}}) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
// LIMIT: return %[[F]]
// DEFAULT-LABEL: func.func @four_inputs(
// DEFAULT-NEXT: %[[F:.+]] = kiln.fusion loop(%{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}})
// DEFAULT: return %[[F]]
func.func @four_inputs(%a: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<4xf32>, %d: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.add %a, %b : tensor<4xf32>
  // expected-remark @below {{not fused into 'kiln.fusion': the fusion would exceed max-operands}}
  %1 = kiln.mul %c, %d : tensor<4xf32>
  %2 = kiln.sub %0, %1 : tensor<4xf32>
  %3 = kiln.exp %2 : tensor<4xf32>
  return %3 : tensor<4xf32>
}
