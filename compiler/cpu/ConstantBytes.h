// How a backend stores values: a tensor's bytes and a dense constant's
// bytes as they are copied into its arena slot when the program loads.
#ifndef KILN_COMPILER_CPU_CONSTANTBYTES_H
#define KILN_COMPILER_CPU_CONSTANTBYTES_H

#include "ir/KilnDialect.h"

#include "absl/status/statusor.h"

#include <cstdint>
#include <string>

namespace kiln::compiler::cpu {

/// Bytes one element of `element` takes in storage (an i1 takes a byte).
uint64_t storageBytes(mlir::Type element);

/// Bytes a ranked tensor value takes in storage.
uint64_t bytesOf(mlir::Value v);

/// `op`'s elements as stored, little-endian, each storageBytes wide;
/// Unimplemented for a constant that is not dense.
absl::StatusOr<std::string> constantBytes(ConstantOp op);

} // namespace kiln::compiler::cpu

#endif // KILN_COMPILER_CPU_CONSTANTBYTES_H
