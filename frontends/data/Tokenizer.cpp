// The byte-level tokenizer, whole-file reading, and the factory that turns a
// user's tokenizer files into a Tokenizer.
#include "frontends/data/Tokenizer.h"

#include "frontends/data/BpeTokenizer.h"
#include "frontends/data/Files.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "support/JsonNesting.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

namespace kiln::data {

absl::StatusOr<std::string> readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    int error = errno;
    std::string message = absl::StrCat(path, ": ", std::strerror(error));
    return error == ENOENT ? absl::NotFoundError(message)
                           : absl::InternalError(message);
  }
  std::ostringstream contents;
  contents << in.rdbuf();
  if (in.bad())
    return absl::InternalError(absl::StrCat(path, ": read failed"));
  return std::move(contents).str();
}

absl::StatusOr<llvm::json::Value> parseJsonText(std::string_view text,
                                                absl::string_view where) {
  if (std::optional<std::string> deep = jsonNestedTooDeeply(text))
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": invalid JSON ", *deep));
  llvm::Expected<llvm::json::Value> value =
      llvm::json::parse(llvm::StringRef(text.data(), text.size()));
  if (!value)
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": invalid JSON ", llvm::toString(value.takeError())));
  return std::move(*value);
}

bool fileExists(const std::string &path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

absl::StatusOr<std::vector<int32_t>>
ByteTokenizer::encode(std::string_view text) const {
  std::vector<int32_t> ids(text.size());
  for (size_t i = 0; i < text.size(); ++i)
    ids[i] = int32_t(static_cast<unsigned char>(text[i]));
  return ids;
}

absl::StatusOr<std::string>
ByteTokenizer::decode(absl::Span<const int32_t> ids) const {
  std::string text;
  text.reserve(ids.size());
  for (int32_t id : ids) {
    if (id < 0 || id > 255)
      return absl::InvalidArgumentError(absl::StrCat(
          "token id ", id, " is outside the byte vocabulary [0, 256)"));
    text.push_back(char(id));
  }
  return text;
}

namespace {

/// What a directory's tokenizer_config.json says ("" for each key the file
/// lacks, all "" without the file).
struct TokenizerConfig {
  /// As transformers reads it: a string, or an added token's object with
  /// "content".
  std::string eosToken;
  std::string tokenizerClass;
  /// transformers' LlamaTokenizer options (absent: its defaults).
  std::optional<bool> legacy;
  std::optional<bool> addPrefixSpace;
  /// The directory's config.json's model_type ("" without one).
  std::string modelType;
};

/// Model types whose tokenizer transformers 5's AutoTokenizer builds from
/// tokenizer.json as written (TokenizersBackend), whatever class the
/// folder's tokenizer_config.json names: Mistral's (without mistral_common's
/// own files) and Phi-3's, both of which name LlamaTokenizer on the Hub.
/// Checked with transformers 5.25.0 on tests/data/llama2-hf-small: 999 of
/// 999 cases give the file's layout's ids beside a config.json of either
/// type, the LlamaTokenizer's beside "llama" or none.
bool tokenizesAsTheFileSays(std::string_view modelType) {
  return modelType == "mistral" || modelType == "phi3";
}

/// transformers 5's LlamaTokenizer (the class Llama 2's, Mistral's and
/// TinyLlama's tokenizer_config.json name) builds its own way in, whatever
/// tokenizer.json says: a Metaspace pre-tokenizer that puts "▁" first only
/// before the text's first span (before every span with "legacy": true),
/// or never (add_prefix_space false), without splitting; its decoder drops
/// the first space when it prepends. transformers 4 read tokenizer.json as
/// it stood, which for Llama 2's files is the Prepend + Replace normalizer;
/// so does transformers 5 beside a config.json of a type
/// tokenizesAsTheFileSays (a Mistral or Phi-3 folder).
std::optional<Metaspace> transformersLlamaMetaspace(const TokenizerConfig &c) {
  if ((c.tokenizerClass != "LlamaTokenizer" &&
       c.tokenizerClass != "LlamaTokenizerFast") ||
      tokenizesAsTheFileSays(c.modelType))
    return std::nullopt;
  Metaspace metaspace;
  bool prefix = c.addPrefixSpace.value_or(true);
  metaspace.prepend = !prefix                    ? Metaspace::Prepend::never
                      : c.legacy.value_or(false) ? Metaspace::Prepend::always
                                                 : Metaspace::Prepend::first;
  metaspace.stripFirstSpace = prefix;
  return metaspace;
}

/// The JSON object in `path`; an empty one when the file does not exist.
absl::StatusOr<llvm::json::Object>
readJsonObjectIfAny(const std::string &path) {
  if (!fileExists(path))
    return llvm::json::Object();
  absl::StatusOr<std::string> text = readFile(path);
  if (!text.ok())
    return text.status();
  absl::StatusOr<llvm::json::Value> json = parseJsonText(*text, path);
  if (!json.ok())
    return json.status();
  llvm::json::Object *root = json->getAsObject();
  if (!root)
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a JSON object"));
  return std::move(*root);
}

absl::StatusOr<TokenizerConfig>
readTokenizerConfig(const std::string &directory) {
  TokenizerConfig config;
  // The model's config.json beside it, for its model_type.
  absl::StatusOr<llvm::json::Object> model =
      readJsonObjectIfAny(directory + "/config.json");
  if (!model.ok())
    return model.status();
  if (std::optional<llvm::StringRef> type = model->getString("model_type"))
    config.modelType = type->str();
  const std::string path = directory + "/tokenizer_config.json";
  absl::StatusOr<llvm::json::Object> file = readJsonObjectIfAny(path);
  if (!file.ok())
    return file.status();
  const llvm::json::Object *root = &*file;
  if (std::optional<llvm::StringRef> c = root->getString("tokenizer_class"))
    config.tokenizerClass = c->str();
  config.legacy = root->getBoolean("legacy");
  config.addPrefixSpace = root->getBoolean("add_prefix_space");
  const llvm::json::Value *eos = root->get("eos_token");
  if (!eos || eos->kind() == llvm::json::Value::Null)
    return config;
  const llvm::json::Object *added = eos->getAsObject();
  if (std::optional<llvm::StringRef> s = eos->getAsString())
    config.eosToken = s->str();
  else if (std::optional<llvm::StringRef> s =
               added ? added->getString("content") : std::nullopt)
    config.eosToken = s->str();
  else
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": eos_token: expected a string or an object with "
                           "\"content\""));
  return config;
}

} // namespace

