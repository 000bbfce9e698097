// kiln's version and build id: what every program's --version prints and
// what enters every persistent-cache key (compiler/CacheKey.h), so that an
// entry compiled by another build is never taken for this one's.
#ifndef KILN_COMPILER_VERSION_H
#define KILN_COMPILER_VERSION_H

#include <string>
#include <string_view>

namespace kiln::compiler {

/// The version written into executables and cache keys; bump when
/// codegen changes.
inline constexpr const char *kKilnVersion = "kiln 0.2";

/// The build id configured by CMake (see compiler/CMakeLists.txt): git
/// describe plus a hash of the compiler's sources at configure time.
std::string_view buildId();

/// "kiln 0.2 (build ...)".
std::string versionText();

} // namespace kiln::compiler

#endif // KILN_COMPILER_VERSION_H
