#include "support/ByteSize.h"

#include "absl/strings/str_format.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <utility>

namespace kiln {

std::optional<uint64_t> parseByteSize(std::string_view text) {
  // strtod would also read "inf", "nan" and leading blanks: a count starts
  // with a digit or a point.
  if (text.empty() ||
      !(std::isdigit(static_cast<unsigned char>(text[0])) || text[0] == '.'))
    return std::nullopt;
  std::string copy(text);
  errno = 0;
  char *end = nullptr;
  double value = std::strtod(copy.c_str(), &end);
  if (end == copy.c_str() || errno != 0 || !std::isfinite(value) || value < 0)
    return std::nullopt;
  // Decimal digits only (strtod also reads hexadecimal).
  if (std::string_view(copy.c_str(), end - copy.c_str())
          .find_first_not_of("0123456789.eE+-") != std::string_view::npos)
    return std::nullopt;
  // clang-format off: a row a power
  static const std::pair<std::string_view, double> kUnits[] = {
      {"", 1.0},       {"B", 1.0},      {"K", 0x1p10},   {"KiB", 0x1p10},
      {"KB", 1e3},     {"M", 0x1p20},   {"MiB", 0x1p20}, {"MB", 1e6},
      {"G", 0x1p30},   {"GiB", 0x1p30}, {"GB", 1e9},     {"T", 0x1p40},
      {"TiB", 0x1p40}, {"TB", 1e12}};
  // clang-format on
  std::string_view unit(end);
  for (const auto &[name, scale] : kUnits)
    if (unit == name) {
      double bytes = value * scale;
      if (bytes >= 0x1p64)
        return std::nullopt;
      return static_cast<uint64_t>(bytes);
    }
  return std::nullopt;
}

std::string formatByteSize(uint64_t bytes) {
  if (bytes >= (1ull << 30))
    return absl::StrFormat("%.2f GiB", bytes / 0x1p30);
  if (bytes >= (1ull << 20))
    return absl::StrFormat("%.1f MiB", bytes / 0x1p20);
  if (bytes >= (1ull << 10))
    return absl::StrFormat("%.1f KiB", bytes / 0x1p10);
  return absl::StrFormat("%d B", bytes);
}

} // namespace kiln
