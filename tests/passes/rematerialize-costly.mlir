// kiln-rematerialize's costly tier: when nothing cheap lowers the peak, a
// GEMM live across it is computed again after it; a cheap value that meets
// the budget alone leaves every GEMM as it was; of two GEMMs the one with
// less work per byte freed (the shallower contraction) goes first; with
// recompute-costly=false no GEMM is recomputed; a GEMM whose result only a
// recomputed add reads is recomputed with it. Each function is read
// under the budget written beside it; remarks go to a file of their own.
// RUN: kiln-opt %s --split-input-file \
// RUN:   --kiln-rematerialize="memory-budget=150000 emit-remarks" \
// RUN:   -o %t.150k 2>%t.150k.remarks
// RUN: FileCheck %s --check-prefix=B150 < %t.150k
// RUN: FileCheck %s --check-prefix=B150-REMARKS < %t.150k.remarks
// RUN: kiln-opt %s --split-input-file \
// RUN:   --kiln-rematerialize="memory-budget=170000 emit-remarks" \
// RUN:   -o %t.170k 2>%t.170k.remarks
// RUN: FileCheck %s --check-prefix=B170 < %t.170k
// RUN: FileCheck %s --check-prefix=B170-REMARKS < %t.170k.remarks
// RUN: kiln-opt %s --split-input-file \
// RUN:   --kiln-rematerialize="memory-budget=300000 emit-remarks" \
// RUN:   -o %t.300k 2>%t.300k.remarks
// RUN: FileCheck %s --check-prefix=B300 < %t.300k
// RUN: FileCheck %s --check-prefix=B300-REMARKS < %t.300k.remarks
// RUN: kiln-opt %s --split-input-file \
// RUN:   --kiln-rematerialize="memory-budget=150000 recompute-costly=false emit-remarks" \
// RUN:   -o %t.cheap 2>%t.cheap.remarks
// RUN: FileCheck %s --check-prefix=CHEAP < %t.cheap
// RUN: FileCheck %s --check-prefix=CHEAP-REMARKS < %t.cheap.remarks

// Budget 150000. Arguments 81920 bytes; %a = x·x (16 KiB) is read by a
// reduce before the peak and by the mul after it: the peak, at the second
// reduce, is 164352 bytes. Nothing cheap is live across it, so the GEMM is
// computed again right before the mul: 147968 bytes, within the budget.
// With recompute-costly=false it stays, and the budget is missed.
// B150-LABEL: func.func @gemm_recomputed_when_nothing_cheap_is_left(
// B150-SAME: %[[X:[^:]+]]: tensor<64x64xf32>, %[[W:[^:]+]]: tensor<64x256xf32>
// B150-NEXT: %[[A:.+]] = kiln.dot_general %[[X]], %[[X]]
// B150-NEXT: %[[S:.+]] = kiln.reduce sum %[[A]]
// B150-NEXT: %[[D:.+]] = kiln.dot_general %[[X]], %[[W]]
// B150-NEXT: %[[R:.+]] = kiln.reduce sum %[[D]]
// B150-NEXT: %[[RB:.+]] = kiln.broadcast_in_dim %[[R]]
// B150-NEXT: %[[A2:.+]] = kiln.dot_general %[[X]], %[[X]]
// B150-NEXT: %[[Y:.+]] = kiln.mul %[[A2]], %[[RB]]
// B150-NEXT: return %[[Y]], %[[S]]
// B150-REMARKS: remark: rematerialized 16384 bytes of 'kiln.dot_general' before 'kiln.mul' (costly tier)
// B150-REMARKS: remark: estimated peak bytes (arguments included): 164352 before, 147968 after, budget 150000; 1 values rematerialized, 16384 bytes saved; 1 of them reductions or GEMMs
// B150-REMARKS-NOT: not met
// CHEAP-LABEL: func.func @gemm_recomputed_when_nothing_cheap_is_left(
// CHEAP-COUNT-2: kiln.dot_general
// CHEAP-NOT: kiln.dot_general
// CHEAP: return
// CHEAP-REMARKS: 164352 before, 164352 after, budget 150000; 0 values rematerialized, 0 bytes saved; 0 of them reductions or GEMMs
// CHEAP-REMARKS: memory budget of 150000 bytes not met: nothing cheap left to recompute lowers the peak of 164352 bytes
func.func @gemm_recomputed_when_nothing_cheap_is_left(%x: tensor<64x64xf32>, %w: tensor<64x256xf32>) -> (tensor<64x64xf32>, tensor<64xf32>) {
  %a = kiln.dot_general %x, %x, batch = [] x [], contract = [1] x [0] : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %s = kiln.reduce sum %a, dims = [1] : tensor<64x64xf32> -> tensor<64xf32>
  %big = kiln.dot_general %x, %w, batch = [] x [], contract = [1] x [0] : tensor<64x64xf32>, tensor<64x256xf32> -> tensor<64x256xf32>
  %r = kiln.reduce sum %big, dims = [1] : tensor<64x256xf32> -> tensor<64xf32>
  %rb = kiln.broadcast_in_dim %r, dims = [0] : tensor<64xf32> -> tensor<64x64xf32>
  %y = kiln.mul %a, %rb : tensor<64x64xf32>
  return %y, %s : tensor<64x64xf32>, tensor<64xf32>
}

