// Reading Hugging Face's tokenizer files into a BpeModel. vocab.json is read
// by a small dedicated parser (an object of string → integer) so that every
// error, including a duplicate token found later, names the line it is on;
// merges.txt is one "left right" rule per line in rank order after an
// optional "#version" line; tokenizer.json is general JSON (llvm::json), read
// for model.vocab, model.merges (strings "a b" or pairs ["a", "b"]),
// added_tokens and the settings that decide how text becomes pieces (the
// normalizer, the pre-tokenizer and, for SentencePiece's layout, the
// decoder), and its errors name the JSON path.
#include "frontends/data/BpeTokenizer.h"

#include "frontends/data/Files.h"
#include "frontends/data/Unicode.h"

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "llvm/Support/JSON.h"

#include <limits>

namespace kiln::data {
namespace {

class VocabJsonParser {
public:
  VocabJsonParser(std::string_view text, std::string_view file)
      : text_(text), file_(asAbsl(file)) {}

  absl::StatusOr<std::vector<VocabEntry>> parse() {
    std::vector<VocabEntry> entries;
    skipSpace();
    if (!consume('{'))
      return error("expected '{' to start the vocabulary object");
    skipSpace();
    if (consume('}'))
      return finish(std::move(entries));
    while (true) {
      skipSpace();
      VocabEntry entry;
      entry.where = absl::StrCat(file_, ":", line_);
      absl::StatusOr<std::string> symbol = parseString();
      if (!symbol.ok())
        return symbol.status();
      entry.symbol = std::move(*symbol);
      skipSpace();
      if (!consume(':'))
        return error("expected ':' after a token");
      skipSpace();
      absl::StatusOr<int32_t> id = parseId();
      if (!id.ok())
        return id.status();
      entry.id = *id;
      entries.push_back(std::move(entry));
      skipSpace();
      if (consume('}'))
        return finish(std::move(entries));
      if (!consume(','))
        return error("expected ',' or '}' after a token's id");
    }
  }

private:
  absl::Status error(std::string_view message) const {
    return absl::InvalidArgumentError(
        absl::StrCat(file_, ":", line_, ": ", asAbsl(message)));
  }
  bool consume(char c) {
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void skipSpace() {
    for (; pos_ < text_.size(); ++pos_) {
      char c = text_[pos_];
      if (c == '\n')
        ++line_;
      else if (c != ' ' && c != '\t' && c != '\r')
        break;
    }
  }
  absl::StatusOr<std::vector<VocabEntry>>
  finish(std::vector<VocabEntry> entries) {
    skipSpace();
    if (pos_ != text_.size())
      return error("unexpected text after the vocabulary object");
    return entries;
  }

  absl::StatusOr<uint32_t> parseHex4() {
    if (pos_ + 4 > text_.size())
      return error("truncated \\u escape");
    uint32_t value = 0;
    for (int i = 0; i < 4; ++i) {
      char c = text_[pos_++];
      int digit = (c >= '0' && c <= '9')   ? c - '0'
                  : (c >= 'a' && c <= 'f') ? c - 'a' + 10
                  : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                           : -1;
      if (digit < 0)
        return error("bad hex digit in \\u escape");
      value = value * 16 + uint32_t(digit);
    }
    return value;
  }

  // After "\u": one code point, joining a UTF-16 surrogate pair.
  absl::StatusOr<char32_t> parseUnicodeEscape() {
    absl::StatusOr<uint32_t> high = parseHex4();
    if (!high.ok())
      return high.status();
    if (*high < 0xD800 || *high > 0xDFFF)
      return char32_t(*high);
    if (*high > 0xDBFF || text_.substr(pos_, 2) != "\\u")
      return error("unpaired UTF-16 surrogate in \\u escape");
    pos_ += 2;
    absl::StatusOr<uint32_t> low = parseHex4();
    if (!low.ok())
      return low.status();
    if (*low < 0xDC00 || *low > 0xDFFF)
      return error("unpaired UTF-16 surrogate in \\u escape");
    return char32_t(0x10000 + ((*high - 0xD800) << 10) + (*low - 0xDC00));
  }

  absl::StatusOr<std::string> parseString() {
    if (!consume('"'))
      return error("expected a string (a token)");
    std::string out;
    while (true) {
      if (pos_ >= text_.size())
        return error("unterminated string");
      char c = text_[pos_++];
      if (c == '"')
        return out;
      if (static_cast<unsigned char>(c) < 0x20)
        return error("control character inside a string");
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (pos_ >= text_.size())
        return error("unterminated string");
      char e = text_[pos_++];
      switch (e) {
      case '"': case '\\': case '/': out.push_back(e); break;
      case 'b': out.push_back('\b'); break;
      case 'f': out.push_back('\f'); break;
      case 'n': out.push_back('\n'); break;
      case 'r': out.push_back('\r'); break;
      case 't': out.push_back('\t'); break;
      case 'u': {
        absl::StatusOr<char32_t> cp = parseUnicodeEscape();
        if (!cp.ok())
          return cp.status();
        appendUtf8(*cp, out);
        break;
      }
      default:
        return error(absl::StrCat("unknown escape '\\", std::string(1, e),
                                  "' in a string"));
      }
    }
  }

  absl::StatusOr<int32_t> parseId() {
    size_t start = pos_;
    int64_t value = 0;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      value = value * 10 + (text_[pos_++] - '0');
      if (value > std::numeric_limits<int32_t>::max())
        return error("token id does not fit in 32 bits");
    }
    bool fraction = pos_ < text_.size() &&
                    (text_[pos_] == '.' || text_[pos_] == 'e' ||
                     text_[pos_] == 'E');
    if (pos_ == start || fraction)
      return error("expected a non-negative integer token id");
    return int32_t(value);
  }

