// Small file helpers shared by the unit tests that write and corrupt files
// (safetensors, checkpoints): a fresh temporary directory, whole-file reads.
#ifndef KILN_TESTS_UNIT_FILETESTSUPPORT_H
#define KILN_TESTS_UNIT_FILETESTSUPPORT_H

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <stdlib.h>
#include <string>

namespace kiln::testing {

/// A new directory /tmp/<prefix>-XXXXXX (a test failure if none can be made).
inline std::string makeTempDir(const std::string &prefix) {
  std::string pattern = "/tmp/" + prefix + "-XXXXXX";
  char *dir = ::mkdtemp(pattern.data());
  EXPECT_NE(dir, nullptr) << "cannot create " << pattern;
  return dir ? std::string(dir) : "/tmp";
}

/// The whole file's bytes ("" when it cannot be read).
inline std::string readWholeFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// `bytes` as the whole of the file at `path` (made or truncated).
inline void writeWholeFile(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

} // namespace kiln::testing

#endif // KILN_TESTS_UNIT_FILETESTSUPPORT_H
