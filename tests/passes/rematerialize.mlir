// kiln-rematerialize's cheap tier (recompute-costly=false here; the costly
// tier, GEMMs and reductions, is rematerialize-costly.mlir's): under a
// memory budget, a cheap value live across the peak is computed again after
// it; GEMMs never are; a recomputation that
// would keep an equally large operand alive instead is refused, unless that
// operand's producer is cheap too and is recomputed with it; a small
// operand kept alive is counted and accepted; budget 0 and a budget already
// met change nothing. Peaks count the function's arguments (the caller's
// resident inputs) on top of kiln-schedule's liveness model; they are
// checked through the remarks emit-remarks adds.
// RUN: kiln-opt %s --split-input-file --verify-diagnostics \
// RUN:   --kiln-rematerialize="memory-budget=150000 recompute-costly=false emit-remarks" \
// RUN:   | FileCheck %s
// Budget 0 (the default): nothing changes and nothing is reported.
// RUN: kiln-opt %s --split-input-file \
// RUN:   --kiln-rematerialize="memory-budget=0 emit-remarks" 2>%t.zero \
// RUN:   | FileCheck %s --check-prefix=ZERO
// RUN: FileCheck %s --check-prefix=ZERO-REMARKS --allow-empty \
// RUN:   --implicit-check-not="remark:" < %t.zero
// A budget every function already meets: nothing changes.
// RUN: kiln-opt %s --split-input-file \
// RUN:   --kiln-rematerialize="memory-budget=1000000 emit-remarks" 2>%t.met \
// RUN:   | FileCheck %s --check-prefix=MET
// RUN: FileCheck %s --check-prefix=MET-REMARKS \
// RUN:   --implicit-check-not="remark: rematerialized" \
// RUN:   --implicit-check-not="remark: memory budget" \
// RUN:   < %t.met
// The tiny GPT-2 training step after the pipeline: its estimated peak is
// 4645184 bytes (1.4 MB of them arguments); under a 4 MB budget the pass
// recomputes two 640 KiB loop fusions after the peak (and, in the costly
// tier, two 32 KiB values with the GEMMs they come from) and meets it.
// RUN: kiln-opt %S/Inputs/gpt2_train_step.mlir --kiln-pipeline \
// RUN:   --kiln-rematerialize="memory-budget=4000000 emit-remarks" \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --check-prefix=GPT2
// The pipeline runs the pass after kiln-schedule when given a budget.
// RUN: rm -rf %t.dump && kiln-opt %S/Inputs/gpt2_train_step.mlir \
// RUN:   --kiln-pipeline="memory-budget=4000000 dump-dir=%t.dump" -o /dev/null
// RUN: ls %t.dump | FileCheck %s --check-prefix=DUMP
// RUN: FileCheck %s --check-prefix=DUMPED < %t.dump/14-kiln-rematerialize.mlir

// GPT2: remark: rematerialized {{[0-9]+}} bytes of 'kiln.fusion'
// GPT2: remark: estimated peak bytes (arguments included): 4645184 before, {{[0-9]+}} after, budget 4000000; {{[1-9][0-9]*}} values rematerialized
// GPT2-NOT: not met
// DUMP: 13-kiln-schedule.mlir
// DUMP-NEXT: 14-kiln-rematerialize.mlir
// DUMPED: func.func @main(

// ZERO-REMARKS-NOT: remark:
// MET-REMARKS: remark: estimated peak bytes (arguments included): 164352 before, 164352 after, budget 1000000; 0 values rematerialized, 0 bytes saved

