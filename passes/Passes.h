// The kiln passes (Passes.td): create and register functions, and the
// options structs TableGen generates for passes that take options.
#ifndef KILN_PASSES_PASSES_H
#define KILN_PASSES_PASSES_H

#include "mlir/Pass/Pass.h"

#include <memory>

namespace kiln {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

/// Registers every kiln pass with MLIR's pass registry (for kiln-opt).
#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

} // namespace kiln

#endif // KILN_PASSES_PASSES_H
