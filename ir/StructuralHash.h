// A structural hash of IR: SHA-256 over a canonical serialisation of an op and
// everything nested in it (op names, attributes sorted by name, result types,
// operands as the walk-order numbers of their definitions, block arguments,
// successors, regions). SSA names and locations do not enter it, and neither
// does any pointer value, so the digest is the same across processes, runs
// and machines for the same IR. It keys kiln's compilation caches.
#ifndef KILN_IR_STRUCTURALHASH_H
#define KILN_IR_STRUCTURALHASH_H

#include <array>
#include <cstdint>
#include <string>

namespace mlir {
class ModuleOp;
class Operation;
namespace func {
class FuncOp;
} // namespace func
} // namespace mlir

namespace kiln {

/// A SHA-256 digest.
using StructuralDigest = std::array<uint8_t, 32>;

/// Any op and its nested IR → its structural digest. Values used inside but
/// defined outside `op` enter by type and order of first use, not identity.
StructuralDigest structuralHash(mlir::Operation *op);

/// A module (its own attributes and everything in it) → its digest.
StructuralDigest structuralHash(mlir::ModuleOp module);

/// A function (its name, signature, argument attributes and body) → its
/// digest; the same function in different modules hashes the same.
StructuralDigest structuralHash(mlir::func::FuncOp function);

/// Digest → 64 lowercase hex characters.
std::string toHex(const StructuralDigest &digest);

} // namespace kiln

#endif // KILN_IR_STRUCTURALHASH_H
