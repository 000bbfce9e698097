// Grouped-query attention's chunks are read in place too: 4 query heads share
// 2 kv heads, and kiln-lower-attention puts q and the output gradient in
// chunk-major order ([4 chunks, 1, 4 heads, 128 rows, 64]) so that a chunk's
// rows of a kv head's 2 query heads are one matrix of 256 rows, and each
// product reads it where it lies: `A@offset/0`, chunk c at c * 4 * 128 * 64 =
// 32768 * c elements, its two matrices packed (batch stride 0: one after the
// other). k and v are read once per kv head, never repeated per query head:
// the products are batch 2, not 4. The same thunks on the cpu. The negative
// twin, KILN_GEMM_VIEWS=0: each chunk's rows a slice kernel, no operand viewed
// (an accumulator's C@ view, the key gradients' sums, stays).
// RUN: env KILN_ATTENTION_CHUNK_MB=1 kilnc compile %s --backend cuda --bf16 --print-thunks -o %t.cuda.kexe | FileCheck %s
// RUN: env KILN_ATTENTION_CHUNK_MB=1 kilnc compile %s --bf16 --print-thunks -o %t.cpu.kexe | FileCheck %s
// RUN: env KILN_ATTENTION_CHUNK_MB=1 KILN_GEMM_VIEWS=0 kilnc compile %s --backend cuda --bf16 --print-thunks -o %t.copies.kexe | FileCheck %s --check-prefix=COPIES

// q and the output gradient in chunk-major order, one kernel.
// CHECK: fusion{reshape, transpose} (tensor<1x4x512x64xbf16>) -> (tensor<4x1x4x128x64xbf16>)
// CHECK-NOT: slice
// The first chunk's queries (at 0: no view) against keys [0, 128), then the
// values; the second chunk's at 32768 against keys [0, 256).
// CHECK: gemm batch 2 m 256 n 128 k 64 transB bf16->bf16 B@0/32768
// CHECK: gemm batch 2 m 256 n 64 k 128 bf16->bf16 B@0/32768
// CHECK: gemm batch 2 m 256 n 256 k 64 transB bf16->bf16 A@32768/0 B@0/32768
// The last chunk's: every key, the whole k.
// CHECK: gemm batch 2 m 256 n 512 k 64 transB bf16->bf16 A@98304/0
// CHECK-NOT: slice
// The gradient: the last chunk's key and value gradients read its queries and
// output gradient in place, summed over each kv head's 2 query heads and 128
// rows by the product (k 256).
// CHECK: gemm batch 2 m 512 n 64 k 256 transA bf16->f32 B@98304/0
// CHECK-NOT: slice

// COPIES: slice (tensor<4x1x4x128x64xbf16>) -> (tensor<1x1x4x128x64xbf16>)
// COPIES-NOT: {{[AB]}}@
func.func @main(%q: tensor<1x4x512x64xbf16>, %k: tensor<1x2x512x64xbf16>, %v: tensor<1x2x512x64xbf16>, %g: tensor<1x4x512x64xbf16>) -> (tensor<1x4x512x64xbf16>, tensor<1x4x512x64xbf16>, tensor<1x2x512x64xbf16>, tensor<1x2x512x64xbf16>) {
  %o, %stats = kiln.fused_attention %q, %k, %v {causal, dropout = 0.0 : f64, scale = 0.125 : f64} : tensor<1x4x512x64xbf16>, tensor<1x2x512x64xbf16>, tensor<1x2x512x64xbf16> -> tensor<1x4x512x64xbf16>, tensor<1x4x512xf32>
  %dq, %dk, %dv = kiln.fused_attention_grad %q, %k, %v, %o, %stats, %g {causal, dropout = 0.0 : f64, scale = 0.125 : f64} : tensor<1x4x512x64xbf16>, tensor<1x2x512x64xbf16>, tensor<1x2x512x64xbf16>, tensor<1x4x512x64xbf16>, tensor<1x4x512xf32>, tensor<1x4x512x64xbf16> -> tensor<1x4x512x64xbf16>, tensor<1x2x512x64xbf16>, tensor<1x2x512x64xbf16>
  return %o, %dq, %dk, %dv : tensor<1x4x512x64xbf16>, tensor<1x4x512x64xbf16>, tensor<1x2x512x64xbf16>, tensor<1x2x512x64xbf16>
}
