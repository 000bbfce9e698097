// Every fusion kind the CPU backend compiles, compiled for cuda (no GPU
// needed): the pipeline fuses, the kernels' MLIR is the CPU backend's, and
// compiler/cuda gives each a GPU entry point and emits PTX through LLVM's
// NVPTX target. Each function is compiled on its own (--function) and its
// PTX checked: one `.entry` per kernel, taking each buffer (operands, then
// results) and the range size, mapping thread → index, global loads (through
// the read-only cache, `ld.global.nc`: no result of these kernels overlaps an
// operand, tests/cuda/exclusive-buffers.mlir) and stores, and what makes the
// kind that kind.
// RUN: kilnc compile %s --backend cuda --function gelu --emit-ptx %t.gelu.ptx
// RUN: FileCheck %s --check-prefix=GELU < %t.gelu.ptx
// RUN: kilnc compile %s --backend cuda --function softmax --emit-ptx %t.softmax.ptx
// RUN: FileCheck %s --check-prefix=SOFTMAX < %t.softmax.ptx
// RUN: env KILN_CUDA_HOLD_ROWS=0 kilnc compile %s --backend cuda --function softmax --emit-ptx %t.softmax-loaded.ptx
// RUN: FileCheck %s --check-prefix=LOADED < %t.softmax-loaded.ptx
// RUN: env KILN_CUDA_ROW_LANES=1 kilnc compile %s --backend cuda --function softmax --emit-ptx %t.softmax1.ptx
// RUN: FileCheck %s --check-prefix=ONELANE < %t.softmax1.ptx
// RUN: env KILN_CUDA_ROW_LANES=7 kilnc compile %s --backend cuda --function softmax --emit-ptx %t.softmax7.ptx 2>&1 | FileCheck %s --check-prefix=BADLANES
// RUN: FileCheck %s --check-prefix=SOFTMAX < %t.softmax7.ptx
// RUN: kilnc compile %s --backend cuda --function column_sum --emit-ptx %t.colsum.ptx
// RUN: FileCheck %s --check-prefix=COLSUM < %t.colsum.ptx
// RUN: kilnc compile %s --backend cuda --function bias_grad --emit-ptx %t.biasgrad.ptx
// RUN: FileCheck %s --check-prefix=BIASGRAD < %t.biasgrad.ptx
// RUN: kilnc compile %s --backend cuda --function adam_like --emit-ptx %t.multi.ptx
// RUN: FileCheck %s --check-prefix=MULTI < %t.multi.ptx
// RUN: kilnc compile %s --backend cuda --function dropout --emit-ptx %t.dropout.ptx
// RUN: FileCheck %s --check-prefix=DROPOUT < %t.dropout.ptx
// RUN: env KILN_CUDA_ELEMENTS_PER_THREAD=1 kilnc compile %s --backend cuda --function dropout --emit-ptx %t.dropout1.ptx
// RUN: FileCheck %s --check-prefix=ONEELEMENT < %t.dropout1.ptx
// RUN: env KILN_CUDA_ELEMENTS_PER_THREAD=3 kilnc compile %s --backend cuda --function dropout --emit-ptx %t.dropout3.ptx 2>&1 | FileCheck %s --check-prefix=BADELEMENTS
// RUN: kilnc compile %s --backend cuda --function softmax_dropout --emit-ptx %t.softdrop.ptx
// RUN: FileCheck %s --check-prefix=SOFTDROP < %t.softdrop.ptx
// RUN: env KILN_CUDA_ELEMENTS_PER_THREAD=1 kilnc compile %s --backend cuda --function softmax_dropout --emit-ptx %t.softdrop1.ptx
// RUN: FileCheck %s --check-prefix=SOFTDROP1 < %t.softdrop1.ptx
// RUN: kilnc compile %s --backend cuda --function embedding --emit-ptx %t.embed.ptx
// RUN: FileCheck %s --check-prefix=EMBED < %t.embed.ptx
// RUN: kilnc compile %s --backend cuda --function transpose_bf16 --emit-ptx %t.transpose.ptx
// RUN: FileCheck %s --check-prefix=TRANSPOSE < %t.transpose.ptx
// RUN: kilnc compile %s --backend cuda --function exp_f64 --emit-ptx %t.f64.ptx
// RUN: FileCheck %s --check-prefix=F64 < %t.f64.ptx
// RUN: kilnc compile %s --backend cuda --cuda_arch sm_80 --function gelu --emit-ptx %t.sm80.ptx
// RUN: FileCheck %s --check-prefix=SM80 < %t.sm80.ptx

