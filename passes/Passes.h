// The kiln passes (Passes.td): create and register functions, and the
// options structs TableGen generates for passes that take options.
#ifndef KILN_PASSES_PASSES_H
#define KILN_PASSES_PASSES_H

#include "mlir/Pass/Pass.h"

#include <memory>

namespace kiln {

/// The most ops a fusion's body may hold (kiln-fuse-elementwise's max-ops
/// default; kiln-fuse-siblings and kiln-fuse-reductions keep it too). Each
/// fusion step clones the grown body, and the kernel emitters walk a body's
/// chains recursively, so a chain of 20,000 elementwise ops took minutes to
/// fuse and then overflowed the emitter's stack. Real steps' fusions hold
/// tens of ops.
inline constexpr unsigned kMaxFusionOps = 512;

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

/// Registers every kiln pass with MLIR's pass registry (for kiln-opt).
#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

/// True when `op` is a kiln.fused_attention or kiln.fused_attention_grad
/// a backend's attention kernel runs whole: `sixteenBit` (bf16 or f16
/// operands; with false, f32 ones that kiln-autocast may round) and a head
/// dim that is a multiple of 8 up to 128 (the kernel's 16-byte loads and
/// its largest tile).
bool fitsAttentionKernel(mlir::Operation *op, bool sixteenBit = true);

} // namespace kiln

#endif // KILN_PASSES_PASSES_H
