// Building executables by hand in runtime tests (no compiler): slots and
// thunks with the fields a test sets.
#ifndef KILN_TESTS_UNIT_EXECUTABLETESTSUPPORT_H
#define KILN_TESTS_UNIT_EXECUTABLETESTSUPPORT_H

#include "runtime/Executable.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::testing {

inline runtime::BufferSlot slot(runtime::BufferSlot::Kind kind,
                                uint32_t position, uint64_t offset,
                                uint64_t bytes) {
  runtime::BufferSlot s;
  s.kind = kind;
  s.input = position;
  s.offset = offset;
  s.bytes = bytes;
  return s;
}

inline runtime::Thunk copyThunk(uint32_t src, uint32_t dst, uint64_t bytes) {
  runtime::Thunk t;
  t.kind = runtime::Thunk::Kind::copy;
  t.copy = {src, dst, bytes};
  return t;
}

inline runtime::Thunk kernelThunk(std::string symbol,
                                  std::vector<uint32_t> slots,
                                  int64_t rangeSize, bool splittable) {
  runtime::Thunk t;
  t.kind = runtime::Thunk::Kind::kernel;
  t.kernel.symbol = std::move(symbol);
  t.kernel.slots = std::move(slots);
  t.kernel.rangeSize = rangeSize;
  t.kernel.splittable = splittable;
  return t;
}

} // namespace kiln::testing

#endif // KILN_TESTS_UNIT_EXECUTABLETESTSUPPORT_H
