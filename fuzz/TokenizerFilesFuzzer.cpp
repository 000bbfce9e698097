// libFuzzer target: bytes → a tokenizer's files (frontends/data/
// BpeTokenizer.h): vocab.json, merges.txt or tokenizer.json, or text for the
// GPT-2, Llama 3 and Qwen2 pre-tokenizers (whose pieces must partition it)
// and NFC (which must be idempotent), chosen
// by the first byte. A tokenizer.json that parses is also built (the vocabulary
// and merge checks) and used: it encodes a fixed text and the ids must decode
// back to it (or the encode fails cleanly when the vocabulary cannot spell a
// byte), so a hostile vocabulary cannot make BPE loop, read out of bounds
// or lose bytes. SentencePiece's layouts change the text on the way (the
// "▁" put first, whatever character stands for a space), so there the ids
// must only be the vocabulary's.
#include "FuzzInput.h"

#include "frontends/data/BpeTokenizer.h"
#include "frontends/data/Normalize.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace kiln::data;
  auto [mode, rest] = kiln::fuzz::splitMode(data, size, 4);
  switch (mode) {
  case 0:
    (void)parseVocabJson(rest, "vocab.json");
    return 0;
  case 1:
    (void)parseMergesTxt(rest, "merges.txt");
    return 0;
  case 3: {
    // NFC of any bytes is a fixed point (the invalid bytes kept as they
    // are, so none may join a valid run).
    std::string normalized = nfc(rest);
    if (nfc(normalized) != normalized)
      std::abort();
    for (PreTokenizerKind kind :
         {PreTokenizerKind::gpt2, PreTokenizerKind::llama3,
          PreTokenizerKind::qwen2, PreTokenizerKind::o200k}) {
      size_t at = 0;
      for (std::string_view piece : preTokenize(rest, kind)) {
        // Each piece non-empty and next in the text: a partition.
        if (piece.empty() || piece.data() != rest.data() + at)
          std::abort();
        at += piece.size();
      }
      if (at != rest.size())
        std::abort();
    }
    return 0;
  }
  default:
    break;
  }
  absl::StatusOr<BpeModel> model = parseTokenizerJson(rest, "tokenizer.json");
  if (!model.ok())
    return 0;
  BpeOptions options;
  options.cacheCapacity = 64;
  absl::StatusOr<std::unique_ptr<BpeTokenizer>> tokenizer =
      BpeTokenizer::create(*model, options);
  if (!tokenizer.ok())
    return 0;
  const std::string text = "Hello, world! It's 2026 <|endoftext|> caf\xc3\xa9";
  absl::StatusOr<std::vector<int32_t>> ids = (*tokenizer)->encode(text);
  if (!ids.ok())
    return 0;
  absl::StatusOr<std::string> decoded = (*tokenizer)->decode(*ids);
  if (!decoded.ok())
    std::abort(); // an id outside the vocabulary
  if (!model->metaspace && model->unkToken.empty() && *decoded != text)
    std::abort(); // decode(encode(s)) != s
  return 0;
}