// gelu is one loop fusion, one kernel, tanh inline (a polynomial, no call).
// Its buffers are declared 16-byte aligned (arena slots are 64-byte
// aligned, which the loader checks), and each thread computes 4
// neighbouring elements: one 16-byte load and one 16-byte store.
// GELU: .version 8.0
// GELU: .target sm_90
// GELU: .visible .entry kiln_kernel_0(
// GELU-NEXT: .param .u64 .ptr .align 16 kiln_kernel_0_param_0,
// GELU-NEXT: .param .u64 .ptr .align 16 kiln_kernel_0_param_1,
// GELU-NEXT: .param .u64 kiln_kernel_0_param_2
// GELU: .maxntid 256
// GELU-NOT: .minnctapersm
// GELU: %tid.x
// GELU: %ntid.x
// GELU: %ctaid.x
// GELU: setp.ge.u64
// GELU: ld.global.nc.v4.b32
// GELU-NOT: call
// GELU: st.global.v4.b32
// GELU-NOT: .entry
// GELU: ret;
func.func @gelu(%x: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %c0 = kiln.constant dense<0.5> : tensor<f32>
  %c1 = kiln.constant dense<0.7978845608> : tensor<f32>
  %c2 = kiln.constant dense<0.044715> : tensor<f32>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %h = kiln.broadcast_in_dim %c0, dims = [] : tensor<f32> -> tensor<64x128xf32>
  %k = kiln.broadcast_in_dim %c1, dims = [] : tensor<f32> -> tensor<64x128xf32>
  %a = kiln.broadcast_in_dim %c2, dims = [] : tensor<f32> -> tensor<64x128xf32>
  %o = kiln.broadcast_in_dim %one, dims = [] : tensor<f32> -> tensor<64x128xf32>
  %x2 = kiln.mul %x, %x : tensor<64x128xf32>
  %x3 = kiln.mul %x2, %x : tensor<64x128xf32>
  %ax3 = kiln.mul %a, %x3 : tensor<64x128xf32>
  %in = kiln.add %x, %ax3 : tensor<64x128xf32>
  %kin = kiln.mul %k, %in : tensor<64x128xf32>
  %t = kiln.tanh %kin : tensor<64x128xf32>
  %t1 = kiln.add %o, %t : tensor<64x128xf32>
  %hx = kiln.mul %h, %x : tensor<64x128xf32>
  %y = kiln.mul %hx, %t1 : tensor<64x128xf32>
  return %y : tensor<64x128xf32>
}

