// The header serializeExecutable writes (magic, format version, payload
// length, crc32) around a payload: random bytes rarely pass the checksum, so
// the targets that read executables (ExecutableFuzzer, CacheEntryFuzzer)
// wrap most inputs in a valid header to reach the payload reader and the
// consistency checks behind it.
#ifndef KILN_FUZZ_EXECUTABLEBYTES_H
#define KILN_FUZZ_EXECUTABLEBYTES_H

#include "runtime/Executable.h"

#include <zlib.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace kiln::fuzz {

inline void appendLittleEndian(std::string &out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i)
    out.push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
}

/// payload → magic, format version, length and crc32, then the payload.
inline std::string executableWithHeader(std::string_view payload) {
  std::string out("KILNEXE", 8);
  appendLittleEndian(out, kiln::runtime::kExecutableFormatVersion, 4);
  appendLittleEndian(out, payload.size(), 8);
  uLong crc = crc32(0L, Z_NULL, 0);
  crc = crc32(crc, reinterpret_cast<const Bytef *>(payload.data()),
              static_cast<uInt>(payload.size()));
  appendLittleEndian(out, crc, 4);
  out += payload;
  return out;
}

} // namespace kiln::fuzz

#endif // KILN_FUZZ_EXECUTABLEBYTES_H
