// libFuzzer target: bytes → a training data file (frontends/data/
// Datasets.h): SST-2-style TSV, JSON records (instruction or text; JSON
// Lines or one array), CSV, or plain text lines, chosen by the first byte.
// Users point kiln-train at their own files; a malformed one must be an error
// naming the file and line.
#include "FuzzInput.h"

#include "frontends/data/Datasets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace kiln::data;
  auto [mode, rest] = kiln::fuzz::splitMode(data, size, 4);
  switch (mode) {
  case 0:
    (void)parseTsv(rest, "train.tsv");
    break;
  case 1:
    (void)parseJsonRecords(rest, "train.jsonl");
    break;
  case 2:
    (void)parseCsv(rest, "train.csv");
    break;
  default:
    (void)parseTextLines(rest);
    break;
  }
  return 0;
}