  std::string_view text_;
  absl::string_view file_;
  size_t pos_ = 0;
  int line_ = 1;
};

absl::Status jsonError(absl::string_view file, absl::string_view path,
                       absl::string_view message) {
  return absl::InvalidArgumentError(
      absl::StrCat(file, ": ", path, ": ", message));
}

// model.merges[i]: "left right" (older files) or ["left", "right"].
absl::StatusOr<MergeEntry> jsonMerge(const llvm::json::Value &value,
                                     absl::string_view file, size_t index) {
  MergeEntry merge;
  merge.where = absl::StrCat(file, ": model.merges[", index, "]");
  if (std::optional<llvm::StringRef> s = value.getAsString()) {
    std::vector<std::string> parts = absl::StrSplit(s->str(), ' ');
    if (parts.size() != 2 || parts[0].empty() || parts[1].empty())
      return absl::InvalidArgumentError(absl::StrCat(
          merge.where, ": expected two symbols separated by one space"));
    merge.left = parts[0], merge.right = parts[1];
    return merge;
  }
  const llvm::json::Array *pair = value.getAsArray();
  if (!pair || pair->size() != 2 || !(*pair)[0].getAsString() ||
      !(*pair)[1].getAsString())
    return absl::InvalidArgumentError(absl::StrCat(
        merge.where, ": expected \"left right\" or [\"left\", \"right\"]"));
  merge.left = (*pair)[0].getAsString()->str();
  merge.right = (*pair)[1].getAsString()->str();
  return merge;
}

absl::Status readAddedTokens(const llvm::json::Array &added,
                             absl::string_view file, BpeModel &model) {
  for (size_t i = 0; i < added.size(); ++i) {
    std::string path = absl::StrCat("added_tokens[", i, "]");
    const llvm::json::Object *token = added[i].getAsObject();
    std::optional<int64_t> id = token ? token->getInteger("id") : std::nullopt;
    std::optional<llvm::StringRef> content =
        token ? token->getString("content") : std::nullopt;
    if (!id || !content || *id < 0 || *id > std::numeric_limits<int32_t>::max())
      return jsonError(file, path,
                       "expected an object with \"id\" (non-negative integer) "
                       "and \"content\" (string)");
    model.specialTokens.push_back(
        {content->str(), int32_t(*id), absl::StrCat(file, ": ", path)});
  }
  return absl::OkStatus();
}

// Whether a tokenizer.json value is absent, null, false or "".
bool unset(const llvm::json::Value *value) {
  if (!value || value->kind() == llvm::json::Value::Null)
    return true;
  if (std::optional<bool> b = value->getAsBoolean())
    return !*b;
  std::optional<llvm::StringRef> s = value->getAsString();
  return s && s->empty();
}

// A Replace(" " → replacement) normalizer step: its replacement, or nullopt.
std::optional<llvm::StringRef>
spaceReplacement(const llvm::json::Object *step) {
  const llvm::json::Object *pattern =
      step ? step->getObject("pattern") : nullptr;
  std::optional<llvm::StringRef> with =
      step ? step->getString("content") : std::nullopt;
  if (!step || step->getString("type") != llvm::StringRef("Replace") ||
      !pattern || pattern->getString("String") != llvm::StringRef(" ") ||
      !with || with->empty())
    return std::nullopt;
  return with;
}

// The normalizers that are SentencePiece's way in: Llama 2's Sequence of
// Prepend("▁") and Replace(" " → "▁"), which puts the "▁" before every
// span, even one that starts with a space; and Gemma's Replace alone,
// which puts nothing first.
std::optional<Metaspace>
normalizerMetaspace(const llvm::json::Object &normalizer) {
  if (std::optional<llvm::StringRef> with = spaceReplacement(&normalizer)) {
    Metaspace metaspace;
    metaspace.replacement = with->str();
    metaspace.prepend = Metaspace::Prepend::never;
    return metaspace;
  }
  const llvm::json::Array *steps = normalizer.getArray("normalizers");
  if (normalizer.getString("type") != llvm::StringRef("Sequence") || !steps ||
      steps->size() != 2)
    return std::nullopt;
  const llvm::json::Object *prepend = (*steps)[0].getAsObject();
  std::optional<llvm::StringRef> with =
      prepend ? prepend->getString("prepend") : std::nullopt;
  if (!prepend || prepend->getString("type") != llvm::StringRef("Prepend") ||
      !with || with->empty() ||
      spaceReplacement((*steps)[1].getAsObject()) != with)
    return std::nullopt;
  Metaspace metaspace;
  metaspace.replacement = with->str();
  metaspace.prependUnconditionally = true;
  return metaspace;
}

// Gemma 3's pre-tokenizer beside its Replace normalizer: a Split on " "
// that keeps each space with the text before it. The normalizer has
// replaced every space by then, so it splits nothing.
bool splitsOnlyOnSpaces(const llvm::json::Object &pre) {
  const llvm::json::Object *pattern = pre.getObject("pattern");
  return pre.getString("type") == llvm::StringRef("Split") && pattern &&
         pattern->getString("String") == llvm::StringRef(" ") &&
         pre.getString("behavior") == llvm::StringRef("MergedWithPrevious") &&
         unset(pre.get("invert"));
}

// A Metaspace pre-tokenizer: its replacement, when it puts one first
// (prepend_scheme, or add_prefix_space in older files) and whether it
// splits (older files have no "split" and split).
absl::StatusOr<Metaspace> readMetaspace(const llvm::json::Object &pre,
                                        absl::string_view file) {
  Metaspace metaspace;
  std::optional<llvm::StringRef> replacement = pre.getString("replacement");
  std::optional<llvm::StringRef> scheme = pre.getString("prepend_scheme");
  std::optional<bool> addPrefix = pre.getBoolean("add_prefix_space");
  if (!replacement || replacement->empty() ||
      decodeUtf8(*replacement, 0).length != int(replacement->size()))
    return jsonError(file, "pre_tokenizer.replacement",
                     "expected one character");
  metaspace.replacement = replacement->str();
  if (scheme == llvm::StringRef("always") || (!scheme && addPrefix != false))
    metaspace.prepend = Metaspace::Prepend::always;
  else if (scheme == llvm::StringRef("first"))
    metaspace.prepend = Metaspace::Prepend::first;
  else if (scheme == llvm::StringRef("never") ||
           (!scheme && addPrefix == false))
    metaspace.prepend = Metaspace::Prepend::never;
  else
    return jsonError(file, "pre_tokenizer.prepend_scheme",
                     "expected \"always\", \"first\" or \"never\"");
  metaspace.split = pre.getBoolean("split").value_or(true);
  return metaspace;
}

// The pre-tokenizer → which of kiln's four it is: GPT-2's ByteLevel (with
// its own regex), Llama 3's, Qwen2's or o200k's Sequence of a Split on its
// regex (Isolated) and a ByteLevel without a regex, or SentencePiece's
// Metaspace. Anything else would split differently. Llama 2's and Gemma's
// normalizers (already in `model`) come with none, or Gemma 3's Split.
absl::Status readPreTokenizer(const llvm::json::Object &root,
                              absl::string_view file, BpeModel &model) {
  const llvm::json::Object *pre = root.getObject("pre_tokenizer");
  if (!pre)
    return absl::OkStatus(); // GPT-2's files without one, or Llama 2's
  if (model.metaspace && splitsOnlyOnSpaces(*pre))
    return absl::OkStatus();
  if (model.metaspace)
    return jsonError(file, "pre_tokenizer",
                     "unsupported beside a Replace(\" \") normalizer "
                     "(expected null, or a Split on \" \")");
  if (pre->getString("type") == llvm::StringRef("Metaspace")) {
    absl::StatusOr<Metaspace> metaspace = readMetaspace(*pre, file);
    if (!metaspace.ok())
      return metaspace.status();
    model.metaspace = std::move(*metaspace);
    return absl::OkStatus();
  }
  auto byteLevel = [](const llvm::json::Object *o, bool regex) {
    const llvm::json::Value *useRegex = o ? o->get("use_regex") : nullptr;
    bool usesRegex = !useRegex || useRegex->getAsBoolean() != false;
    return o && o->getString("type") == llvm::StringRef("ByteLevel") &&
           unset(o->get("add_prefix_space")) && usesRegex == regex;
  };
  if (byteLevel(pre, /*regex=*/true)) {
    model.preTokenizer = PreTokenizerKind::gpt2;
    return absl::OkStatus();
  }
  const llvm::json::Array *steps = pre->getArray("pretokenizers");
  if (pre->getString("type") == llvm::StringRef("Sequence") && steps &&
      steps->size() == 2) {
    const llvm::json::Object *split = (*steps)[0].getAsObject();
    const llvm::json::Object *pattern =
        split ? split->getObject("pattern") : nullptr;
    std::optional<llvm::StringRef> regex =
        pattern ? pattern->getString("Regex") : std::nullopt;
    for (PreTokenizerKind kind :
         {PreTokenizerKind::llama3, PreTokenizerKind::qwen2,
          PreTokenizerKind::o200k})
      if (split && split->getString("type") == llvm::StringRef("Split") &&
          regex && std::string_view(*regex) == preTokenizerPattern(kind) &&
          split->getString("behavior") == llvm::StringRef("Isolated") &&
          unset(split->get("invert")) &&
          byteLevel((*steps)[1].getAsObject(), /*regex=*/false)) {
        model.preTokenizer = kind;
        return absl::OkStatus();
      }
  }
  return jsonError(file, "pre_tokenizer",
                   "unsupported (kiln implements GPT-2's ByteLevel "
                   "pre-tokenizer, Llama 3's, Qwen2's and o200k's (Phi-4's) "
                   "Split + ByteLevel, "
                   "without add_prefix_space, and SentencePiece's "
                   "Metaspace)");
}

// Whether SentencePiece's decoder drops the space the first token starts
// with: a Strip of a leading " " (Llama 2's Sequence of Replace,
// ByteFallback, Fuse, Strip), or a Metaspace decoder that prepends.
bool decoderStripsFirstSpace(const llvm::json::Object *decoder) {
  if (!decoder)
    return false;
  if (const llvm::json::Array *steps = decoder->getArray("decoders"))
    for (const llvm::json::Value &step : *steps)
      if (decoderStripsFirstSpace(step.getAsObject()))
        return true;
  std::optional<llvm::StringRef> type = decoder->getString("type");
  if (type == llvm::StringRef("Strip"))
    return decoder->getString("content") == llvm::StringRef(" ") &&
           decoder->getInteger("start").value_or(0) >= 1;
  if (type == llvm::StringRef("Metaspace"))
    return decoder->getString("prepend_scheme") != llvm::StringRef("never") &&
           decoder->getBoolean("add_prefix_space") != false;
  return false;
}

// The beginning-of-sequence token a TemplateProcessing post-processor puts
// before each text (Llama's <|begin_of_text|>), alone or in a Sequence.
void readBosToken(const llvm::json::Object *post, BpeModel &model) {
  if (!post)
    return;
  if (const llvm::json::Array *steps = post->getArray("processors"))
    for (const llvm::json::Value &step : *steps)
      readBosToken(step.getAsObject(), model);
  const llvm::json::Array *single = post->getArray("single");
  if (post->getString("type") != llvm::StringRef("TemplateProcessing") ||
      !single || single->empty())
    return;
  const llvm::json::Object *first = (*single)[0].getAsObject();
  const llvm::json::Object *special =
      first ? first->getObject("SpecialToken") : nullptr;
  if (std::optional<llvm::StringRef> id =
          special ? special->getString("id") : std::nullopt)
    model.bosToken = id->str();
}

// Refuses the settings that would make kiln's ids differ from the file's.
absl::Status checkSupported(const llvm::json::Object &root,
                            const llvm::json::Object &model,
                            absl::string_view file, BpeModel &result) {
  if (!unset(root.get("normalizer"))) {
    const llvm::json::Object *normalizer = root.getObject("normalizer");
    result.nfc =
        normalizer && normalizer->getString("type") == llvm::StringRef("NFC");
    if (!result.nfc)
      result.metaspace =
          normalizer ? normalizerMetaspace(*normalizer) : std::nullopt;
    if (!result.metaspace && !result.nfc)
      return jsonError(file, "normalizer",
                       "unsupported (expected null, NFC, Llama 2's "
                       "Sequence of Prepend and Replace of \" \", or "
                       "Gemma's Replace of \" \")");
  }
  if (absl::Status s = readPreTokenizer(root, file, result); !s.ok())
    return s;
  for (const char *key : {"dropout", "byte_fallback",
                          "continuing_subword_prefix", "end_of_word_suffix"})
    if (!unset(model.get(key)) &&
        !(result.metaspace && std::string_view(key) == "byte_fallback"))
      return jsonError(file, absl::StrCat("model.", key),
                       "unsupported (expected null, false or \"\")");
  result.byteFallback = model.getBoolean("byte_fallback").value_or(false);
  result.fuseUnk = model.getBoolean("fuse_unk").value_or(false);
  result.ignoreMerges = model.getBoolean("ignore_merges").value_or(false);
  if (result.metaspace)
    result.metaspace->stripFirstSpace =
        decoderStripsFirstSpace(root.getObject("decoder"));
  readBosToken(root.getObject("post_processor"), result);
  return absl::OkStatus();
}

} // namespace

absl::StatusOr<std::vector<VocabEntry>>
parseVocabJson(std::string_view text, std::string_view fileName) {
  return VocabJsonParser(text, fileName).parse();
}

absl::StatusOr<std::vector<MergeEntry>>
parseMergesTxt(std::string_view text, std::string_view fileName) {
  std::vector<MergeEntry> merges;
  int lineNumber = 0;
  absl::string_view file = asAbsl(fileName);
  for (absl::string_view line : absl::StrSplit(asAbsl(text), '\n')) {
    ++lineNumber;
    if (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);
    if (line.empty() || (lineNumber == 1 && absl::StartsWith(line, "#version")))
      continue;
    std::vector<absl::string_view> parts = absl::StrSplit(line, ' ');
    std::string where = absl::StrCat(file, ":", lineNumber);
    if (parts.size() != 2 || parts[0].empty() || parts[1].empty())
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": expected two symbols separated by one "
                              "space, got \"", line, "\""));
    merges.push_back({std::string(parts[0]), std::string(parts[1]), where});
  }
  return merges;
}

