// Which buffer parameters of a generated kernel no other parameter of the
// same launch can reach, so the code generator may declare them `noalias`
// (C's `restrict`; `const restrict` for an operand): then a GPU thread's
// loads may be issued ahead of its stores and read through the read-only
// data cache (NVPTX turns loads from a noalias, readonly kernel parameter
// into `ld.global.nc`), as XLA does with its buffer assignment.
//
// Read from the planned executable, so it sees every way two parameters of
// a launch can share bytes: one slot named twice, an elementwise result
// written over an operand that dies in it (arena ranges that overlap), an
// output written into the buffer of the donated input it replaces, and an
// atomic scatter adding into its own operand. Backend-neutral: it reads
// only runtime::Executable.
#ifndef KILN_COMPILER_KERNELALIASING_H
#define KILN_COMPILER_KERNELALIASING_H

#include "runtime/Executable.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kiln::compiler {

/// What a kernel may assume of one of its buffer parameters.
enum class BufferAccess : uint8_t {
  /// Another parameter of some launch may reach its bytes while one of the
  /// two is written.
  shared,
  /// An operand no result of any launch overlaps: nothing writes it while
  /// the kernel runs.
  exclusiveRead,
  /// A result no other parameter of any launch overlaps.
  exclusiveWrite,
};

/// Per kernel symbol, one entry per buffer parameter (its thunks' slots, in
/// order: operands, then results). Two operands may share a buffer and stay
/// exclusive (neither is written). A symbol several thunks launch is
/// exclusive only where it is in all of them.
std::map<std::string, std::vector<BufferAccess>>
kernelBufferAccess(const runtime::Executable &executable);

} // namespace kiln::compiler

#endif // KILN_COMPILER_KERNELALIASING_H
