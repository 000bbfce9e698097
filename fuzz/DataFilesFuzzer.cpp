// libFuzzer target: bytes → a training data file (frontends/data/
// Datasets.h): SST-2-style TSV, dolly-style instruction JSONL, or plain text
// lines, chosen by the first byte. Users point kiln-train at their own files;
// a malformed one must be an error naming the file and line.
#include "FuzzInput.h"

#include "frontends/data/Datasets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace kiln::data;
  auto [mode, rest] = kiln::fuzz::splitMode(data, size, 3);
  switch (mode) {
  case 0:
    (void)parseTsv(rest, "train.tsv");
    break;
  case 1:
    (void)parseInstructionJsonl(rest, "train.jsonl");
    break;
  default:
    (void)parseTextLines(rest);
    break;
  }
  return 0;
}
