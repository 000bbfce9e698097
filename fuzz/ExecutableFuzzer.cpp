// libFuzzer target: bytes → deserializeExecutable (compiled executables come
// from cache folders and files users copy around). The first byte picks the
// mode: 0, the bytes as they are; else the bytes as a payload given a valid
// header (ExecutableBytes.h), which must be refused with a status, never a
// crash or an out-of-bounds read. What loads must serialise again.
#include "ExecutableBytes.h"
#include "FuzzInput.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  std::string_view rest = kiln::fuzz::asText(data + 1, size - 1);
  auto executable =
      data[0] == 0
          ? kiln::runtime::deserializeExecutable(rest)
          : kiln::runtime::deserializeExecutable(
                kiln::fuzz::executableWithHeader(rest));
  if (executable.ok())
    (void)kiln::runtime::serializeExecutable(*executable);
  return 0;
}
