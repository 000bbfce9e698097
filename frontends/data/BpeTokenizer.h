// BPE tokenizers over Hugging Face files (vocab.json + merges.txt, or
// tokenizer.json): the byte-level ones of GPT-2, Llama 3 and Qwen2/3, and
// SentencePiece's of Llama 2, Mistral and TinyLlama. Encoding: split out
// special tokens (`<|endoftext|>`, `<|eot_id|>`, `</s>`), normalize each
// remaining span (NFC, when the file says so), cut it into pieces (byte-level:
// the model's regex; SentencePiece's: spaces become "▁", Metaspace.h), then run
// BPE on each piece, merging the adjacent pair of lowest rank (the leftmost of
// equals) until none is left, with a cache of piece → ids. Byte-level BPE
// starts from the piece's bytes, whose symbols are GPT-2's printable alphabet
// ("Ġthe" is " the"); SentencePiece's from its characters, a character the
// vocabulary lacks becoming its bytes' <0xNN> tokens (byte_fallback) or the
// unknown token. A piece that is itself a token stays whole under Llama 3's
// ignore_merges.
#ifndef KILN_FRONTENDS_DATA_BPETOKENIZER_H
#define KILN_FRONTENDS_DATA_BPETOKENIZER_H

#include "frontends/data/Metaspace.h"
#include "frontends/data/PreTokenizer.h"
#include "frontends/data/Tokenizer.h"

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"

#include <array>
#include <memory>
#include <utility>

namespace kiln::data {

/// One vocabulary entry as written in the files (GPT-2's alphabet).
struct VocabEntry {
  std::string symbol;
  int32_t id = 0;
  /// "vocab.json:12" or "tokenizer.json: model.vocab": named in errors.
  std::string where;
};

/// One merge rule; its rank is its index in BpeModel::merges.
struct MergeEntry {
  std::string left;
  std::string right;
  std::string where;
};

/// A BPE model as read from files, before validation.
struct BpeModel {
  std::vector<VocabEntry> vocab;
  std::vector<MergeEntry> merges;
  /// Extra special tokens (tokenizer.json's added_tokens with special=true);
  /// each must be in `vocab` or carry its own id.
  std::vector<VocabEntry> specialTokens;
  /// tokenizer.json's model.unk_token (BpeOptions::unkToken overrides it).
  std::string unkToken;
  /// The pre-tokenizer's regex (GPT-2's unless tokenizer.json says Llama
  /// 3's).
  PreTokenizerKind preTokenizer = PreTokenizerKind::gpt2;
  /// tokenizer.json's model.ignore_merges: a piece that is in the
  /// vocabulary is one token, whatever the merges would make of it.
  bool ignoreMerges = false;
  /// SentencePiece's input (Llama 2, Mistral, Gemma): set by a Metaspace
  /// pre-tokenizer, the Prepend + Replace normalizer or Gemma's Replace
  /// alone. The vocabulary is
  /// then plain text with "▁" for spaces, not GPT-2's byte alphabet.
  std::optional<Metaspace> metaspace;
  /// model.byte_fallback (with `metaspace` only): a character the
  /// vocabulary lacks is its UTF-8 bytes' <0xNN> tokens.
  bool byteFallback = false;
  /// model.fuse_unk: a run of characters without a token is one unknown
  /// token.
  bool fuseUnk = false;
  /// The special token tokenizer.json's post-processor puts first, if any.
  std::string bosToken;
  /// An NFC normalizer (Qwen2's): the text between special tokens is put
  /// in Unicode normalization form C before it is split.
  bool nfc = false;
};

struct BpeOptions {
  /// Special tokens matched verbatim in the input before pre-tokenisation,
  /// when they are in the vocabulary (as Hugging Face does for added tokens).
  std::vector<std::string> specialTokens = {"<|endoftext|>"};
  /// The end-of-text token, when in the vocabulary.
  std::string eosToken = "<|endoftext|>";
  /// Where eosToken was named (a tokenizer_config.json), or empty for the
  /// default. A token a file names must be in the vocabulary.
  std::string eosTokenSource;
  /// Emitted for a byte the vocabulary cannot spell; empty: that is an error.
  std::string unkToken;
  /// Pieces cached (piece → ids); the cache stops growing when full.
  size_t cacheCapacity = 1 << 17;
  /// Replaces a SentencePiece model's own "▁" rules (its tokenizer.json's
  /// normalizer or pre-tokenizer), as transformers' LlamaTokenizer does
  /// (loadTokenizer sets it from tokenizer_config.json); a byte-level model
  /// ignores it.
  std::optional<Metaspace> metaspace;
};

/// A BPE tokenizer: byte-level (GPT-2, Llama 3) or SentencePiece's (Llama 2).
class BpeTokenizer final : public Tokenizer {
public:
  /// vocab.json + merges.txt → tokenizer; a malformed file is an error that
  /// names the file and line.
  static absl::StatusOr<std::unique_ptr<BpeTokenizer>>
  fromFiles(const std::string &vocabPath, const std::string &mergesPath,
            BpeOptions options = {});
  /// tokenizer.json (model.vocab, model.merges, added_tokens) → tokenizer.
  static absl::StatusOr<std::unique_ptr<BpeTokenizer>>
  fromTokenizerJson(const std::string &path, BpeOptions options = {});
  /// An in-memory model → tokenizer. Checks that ids are non-negative,
  /// unique and dense enough (below 65536 or twice the token count), symbols
  /// unique, and that both halves of every merge and their concatenation
  /// are in the vocabulary (as Hugging Face's BPE does).
  static absl::StatusOr<std::unique_ptr<BpeTokenizer>>
  create(const BpeModel &model, BpeOptions options = {});