// Softmax is one reduction fusion (max pass, sum pass, output pass) → one
// kernel; max propagates NaN and the f32 sums accumulate in f64 (docs/IR.md).
// A warp per row: thread i runs row i / 32 as lane %laneid, taking 4
// neighbouring points 128 apart (16-byte loads, coalesced across the
// warp); the lanes' partial max and sum meet by butterfly shuffles over the
// whole warp (5 steps; an f64 moves as two 32-bit halves); the warp syncs
// before lane 0 would store row results (none here). The row is short (16
// points a lane), so each lane holds its points: the row is loaded once
// (4 loads, no loop), every pass reads the held values, and the outputs
// are stored after the last pass.
// SOFTMAX: .visible .entry kiln_kernel_0(
// SOFTMAX: %laneid
// SOFTMAX-COUNT-4: ld.global.nc.v4.b32
// SOFTMAX-NOT: ld.global
// SOFTMAX: max.NaN.f32
// SOFTMAX-COUNT-5: shfl.sync.bfly.b32 {{.*}}, 31, -1;
// SOFTMAX: cvt.f64.f32
// SOFTMAX: add.rn.f64
// SOFTMAX-COUNT-10: shfl.sync.bfly.b32
// SOFTMAX-NOT: ld.global
// SOFTMAX: div.rn.f32
// SOFTMAX-COUNT-4: st.global.v4.b32
// SOFTMAX: bar.warp.sync -1;
// SOFTMAX-NOT: bra
// SOFTMAX-NOT: .entry
// KILN_CUDA_HOLD_ROWS=0 (to measure the difference): each pass loops over
// the row 4 lanes' points (512 bytes) at a time, loading it again; the
// exponentials are stashed in the output row between passes.
// LOADED: .visible .entry kiln_kernel_0(
// LOADED: %laneid
// LOADED: max.NaN.f32
// LOADED: add.s64 {{.*}}, 128;
// LOADED-COUNT-5: shfl.sync.bfly.b32 {{.*}}, 31, -1;
// LOADED: cvt.f64.f32
// LOADED: add.rn.f64
// LOADED-COUNT-10: shfl.sync.bfly.b32
// LOADED: div.rn.f32
// LOADED: bar.warp.sync -1;
// LOADED-NOT: .entry
// KILN_CUDA_ROW_LANES=1 (to measure the difference): a thread per row, no
// shuffles; any value but 1 or 32 is refused with a warning.
// ONELANE: .visible .entry kiln_kernel_0(
// ONELANE-NOT: shfl
// ONELANE-NOT: %laneid
// ONELANE: max.NaN.f32
// BADLANES: warning: KILN_CUDA_ROW_LANES must be 1 or 32, not '7'; using 32
func.func @softmax(%x: tensor<32x512xf32>) -> tensor<32x512xf32> {
  %m = kiln.reduce max %x, dims = [1] : tensor<32x512xf32> -> tensor<32xf32>
  %mk = kiln.reshape %m : tensor<32xf32> -> tensor<32x1xf32>
  %mb = kiln.broadcast_in_dim %mk, dims = [0, 1] : tensor<32x1xf32> -> tensor<32x512xf32>
  %z = kiln.sub %x, %mb : tensor<32x512xf32>
  %e = kiln.exp %z : tensor<32x512xf32>
  %s = kiln.reduce sum %e, dims = [1] : tensor<32x512xf32> -> tensor<32xf32>
  %sk = kiln.reshape %s : tensor<32xf32> -> tensor<32x1xf32>
  %sb = kiln.broadcast_in_dim %sk, dims = [0, 1] : tensor<32x1xf32> -> tensor<32x512xf32>
  %y = kiln.div %e, %sb : tensor<32x512xf32>
  return %y : tensor<32x512xf32>
}

// A bias gradient: a sum over the outer dim, column-blocked; on the GPU
// each thread owns one column (neighbouring threads read neighbouring
// columns of a row), accumulated in f64 in registers: no local memory.
// COLSUM: .visible .entry kiln_kernel_0(
// COLSUM-NOT: .local
// COLSUM: ld.global.nc.b32
// COLSUM: add.rn.f64
// COLSUM: cvt.rn.f32.f64
// COLSUM: st.global.b32
// COLSUM-NOT: .entry
func.func @column_sum(%x: tensor<256x64xf32>) -> tensor<64xf32> {
  %s = kiln.reduce sum %x, dims = [0] : tensor<256x64xf32> -> tensor<64xf32>
  return %s : tensor<64xf32>
}

