// Building, encoding and decoding for BPE tokenizers. The model is validated
// once (ids, symbols, merges) and stored by id: a merge rule maps a pair of
// ids to its rank and the merged id, and each id knows the bytes it decodes
// to. Encoding a piece follows Hugging Face's BPE: a queue of adjacent pairs
// by rank, then position, merged one at a time until no adjacent pair has a
// rule, which gives GPT-2's bpe() ids in O(n log n) rather than its rescan
// per merge (a SentencePiece piece can be a whole line).
#include "frontends/data/BpeTokenizer.h"

#include "frontends/data/Files.h"
#include "frontends/data/Normalize.h"
#include "frontends/data/PreTokenizer.h"
#include "frontends/data/Unicode.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

#include <algorithm>
#include <limits>
#include <queue>

namespace kiln::data {
namespace {

uint64_t pairKey(int32_t left, int32_t right) {
  return (uint64_t(uint32_t(left)) << 32) | uint32_t(right);
}

std::string at(std::string_view where) {
  return where.empty() ? std::string() : absl::StrCat(asAbsl(where), ": ");
}

} // namespace

absl::Status BpeTokenizer::addVocab(const VocabEntry &entry) {
  if (entry.id < 0)
    return absl::InvalidArgumentError(absl::StrCat(
        at(entry.where), "token \"", entry.symbol, "\" has negative id ",
        entry.id));
  // The id table is dense (and the model's embedding has a row per id), so
  // an id far past the number of tokens would size both by the id alone.
  if (size_t(entry.id) >= idLimit_)
    return absl::InvalidArgumentError(absl::StrCat(
        at(entry.where), "token \"", entry.symbol, "\" has id ", entry.id,
        ": ids must stay below ", idLimit_, " (65536, or twice the ",
        tokenCount_, " tokens)"));
  if (!symbolToId_.emplace(entry.symbol, entry.id).second)
    return absl::InvalidArgumentError(absl::StrCat(
        at(entry.where), "token \"", entry.symbol, "\" appears twice"));
  size_t id = size_t(entry.id);
  if (id >= idToText_.size()) {
    idToText_.resize(id + 1);
    present_.resize(id + 1, false);
  }
  if (present_[id])
    return absl::InvalidArgumentError(absl::StrCat(
        at(entry.where), "id ", id, " is used by \"", entry.symbol,
        "\" and by another token"));
  present_[id] = true;
  if (metaspace_) {
    idToText_[id] = metaspaceSymbolText(entry.symbol, *metaspace_);
    return absl::OkStatus();
  }
  // Symbols outside GPT-2's alphabet (added tokens) decode to themselves.
  std::optional<std::string> bytes = symbolToBytes(entry.symbol);
  idToText_[id] = bytes ? std::move(*bytes) : entry.symbol;
  return absl::OkStatus();
}

absl::Status BpeTokenizer::addSpecials(const BpeModel &model,
                                       const BpeOptions &options) {
  for (const VocabEntry &special : model.specialTokens) {
    if (special.symbol.empty())
      return absl::InvalidArgumentError(
          absl::StrCat(at(special.where), "special token is empty"));
    auto it = symbolToId_.find(special.symbol);
    if (it == symbolToId_.end()) {
      if (absl::Status s = addVocab(special); !s.ok())
        return s;
    } else if (it->second != special.id) {
      return absl::InvalidArgumentError(absl::StrCat(
          at(special.where), "special token \"", special.symbol, "\" has id ",
          special.id, " but the vocabulary gives it ", it->second));
    }
    // An added token's content is raw text, not GPT-2's alphabet.
    idToText_[special.id] = special.symbol;
    specials_.emplace_back(special.symbol, special.id);
  }
  for (const std::string &special : options.specialTokens) {
    auto it = symbolToId_.find(special);
    bool known = std::any_of(specials_.begin(), specials_.end(),
                             [&](const auto &s) { return s.first == special; });
    if (!special.empty() && it != symbolToId_.end() && !known)
      specials_.emplace_back(special, it->second);
  }
  // Longest first, so that at one position the longest special token wins.
  std::stable_sort(specials_.begin(), specials_.end(),
                   [](const auto &a, const auto &b) {
                     return a.first.size() > b.first.size();
                   });
  return absl::OkStatus();
}

absl::Status BpeTokenizer::addMerges(const BpeModel &model) {
  for (size_t rank = 0; rank < model.merges.size(); ++rank) {
    const MergeEntry &merge = model.merges[rank];
    std::string merged = merge.left + merge.right;
    const std::string *parts[] = {&merge.left, &merge.right, &merged};
    for (const std::string *part : parts)
      if (!symbolToId_.contains(*part))
        return absl::InvalidArgumentError(absl::StrCat(
            at(merge.where), "merge \"", merge.left, " ", merge.right,
            "\": \"", *part, "\" is not in the vocabulary"));
    // A repeated rule keeps its last rank, as GPT-2's dict and HF's map do.
    merges_[pairKey(symbolToId_[merge.left], symbolToId_[merge.right])] = {
        int32_t(rank), symbolToId_[merged]};
  }
  return absl::OkStatus();
}

absl::Status BpeTokenizer::build(const BpeModel &model,
                                 const BpeOptions &options) {
  if (model.byteFallback && !model.metaspace)
    return absl::InvalidArgumentError(
        "byte_fallback needs SentencePiece's input (a Metaspace "
        "pre-tokenizer or a Replace(\" \") normalizer)");
  metaspace_ = model.metaspace;
  if (metaspace_ && options.metaspace)
    metaspace_ = options.metaspace;
  if (metaspace_ && metaspace_->replacement.empty())
    return absl::InvalidArgumentError(
        "the character that stands for a space is empty");
  byteFallback_ = model.byteFallback;
  fuseUnk_ = model.fuseUnk;
  tokenCount_ = model.vocab.size() + model.specialTokens.size();
  idLimit_ = std::max<size_t>(2 * tokenCount_, kAlwaysAllowedIds);
  for (const VocabEntry &entry : model.vocab)
    if (absl::Status s = addVocab(entry); !s.ok())
      return s;
  if (absl::Status s = addSpecials(model, options); !s.ok())
    return s;
  if (absl::Status s = addMerges(model); !s.ok())
    return s;
  for (int b = 0; b < 256; ++b) {
    byteIds_[b] = -1;
    if (metaspace_ && !byteFallback_)
      continue;
    auto it = symbolToId_.find(
        metaspace_ ? byteFallbackSymbol(static_cast<unsigned char>(b))
                   : bytesToSymbol(std::string(1, char(b))));
    if (it != symbolToId_.end())
      byteIds_[b] = it->second;
  }
  if (auto it = symbolToId_.find(options.eosToken); it != symbolToId_.end())
    eosId_ = it->second;
  else if (!options.eosTokenSource.empty())
    return absl::InvalidArgumentError(
        absl::StrCat(options.eosTokenSource, ": eos_token \"", options.eosToken,
                     "\" is not in the vocabulary"));
  if (!model.bosToken.empty()) {
    auto it = symbolToId_.find(model.bosToken);
    if (it == symbolToId_.end())
      return absl::InvalidArgumentError(absl::StrCat(
          "the post-processor's token \"", model.bosToken,
          "\" is not in the vocabulary"));
    bosId_ = it->second;
  }
  preTokenizer_ = model.preTokenizer;
  ignoreMerges_ = model.ignoreMerges;
  nfc_ = model.nfc;
  const std::string &unk =
      options.unkToken.empty() ? model.unkToken : options.unkToken;
  if (!unk.empty()) {
    auto it = symbolToId_.find(unk);
    if (it == symbolToId_.end())
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown token \"", unk, "\" is not in the vocabulary"));
    unkId_ = it->second;
  }
  cacheCapacity_ = options.cacheCapacity;
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<BpeTokenizer>>
BpeTokenizer::create(const BpeModel &model, BpeOptions options) {
  std::unique_ptr<BpeTokenizer> tokenizer(new BpeTokenizer());
  if (absl::Status s = tokenizer->build(model, options); !s.ok())
    return s;
  return tokenizer;
}

