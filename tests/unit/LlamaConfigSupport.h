// Helpers of the Llama family's config tests: parse a config.json's text,
// expecting it read, or refused with a message that names the file.
#ifndef KILN_TESTS_UNIT_LLAMACONFIGSUPPORT_H
#define KILN_TESTS_UNIT_LLAMACONFIGSUPPORT_H

#include "frontends/nn/ModelConfig.h"

#include <gtest/gtest.h>

#include <string>

namespace kiln::nn {

inline LlamaConfig parseOk(const std::string &text) {
  absl::StatusOr<LlamaConfig> c = parseLlamaConfigJson(text, "config.json");
  EXPECT_TRUE(c.ok()) << c.status().message();
  return c.ok() ? *c : LlamaConfig();
}

inline void expectRefused(const std::string &text, const std::string &message) {
  absl::StatusOr<LlamaConfig> c = parseLlamaConfigJson(text, "dir/config.json");
  ASSERT_FALSE(c.ok()) << text;
  EXPECT_NE(std::string(c.status().message()).find("dir/config.json"),
            std::string::npos)
      << c.status().message();
  EXPECT_NE(std::string(c.status().message()).find(message), std::string::npos)
      << c.status().message();
}

} // namespace kiln::nn

#endif // KILN_TESTS_UNIT_LLAMACONFIGSUPPORT_H