// -----

// Budgets 170000 and 150000. A GEMM's result %g and a tanh's %a (16 KiB
// each, the GEMM's first in program order) are live across the peak of
// 180992 bytes. Under 170000 the tanh alone meets the budget (164608), so
// the GEMM is left alone: the cheap tier goes first. Under 150000 both
// are recomputed (148224).
// B170-LABEL: func.func @cheap_tier_before_costly(
// B170-COUNT-2: kiln.tanh
// B170-NOT: kiln.tanh
// B170: return
// B170-REMARKS: remark: rematerialized 16384 bytes of 'kiln.tanh' before 'kiln.mul'
// B170-REMARKS: remark: estimated peak bytes (arguments included): 180992 before, 164608 after, budget 170000; 1 values rematerialized, 16384 bytes saved; 0 of them reductions or GEMMs
// B150-LABEL: func.func @cheap_tier_before_costly(
// B150-SAME: %[[X:[^:]+]]: tensor<64x64xf32>, %[[W:[^:]+]]: tensor<64x256xf32>
// B150: kiln.dot_general %[[X]], %[[W]],
// B150: %[[A2:.+]] = kiln.tanh %[[X]]
// B150-NEXT: %[[G2:.+]] = kiln.dot_general %[[X]], %[[X]]
// B150-NEXT: kiln.mul %[[A2]], %[[G2]]
// B150-REMARKS: 180992 before, 148224 after, budget 150000; 2 values rematerialized, 32768 bytes saved; 1 of them reductions or GEMMs
func.func @cheap_tier_before_costly(%x: tensor<64x64xf32>, %w: tensor<64x256xf32>) -> (tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>) {
  %g = kiln.dot_general %x, %x, batch = [] x [], contract = [1] x [0] : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %a = kiln.tanh %x : tensor<64x64xf32>
  %s = kiln.reduce sum %a, dims = [1] : tensor<64x64xf32> -> tensor<64xf32>
  %t = kiln.reduce sum %g, dims = [1] : tensor<64x64xf32> -> tensor<64xf32>
  %big = kiln.dot_general %x, %w, batch = [] x [], contract = [1] x [0] : tensor<64x64xf32>, tensor<64x256xf32> -> tensor<64x256xf32>
  %r = kiln.reduce sum %big, dims = [1] : tensor<64x256xf32> -> tensor<64xf32>
  %rb = kiln.broadcast_in_dim %r, dims = [0] : tensor<64xf32> -> tensor<64x64xf32>
  %m = kiln.mul %a, %g : tensor<64x64xf32>
  %y = kiln.mul %m, %rb : tensor<64x64xf32>
  return %y, %s, %t : tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>
}

// -----

