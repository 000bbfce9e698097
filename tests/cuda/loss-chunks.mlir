// The lm_head loss's chunks (kiln-lower-cross-entropy under the request's
// pipeline options, through kilnc's cached compile path as kiln-train's
// and kiln-bench's steps): GPT-2's 8192 x 50257 logits in chunks of whole
// 64-row GEMM tiles, 26 (25 of 320 rows and one of 192: 64 MiB at most) on
// the cpu, 7 (256 MiB) on cuda, whose thin lm_head GEMMs the H100 measured slower
// (docs/GPU.md, run 7); KILN_LOSS_CHUNK_MB overrides either. A malformed
// override is refused with a warning and the default kept.
// RUN: kilnc compile %s --backend cuda --print-thunks -o %t.cuda.kexe | FileCheck %s --check-prefix=LARGE
// RUN: kilnc compile %s --print-thunks -o %t.cpu.kexe | FileCheck %s --check-prefix=SMALL
// RUN: env KILN_LOSS_CHUNK_MB=64 kilnc compile %s --backend cuda --print-thunks -o %t.small.kexe | FileCheck %s --check-prefix=SMALL
// RUN: env KILN_LOSS_CHUNK_MB=256 kilnc compile %s --print-thunks -o %t.large.kexe | FileCheck %s --check-prefix=LARGE
// RUN: env KILN_LOSS_CHUNK_MB=lots kilnc compile %s --backend cuda --print-thunks -o %t.bad.kexe 2>&1 | FileCheck %s --check-prefixes=BAD,LARGE

// BAD: warning: KILN_LOSS_CHUNK_MB must be a whole number of MiB from 1 to 65536, not 'lots'; using the default
// LARGE-COUNT-6: gemm batch 1 m 1216 n 50257 k 64 transB
// LARGE: gemm batch 1 m 896 n 50257 k 64 transB
// LARGE-NOT: gemm
// SMALL-COUNT-25: gemm batch 1 m 320 n 50257 k 64 transB
// SMALL: gemm batch 1 m 192 n 50257 k 64 transB
// SMALL-NOT: gemm
func.func @main(%h: tensor<8192x64xf32>, %w: tensor<50257x64xf32>, %y: tensor<8192xi64>) -> tensor<8192xf32> {
  %l = kiln.fused_linear_cross_entropy %h, %w, %y {ignore_index = -100 : i64} : tensor<8192x64xf32>, tensor<50257x64xf32>, tensor<8192xi64> -> tensor<8192xf32>
  return %l : tensor<8192xf32>
}