  absl::StatusOr<std::vector<int32_t>>
  encode(std::string_view text) const override;
  absl::StatusOr<std::vector<int32_t>>
  encodeContinuation(std::string_view text) const override;
  absl::StatusOr<std::string>
  decode(absl::Span<const int32_t> ids) const override;
  int32_t vocabSize() const override { return int32_t(idToText_.size()); }
  std::optional<int32_t> eosId() const override { return eosId_; }
  std::optional<int32_t> bosId() const override { return bosId_; }

  /// A symbol in GPT-2's alphabet ("Ġthe") → its id, if in the vocabulary.
  std::optional<int32_t> tokenToId(std::string_view symbol) const;
  /// The number of merge rules.
  size_t numMerges() const { return merges_.size(); }

private:
  BpeTokenizer() = default;
  absl::Status build(const BpeModel &model, const BpeOptions &options);
  absl::Status addVocab(const VocabEntry &entry);
  absl::Status addSpecials(const BpeModel &model, const BpeOptions &options);
  absl::Status addMerges(const BpeModel &model);
  // encode() or encodeContinuation(): `continuation` puts no "▁" first.
  absl::StatusOr<std::vector<int32_t>> encodeText(std::string_view text,
                                                  bool continuation) const;
  // Appends the ids of one pre-tokenized piece, through the cache.
  absl::Status encodePiece(std::string_view piece,
                           std::vector<int32_t> &out) const;
  // The symbols BPE starts from: the piece's bytes, or its characters with
  // byte fallback; what the vocabulary cannot spell is the unknown token,
  // or an error without one.
  absl::Status initialSymbols(std::string_view piece,
                              std::vector<int32_t> &word) const;
  // BPE: merges the adjacent pair of lowest rank, the leftmost of equals,
  // until no pair has a rule (Hugging Face's Word::merge_all).
  std::vector<int32_t> mergeSymbols(const std::vector<int32_t> &word) const;

  // Ids below this are accepted whatever the vocabulary's size; above it an
  // id must be under twice the number of tokens.
  static constexpr size_t kAlwaysAllowedIds = size_t(1) << 16;
  size_t tokenCount_ = 0;
  size_t idLimit_ = kAlwaysAllowedIds;
  // id → the bytes it decodes to; `present` marks ids the vocabulary has.
  std::vector<std::string> idToText_;
  std::vector<bool> present_;
  absl::flat_hash_map<std::string, int32_t> symbolToId_;
  // Byte-level: each byte's token. SentencePiece's with byte fallback: each
  // byte's <0xNN> token. -1 where there is none.
  std::array<int32_t, 256> byteIds_{};
  // (left id << 32 | right id) → (rank, merged id).
  absl::flat_hash_map<uint64_t, std::pair<int32_t, int32_t>> merges_;
  std::vector<std::pair<std::string, int32_t>> specials_;
  std::optional<int32_t> eosId_;
  std::optional<int32_t> bosId_;
  std::optional<int32_t> unkId_;
  PreTokenizerKind preTokenizer_ = PreTokenizerKind::gpt2;
  std::optional<Metaspace> metaspace_;
  bool byteFallback_ = false;
  bool fuseUnk_ = false;
  bool ignoreMerges_ = false;
  bool nfc_ = false;
  size_t cacheCapacity_ = 0;

  mutable absl::Mutex cacheMutex_;
  mutable absl::flat_hash_map<std::string, std::vector<int32_t>>
      cache_ ABSL_GUARDED_BY(cacheMutex_);
};

/// vocab.json's text → entries; errors name `fileName` and the line.
absl::StatusOr<std::vector<VocabEntry>>
parseVocabJson(std::string_view text, std::string_view fileName);
/// merges.txt's text ("#version" line optional) → merges in rank order.
absl::StatusOr<std::vector<MergeEntry>>
parseMergesTxt(std::string_view text, std::string_view fileName);
/// tokenizer.json's text → its BPE model. Settings kiln does not implement
/// (a normalizer other than NFC, Llama 2's Prepend + Replace or Gemma's
/// Replace, a
/// pre-tokenizer other than GPT-2's ByteLevel, Llama 3's or Qwen2's Split +
/// ByteLevel or a Metaspace, dropout, byte_fallback outside SentencePiece's
/// layout, subword prefixes / suffixes) are errors rather than silently
/// different ids.
absl::StatusOr<BpeModel> parseTokenizerJson(std::string_view text,
                                            std::string_view fileName);

} // namespace kiln::data

#endif // KILN_FRONTENDS_DATA_BPETOKENIZER_H