// Budget 300000. Two GEMM results of 16 KiB each are live across the peak
// of 312064 bytes: %deep contracts 256 elements, %shallow 64, and one of
// them is enough (295680). %shallow is recomputed though %deep comes first
// in program order: it costs a quarter of the work for the same bytes.
// B300-LABEL: func.func @least_work_per_byte_first(
// B300-SAME: %[[X:[^:]+]]: tensor<64x64xf32>, %[[XL:[^:]+]]: tensor<64x256xf32>, %[[WL:[^:]+]]: tensor<256x64xf32>
// B300-NEXT: %[[DEEP:.+]] = kiln.dot_general %[[XL]], %[[WL]]
// B300-NEXT: %[[SHALLOW:.+]] = kiln.dot_general %[[X]], %[[X]]
// B300: %[[SHALLOW2:.+]] = kiln.dot_general %[[X]], %[[X]]
// B300-NEXT: kiln.mul %[[DEEP]], %[[SHALLOW2]]
// B300-REMARKS: 312064 before, 295680 after, budget 300000; 1 values rematerialized, 16384 bytes saved; 1 of them reductions or GEMMs
func.func @least_work_per_byte_first(%x: tensor<64x64xf32>, %xl: tensor<64x256xf32>, %wl: tensor<256x64xf32>, %w: tensor<64x256xf32>) -> (tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>) {
  %deep = kiln.dot_general %xl, %wl, batch = [] x [], contract = [1] x [0] : tensor<64x256xf32>, tensor<256x64xf32> -> tensor<64x64xf32>
  %shallow = kiln.dot_general %x, %x, batch = [] x [], contract = [1] x [0] : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %s = kiln.reduce sum %deep, dims = [1] : tensor<64x64xf32> -> tensor<64xf32>
  %t = kiln.reduce sum %shallow, dims = [1] : tensor<64x64xf32> -> tensor<64xf32>
  %big = kiln.dot_general %x, %w, batch = [] x [], contract = [1] x [0] : tensor<64x64xf32>, tensor<64x256xf32> -> tensor<64x256xf32>
  %r = kiln.reduce sum %big, dims = [1] : tensor<64x256xf32> -> tensor<64xf32>
  %rb = kiln.broadcast_in_dim %r, dims = [0] : tensor<64xf32> -> tensor<64x64xf32>
  %m = kiln.mul %deep, %shallow : tensor<64x64xf32>
  %y = kiln.mul %m, %rb : tensor<64x64xf32>
  return %y, %s, %t : tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>
}

// -----

// Budget 170000. %h = %d + %b is live across the peak (180736 bytes), and
// %d, a GEMM's result, is read by nothing else: recomputing the add alone
// would keep %d alive across the peak instead (no gain), so the GEMM is
// recomputed with it, one chain (164352 bytes). With recompute-costly=false
// nothing is (the chain may not hold a GEMM).
// B170-LABEL: func.func @gemm_and_its_reader_recomputed_together(
// B170-SAME: %[[X:[^:]+]]: tensor<64x64xf32>, %[[W:[^:]+]]: tensor<64x256xf32>, %[[B:[^:]+]]: tensor<64x64xf32>
// B170: %[[RB:.+]] = kiln.broadcast_in_dim
// B170-NEXT: %[[D2:.+]] = kiln.dot_general %[[X]], %[[X]]
// B170-NEXT: %[[H2:.+]] = kiln.add %[[D2]], %[[B]]
// B170-NEXT: kiln.mul %[[H2]], %[[RB]]
// B170-REMARKS: remark: rematerialized 16384 bytes of 'kiln.add' before 'kiln.mul' with its operands' producers 'kiln.dot_general' (costly tier)
// B170-REMARKS: 180736 before, 164352 after, budget 170000; 1 values rematerialized, 16384 bytes saved; 1 of them reductions or GEMMs
// CHEAP-LABEL: func.func @gemm_and_its_reader_recomputed_together(
// CHEAP-COUNT-2: kiln.dot_general
// CHEAP-NOT: kiln.dot_general
// CHEAP: return
func.func @gemm_and_its_reader_recomputed_together(%x: tensor<64x64xf32>, %w: tensor<64x256xf32>, %b: tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<64xf32>) {
  %d = kiln.dot_general %x, %x, batch = [] x [], contract = [1] x [0] : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %h = kiln.add %d, %b : tensor<64x64xf32>
  %s = kiln.reduce sum %h, dims = [1] : tensor<64x64xf32> -> tensor<64xf32>
  %big = kiln.dot_general %x, %w, batch = [] x [], contract = [1] x [0] : tensor<64x64xf32>, tensor<64x256xf32> -> tensor<64x256xf32>
  %r = kiln.reduce sum %big, dims = [1] : tensor<64x256xf32> -> tensor<64xf32>
  %rb = kiln.broadcast_in_dim %r, dims = [0] : tensor<64xf32> -> tensor<64x64xf32>
  %y = kiln.mul %h, %rb : tensor<64x64xf32>
  return %y, %s : tensor<64x64xf32>, tensor<64xf32>
}