std::optional<int32_t> BpeTokenizer::tokenToId(std::string_view symbol) const {
  auto it = symbolToId_.find(asAbsl(symbol));
  if (it == symbolToId_.end())
    return std::nullopt;
  return it->second;
}

absl::Status BpeTokenizer::initialSymbols(std::string_view piece,
                                          std::vector<int32_t> &word) const {
  bool lastWasUnknown = false;
  auto unknown = [&](const std::string &what) -> absl::Status {
    if (!unkId_)
      return absl::InvalidArgumentError(absl::StrCat(
          what, " is not in the vocabulary and no unknown token is set"));
    if (!(fuseUnk_ && lastWasUnknown))
      word.push_back(*unkId_);
    lastWasUnknown = true;
    return absl::OkStatus();
  };
  for (size_t pos = 0; pos < piece.size();) {
    // Byte-level: one byte a symbol. SentencePiece's: one character.
    size_t length = metaspace_ ? size_t(decodeUtf8(piece, pos).length) : 1;
    std::string_view unit = piece.substr(pos, length);
    pos += length;
    if (metaspace_) {
      if (auto it = symbolToId_.find(asAbsl(unit)); it != symbolToId_.end()) {
        word.push_back(it->second);
        lastWasUnknown = false;
        continue;
      }
    }
    bool spelled = std::all_of(unit.begin(), unit.end(), [&](char c) {
      return byteIds_[static_cast<unsigned char>(c)] >= 0;
    });
    if (spelled) {
      for (char c : unit)
        word.push_back(byteIds_[static_cast<unsigned char>(c)]);
      lastWasUnknown = false;
      continue;
    }
    absl::Status status =
        metaspace_
            ? unknown(absl::StrCat("character \"", asAbsl(unit), "\"",
                                   byteFallback_ ? " (or a byte of it)" : ""))
            : unknown(absl::StrFormat("byte 0x%02X (symbol \"%s\")",
                                      static_cast<unsigned char>(unit[0]),
                                      bytesToSymbol(unit)));
    if (!status.ok())
      return status;
  }
  return absl::OkStatus();
}