// Arguments: 16 KiB + 64 KiB = 81920 bytes. %a = tanh(%x) (16 KiB) is read
// by a reduce before the dot_general and by the mul after it, so it is live
// across the dot's 64 KiB result: the peak, at the second reduce, is
// 81920 + 16384 + 256 + 65536 + 256 = 164352 bytes. Recomputing the tanh
// right before the mul frees it across the dot: 147968 bytes.
// CHECK-LABEL: func.func @activation_recomputed_after_the_peak(
// CHECK-SAME: %[[X:[^:]+]]: tensor<64x64xf32>, %[[W:[^:]+]]: tensor<64x256xf32>
// CHECK-NEXT: %[[A:.+]] = kiln.tanh %[[X]]
// CHECK-NEXT: %[[S:.+]] = kiln.reduce sum %[[A]]
// CHECK-NEXT: %[[D:.+]] = kiln.dot_general %[[X]], %[[W]]
// CHECK-NEXT: %[[R:.+]] = kiln.reduce sum %[[D]]
// CHECK-NEXT: %[[RB:.+]] = kiln.broadcast_in_dim %[[R]]
// CHECK-NEXT: %[[A2:.+]] = kiln.tanh %[[X]]
// CHECK-NEXT: %[[Y:.+]] = kiln.mul %[[A2]], %[[RB]]
// CHECK-NEXT: return %[[Y]], %[[S]]
// ZERO-LABEL: func.func @activation_recomputed_after_the_peak(
// ZERO-COUNT-1: kiln.tanh
// ZERO-NOT: kiln.tanh
// ZERO: return
// MET-LABEL: func.func @activation_recomputed_after_the_peak(
// MET-COUNT-1: kiln.tanh
// MET-NOT: kiln.tanh
// MET: return
// expected-remark @below {{estimated peak bytes (arguments included): 164352 before, 147968 after, budget 150000; 1 values rematerialized, 16384 bytes saved}}
func.func @activation_recomputed_after_the_peak(%x: tensor<64x64xf32>, %w: tensor<64x256xf32>) -> (tensor<64x64xf32>, tensor<64xf32>) {
  // expected-remark @below {{rematerialized 16384 bytes of 'kiln.tanh' before 'kiln.mul'}}
  %a = kiln.tanh %x : tensor<64x64xf32>
  %s = kiln.reduce sum %a, dims = [1] : tensor<64x64xf32> -> tensor<64xf32>
  %big = kiln.dot_general %x, %w, batch = [] x [], contract = [1] x [0] : tensor<64x64xf32>, tensor<64x256xf32> -> tensor<64x256xf32>
  %r = kiln.reduce sum %big, dims = [1] : tensor<64x256xf32> -> tensor<64xf32>
  %rb = kiln.broadcast_in_dim %r, dims = [0] : tensor<64xf32> -> tensor<64x64xf32>
  %y = kiln.mul %a, %rb : tensor<64x64xf32>
  return %y, %s : tensor<64x64xf32>, tensor<64xf32>
}

// -----

// The negative twin: the value live across the peak is a dot_general's.
// It is never recomputed, and the budget is reported as out of reach.
// CHECK-LABEL: func.func @gemm_result_never_recomputed(
// CHECK-COUNT-2: kiln.dot_general
// CHECK-NOT: kiln.dot_general
// CHECK: return
// expected-remark @below {{164352 before, 164352 after, budget 150000; 0 values rematerialized, 0 bytes saved}}
// expected-remark @below {{memory budget of 150000 bytes not met: nothing cheap left to recompute lowers the peak of 164352 bytes}}
func.func @gemm_result_never_recomputed(%x: tensor<64x64xf32>, %w: tensor<64x256xf32>) -> (tensor<64x64xf32>, tensor<64xf32>) {
  %a = kiln.dot_general %x, %x, batch = [] x [], contract = [1] x [0] : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %s = kiln.reduce sum %a, dims = [1] : tensor<64x64xf32> -> tensor<64xf32>
  %big = kiln.dot_general %x, %w, batch = [] x [], contract = [1] x [0] : tensor<64x64xf32>, tensor<64x256xf32> -> tensor<64x256xf32>
  %r = kiln.reduce sum %big, dims = [1] : tensor<64x256xf32> -> tensor<64xf32>
  %rb = kiln.broadcast_in_dim %r, dims = [0] : tensor<64xf32> -> tensor<64x64xf32>
  %y = kiln.mul %a, %rb : tensor<64x64xf32>
  return %y, %s : tensor<64x64xf32>, tensor<64xf32>
}

