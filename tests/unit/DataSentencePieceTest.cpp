// Tests of SentencePiece's BPE as tokenizer.json writes it (Llama 2,
// Mistral, TinyLlama, Gemma): ids against Hugging Face `tokenizers` in each
// layout (tests/data/llama2-hf-small, tests/data/gemma-hf-small), the "▁" rules
// piece by piece, byte fallback and fused unknown tokens on a hand-written
// vocabulary, and the layouts kiln refuses rather than tokenizing differently.
#include "frontends/data/BpeTokenizer.h"
#include "frontends/data/Metaspace.h"
#include "frontends/data/Tokenizer.h"

#include "llvm/Support/JSON.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace kiln::data {
namespace {

const std::string kDir =
    std::string(KILN_SOURCE_DIR) + "/tests/data/llama2-hf-small";

std::vector<int32_t> encodeOk(const Tokenizer &tokenizer, std::string_view s) {
  auto ids = tokenizer.encode(s);
  EXPECT_TRUE(ids.ok()) << ids.status();
  return ids.ok() ? *ids : std::vector<int32_t>{};
}

std::vector<int32_t> idsOf(const llvm::json::Value &value) {
  std::vector<int32_t> ids;
  for (const llvm::json::Value &id : *value.getAsArray())
    ids.push_back(int32_t(*id.getAsInteger()));
  return ids;
}

/// One line of cases.jsonl, its nulls resolved: what `tokenizers` gives
/// with tokenizer.json ([0], Llama 2's layout) and with
/// tokenizer-metaspace.json ([1]).
struct Case {
  std::string text;
  std::vector<int32_t> ids[2];
  std::string decoded[2];
};

/// `dir`/cases.jsonl → its header (the BOS id and the case count) and
/// cases. Each line is [text, ids, decoded], then in a folder of two
/// layouts (llama2-hf-small's) the second's [ids, decoded]; null stands for
/// the text (decoded) or the first layout's ids.
std::vector<Case> readCases(const std::string &dir,
                            llvm::json::Object &header) {
  std::ifstream file(dir + "/cases.jsonl");
  EXPECT_TRUE(file.good());
  std::vector<Case> cases;
  std::string line;
  std::getline(file, line);
  llvm::Expected<llvm::json::Value> meta = llvm::json::parse(line);
  EXPECT_TRUE(bool(meta) && meta->getAsObject())
      << (meta ? "" : llvm::toString(meta.takeError()));
  if (!meta || !meta->getAsObject())
    return cases;
  header = *meta->getAsObject();
  while (std::getline(file, line)) {
    llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(line);
    EXPECT_TRUE(bool(parsed) && parsed->getAsArray())
        << (parsed ? line : llvm::toString(parsed.takeError()));
    if (!parsed || !parsed->getAsArray())
      continue;
    const llvm::json::Array &row = *parsed->getAsArray();
    const bool twoLayouts = row.size() >= 5;
    Case c;
    c.text = row[0].getAsString()->str();
    c.ids[0] = idsOf(row[1]);
    c.ids[1] = twoLayouts && row[3].getAsArray() ? idsOf(row[3]) : c.ids[0];
    for (int layout = 0; layout < 2; ++layout) {
      const llvm::json::Value &decoded = row[twoLayouts ? 2 + 2 * layout : 2];
      c.decoded[layout] =
          decoded.getAsString() ? decoded.getAsString()->str() : c.text;
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

// The ids and decoded texts that `tokenizers` 0.23.3 gives with a small BPE
// in Llama 2's layout (the Prepend + Replace normalizer) and in the newer one
// (a Metaspace pre-tokenizer, prepend_scheme "first"), on SST-2's dev split,
// WikiText-2 test lines and cases around spaces, special tokens and
// characters only the byte tokens spell.
TEST(SentencePieceBpe, MatchesHuggingFaceTokenizersInBothLayouts) {
  auto legacy = BpeTokenizer::fromTokenizerJson(kDir + "/tokenizer.json");
  ASSERT_TRUE(legacy.ok()) << legacy.status();
  auto metaspace =
      BpeTokenizer::fromTokenizerJson(kDir + "/tokenizer-metaspace.json");
  ASSERT_TRUE(metaspace.ok()) << metaspace.status();
  llvm::json::Object header;
  std::vector<Case> cases = readCases(kDir, header);
  EXPECT_EQ((*legacy)->bosId(),
            std::optional<int32_t>(header.getInteger("bos")));
  const BpeTokenizer *tokenizers[2] = {legacy->get(), metaspace->get()};
  int differ = 0, layoutsDiffer = 0;
  for (const Case &c : cases) {
    layoutsDiffer += c.ids[0] != c.ids[1];
    for (int layout = 0; layout < 2; ++layout) {
      std::vector<int32_t> ids = encodeOk(*tokenizers[layout], c.text);
      if (ids != c.ids[layout] && ++differ <= 5)
        ADD_FAILURE() << (layout ? "metaspace" : "legacy")
                      << " text: " << c.text
                      << "\nkiln:  " << ::testing::PrintToString(ids)
                      << "\ntokenizers: "
                      << ::testing::PrintToString(c.ids[layout]);
      EXPECT_EQ(tokenizers[layout]->decode(ids).value(), c.decoded[layout])
          << (layout ? "metaspace" : "legacy") << " text: " << c.text;
    }
  }
  EXPECT_EQ(differ, 0);
  EXPECT_EQ(int64_t(cases.size()), header.getInteger("cases"));
  // The layouts differ where a span starts with a space or follows a
  // special token: the cases must reach those rules.
  EXPECT_GT(layoutsDiffer, 50);
}

// A hub folder names its tokenizer class: transformers 5's LlamaTokenizer
// builds the Metaspace layout (prepend_scheme "first") whatever
// tokenizer.json says, and its ids for every case are the metaspace
// file's (checked with transformers 5.25.0's AutoTokenizer: 999 of 999, and
// 110 of them differ from the file's own layout). tokenizer_config.json
// also names </s> the end of text; the post-processor puts <s> first.
TEST(SentencePieceBpe, AFolderTokenizesAsTransformersLlamaTokenizer) {
  TokenizerFiles files;
  files.directory = kDir;
  auto tokenizer = loadTokenizer(files);
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
  EXPECT_EQ((*tokenizer)->bosId(), std::optional<int32_t>(1));
  EXPECT_EQ((*tokenizer)->eosId(), std::optional<int32_t>(2));
  EXPECT_EQ((*tokenizer)->vocabSize(), 1759);
  llvm::json::Object header;
  std::vector<Case> cases = readCases(kDir, header);
  int differ = 0;
  for (const Case &c : cases)
    if (encodeOk(**tokenizer, c.text) != c.ids[1] && ++differ <= 5)
      ADD_FAILURE() << "text: " << c.text;
  EXPECT_EQ(differ, 0);
  EXPECT_EQ(cases.size(), 999u);
}

// Beside a Mistral's or a Phi-3's config.json, transformers 5's AutoTokenizer
// reads tokenizer.json as written (TokenizersBackend) though
// tokenizer_config.json names LlamaTokenizerFast: checked with transformers
// 5.25.0, 999 of 999 cases give the file's layout's ids for either, the
// LlamaTokenizer's (the metaspace file's) beside a Llama's. A config.json
// that does not parse is an error naming it.
TEST(SentencePieceBpe, AMistralOrPhi3FolderTokenizesAsItsFileSays) {
  llvm::json::Object header;
  std::vector<Case> cases = readCases(kDir, header);
  ASSERT_EQ(cases.size(), 999u);
  for (const char *type : {"mistral", "phi3", "llama"}) {
    SCOPED_TRACE(type);
    std::filesystem::path dir =
        std::filesystem::temp_directory_path() /
        (std::string("kiln-sp-") + type + "-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    for (const char *file : {"tokenizer.json", "tokenizer_config.json"})
      std::filesystem::copy_file(
          kDir + "/" + file, dir / file,
          std::filesystem::copy_options::overwrite_existing);
    std::ofstream(dir / "config.json")
        << R"({"model_type": ")" << type << R"("})";
    TokenizerFiles files;
    files.directory = dir.string();
    auto tokenizer = loadTokenizer(files);
    ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
    const int layout = std::string(type) == "llama" ? 1 : 0;
    int differ = 0;
    for (const Case &c : cases)
      if (encodeOk(**tokenizer, c.text) != c.ids[layout] && ++differ <= 5)
        ADD_FAILURE() << "text: " << c.text;
    EXPECT_EQ(differ, 0);
    std::ofstream(dir / "config.json") << "{";
    auto broken = loadTokenizer(files);
    ASSERT_FALSE(broken.ok());
    EXPECT_NE(std::string(broken.status().message()).find("config.json"),
              std::string::npos)
        << broken.status();
    std::filesystem::remove_all(dir);
  }
}

// tokenizer_config.json's "legacy": true makes transformers' LlamaTokenizer
// prepend before every span (its Metaspace "always"), and
// "add_prefix_space": false never; another class keeps the file's layout.
TEST(SentencePieceBpe, TheConfigsLegacyAndPrefixFlagsChooseThePrepending) {
  auto folderWith = [](const std::string &name, const std::string &config) {
    std::filesystem::path dir =
        std::filesystem::temp_directory_path() /
        ("kiln-sp-" + name + "-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    std::filesystem::copy_file(
        kDir + "/tokenizer.json", dir / "tokenizer.json",
        std::filesystem::copy_options::overwrite_existing);
    std::ofstream(dir / "tokenizer_config.json") << config;
    TokenizerFiles files;
    files.directory = dir.string();
    auto tokenizer = loadTokenizer(files);
    EXPECT_TRUE(tokenizer.ok()) << tokenizer.status();
    std::filesystem::remove_all(dir);
    return std::move(*tokenizer);
  };
  const int32_t space = 369; // "▁"
  auto legacy = folderWith("legacy", R"({"tokenizer_class": "LlamaTokenizer",
      "legacy": true})");
  // Metaspace's "always": after a special token too, not before a space.
  std::vector<int32_t> x = encodeOk(*legacy, "x");
  std::vector<int32_t> afterSpecial = encodeOk(*legacy, "<s>x");
  ASSERT_EQ(afterSpecial.size(), x.size() + 1);
  EXPECT_EQ(std::vector<int32_t>(afterSpecial.begin() + 1, afterSpecial.end()),
            x);
  EXPECT_EQ(encodeOk(*legacy, " "), std::vector<int32_t>{space});
  auto never = folderWith("never", R"({"tokenizer_class": "LlamaTokenizer",
      "add_prefix_space": false})");
  EXPECT_NE(encodeOk(*never, "x").front(), x.front());
  EXPECT_EQ(never->decode(encodeOk(*never, " x")).value(), " x");
  // The file's own layout (Llama 2's normalizer: "▁" before a space too).
  auto generic = folderWith("generic", R"({"tokenizer_class":
      "PreTrainedTokenizerFast"})");
  EXPECT_EQ(encodeOk(*generic, " "), (std::vector<int32_t>{space, space}));
}

// An instruction's response is encoded apart from its prompt (the loss
// covers the response only) and must get the ids it has in the two encoded
// together: no "▁" before it, in every layout and prepend rule.
TEST(SentencePieceBpe, AResponseContinuesItsPrompt) {
  TokenizerFiles folder;
  folder.directory = kDir;
  auto transformers = loadTokenizer(folder); // transformers 5's "first"
  ASSERT_TRUE(transformers.ok()) << transformers.status();
  auto legacy = BpeTokenizer::fromTokenizerJson(kDir + "/tokenizer.json");
  ASSERT_TRUE(legacy.ok()) << legacy.status();
  const Tokenizer *tokenizers[] = {transformers->get(), legacy->get()};
  const std::string prompt =
      "### Instruction:\nIs it positive?\n\n### Answer:\n";
  for (const Tokenizer *tokenizer : tokenizers)
    for (std::string response : {"positive", "negative", "it is, mostly"}) {
      std::vector<int32_t> joint = encodeOk(*tokenizer, prompt + response);
      std::vector<int32_t> apart = encodeOk(*tokenizer, prompt);
      auto rest = tokenizer->encodeContinuation(response);
      ASSERT_TRUE(rest.ok()) << rest.status();
      apart.insert(apart.end(), rest->begin(), rest->end());
      EXPECT_EQ(apart, joint) << response;
      // encode() alone puts the "▁" first: a different first token.
      EXPECT_NE(encodeOk(*tokenizer, response).front(), rest->front());
    }
}

// The rules that make the two layouts differ, as `tokenizers` applies them
// (its outputs for these spans, 2026-12-04).
TEST(SentencePieceBpe, PiecesFollowThePrependRules) {
  using Prepend = Metaspace::Prepend;
  using Pieces = std::vector<std::string>;
  Metaspace normalizer; // Llama 2's Prepend + Replace
  normalizer.prependUnconditionally = true;
  EXPECT_EQ(metaspacePieces("  x", SpanAt::textStart, normalizer),
            Pieces{"▁▁▁x"});
  EXPECT_EQ(metaspacePieces("x y", SpanAt::afterSpecialToken, normalizer),
            Pieces{"▁x▁y"});
  EXPECT_EQ(metaspacePieces("", SpanAt::textStart, normalizer), Pieces{});
  Metaspace first; // the Metaspace pre-tokenizer
  first.prepend = Prepend::first;
  EXPECT_EQ(metaspacePieces("  x", SpanAt::textStart, first), Pieces{"▁▁x"});
  EXPECT_EQ(metaspacePieces("x", SpanAt::afterSpecialToken, first),
            Pieces{"x"});
  EXPECT_EQ(metaspacePieces("▁x", SpanAt::textStart, first), Pieces{"▁x"});
  Metaspace always;
  EXPECT_EQ(metaspacePieces("x", SpanAt::afterSpecialToken, always),
            Pieces{"▁x"});
  EXPECT_EQ(metaspacePieces("x y", SpanAt::continuation, normalizer),
            Pieces{"x▁y"});
  // split: each "▁" starts a piece.
  always.split = true;
  EXPECT_EQ(metaspacePieces("a  b", SpanAt::textStart, always),
            (Pieces{"▁a", "▁", "▁b"}));
  Metaspace never;
  never.prepend = Prepend::never;
  never.split = true;
  EXPECT_EQ(metaspacePieces("ab c", SpanAt::textStart, never),
            (Pieces{"ab", "▁c"}));
  EXPECT_EQ(metaspaceSymbolText("<0x0A>", never), "\n");
  EXPECT_EQ(metaspaceSymbolText("▁the", never), " the");
  EXPECT_EQ(metaspaceSymbolText("<0x0a>", never), "<0x0a>");
}

BpeModel handWritten(bool byteFallback, bool fuseUnk) {
  BpeModel model;
  model.metaspace = Metaspace{};
  model.byteFallback = byteFallback;
  model.fuseUnk = fuseUnk;
  model.unkToken = "<unk>";
  model.vocab = {{"<unk>", 0, ""},  {"▁", 1, ""},     {"a", 2, ""},
                 {"b", 3, ""},      {"▁a", 4, ""},    {"<0xC3>", 5, ""},
                 {"<0xA9>", 6, ""}, {"<0xE2>", 7, ""}};
  model.merges = {{"▁", "a", ""}};
  return model;
}

// A character the vocabulary lacks: its bytes' tokens when it has them all
// (é is C3 A9), else the unknown token, one for a run of them with fuse_unk.
TEST(SentencePieceBpe, FallsBackToBytesThenToOneUnknownToken) {
  auto fallback = BpeTokenizer::create(handWritten(true, true));
  ASSERT_TRUE(fallback.ok()) << fallback.status();
  EXPECT_EQ(encodeOk(**fallback, "aé b"),
            (std::vector<int32_t>{4, 5, 6, 1, 3}));
  EXPECT_EQ((*fallback)->decode({4, 5, 6, 1, 3}).value(), "aé b");
  // € is E2 82 AC: E2 alone is no spelling; ✓✓ (two unknowns) is one.
  EXPECT_EQ(encodeOk(**fallback, "a€✓✓b"), (std::vector<int32_t>{4, 0, 3}));
  auto unfused = BpeTokenizer::create(handWritten(true, false));
  ASSERT_TRUE(unfused.ok()) << unfused.status();
  EXPECT_EQ(encodeOk(**unfused, "a€✓✓b"),
            (std::vector<int32_t>{4, 0, 0, 0, 3}));
  BpeModel noUnknown = handWritten(false, true);
  noUnknown.unkToken.clear();
  auto strict = BpeTokenizer::create(noUnknown);
  ASSERT_TRUE(strict.ok()) << strict.status();
  auto ids = (*strict)->encode("aé");
  ASSERT_FALSE(ids.ok());
  EXPECT_NE(std::string(ids.status().message())
                .find("character \"é\" is not in the vocabulary"),
            std::string::npos)
      << ids.status();
  // Nothing standing for a space would split a text forever.
  BpeModel emptyReplacement = handWritten(true, false);
  emptyReplacement.metaspace->replacement.clear();
  EXPECT_FALSE(BpeTokenizer::create(emptyReplacement).ok());
  // Bytes as <0xNN> tokens belong to SentencePiece's layout only.
  BpeModel byteLevel = handWritten(true, false);
  byteLevel.metaspace.reset();
  EXPECT_FALSE(BpeTokenizer::create(byteLevel).ok());
}

//===--- Gemma's layouts --------------------------------------------------===//

const std::string kGemmaDir =
    std::string(KILN_SOURCE_DIR) + "/tests/data/gemma-hf-small";

// Gemma's tokenizer.json: a Replace(" " → "▁") normalizer that puts nothing
// first, with no pre-tokenizer (Gemma's files) or a Split on " " (Gemma 3's,
// which the normalizer leaves nothing to split): the ids and decoded texts
// of `tokenizers` 0.23.3, the same for both files and for transformers
// 5.25.0's AutoTokenizer (GemmaTokenizer) on the 1003 cases, which
// generate.py asserts. Decoding keeps the first space (no Strip).
TEST(SentencePieceBpe, MatchesHuggingFaceTokenizersInGemmasLayouts) {
  llvm::json::Object header;
  std::vector<Case> cases = readCases(kGemmaDir, header);
  ASSERT_EQ(int64_t(cases.size()), header.getInteger("cases"));
  ASSERT_EQ(cases.size(), 1003u);
  for (const char *file : {"tokenizer.json", "tokenizer-split.json"}) {
    SCOPED_TRACE(file);
    auto tokenizer =
        BpeTokenizer::fromTokenizerJson(kGemmaDir + "/" + std::string(file));
    ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
    EXPECT_EQ((*tokenizer)->bosId(), std::optional<int32_t>(2));
    int differ = 0;
    for (const Case &c : cases) {
      std::vector<int32_t> ids = encodeOk(**tokenizer, c.text);
      if (ids != c.ids[0] && ++differ <= 5)
        ADD_FAILURE() << "text: " << c.text
                      << "\nkiln:  " << ::testing::PrintToString(ids)
                      << "\ntokenizers: " << ::testing::PrintToString(c.ids[0]);
      EXPECT_EQ((*tokenizer)->decode(ids).value(), c.decoded[0])
          << "text: " << c.text;
    }
    EXPECT_EQ(differ, 0);
  }
  // Nothing is put first: a leading word is not the "▁word" token.
  auto tokenizer =
      BpeTokenizer::fromTokenizerJson(kGemmaDir + "/tokenizer.json");
  ASSERT_TRUE(tokenizer.ok());
  EXPECT_NE(encodeOk(**tokenizer, "world"),
            std::vector<int32_t>(encodeOk(**tokenizer, " world")));
}

// A Gemma folder: tokenizer_config.json's GemmaTokenizer and its tokens;
// <bos> first, <eos> the end of text, the chat tokens special.
TEST(SentencePieceBpe, AGemmaFolderTokenizesAsItsFileSays) {
  TokenizerFiles files;
  files.directory = kGemmaDir;
  auto tokenizer = loadTokenizer(files);
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
  EXPECT_EQ((*tokenizer)->bosId(), std::optional<int32_t>(2));
  EXPECT_EQ((*tokenizer)->eosId(), std::optional<int32_t>(1));
  EXPECT_EQ((*tokenizer)->vocabSize(), 1763);
  std::vector<int32_t> chat = encodeOk(**tokenizer, "<start_of_turn>x");
  ASSERT_FALSE(chat.empty());
  EXPECT_EQ(chat.front(), 5);
  llvm::json::Object header;
  int differ = 0;
  for (const Case &c : readCases(kGemmaDir, header))
    if (encodeOk(**tokenizer, c.text) != c.ids[0] && ++differ <= 5)
      ADD_FAILURE() << "text: " << c.text;
  EXPECT_EQ(differ, 0);
}

void expectRefused(std::string_view json, std::string_view where) {
  absl::StatusOr<BpeModel> model = parseTokenizerJson(json, "t.json");
  ASSERT_FALSE(model.ok()) << json;
  EXPECT_NE(std::string(model.status().message()).find(where),
            std::string::npos)
      << model.status();
}

// Settings that would tokenize differently are refused, naming the setting.
TEST(SentencePieceBpe, RefusesWhatItWouldTokenizeDifferently) {
  expectRefused(R"({"normalizer": {"type": "Lowercase"},
      "model": {"vocab": {}, "merges": []}})",
                "t.json: normalizer: unsupported");
  // Replace of something other than a space.
  expectRefused(R"({"normalizer": {"type": "Sequence", "normalizers": [
      {"type": "Prepend", "prepend": "_"},
      {"type": "Replace", "pattern": {"String": "\t"}, "content": "_"}]},
      "model": {"vocab": {}, "merges": []}})",
                "t.json: normalizer: unsupported");
  // A step that is not an object (it was read through a null pointer).
  expectRefused(R"({"normalizer": {"type": "Sequence", "normalizers": [
      {"type": "Prepend", "prepend": "_"}, 3]},
      "model": {"vocab": {}, "merges": []}})",
                "t.json: normalizer: unsupported");
  expectRefused(R"({"normalizer": {"type": "Sequence", "normalizers": [
      {"type": "Prepend", "prepend": "_"},
      {"type": "Replace", "pattern": {"String": " "}, "content": "_"}]},
      "pre_tokenizer": {"type": "Metaspace", "replacement": "_"},
      "model": {"vocab": {}, "merges": []}})",
                "t.json: pre_tokenizer: unsupported beside a Replace");
  // Gemma's normalizer with a Split that is not its harmless one.
  expectRefused(R"({"normalizer": {"type": "Replace",
      "pattern": {"String": " "}, "content": "_"},
      "pre_tokenizer": {"type": "Split", "pattern": {"String": " "},
      "behavior": "Isolated", "invert": false},
      "model": {"vocab": {}, "merges": []}})",
                "t.json: pre_tokenizer: unsupported beside a Replace");
  expectRefused(R"({"normalizer": {"type": "Replace",
      "pattern": {"String": " "}, "content": ""},
      "model": {"vocab": {}, "merges": []}})",
                "t.json: normalizer: unsupported");
  expectRefused(R"({"pre_tokenizer": {"type": "Metaspace",
      "replacement": "_", "prepend_scheme": "sometimes"},
      "model": {"vocab": {}, "merges": []}})",
                "t.json: pre_tokenizer.prepend_scheme");
  expectRefused(R"({"pre_tokenizer": {"type": "Metaspace",
      "replacement": "ab"}, "model": {"vocab": {}, "merges": []}})",
                "t.json: pre_tokenizer.replacement: expected one character");
  // Older files: add_prefix_space and no split field (which splits).
  absl::StatusOr<BpeModel> older = parseTokenizerJson(
      R"({"pre_tokenizer": {"type": "Metaspace", "replacement": "_",
      "add_prefix_space": false}, "model": {"vocab": {}, "merges": [],
      "byte_fallback": true}})",
      "t.json");
  ASSERT_TRUE(older.ok()) << older.status();
  EXPECT_EQ(older->metaspace->prepend, Metaspace::Prepend::never);
  EXPECT_TRUE(older->metaspace->split);
  EXPECT_TRUE(older->byteFallback);
}

} // namespace
} // namespace kiln::data