std::vector<int32_t>
BpeTokenizer::mergeSymbols(const std::vector<int32_t> &word) const {
  // The symbols as a linked list; a merged-away symbol is marked dead.
  struct Symbol {
    int32_t id;
    int32_t prev, next;
    bool alive;
  };
  std::vector<Symbol> symbols(word.size());
  for (size_t i = 0; i < word.size(); ++i)
    symbols[i] = {word[i], int32_t(i) - 1,
                  i + 1 < word.size() ? int32_t(i + 1) : -1, true};
  // A candidate merge of the symbol at `pos` with its next one. The queue
  // pops the lowest rank, then the leftmost position.
  struct Candidate {
    int32_t rank, pos, merged;
    bool operator>(const Candidate &other) const {
      return rank != other.rank ? rank > other.rank : pos > other.pos;
    }
  };
  std::priority_queue<Candidate, std::vector<Candidate>,
                      std::greater<Candidate>>
      queue;
  auto consider = [&](int32_t pos) {
    int32_t next = symbols[pos].next;
    if (next < 0)
      return;
    auto it = merges_.find(pairKey(symbols[pos].id, symbols[next].id));
    if (it != merges_.end())
      queue.push({it->second.first, pos, it->second.second});
  };
  for (size_t i = 0; i + 1 < word.size(); ++i)
    consider(int32_t(i));
  while (!queue.empty()) {
    Candidate top = queue.top();
    queue.pop();
    Symbol &left = symbols[top.pos];
    if (!left.alive || left.next < 0)
      continue;
    // A stale candidate: a neighbour changed since it was queued.
    auto rule = merges_.find(pairKey(left.id, symbols[left.next].id));
    if (rule == merges_.end() || rule->second.second != top.merged)
      continue;
    Symbol &right = symbols[left.next];
    right.alive = false;
    left.id = top.merged;
    left.next = right.next;
    if (right.next >= 0)
      symbols[right.next].prev = top.pos;
    if (left.prev >= 0)
      consider(left.prev);
    consider(top.pos);
  }
  std::vector<int32_t> merged;
  merged.reserve(word.size());
  for (const Symbol &symbol : symbols)
    if (symbol.alive)
      merged.push_back(symbol.id);
  return merged;
}