// GPT-2's MLP bias gradient with the product it sums: too few columns for
// the GPU, so kiln-split-reductions sums [16, 512] in 64 parts first (a
// middle reduction of a reshape, its rows strided). Each part gets a
// thread, not a warp (lanes would each read their own cache line), and
// one pass reads x and y, stores the product and accumulates it.
// BIASGRAD: .visible .entry kiln_kernel_0(
// BIASGRAD-NOT: %laneid
// BIASGRAD: ld.global.nc.b32
// BIASGRAD: mul.rn.f32
// BIASGRAD-NOT: shfl.sync
// BIASGRAD: st.global.b32
// BIASGRAD-NOT: shfl.sync
// BIASGRAD: add.rn.f64
// BIASGRAD-NOT: shfl.sync
// BIASGRAD: st.global.b64
// BIASGRAD: .visible .entry kiln_kernel_1(
func.func @bias_grad(%x: tensor<16x512x768xf32>, %y: tensor<16x512x768xf32>) -> (tensor<16x512x768xf32>, tensor<768xf32>) {
  %m = kiln.mul %x, %y : tensor<16x512x768xf32>
  %s = kiln.reduce sum %m, dims = [0, 1] : tensor<16x512x768xf32> -> tensor<768xf32>
  return %m, %s : tensor<16x512x768xf32>, tensor<768xf32>
}

// An optimizer-style update: two results from one multi-output fusion, one
// kernel storing both, 4 elements a thread: 16-byte accesses throughout.
// MULTI: .visible .entry kiln_kernel_0(
// MULTI-COUNT-3: ld.global.nc.v4.b32
// MULTI: sqrt.rn.f32
// MULTI-COUNT-2: st.global.v4.b32
// MULTI-NOT: .entry
func.func @adam_like(%p: tensor<1024xf32>, %g: tensor<1024xf32>, %m: tensor<1024xf32>) -> (tensor<1024xf32>, tensor<1024xf32>) {
  %c = kiln.constant dense<0.9> : tensor<f32>
  %cb = kiln.broadcast_in_dim %c, dims = [] : tensor<f32> -> tensor<1024xf32>
  %m1 = kiln.mul %cb, %m : tensor<1024xf32>
  %m2 = kiln.add %m1, %g : tensor<1024xf32>
  %r = kiln.sqrt %m2 : tensor<1024xf32>
  %p1 = kiln.sub %p, %r : tensor<1024xf32>
  return %p1, %m2 : tensor<1024xf32>, tensor<1024xf32>
}

// Dropout is rng_uniform (Philox-4x32-10: multipliers 0xD2511F53 and
// 0xCD9E8D57) fused with its mask and scale in one kernel, the key and
// counter read from the state operand, never constants. A thread computes
// the 4 elements of one Philox block: the block once (10 rounds, each
// multiplying by 0xD2511F53 once), then one 16-byte load and store; with
// KILN_CUDA_ELEMENTS_PER_THREAD=1 a thread computes the block for its one
// element.
// DROPOUT: .visible .entry kiln_kernel_0(
// DROPOUT: ld.global.nc.b64 {{.*}}, [%rd{{[0-9]+}}];
// DROPOUT: ld.global.nc.b64 {{.*}}, [%rd{{[0-9]+}}+8];
// DROPOUT-COUNT-10: 3528531795
// DROPOUT-NOT: 3528531795
// DROPOUT: ld.global.nc.v4.b32
// DROPOUT: selp.f32 {{.*}}, 0f00000000
// DROPOUT: st.global.v4.b32
// DROPOUT-NOT: 3528531795
// DROPOUT-NOT: .entry
// ONEELEMENT: .visible .entry kiln_kernel_0(
// ONEELEMENT-COUNT-10: 3528531795
// ONEELEMENT-NOT: ld.global{{(.nc)?}}.v4
// ONEELEMENT: ld.global.nc.b32
// ONEELEMENT: st.global.b32
// BADELEMENTS: warning: KILN_CUDA_ELEMENTS_PER_THREAD must be 1, 4 or 8, not '3'; using 4
func.func @dropout(%x: tensor<8x256xf32>, %state: tensor<2xi64>) -> (tensor<8x256xf32>, tensor<2xi64>) {
  %u, %ns = kiln.rng_uniform %state : tensor<2xi64> -> tensor<8x256xf32>
  %p = kiln.constant dense<0.1> : tensor<f32>
  %pb = kiln.broadcast_in_dim %p, dims = [] : tensor<f32> -> tensor<8x256xf32>
  %keep = kiln.compare GE, %u, %pb : tensor<8x256xf32>
  %s = kiln.constant dense<1.1111111> : tensor<f32>
  %sb = kiln.broadcast_in_dim %s, dims = [] : tensor<f32> -> tensor<8x256xf32>
  %xs = kiln.mul %x, %sb : tensor<8x256xf32>
  %z = kiln.constant dense<0.0> : tensor<f32>
  %zb = kiln.broadcast_in_dim %z, dims = [] : tensor<f32> -> tensor<8x256xf32>
  %y = kiln.select %keep, %xs, %zb : tensor<8x256xi1>, tensor<8x256xf32>
  return %y, %ns : tensor<8x256xf32>, tensor<2xi64>
}

