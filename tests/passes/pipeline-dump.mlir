// The pipeline's dump directory: the input and the module after every pass,
// numbered in pipeline order (what KILN_DUMP_DIR turns on in the tools).
// RUN: rm -rf %t && kiln-opt %s --kiln-pipeline="dump-dir=%t" -o /dev/null
// RUN: ls %t | FileCheck %s --check-prefix=FILES
// RUN: FileCheck %s --check-prefix=INPUT < %t/00-input.mlir
// RUN: FileCheck %s --check-prefix=FUSED < %t/09-kiln-fuse-elementwise.mlir
// A dump folder that cannot be made (the path names a file) is one
// warning, and the pipeline runs on without dumps (MLIR drops the dump
// passes' own warnings when a compile succeeds, so it said nothing).
// RUN: touch %t.file && kiln-opt %s --kiln-pipeline="dump-dir=%t.file" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NODIR
// NODIR: kiln: warning: cannot write the pass dumps to '{{.*}}.file': Not a directory; compiling without them
// NODIR-NOT: warning
// NODIR: kiln.fusion loop
// A dump that cannot be written mid-way (a full disk; here a folder in the
// way of the second) is one warning naming it, never a truncated file or
// LLVM's "IO failure on output stream", and the pipeline runs on with no
// more dumps.
// RUN: rm -rf %t.mid && mkdir -p %t.mid/01-kiln-simplify.mlir
// RUN: kiln-opt %s --kiln-pipeline="dump-dir=%t.mid" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=MIDWAY
// MIDWAY: kiln: warning: cannot write the pass dump '{{.*}}mid/01-kiln-simplify.mlir': it is a directory; compiling without the rest
// MIDWAY-NOT: warning
// MIDWAY: kiln.fusion loop
// RUN: ls -A %t.mid | FileCheck %s --check-prefix=MIDFILES
// MIDFILES: 00-input.mlir
// MIDFILES-NEXT: 01-kiln-simplify.mlir
// MIDFILES-NOT: {{.}}

// FILES: 00-input.mlir
// FILES-NEXT: 01-kiln-simplify.mlir
// FILES-NEXT: 02-cse.mlir
// FILES-NEXT: 03-kiln-lower-attention.mlir
// FILES-NEXT: 04-kiln-lower-cross-entropy.mlir
// FILES-NEXT: 05-kiln-partition.mlir
// FILES-NEXT: 06-kiln-move-ties.mlir
// FILES-NEXT: 07-kiln-fuse-small-products.mlir
// FILES-NEXT: 08-kiln-fuse-gemm-epilogue.mlir
// FILES-NEXT: 09-kiln-fuse-elementwise.mlir
// FILES-NEXT: 10-kiln-fuse-reductions.mlir
// FILES-NEXT: 11-kiln-fuse-siblings.mlir
// FILES-NEXT: 12-kiln-move-ties.mlir
// FILES-NEXT: 13-kiln-schedule.mlir

// INPUT-LABEL: func.func @bias_gelu_like(
// INPUT-NOT: kiln.fusion
// INPUT: kiln.tanh
// FUSED-LABEL: func.func @bias_gelu_like(
// FUSED: kiln.fusion loop
// FUSED: kiln.tanh
func.func @bias_gelu_like(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %bb = kiln.broadcast_in_dim %b, dims = [1] : tensor<8xf32> -> tensor<4x8xf32>
  %s = kiln.add %x, %bb : tensor<4x8xf32>
  %t = kiln.tanh %s : tensor<4x8xf32>
  %y = kiln.mul %s, %t : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