absl::StatusOr<BpeModel> parseTokenizerJson(std::string_view text,
                                            std::string_view fileName) {
  absl::string_view file = asAbsl(fileName);
  absl::StatusOr<llvm::json::Value> parsed = parseJsonText(text, file);
  if (!parsed.ok())
    return parsed.status();
  const llvm::json::Object *root = parsed->getAsObject();
  const llvm::json::Object *model = root ? root->getObject("model") : nullptr;
  if (!model)
    return jsonError(file, "model", "missing (expected an object)");
  if (std::optional<llvm::StringRef> type = model->getString("type");
      type && *type != "BPE")
    return jsonError(file, "model.type",
                     absl::StrCat("expected \"BPE\", got \"", type->str(),
                                  "\""));
  BpeModel result;
  if (absl::Status s = checkSupported(*root, *model, file, result); !s.ok())
    return s;
  const llvm::json::Object *vocab = model->getObject("vocab");
  const llvm::json::Array *merges = model->getArray("merges");
  if (!vocab || !merges)
    return jsonError(file, "model",
                     "expected \"vocab\" (object) and \"merges\" (array)");
  if (std::optional<llvm::StringRef> unk = model->getString("unk_token"))
    result.unkToken = unk->str();
  for (const auto &[key, value] : *vocab) {
    std::string path = absl::StrCat("model.vocab[\"", key.str(), "\"]");
    std::optional<int64_t> id = value.getAsInteger();
    if (!id || *id < 0 || *id > std::numeric_limits<int32_t>::max())
      return jsonError(file, path, "expected a non-negative integer id");
    result.vocab.push_back(
        {key.str(), int32_t(*id), absl::StrCat(file, ": ", path)});
  }
  for (size_t i = 0; i < merges->size(); ++i) {
    absl::StatusOr<MergeEntry> merge = jsonMerge((*merges)[i], file, i);
    if (!merge.ok())
      return merge.status();
    result.merges.push_back(std::move(*merge));
  }
  if (const llvm::json::Array *added = root->getArray("added_tokens"))
    if (absl::Status s = readAddedTokens(*added, file, result); !s.ok())
      return s;
  return result;
}