// Attention's softmax with dropout, its uniforms drawn [rows, B, H, keys]
// and transposed as kiln-lower-attention draws them: a warp per row of 512
// whose lanes each take 4 neighbouring points at a time (rows whose length
// is a multiple of 4), so the row's reads and the output's writes are
// 16-byte accesses and the 4 points' one Philox block is computed once (the
// points' flat indices differ only in the two low bits the block index
// drops, which LLVM proves); one point at a time with
// KILN_CUDA_ELEMENTS_PER_THREAD=1.
// SOFTDROP: .visible .entry kiln_kernel_0(
// SOFTDROP: %laneid
// SOFTDROP: ld.global.nc.v4.b32
// SOFTDROP: shfl.sync.bfly
// SOFTDROP: 3528531795
// SOFTDROP: st.global.v4.b32
// SOFTDROP-NOT: .entry
// SOFTDROP1: .visible .entry kiln_kernel_0(
// SOFTDROP1-NOT: ld.global{{(.nc)?}}.v4
// SOFTDROP1: shfl.sync.bfly
// SOFTDROP1-NOT: st.global.v4
func.func @softmax_dropout(%x: tensor<4x2x8x512xf32>, %state: tensor<2xi64>) -> (tensor<4x2x8x512xf32>, tensor<2xi64>) {
  %m = kiln.reduce max %x, dims = [3] : tensor<4x2x8x512xf32> -> tensor<4x2x8xf32>
  %mb = kiln.broadcast_in_dim %m, dims = [0, 1, 2] : tensor<4x2x8xf32> -> tensor<4x2x8x512xf32>
  %d = kiln.sub %x, %mb : tensor<4x2x8x512xf32>
  %e = kiln.exp %d : tensor<4x2x8x512xf32>
  %s = kiln.reduce sum %e, dims = [3] : tensor<4x2x8x512xf32> -> tensor<4x2x8xf32>
  %sb = kiln.broadcast_in_dim %s, dims = [0, 1, 2] : tensor<4x2x8xf32> -> tensor<4x2x8x512xf32>
  %p = kiln.div %e, %sb : tensor<4x2x8x512xf32>
  %u0, %ns = kiln.rng_uniform %state : tensor<2xi64> -> tensor<8x4x2x512xf32>
  %u = kiln.transpose %u0, perm = [1, 2, 0, 3] : tensor<8x4x2x512xf32> -> tensor<4x2x8x512xf32>
  %c = kiln.constant dense<0.1> : tensor<f32>
  %cb = kiln.broadcast_in_dim %c, dims = [] : tensor<f32> -> tensor<4x2x8x512xf32>
  %keep = kiln.compare GE, %u, %cb : tensor<4x2x8x512xf32>
  %z = kiln.constant dense<0.0> : tensor<f32>
  %zb = kiln.broadcast_in_dim %z, dims = [] : tensor<f32> -> tensor<4x2x8x512xf32>
  %y = kiln.select %keep, %p, %zb : tensor<4x2x8x512xi1>, tensor<4x2x8x512xf32>
  return %y, %ns : tensor<4x2x8x512xf32>, tensor<2xi64>
}

