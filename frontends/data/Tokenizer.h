// The tokenizer interface that datasets and group_texts use, the byte-level
// tokenizer for runs without a vocabulary (ids are the bytes themselves,
// vocabulary 256, no end-of-text token), and the factory that picks one from
// the files a user names.
#ifndef KILN_FRONTENDS_DATA_TOKENIZER_H
#define KILN_FRONTENDS_DATA_TOKENIZER_H

#include "absl/status/statusor.h"
#include "absl/types/span.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::data {

/// Text ↔ token ids. Implementations are safe to call from several threads.
class Tokenizer {
public:
  virtual ~Tokenizer() = default;

  /// Text (any bytes, not only valid UTF-8) → token ids. Fails only when the
  /// vocabulary cannot spell a byte and has no unknown token.
  virtual absl::StatusOr<std::vector<int32_t>>
  encode(std::string_view text) const = 0;
  /// Text that continues an earlier one (an instruction's response after
  /// its prompt) → ids, as the two encoded together would give them past
  /// the join: SentencePiece's tokenizers put no "▁" first. Others: encode.
  virtual absl::StatusOr<std::vector<int32_t>>
  encodeContinuation(std::string_view text) const {
    return encode(text);
  }
  /// Token ids → the bytes they stand for; fails on an id outside the
  /// vocabulary. decode(encode(s)) == s for every s.
  virtual absl::StatusOr<std::string>
  decode(absl::Span<const int32_t> ids) const = 0;
  /// The number of ids (the embedding's row count): largest id + 1.
  virtual int32_t vocabSize() const = 0;
  /// The end-of-text token's id (GPT-2: `<|endoftext|>`, 50256), if any.
  virtual std::optional<int32_t> eosId() const = 0;
  /// The token a model's files put before every text (Llama's
  /// <|begin_of_text|>), if any; encode() never adds it.
  virtual std::optional<int32_t> bosId() const { return std::nullopt; }
};

/// Ids are bytes: vocabulary 256, no merges, no special tokens.
class ByteTokenizer final : public Tokenizer {
public:
  absl::StatusOr<std::vector<int32_t>>
  encode(std::string_view text) const override;
  absl::StatusOr<std::string>
  decode(absl::Span<const int32_t> ids) const override;
  int32_t vocabSize() const override { return 256; }
  std::optional<int32_t> eosId() const override { return std::nullopt; }
};

/// The tokenizer_class a model folder's tokenizer_config.json gives when
/// the model was trained with ByteTokenizer, which has no files of its own:
/// the folder then loads with the tokenizer it was trained with.
inline constexpr const char *kByteTokenizerClass = "KilnByteTokenizer";

/// Where a tokenizer comes from; all empty means the byte-level tokenizer.
struct TokenizerFiles {
  /// A Hugging Face tokenizer directory: tokenizer.json if it exists, else
  /// vocab.json + merges.txt, else ByteTokenizer when its
  /// tokenizer_config.json's tokenizer_class is kByteTokenizerClass; that
  /// file's eos_token, if any, names the end-of-text token (else GPT-2's
  /// <|endoftext|>), and must be in the vocabulary. A tokenizer_config.json
  /// naming LlamaTokenizer gets transformers 5's LlamaTokenizer rules unless
  /// the directory's config.json is a Mistral's or Phi-3's, whose
  /// AutoTokenizer reads tokenizer.json as written.
  std::string directory;
  /// Or the files themselves (ignored when `directory` is set).
  std::string tokenizerJson;
  std::string vocabJson;
  std::string mergesTxt;
};

/// Whether `directory` holds a tokenizer loadTokenizer reads: tokenizer.json,
/// vocab.json, or a tokenizer_config.json naming kByteTokenizerClass (or
/// one that does not parse, which loadTokenizer then reports).
bool hasTokenizer(const std::string &directory);

/// The files → a BPE tokenizer (GPT-2's, Llama 3's or SentencePiece's), or the
/// byte-level one when none are named.
absl::StatusOr<std::unique_ptr<Tokenizer>>
loadTokenizer(const TokenizerFiles &files);

} // namespace kiln::data

#endif // KILN_FRONTENDS_DATA_TOKENIZER_H
