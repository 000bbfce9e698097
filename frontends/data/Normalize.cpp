// NFC through utf8proc over each run of valid UTF-8; see Normalize.h.
#include "frontends/data/Normalize.h"

#include "frontends/data/Unicode.h"

#include <cstdlib>
#include <utf8proc.h>

namespace kiln::data {
namespace {

// A run of valid UTF-8 → its NFC. ASCII is its own NFC (no ASCII character
// decomposes or composes with a following one unless that one is not
// ASCII), so only runs with a non-ASCII byte reach utf8proc.
void appendNfc(std::string_view run, bool ascii, std::string &out) {
  if (ascii) {
    out += run;
    return;
  }
  utf8proc_uint8_t *normalized = nullptr;
  utf8proc_ssize_t length = utf8proc_map(
      reinterpret_cast<const utf8proc_uint8_t *>(run.data()),
      utf8proc_ssize_t(run.size()), &normalized,
      utf8proc_option_t(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
  if (length < 0) { // only on exhausted memory: the run was checked valid
    out += run;
    return;
  }
  out.append(reinterpret_cast<const char *>(normalized), size_t(length));
  std::free(normalized);
}

} // namespace

std::string nfc(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t runStart = 0;
  bool ascii = true;
  for (size_t pos = 0; pos < text.size();) {
    Utf8Unit unit = decodeUtf8(text, pos);
    if (unit.codePoint == kInvalidCodePoint) {
      appendNfc(text.substr(runStart, pos - runStart), ascii, out);
      out += text[pos];
      runStart = pos + 1;
      ascii = true;
    } else if (unit.codePoint >= 0x80) {
      ascii = false;
    }
    pos += size_t(unit.length);
  }
  appendNfc(text.substr(runStart), ascii, out);
  return out;
}

} // namespace kiln::data