// Embedding lookup and its gradient: a gather kernel, a fill kernel for the
// zero accumulator (a large splat is filled, not stored; 16 bytes a thread),
// and a scatter_add
// kernel with a thread per update that adds it into the result (a copy of
// the operand) with one atomic add: threads that owned a partition of the
// result each scanned every update, 38.6M threads x 6.3M updates for
// GPT-2's wte. Bounds-checked index, no plain read-modify-write left.
// EMBED: .visible .entry kiln_kernel_0(
// EMBED: ld.global.nc.b32
// EMBED: st.global.b32
// EMBED: .visible .entry kiln_kernel_1(
// EMBED: st.global.v4.b32 [%rd{{[0-9]+}}], {0f00000000, 0f00000000, 0f00000000, 0f00000000};
// EMBED: .visible .entry kiln_kernel_2(
// EMBED: setp.gt.u32 {{.*}}, 99;
// EMBED: atom.global.add.f32
// EMBED-NOT: add.rn.f32
// EMBED-NOT: .entry
func.func @embedding(%table: tensor<100x16xf32>, %ids: tensor<4x8xi32>, %grad: tensor<4x8x16xf32>) -> (tensor<4x8x16xf32>, tensor<100x16xf32>) {
  %e = kiln.gather %table[%ids], axis = 0 : tensor<100x16xf32>, tensor<4x8xi32> -> tensor<4x8x16xf32>
  %zero = kiln.constant dense<0.0> : tensor<100x16xf32>
  %g = kiln.scatter_add %zero[%ids], %grad, axis = 0 : tensor<100x16xf32>, tensor<4x8xi32>, tensor<4x8x16xf32>
  return %e, %g : tensor<4x8x16xf32>, tensor<100x16xf32>
}

// A transpose, then a bf16 conversion rounded with integer ops (round to
// nearest even) and stored as 16 bits.
// TRANSPOSE: .visible .entry kiln_kernel_0(
// TRANSPOSE: ld.global.nc.b32
// TRANSPOSE: st.global.b32
// TRANSPOSE: .visible .entry kiln_kernel_1(
// TRANSPOSE: ld.global.nc.b32
// TRANSPOSE: st.global.b16
func.func @transpose_bf16(%x: tensor<32x64xf32>) -> tensor<64x32xbf16> {
  %t = kiln.transpose %x, perm = [1, 0] : tensor<32x64xf32> -> tensor<64x32xf32>
  %b = kiln.convert %t : tensor<64x32xf32> -> tensor<64x32xbf16>
  return %b : tensor<64x32xbf16>
}

// f64 transcendentals call the C library on the CPU; on the GPU they are
// libdevice's, linked and inlined: no external function is left. Its 128
// elements are one block, so ptxas is told that block has its SM to itself
// (.minnctapersm 1: no spills traded for occupancy); gelu's 8 blocks are not.
// F64-NOT: .extern
// F64: .visible .entry kiln_kernel_0(
// F64: .maxntid 256
// F64-NEXT: .minnctapersm 1
// F64: ld.global.nc.b64
// F64: fma.rn.f64
// F64-NOT: call
func.func @exp_f64(%x: tensor<128xf64>) -> tensor<128xf64> {
  %y = kiln.exp %x : tensor<128xf64>
  return %y : tensor<128xf64>
}

// SM80: .target sm_80
// SM80: .visible .entry kiln_kernel_0(