absl::Status BpeTokenizer::encodePiece(std::string_view piece,
                                       std::vector<int32_t> &out) const {
  // Long pieces (a SentencePiece line) are rarely seen twice: not cached.
  constexpr size_t kLongestCachedPiece = 256;
  bool cached = piece.size() <= kLongestCachedPiece;
  if (cached) {
    absl::MutexLock lock(&cacheMutex_);
    auto it = cache_.find(asAbsl(piece));
    if (it != cache_.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return absl::OkStatus();
    }
  }
  std::vector<int32_t> ids;
  auto whole = symbolToId_.end();
  if (ignoreMerges_)
    whole = metaspace_ ? symbolToId_.find(asAbsl(piece))
                       : symbolToId_.find(bytesToSymbol(piece));
  if (whole != symbolToId_.end()) {
    ids.push_back(whole->second);
  } else {
    std::vector<int32_t> word;
    word.reserve(piece.size());
    if (absl::Status s = initialSymbols(piece, word); !s.ok())
      return s;
    ids = mergeSymbols(word);
  }
  out.insert(out.end(), ids.begin(), ids.end());
  absl::MutexLock lock(&cacheMutex_);
  if (cached && cache_.size() < cacheCapacity_)
    cache_.emplace(std::string(piece), std::move(ids));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int32_t>>
BpeTokenizer::encode(std::string_view text) const {
  return encodeText(text, /*continuation=*/false);
}

absl::StatusOr<std::vector<int32_t>>
BpeTokenizer::encodeContinuation(std::string_view text) const {
  return encodeText(text, /*continuation=*/true);
}

absl::StatusOr<std::vector<int32_t>>
BpeTokenizer::encodeText(std::string_view text, bool continuation) const {
  std::vector<int32_t> ids;
  size_t pos = 0;
  while (pos < text.size()) {
    // The next special token; at equal positions the longest (sorted first).
    size_t specialAt = std::string_view::npos;
    const std::pair<std::string, int32_t> *special = nullptr;
    for (const auto &candidate : specials_) {
      size_t found = text.find(candidate.first, pos);
      if (found < specialAt)
        specialAt = found, special = &candidate;
    }
    size_t end = special ? specialAt : text.size();
    std::string_view span = text.substr(pos, end - pos);
    // Special tokens are matched in the text as written (their
    // "normalized": false), the rest normalized, as Hugging Face does.
    std::string normalized;
    if (nfc_) {
      normalized = nfc(span);
      span = normalized;
    }
    if (metaspace_) {
      SpanAt at = pos > 0        ? SpanAt::afterSpecialToken
                  : continuation ? SpanAt::continuation
                                 : SpanAt::textStart;
      for (const std::string &piece : metaspacePieces(span, at, *metaspace_))
        if (absl::Status s = encodePiece(piece, ids); !s.ok())
          return s;
    } else {
      for (std::string_view piece : preTokenize(span, preTokenizer_))
        if (absl::Status s = encodePiece(piece, ids); !s.ok())
          return s;
    }
    if (!special)
      break;
    ids.push_back(special->second);
    pos = specialAt + special->first.size();
  }
  return ids;
}

absl::StatusOr<std::string>
BpeTokenizer::decode(absl::Span<const int32_t> ids) const {
  std::string text;
  for (int32_t id : ids) {
    if (id < 0 || size_t(id) >= idToText_.size() || !present_[id])
      return absl::InvalidArgumentError(
          absl::StrCat("token id ", id, " is not in the vocabulary (size ",
                       idToText_.size(), ")"));
    text += idToText_[id];
  }
  // SentencePiece's decoder drops the space that the encoder put first.
  if (metaspace_ && metaspace_->stripFirstSpace && !text.empty() &&
      text[0] == ' ')
    text.erase(0, 1);
  return text;
}

} // namespace kiln::data
