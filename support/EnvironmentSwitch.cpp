#include "support/EnvironmentSwitch.h"

#include "absl/strings/ascii.h"
#include "absl/strings/string_view.h"

#include <string>

namespace kiln {

std::optional<bool> switchValue(std::string_view value) {
  std::string lower =
      absl::AsciiStrToLower(absl::string_view(value.data(), value.size()));
  if (lower == "1" || lower == "true" || lower == "yes" || lower == "on")
    return true;
  if (lower == "0" || lower == "false" || lower == "no" || lower == "off")
    return false;
  return std::nullopt;
}

} // namespace kiln