// -----

// The tanh's operand %e (a dot_general's 16 KiB) dies at the tanh. Recomputing the tanh
// after the peak would keep %e alive across it instead: the same peak, so
// the pass leaves it (extensions of operand lifetimes are counted, not
// forbidden: see the next case).
// CHECK-LABEL: func.func @operand_would_outlive_its_last_use(
// CHECK-COUNT-1: kiln.tanh
// CHECK-NOT: kiln.tanh
// CHECK: return
// expected-remark @below {{164352 before, 164352 after, budget 150000; 0 values rematerialized, 0 bytes saved}}
// expected-remark @below {{memory budget of 150000 bytes not met}}
func.func @operand_would_outlive_its_last_use(%x: tensor<64x64xf32>, %w: tensor<64x256xf32>) -> (tensor<64x64xf32>, tensor<64xf32>) {
  %e = kiln.dot_general %x, %x, batch = [] x [], contract = [1] x [0] : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %a = kiln.tanh %e : tensor<64x64xf32>
  %s = kiln.reduce sum %a, dims = [1] : tensor<64x64xf32> -> tensor<64xf32>
  %big = kiln.dot_general %x, %w, batch = [] x [], contract = [1] x [0] : tensor<64x64xf32>, tensor<64x256xf32> -> tensor<64x256xf32>
  %r = kiln.reduce sum %big, dims = [1] : tensor<64x256xf32> -> tensor<64xf32>
  %rb = kiln.broadcast_in_dim %r, dims = [0] : tensor<64xf32> -> tensor<64x64xf32>
  %y = kiln.mul %a, %rb : tensor<64x64xf32>
  return %y, %s : tensor<64x64xf32>, tensor<64xf32>
}

// -----

// The positive twin: the broadcast's operand %v is 256 bytes. Recomputing
// the broadcast after the peak keeps %v alive across it (counted) and frees
// 16 KiB: 164352 → 148224 bytes (16384 - 256 saved).
// CHECK-LABEL: func.func @small_operand_kept_alive_is_counted(
// CHECK: %[[V:.+]] = kiln.reduce sum %{{.+}}, dims = [0]
// CHECK: kiln.dot_general
// CHECK: %[[B2:.+]] = kiln.broadcast_in_dim %[[V]]
// CHECK-NEXT: kiln.mul %[[B2]]
// expected-remark @below {{164352 before, 148224 after, budget 150000; 1 values rematerialized, 16128 bytes saved}}
func.func @small_operand_kept_alive_is_counted(%x: tensor<64x64xf32>, %w: tensor<64x256xf32>) -> (tensor<64x64xf32>, tensor<64xf32>) {
  %v = kiln.reduce sum %x, dims = [0] : tensor<64x64xf32> -> tensor<64xf32>
  // expected-remark @below {{rematerialized 16384 bytes of 'kiln.broadcast_in_dim' before 'kiln.mul'}}
  %b = kiln.broadcast_in_dim %v, dims = [1] : tensor<64xf32> -> tensor<64x64xf32>
  %s = kiln.reduce sum %b, dims = [1] : tensor<64x64xf32> -> tensor<64xf32>
  %big = kiln.dot_general %x, %w, batch = [] x [], contract = [1] x [0] : tensor<64x64xf32>, tensor<64x256xf32> -> tensor<64x256xf32>
  %r = kiln.reduce sum %big, dims = [1] : tensor<64x256xf32> -> tensor<64xf32>
  %rb = kiln.broadcast_in_dim %r, dims = [0] : tensor<64xf32> -> tensor<64x64xf32>
  %y = kiln.mul %b, %rb : tensor<64x64xf32>
  return %y, %s : tensor<64x64xf32>, tensor<64xf32>
}

// -----

