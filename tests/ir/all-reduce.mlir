// kiln.all_reduce (docs/IR.md §2.13): it parses and prints back; it sums
// f32, f64, i32 and i64 only; a process that runs alone gets its operand on
// the reference evaluator and the cpu backend alike, where it is an
// allReduce thunk (not a kernel). tests/tools/kiln-train-data-parallel.test
// runs it across processes.
// RUN: kiln-opt %s | FileCheck %s --check-prefix=PRINT
// PRINT: kiln.all_reduce %{{.*}} : tensor<2x3xf32>
// RUN: echo 'dense<[[1.0, 2.0, 3.0], [4.0, 5.0, -6.5]]> : tensor<2x3xf32>' > %t.inputs
// RUN: kiln-run %s --inputs %t.inputs --backend reference | FileCheck %s --check-prefix=ALONE
// RUN: kiln-run %s --inputs %t.inputs --backend cpu | FileCheck %s --check-prefix=ALONE
// ALONE: %result0 = dense<{{\[\[}}2.000000e+00, 4.000000e+00, 6.000000e+00], [8.000000e+00, 1.000000e+01, -1.300000e+01]]> : tensor<2x3xf32>
// RUN: kilnc compile %s -o %t.kx --print-plan | FileCheck %s --check-prefix=PLAN
// PLAN: thunks: {{[0-9]+}} ({{[0-9]+}} kernels, 0 gemms, 0 copies, 0 attention, 1 all_reduce)
// RUN: kilnc compile %s -o %t.kx --print-thunks | FileCheck %s --check-prefix=THUNK
// THUNK: all_reduce 6 f32

func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %sum = kiln.all_reduce %x : tensor<2x3xf32>
  %twice = kiln.add %sum, %x : tensor<2x3xf32>
  return %twice : tensor<2x3xf32>
}
