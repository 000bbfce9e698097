// Building, encoding and decoding for GPT-2's byte-level BPE. The model is
// validated once (ids, symbols, merges) and stored by id: a merge rule maps a
// pair of ids to its rank and the merged id, and each id knows the bytes it
// decodes to. Encoding a piece follows GPT-2's bpe(): find the adjacent pair
// with the lowest rank, merge every occurrence of it from left to right, and
// repeat until no adjacent pair has a rule.
#include "frontends/data/BpeTokenizer.h"

#include "frontends/data/Files.h"
#include "frontends/data/PreTokenizer.h"
#include "frontends/data/Unicode.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

#include <algorithm>
#include <limits>

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
    auto it = symbolToId_.find(bytesToSymbol(std::string(1, char(b))));
    byteIds_[b] = it == symbolToId_.end() ? -1 : it->second;
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

std::vector<int32_t> BpeTokenizer::mergePiece(std::string_view piece) const {
  std::vector<int32_t> word, next;
  word.reserve(piece.size());
  for (char c : piece) {
    int32_t id = byteIds_[static_cast<unsigned char>(c)];
    word.push_back(id >= 0 ? id : -int32_t(static_cast<unsigned char>(c)) - 1);
  }
  while (word.size() > 1) {
    // 1. The adjacent pair with the lowest rank.
    int32_t bestRank = std::numeric_limits<int32_t>::max();
    int32_t left = -1, right = -1, merged = -1;
    for (size_t i = 0; i + 1 < word.size(); ++i) {
      if (word[i] < 0 || word[i + 1] < 0)
        continue;
      auto it = merges_.find(pairKey(word[i], word[i + 1]));
      if (it != merges_.end() && it->second.first < bestRank) {
        bestRank = it->second.first;
        left = word[i], right = word[i + 1], merged = it->second.second;
      }
    }
    if (merged < 0)
      break;
    // 2. Merge each of its occurrences, left to right, without overlap.
    next.clear();
    for (size_t i = 0; i < word.size();) {
      if (i + 1 < word.size() && word[i] == left && word[i + 1] == right) {
        next.push_back(merged);
        i += 2;
      } else {
        next.push_back(word[i++]);
      }
    }
    word.swap(next);
  }
  return word;
}

absl::Status BpeTokenizer::encodePiece(std::string_view piece,
                                       std::vector<int32_t> &out) const {
  {
    absl::MutexLock lock(&cacheMutex_);
    auto it = cache_.find(asAbsl(piece));
    if (it != cache_.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return absl::OkStatus();
    }
  }
  std::vector<int32_t> ids;
  if (auto whole = ignoreMerges_ ? symbolToId_.find(bytesToSymbol(piece))
                                 : symbolToId_.end();
      whole != symbolToId_.end())
    ids.push_back(whole->second);
  else
    ids = mergePiece(piece);
  for (int32_t &id : ids) {
    if (id >= 0)
      continue;
    if (!unkId_)
      return absl::InvalidArgumentError(absl::StrFormat(
          "byte 0x%02X (symbol \"%s\") is not in the vocabulary and no "
          "unknown token is set",
          -id - 1, bytesToSymbol(std::string(1, char(-id - 1)))));
    id = *unkId_;
  }
  out.insert(out.end(), ids.begin(), ids.end());
  absl::MutexLock lock(&cacheMutex_);
  if (cache_.size() < cacheCapacity_)
    cache_.emplace(std::string(piece), std::move(ids));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int32_t>>
BpeTokenizer::encode(std::string_view text) const {
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
    for (std::string_view piece :
         preTokenize(text.substr(pos, end - pos), preTokenizer_))
      if (absl::Status s = encodePiece(piece, ids); !s.ok())
        return s;
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
  return text;
}

} // namespace kiln::data