// A dropout-style mask: rng_uniform is Pure (docs/IR.md §2.8, the same state
// gives the same bits), so it is recomputed from the state argument. Both
// of its results live across the peak move to the clone: the 16 KiB mask
// and the 16-byte new state the function returns.
// CHECK-LABEL: func.func @rng_mask_recomputed_from_its_state(
// CHECK-SAME: %[[ST:[^:]+]]: tensor<2xi64>
// CHECK: kiln.rng_uniform %[[ST]]
// CHECK: kiln.dot_general
// CHECK: %[[U2:[^,]+]], %[[S2:[^ ]+]] = kiln.rng_uniform %[[ST]]
// CHECK-NEXT: %[[Y:.+]] = kiln.mul %[[U2]], 
// CHECK-NEXT: return %[[Y]], %{{.+}}, %[[S2]] :
// expected-remark @below {{164384 before, 147984 after, budget 150000; 1 values rematerialized, 16400 bytes saved}}
func.func @rng_mask_recomputed_from_its_state(%st: tensor<2xi64>, %x: tensor<64x64xf32>, %w: tensor<64x256xf32>) -> (tensor<64x64xf32>, tensor<64xf32>, tensor<2xi64>) {
  // expected-remark @below {{rematerialized 16400 bytes of 'kiln.rng_uniform' before 'kiln.mul'}}
  %u, %st2 = kiln.rng_uniform %st : tensor<2xi64> -> tensor<64x64xf32>
  %s = kiln.reduce sum %u, dims = [1] : tensor<64x64xf32> -> tensor<64xf32>
  %big = kiln.dot_general %x, %w, batch = [] x [], contract = [1] x [0] : tensor<64x64xf32>, tensor<64x256xf32> -> tensor<64x256xf32>
  %r = kiln.reduce sum %big, dims = [1] : tensor<64x256xf32> -> tensor<64xf32>
  %rb = kiln.broadcast_in_dim %r, dims = [0] : tensor<64xf32> -> tensor<64x64xf32>
  %y = kiln.mul %u, %rb : tensor<64x64xf32>
  return %y, %s, %st2 : tensor<64x64xf32>, tensor<64xf32>, tensor<2xi64>
}

// -----

// A chain: %e = exp(%x) is read only by the tanh, before the peak. The
// tanh alone would keep %e alive across the peak instead; with its
// producer it frees 16 KiB: 164352 -> 147968 bytes, one value recomputed.
// CHECK-LABEL: func.func @cheap_chain_recomputed_together(
// CHECK-SAME: %[[X:[^:]+]]: tensor<64x64xf32>
// CHECK: kiln.broadcast_in_dim
// CHECK-NEXT: %[[E2:.+]] = kiln.exp %[[X]]
// CHECK-NEXT: %[[A2:.+]] = kiln.tanh %[[E2]]
// CHECK-NEXT: kiln.mul %[[A2]],
// expected-remark @below {{164352 before, 147968 after, budget 150000; 1 values rematerialized, 16384 bytes saved}}
func.func @cheap_chain_recomputed_together(%x: tensor<64x64xf32>, %w: tensor<64x256xf32>) -> (tensor<64x64xf32>, tensor<64xf32>) {
  %e = kiln.exp %x : tensor<64x64xf32>
  // expected-remark @below {{rematerialized 16384 bytes of 'kiln.tanh' before 'kiln.mul' with its operands' producers 'kiln.exp'}}
  %a = kiln.tanh %e : tensor<64x64xf32>
  %s = kiln.reduce sum %a, dims = [1] : tensor<64x64xf32> -> tensor<64xf32>
  %big = kiln.dot_general %x, %w, batch = [] x [], contract = [1] x [0] : tensor<64x64xf32>, tensor<64x256xf32> -> tensor<64x256xf32>
  %r = kiln.reduce sum %big, dims = [1] : tensor<64x256xf32> -> tensor<64xf32>
  %rb = kiln.broadcast_in_dim %r, dims = [0] : tensor<64xf32> -> tensor<64x64xf32>
  %y = kiln.mul %a, %rb : tensor<64x64xf32>
  return %y, %s : tensor<64x64xf32>, tensor<64xf32>
}
