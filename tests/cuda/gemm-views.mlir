// GEMMs read attention's chunks where they lie: kiln-lower-attention slices
// q, k and v into chunks of query rows (two of 256 here: 1 MiB of scores
// each), and a slice that only products read is no kernel: each GEMM reads
// its rows in place, `A@offset/batch stride` in elements (the second
// chunk's rows start 256 * 64 = 16384 elements into each of the two heads'
// [512, 64] matrices, 32768 apart). The same thunks on the cpu. The
// negative twin, KILN_GEMM_VIEWS=0 (or false): every slice a kernel, no operand
// viewed; a malformed value is refused with a warning and views kept.
// RUN: env KILN_ATTENTION_CHUNK_MB=1 kilnc compile %s --backend cuda --bf16 --print-thunks -o %t.cuda.kexe | FileCheck %s
// RUN: env KILN_ATTENTION_CHUNK_MB=1 kilnc compile %s --bf16 --print-thunks -o %t.cpu.kexe | FileCheck %s
// RUN: env KILN_ATTENTION_CHUNK_MB=1 KILN_GEMM_VIEWS=0 kilnc compile %s --backend cuda --bf16 --print-thunks -o %t.copies.kexe | FileCheck %s --check-prefix=COPIES
// RUN: env KILN_ATTENTION_CHUNK_MB=1 KILN_GEMM_VIEWS=false kilnc compile %s --backend cuda --bf16 --print-thunks -o %t.copies2.kexe | FileCheck %s --check-prefix=COPIES
// RUN: env KILN_ATTENTION_CHUNK_MB=1 KILN_GEMM_VIEWS=nope kilnc compile %s --backend cuda --bf16 --print-thunks -o %t.bad.kexe 2>&1 | FileCheck %s --check-prefixes=BAD,CHECK

// BAD: kiln: warning: KILN_GEMM_VIEWS must be 1 or 0 (true or false, yes or no, on or off), not 'nope'; using the default (on)
// CHECK-NOT: slice
// The first chunk: its queries against the keys [0, 256), then the values.
// CHECK: gemm batch 2 m 256 n 256 k 64 transB bf16->bf16 A@0/32768 B@0/32768
// CHECK: gemm batch 2 m 256 n 64 k 256 bf16->bf16 B@0/32768
// The second chunk: its queries against every key (the whole k, unsliced).
// CHECK: gemm batch 2 m 256 n 512 k 64 transB bf16->bf16 A@16384/32768
// CHECK: gemm batch 2 m 256 n 64 k 512 bf16->bf16
// CHECK-NOT: slice
// The gradient: the keys' and values' gradients read the second chunk's
// queries and output gradient in place.
// CHECK: gemm batch 2 m 512 n 64 k 256 transA bf16->bf16 B@16384/32768
// CHECK-NOT: slice

// COPIES: slice (tensor<1x2x512x64xbf16>) -> (tensor<1x2x256x64xbf16>)
// COPIES-NOT: @
func.func @main(%q: tensor<1x2x512x64xbf16>, %k: tensor<1x2x512x64xbf16>, %v: tensor<1x2x512x64xbf16>, %g: tensor<1x2x512x64xbf16>) -> (tensor<1x2x512x64xbf16>, tensor<1x2x512x64xbf16>, tensor<1x2x512x64xbf16>, tensor<1x2x512x64xbf16>) {
  %o, %stats = kiln.fused_attention %q, %k, %v {causal, dropout = 0.0 : f64, scale = 0.125 : f64} : tensor<1x2x512x64xbf16>, tensor<1x2x512x64xbf16>, tensor<1x2x512x64xbf16> -> tensor<1x2x512x64xbf16>, tensor<1x2x512xf32>
  %dq, %dk, %dv = kiln.fused_attention_grad %q, %k, %v, %o, %stats, %g {causal, dropout = 0.0 : f64, scale = 0.125 : f64} : tensor<1x2x512x64xbf16>, tensor<1x2x512x64xbf16>, tensor<1x2x512x64xbf16>, tensor<1x2x512x64xbf16>, tensor<1x2x512xf32>, tensor<1x2x512x64xbf16> -> tensor<1x2x512x64xbf16>, tensor<1x2x512x64xbf16>, tensor<1x2x512x64xbf16>
  return %o, %dq, %dk, %dv : tensor<1x2x512x64xbf16>, tensor<1x2x512x64xbf16>, tensor<1x2x512x64xbf16>, tensor<1x2x512x64xbf16>
}
