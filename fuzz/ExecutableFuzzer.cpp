// libFuzzer target: bytes → deserializeExecutable (compiled executables come
// from cache folders and files users copy around). Random bytes rarely pass
// the header's checksum, so most inputs are taken as a payload and given a
// valid header first: the fuzzer then reaches the payload reader and the
// consistency checks behind it, which must refuse with a status, never
// crash or read out of bounds. The first byte picks the mode (0: the bytes
// as they are; else: a payload).
#include "runtime/Executable.h"

#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace {

void appendLittleEndian(std::string &out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i)
    out.push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
}

/// payload → magic, format version, length and crc32, then the payload: the
/// header serializeExecutable writes.
std::string withHeader(std::string_view payload) {
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

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  std::string_view rest(reinterpret_cast<const char *>(data) + 1, size - 1);
  auto executable = data[0] == 0
                        ? kiln::runtime::deserializeExecutable(rest)
                        : kiln::runtime::deserializeExecutable(withHeader(rest));
  // What loads must serialise again (every field in range).
  if (executable.ok())
    (void)kiln::runtime::serializeExecutable(*executable);
  return 0;
}
