// libFuzzer target: arbitrary bytes → parseSafetensors (checkpoints and
// Hugging Face weight files come from outside). The parser must refuse
// with a status, never crash, read out of bounds or allocate without bound.
#include "frontends/nn/Safetensors.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char *>(data), size);
  auto parsed = kiln::nn::parseSafetensors(bytes);
  if (parsed.ok()) {
    // What parsed must re-serialise: touch every tensor's bytes.
    for (const auto &named : parsed->tensors)
      (void)named.tensor.byteSize();
  }
  return 0;
}
