// kiln-fuse-elementwise's max-ops option: a fusion's body holds at most
// that many ops (each step clones the grown body, so an unbounded chain of
// 20,000 adds took minutes, and the kernel emitter's walk of the chain then
// overflowed its stack). With max-ops=3 the five-op chain becomes fusions
// of 3 ops (yield included) and 3; with the default (512) it is one.
// RUN: kiln-opt %s --verify-diagnostics \
// RUN:   --kiln-fuse-elementwise="max-ops=3 emit-remarks" | FileCheck %s --check-prefix=LIMIT
// RUN: kiln-opt %s --kiln-fuse-elementwise 2>/dev/null | FileCheck %s --check-prefix=DEFAULT
// A chain far beyond the default compiles, in pieces, in seconds.
// RUN: python3 -c "p = chr(37); n = 3000; print('func.func @main(' + p + 'a: tensor<4xf32>) -> tensor<4xf32> {'); print('  ' + p + 'v0 = kiln.neg ' + p + 'a : tensor<4xf32>'); [print('  {0}v{1} = kiln.add {0}v{2}, {0}a : tensor<4xf32>'.format(p, i, i - 1)) for i in range(1, n)]; print('  return {0}v{1} : tensor<4xf32>'.format(p, n - 1)); print('}')" > %t.chain.mlir
// RUN: kiln-opt %t.chain.mlir --kiln-fuse-elementwise | grep -c 'kiln.fusion loop' | FileCheck %s --check-prefix=CHAIN
// CHAIN: 6

// LIMIT-LABEL: func.func @chain(
// LIMIT-NEXT: %[[F1:.+]] = kiln.fusion loop(%{{[^)]+}}) : (tensor<4xf32>) -> tensor<4xf32> {
// LIMIT: kiln.neg
// LIMIT-NEXT: kiln.exp
// LIMIT-NEXT: kiln.yield
// LIMIT: %[[F2:.+]] = kiln.fusion loop(%[[F1]]) : (tensor<4xf32>) -> tensor<4xf32> {
// LIMIT: kiln.tanh
// LIMIT-NEXT: kiln.abs
// LIMIT-NEXT: kiln.yield
// LIMIT: return %{{.+}}
// DEFAULT-LABEL: func.func @chain(
// DEFAULT-NEXT: kiln.fusion loop
// DEFAULT-NOT: kiln.fusion loop
// DEFAULT: return
func.func @chain(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.neg %a : tensor<4xf32>
  // expected-remark @below {{not fused into 'kiln.fusion': the fusion would exceed max-ops}}
  %1 = kiln.exp %0 : tensor<4xf32>
  %2 = kiln.tanh %1 : tensor<4xf32>
  %3 = kiln.abs %2 : tensor<4xf32>
  return %3 : tensor<4xf32>
}
