#include "compiler/Version.h"

namespace kiln::compiler {

std::string_view buildId() { return KILN_BUILD_ID; }

std::string versionText() {
  return std::string(kKilnVersion) + " (build " + std::string(buildId()) + ")";
}

} // namespace kiln::compiler