bool hasTokenizer(const std::string &directory) {
  if (fileExists(directory + "/tokenizer.json") ||
      fileExists(directory + "/vocab.json"))
    return true;
  if (!fileExists(directory + "/tokenizer_config.json"))
    return false;
  absl::StatusOr<TokenizerConfig> config = readTokenizerConfig(directory);
  return !config.ok() || config->tokenizerClass == kByteTokenizerClass;
}

absl::StatusOr<std::unique_ptr<Tokenizer>>
loadTokenizer(const TokenizerFiles &files) {
  TokenizerFiles chosen = files;
  BpeOptions options;
  if (!files.directory.empty()) {
    absl::StatusOr<TokenizerConfig> config =
        readTokenizerConfig(files.directory);
    if (!config.ok())
      return config.status();
    if (!config->eosToken.empty()) {
      options.eosToken = config->eosToken;
      options.eosTokenSource = files.directory + "/tokenizer_config.json";
    }
    options.metaspace = transformersLlamaMetaspace(*config);
    chosen = TokenizerFiles{};
    std::string json = files.directory + "/tokenizer.json";
    if (fileExists(json)) {
      chosen.tokenizerJson = json;
    } else if (config->tokenizerClass == kByteTokenizerClass &&
               !fileExists(files.directory + "/vocab.json")) {
      return std::unique_ptr<Tokenizer>(std::make_unique<ByteTokenizer>());
    } else {
      chosen.vocabJson = files.directory + "/vocab.json";
      chosen.mergesTxt = files.directory + "/merges.txt";
    }
  }
  if (!chosen.tokenizerJson.empty()) {
    auto bpe = BpeTokenizer::fromTokenizerJson(chosen.tokenizerJson, options);
    if (!bpe.ok())
      return bpe.status();
    return std::unique_ptr<Tokenizer>(std::move(*bpe));
  }
  if (chosen.vocabJson.empty() != chosen.mergesTxt.empty())
    return absl::InvalidArgumentError(
        "a BPE tokenizer needs both vocab.json and merges.txt");
  if (chosen.vocabJson.empty())
    return std::unique_ptr<Tokenizer>(std::make_unique<ByteTokenizer>());
  auto bpe =
      BpeTokenizer::fromFiles(chosen.vocabJson, chosen.mergesTxt, options);
  if (!bpe.ok())
    return bpe.status();
  return std::unique_ptr<Tokenizer>(std::move(*bpe));
}

} // namespace kiln::data
