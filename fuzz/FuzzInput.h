// Helpers the fuzz targets share: the input as text, and a mode byte that
// picks which parser (or which form of the input) one run exercises.
#ifndef KILN_FUZZ_FUZZINPUT_H
#define KILN_FUZZ_FUZZINPUT_H

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace kiln::fuzz {

/// libFuzzer's bytes as a string_view.
inline std::string_view asText(const uint8_t *data, size_t size) {
  return {reinterpret_cast<const char *>(data), size};
}

/// The first byte modulo `modes` (0 on an empty input) and the rest.
struct ModeAndRest {
  unsigned mode = 0;
  std::string_view rest;
};
inline ModeAndRest splitMode(const uint8_t *data, size_t size,
                             unsigned modes) {
  if (size == 0)
    return {};
  return {data[0] % modes, asText(data + 1, size - 1)};
}

} // namespace kiln::fuzz

#endif // KILN_FUZZ_FUZZINPUT_H