absl::StatusOr<std::unique_ptr<BpeTokenizer>>
BpeTokenizer::fromFiles(const std::string &vocabPath,
                        const std::string &mergesPath, BpeOptions options) {
  absl::StatusOr<std::string> vocabText = readFile(vocabPath);
  if (!vocabText.ok())
    return vocabText.status();
  absl::StatusOr<std::string> mergesText = readFile(mergesPath);
  if (!mergesText.ok())
    return mergesText.status();
  BpeModel model;
  absl::StatusOr<std::vector<VocabEntry>> vocab =
      parseVocabJson(*vocabText, vocabPath);
  if (!vocab.ok())
    return vocab.status();
  absl::StatusOr<std::vector<MergeEntry>> merges =
      parseMergesTxt(*mergesText, mergesPath);
  if (!merges.ok())
    return merges.status();
  model.vocab = std::move(*vocab);
  model.merges = std::move(*merges);
  return create(model, std::move(options));
}

absl::StatusOr<std::unique_ptr<BpeTokenizer>>
BpeTokenizer::fromTokenizerJson(const std::string &path, BpeOptions options) {
  absl::StatusOr<std::string> text = readFile(path);
  if (!text.ok())
    return text.status();
  absl::StatusOr<BpeModel> model = parseTokenizerJson(*text, path);
  if (!model.ok())
    return model.status();
  return create(*model, std::move(options));
}

} // namespace kiln::data
