// Tests of frontends/data's tokenizers: GPT-2's pre-tokenisation regex case by
// case, BPE on a hand-written vocabulary (the 256 byte symbols with GPT-2's
// ids plus a dozen hand-written merges) with expected ids derived by hand,
// round trips over arbitrary bytes, the byte-level tokenizer, and loading of
// vocab.json / merges.txt / tokenizer.json including malformed files.
#include "frontends/data/BpeTokenizer.h"
#include "frontends/data/Files.h"
#include "frontends/data/Normalize.h"
#include "frontends/data/PreTokenizer.h"
#include "frontends/data/Unicode.h"
#include "support/JsonNesting.h"
#include "tests/unit/FileTestSupport.h"

#include "llvm/Support/JSON.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

namespace kiln::data {
namespace {

using Pieces = std::vector<std::string_view>;

// GPT-2's id of a byte's symbol: the printable bytes in order, then the rest.
int32_t gpt2ByteId(uint8_t b) {
  if (b >= '!' && b <= '~')
    return b - '!';
  if (b >= 0xA1 && b <= 0xAC)
    return 94 + (b - 0xA1);
  if (b >= 0xAE)
    return 106 + (b - 0xAE);
  if (b <= 0x20)
    return 188 + b;
  if (b >= 0x7F && b <= 0xA0)
    return 221 + (b - 0x7F);
  return 255; // 0xAD
}

// The hand-written model: merges 256.. in rank order, then <|endoftext|>.
const std::vector<std::pair<const char *, const char *>> kHandMerges = {
    {"\u0120", "t"},      // 256 "Ġt"
    {"h", "e"},           // 257
    {"\u0120t", "he"},    // 258 "Ġthe"
    {"l", "l"},           // 259
    {"he", "ll"},         // 260
    {"hell", "o"},        // 261
    {"\u0120", "w"},      // 262
    {"o", "r"},           // 263
    {"\u0120w", "or"},    // 264
    {"l", "d"},           // 265
    {"\u0120wor", "ld"},  // 266 "Ġworld"
    {"'", "s"},           // 267
    {"1", "2"},           // 268
};
constexpr int32_t kEndOfText = 269;

BpeModel handModel() {
  BpeModel model;
  for (int b = 0; b < 256; ++b)
    model.vocab.push_back(
        {bytesToSymbol(std::string(1, char(b))), gpt2ByteId(uint8_t(b)), ""});
  int32_t id = 256;
  for (const auto &[left, right] : kHandMerges) {
    model.merges.push_back({left, right, ""});
    model.vocab.push_back({std::string(left) + right, id++, ""});
  }
  model.vocab.push_back({"<|endoftext|>", kEndOfText, ""});
  return model;
}

std::unique_ptr<BpeTokenizer> handTokenizer() {
  auto tokenizer = BpeTokenizer::create(handModel());
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.status();
  return tokenizer.ok() ? std::move(*tokenizer) : nullptr;
}

std::vector<int32_t> encodeOk(const Tokenizer &tokenizer, std::string_view s) {
  auto ids = tokenizer.encode(s);
  EXPECT_TRUE(ids.ok()) << ids.status();
  return ids.ok() ? *ids : std::vector<int32_t>{};
}

std::string writeTemp(const std::string &name, const std::string &contents) {
  std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path, std::ios::binary) << contents;
  return path;
}

std::string testDataDir() { return std::string(KILN_SOURCE_DIR) + "/tests/data"; }

TEST(Unicode, ByteAlphabetIsGpt2s) {
  EXPECT_EQ(byteToUnicode(' '), U'\u0120');  // "Ġ"
  EXPECT_EQ(byteToUnicode('\n'), U'\u010A'); // "Ċ"
  EXPECT_EQ(byteToUnicode('a'), U'a');
  EXPECT_EQ(byteToUnicode(0xAD), U'\u0143');
  for (int b = 0; b < 256; ++b)
    EXPECT_EQ(unicodeToByte(byteToUnicode(uint8_t(b))), b);
  EXPECT_EQ(symbolToBytes("\u0120the"), " the");
  EXPECT_EQ(symbolToBytes("\u20AC"), std::nullopt); // "€" stands for no byte
}

TEST(Unicode, ClassifiesLettersNumbersAndSpaces) {
  for (char32_t cp : {U'a', U'Z', U'é', U'ß', U'Ж', U'ع', U'中', U'カ', U'ª'})
    EXPECT_TRUE(isLetter(cp)) << uint32_t(cp);
  for (char32_t cp : {U'1', U'²', U'½', U'٣', U'Ⅻ'})
    EXPECT_TRUE(isNumber(cp)) << uint32_t(cp);
  for (char32_t cp : {U'\u0301', U'€', U'!', U'\U0001F44B', U'·'})
    EXPECT_FALSE(isLetter(cp) || isNumber(cp)) << uint32_t(cp);
  for (char32_t cp : {U' ', U'\t', U'\n', U'\u00A0', U'\u3000', U'\u2028'})
    EXPECT_TRUE(isWhitespace(cp)) << uint32_t(cp);
  EXPECT_FALSE(isWhitespace(U'\u200B')); // zero-width space is not White_Space
}

TEST(Unicode, DecodesInvalidUtf8OneByteAtATime) {
  EXPECT_EQ(decodeUtf8("\xC3\xA9", 0).codePoint, U'é');
  EXPECT_EQ(decodeUtf8("\xC0\xAF", 0).length, 1);       // overlong '/'
  EXPECT_EQ(decodeUtf8("\xED\xA0\x80", 0).length, 1);   // a surrogate
  EXPECT_EQ(decodeUtf8("\xF0\x9F\x91", 0).length, 1);   // truncated
  EXPECT_EQ(decodeUtf8("\xFF", 0).codePoint, kInvalidCodePoint);
}

TEST(PreTokenize, SplitsContractionsCaseSensitively) {
  EXPECT_EQ(preTokenize("I'm don't they're we've you'll he'd it's"),
            (Pieces{"I", "'m", " don", "'t", " they", "'re", " we", "'ve",
                    " you", "'ll", " he", "'d", " it", "'s"}));
  EXPECT_EQ(preTokenize("IT'S"), (Pieces{"IT", "'", "S"}));
  EXPECT_EQ(preTokenize("''s"), (Pieces{"''", "s"}));
}

TEST(PreTokenize, AttachesOneSpaceToTheNextWord) {
  EXPECT_EQ(preTokenize("Hello world"), (Pieces{"Hello", " world"}));
  EXPECT_EQ(preTokenize("hello  world"), (Pieces{"hello", " ", " world"}));
  EXPECT_EQ(preTokenize("  hi"), (Pieces{" ", " hi"}));
  EXPECT_EQ(preTokenize(" "), (Pieces{" "}));
}

TEST(PreTokenize, SplitsNumbersAndPunctuationRuns) {
  EXPECT_EQ(preTokenize("abc123 456"), (Pieces{"abc", "123", " 456"}));
  EXPECT_EQ(preTokenize("3.14"), (Pieces{"3", ".", "14"}));
  EXPECT_EQ(preTokenize("wow!!! ?!"), (Pieces{"wow", "!!!", " ?!"}));
  EXPECT_EQ(preTokenize("x=(y+1);"), (Pieces{"x", "=(", "y", "+", "1", ");"}));
}

TEST(PreTokenize, KeepsTrailingWhitespaceAndNewlines) {
  EXPECT_EQ(preTokenize("hi   "), (Pieces{"hi", "   "}));
  EXPECT_EQ(preTokenize("a\n\nb"), (Pieces{"a", "\n", "\n", "b"}));
  EXPECT_EQ(preTokenize("a\n\n"), (Pieces{"a", "\n\n"}));
  EXPECT_EQ(preTokenize("a \n b"), (Pieces{"a", " \n", " b"}));
  EXPECT_EQ(preTokenize("a\tb"), (Pieces{"a", "\t", "b"}));
  // Only U+0020 joins a word; a no-break space stands alone.
  EXPECT_EQ(preTokenize("a\u00A0b"), (Pieces{"a", "\u00A0", "b"}));
}

TEST(PreTokenize, UsesUnicodeLettersAndNumbers) {
  EXPECT_EQ(preTokenize("naïve café"), (Pieces{"naïve", " café"}));
  EXPECT_EQ(preTokenize("Привет мир"), (Pieces{"Привет", " мир"}));
  EXPECT_EQ(preTokenize("日本語テキスト"), (Pieces{"日本語テキスト"}));
  EXPECT_EQ(preTokenize("x²"), (Pieces{"x", "²"}));
  // A combining mark is not a letter (category Mn), as in \p{L}.
  EXPECT_EQ(preTokenize("e\u0301t"), (Pieces{"e", "\u0301", "t"}));
}

TEST(PreTokenize, TreatsEmojiAndInvalidBytesAsSymbols) {
  EXPECT_EQ(preTokenize("hi \U0001F44B\U0001F3FD!"),
            (Pieces{"hi", " \U0001F44B\U0001F3FD!"}));
  EXPECT_EQ(preTokenize("ab\xFF\xFE" "cd"), (Pieces{"ab", "\xFF\xFE", "cd"}));
}

TEST(BpeTokenizer, EncodesByRankWithHandDerivedIds) {
  auto tokenizer = handTokenizer();
  ASSERT_NE(tokenizer, nullptr);
  EXPECT_EQ(tokenizer->vocabSize(), 270);
  EXPECT_EQ(tokenizer->eosId(), kEndOfText);
  EXPECT_EQ(encodeOk(*tokenizer, "hello"), (std::vector<int32_t>{261}));
  EXPECT_EQ(encodeOk(*tokenizer, " the"), (std::vector<int32_t>{258}));
  // "hello", " world", "'s", " 12" → hello, Ġworld, 's, Ġ + 12.
  EXPECT_EQ(encodeOk(*tokenizer, "hello world's 12"),
            (std::vector<int32_t>{261, 266, 267, 220, 268}));
  // H is not merged with e: H e (ll) o.
  EXPECT_EQ(encodeOk(*tokenizer, "Hello"),
            (std::vector<int32_t>{39, 68, 259, 78}));
  // All occurrences of the best pair merge left to right, without overlap.
  EXPECT_EQ(encodeOk(*tokenizer, "lll"), (std::vector<int32_t>{259, 75}));
  EXPECT_EQ(encodeOk(*tokenizer, "a\n\n"), (std::vector<int32_t>{64, 198, 198}));
}

TEST(BpeTokenizer, EncodesEmojiAsItsBytes) {
  auto tokenizer = handTokenizer();
  ASSERT_NE(tokenizer, nullptr);
  // U+1F44B is F0 9F 91 8B: ids 106+0x42, then three of the shifted bytes.
  EXPECT_EQ(encodeOk(*tokenizer, "\U0001F44B"),
            (std::vector<int32_t>{172, 253, 239, 233}));
}

TEST(BpeTokenizer, SplitsOutTheEndOfTextToken) {
  auto tokenizer = handTokenizer();
  ASSERT_NE(tokenizer, nullptr);
  EXPECT_EQ(encodeOk(*tokenizer, "hello<|endoftext|> the"),
            (std::vector<int32_t>{261, kEndOfText, 258}));
  EXPECT_EQ(encodeOk(*tokenizer, "<|endoftext|><|endoftext|>"),
            (std::vector<int32_t>{kEndOfText, kEndOfText}));
  auto text = tokenizer->decode({261, kEndOfText, 258});
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, "hello<|endoftext|> the");
}

TEST(BpeTokenizer, RoundTripsArbitraryBytes) {
  auto tokenizer = handTokenizer();
  ASSERT_NE(tokenizer, nullptr);
  std::vector<std::string> samples = {
      "", " ", "hello world's 12", "naïve café, Привет 日本語",
      "\xFF\xFE\x00\x01 ok", "tabs\t\tand\r\nCRLF  \n", "\U0001F44B\U0001F3FD",
      "<|endoftext|>x<|endoft", std::string("\0\0a", 3)};
  std::mt19937_64 rng(7);
  for (int i = 0; i < 300; ++i) {
    std::string s(rng() % 40, '\0');
    for (char &c : s)
      c = char(rng() % 4 == 0 ? "hel o'1\n"[rng() % 8] : rng() % 256);
    samples.push_back(s);
  }
  for (const std::string &s : samples) {
    std::vector<int32_t> ids = encodeOk(*tokenizer, s);
    auto back = tokenizer->decode(ids);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, s);
  }
}

TEST(BpeTokenizer, RejectsUnknownIdsOnDecode) {
  auto tokenizer = handTokenizer();
  ASSERT_NE(tokenizer, nullptr);
  auto text = tokenizer->decode({1, 270});
  EXPECT_FALSE(text.ok());
  EXPECT_NE(std::string(text.status().message()).find("270"), std::string::npos);
}

TEST(ByteTokenizer, IdsAreBytes) {
  ByteTokenizer tokenizer;
  EXPECT_EQ(tokenizer.vocabSize(), 256);
  EXPECT_EQ(tokenizer.eosId(), std::nullopt);
  EXPECT_EQ(encodeOk(tokenizer, "A\xFF"), (std::vector<int32_t>{65, 255}));
  std::string bytes;
  for (int b = 0; b < 256; ++b)
    bytes.push_back(char(b));
  auto back = tokenizer.decode(encodeOk(tokenizer, bytes));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, bytes);
  EXPECT_FALSE(tokenizer.decode({256}).ok());
}

TEST(BpeFiles, LoadsHandWrittenVocabAndMerges) {
  auto tokenizer = BpeTokenizer::fromFiles(
      testDataDir() + "/gpt2-tiny/vocab.json",
      testDataDir() + "/gpt2-tiny/merges.txt");
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
  EXPECT_EQ((*tokenizer)->numMerges(), 6u);
  EXPECT_EQ((*tokenizer)->vocabSize(), 270);
  EXPECT_EQ((*tokenizer)->eosId(), 269);
  EXPECT_EQ(encodeOk(**tokenizer, "hello the"),
            (std::vector<int32_t>{261, 258}));
  // 'i' is not in this vocabulary and there is no unknown token.
  auto missing = (*tokenizer)->encode("hi");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(std::string(missing.status().message()).find("0x69"),
            std::string::npos);
  EXPECT_FALSE((*tokenizer)->decode({100}).ok()); // a gap in the ids
}

TEST(BpeFiles, LoadsTokenizerJsonWithEitherMergeForm) {
  std::string vocab = R"({"h": 0, "e": 1, "l": 2, "o": 3, "he": 4,
      "ll": 5, "hell": 6, "hello": 7})";
  for (std::string merges : {R"(["h e", "l l", "he ll", "hell o"])",
                             R"([["h","e"],["l","l"],["he","ll"],["hell","o"]])"}) {
    std::string json = R"({"added_tokens": [{"id": 8, "content": "<|endoftext|>",
        "special": true}, {"id": 9, "content": "my token"}],
        "model": {"type": "BPE", "vocab": )" +
                       vocab + R"(, "merges": )" + merges + "}}";
    auto tokenizer = BpeTokenizer::fromTokenizerJson(
        writeTemp("tokenizer.json", json));
    ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
    EXPECT_EQ(encodeOk(**tokenizer, "hello<|endoftext|>hell"),
              (std::vector<int32_t>{7, 8, 6}));
    EXPECT_EQ((*tokenizer)->eosId(), 8);
    EXPECT_EQ((*tokenizer)->vocabSize(), 10);
    // An added token's content is raw text (its space is no "Ġ").
    EXPECT_EQ(encodeOk(**tokenizer, "hellomy token"),
              (std::vector<int32_t>{7, 9}));
    EXPECT_EQ((*tokenizer)->decode({9, 8}).value(), "my token<|endoftext|>");
  }
}

// Ids that Hugging Face `tokenizers` gives with a small byte-level BPE it
// trained (tests/data/gpt2-hf-small/generate.py): kiln must agree exactly.
TEST(BpeFiles, MatchesHuggingFaceTokenizersOnGoldenCases) {
  std::string dir = testDataDir() + "/gpt2-hf-small";
  auto tokenizer =
      BpeTokenizer::fromFiles(dir + "/vocab.json", dir + "/merges.txt");
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
  std::ifstream cases(dir + "/cases.tsv");
  ASSERT_TRUE(cases.good());
  int checked = 0;
  for (std::string line; std::getline(cases, line);) {
    if (line.empty() || line[0] == '#')
      continue;
    size_t tab = line.find('\t');
    ASSERT_NE(tab, std::string::npos) << line;
    std::string text;
    for (size_t i = 0; i + 1 < tab; i += 2)
      text.push_back(char(std::stoi(line.substr(i, 2), nullptr, 16)));
    std::vector<int32_t> expected;
    std::istringstream ids(line.substr(tab + 1));
    for (int32_t id; ids >> id;)
      expected.push_back(id);
    EXPECT_EQ(encodeOk(**tokenizer, text), expected) << "text: " << text;
    ++checked;
  }
  EXPECT_EQ(checked, 63);
}

TEST(PreTokenizer, Llama3PatternSplitsAsTiktoken) {
  auto pieces = [](std::string_view text) {
    return preTokenize(text, PreTokenizerKind::llama3);
  };
  // Digits in threes, apart from the space before them.
  EXPECT_EQ(pieces("ab 12345"), (Pieces{"ab", " ", "123", "45"}));
  // Contractions in any case; one non-letter may lead a word.
  EXPECT_EQ(pieces("IT'S (x"), (Pieces{"IT", "'S", " (", "x"}));
  EXPECT_EQ(pieces("\tword"), (Pieces{"\tword"}));
  // Punctuation keeps its trailing newlines; white space up to its last
  // newline is one piece.
  EXPECT_EQ(pieces("hi!\n\nyo"), (Pieces{"hi", "!\n\n", "yo"}));
  EXPECT_EQ(pieces("a \n  b"), (Pieces{"a", " \n", " ", " b"}));
  EXPECT_EQ(pieces("end  "), (Pieces{"end", "  "}));
}

TEST(PreTokenizer, Qwen2PatternSplitsEachDigit) {
  auto pieces = [](std::string_view text) {
    return preTokenize(text, PreTokenizerKind::qwen2);
  };
  // Llama 3's pattern, but each digit is a piece of its own.
  EXPECT_EQ(pieces("ab 12345"), (Pieces{"ab", " ", "1", "2", "3", "4", "5"}));
  EXPECT_EQ(pieces("IT'S (x"), (Pieces{"IT", "'S", " (", "x"}));
  EXPECT_EQ(pieces("a \n  b"), (Pieces{"a", " \n", " ", " b"}));
}

// o200k's pattern (GPT-4o's, Phi-4-mini's): a word is capitals then small
// letters, with its contraction in any case and its marks; '/' joins the
// newlines after punctuation; digits go in threes, as in Llama 3's.
TEST(PreTokenizer, O200kPatternSplitsCasedWords) {
  auto pieces = [](std::string_view text) {
    return preTokenize(text, PreTokenizerKind::o200k);
  };
  EXPECT_EQ(pieces("fooBAR HTTPServer iPhone"),
            (Pieces{"foo", "BAR", " HTTPServer", " i", "Phone"}));
  EXPECT_EQ(pieces("NASA's DON'T they'Re"),
            (Pieces{"NASA's", " DON'T", " they'Re"}));
  // A combining accent and Devanagari's vowel signs and virama are marks:
  // inside the word, where Llama 3's pattern splits at each.
  EXPECT_EQ(pieces("café नमस्ते"), (Pieces{"café", " नमस्ते"}));
  // Caseless letters (CJK) end a word before the capitals after them.
  EXPECT_EQ(pieces("日本X 日本Xy"), (Pieces{"日本", "X", " 日本Xy"}));
  EXPECT_EQ(pieces(" /path/to/file abc/\nfoo"),
            (Pieces{" /", "path", "/to", "/file", " abc", "/\n", "foo"}));
  EXPECT_EQ(pieces("ab 12345"), (Pieces{"ab", " ", "123", "45"}));
  EXPECT_EQ(pieces("a \n  b"), (Pieces{"a", " \n", " ", " b"}));
}

TEST(Normalize, NfcComposesAndKeepsInvalidBytes) {
  EXPECT_EQ(nfc("plain ASCII"), "plain ASCII");
  EXPECT_EQ(nfc("cafe\u0301"), "caf\u00e9");      // e + acute → é
  EXPECT_EQ(nfc("\u1100\u1161\u11a8"), "\uac01"); // Hangul jamo → 각
  EXPECT_EQ(nfc("\u212b"), "\u00c5");             // Ångström sign → Å
  // Marks put in canonical order, then the dot above composed with x.
  EXPECT_EQ(nfc("x\u0307\u0323"), "\u1e8b\u0323");
  EXPECT_EQ(nfc("\ufb01"), "\ufb01"); // ﬁ: compatibility, not canonical
  // Invalid bytes stay; the runs on each side are normalized.
  EXPECT_EQ(nfc("e\u0301\xff\xc3"
                "e\u0301"),
            "\u00e9\xff\xc3"
            "\u00e9");
  EXPECT_EQ(nfc(std::string_view("a\0e\u0301", 5)),
            std::string_view("a\0\u00e9", 4));
}

// Ids that Hugging Face `tokenizers` gives with a small BPE in `folder`'s
// tokenizer.json layout (tests/data/*/generate.py): SST-2's dev split,
// WikiText-2 test lines and pre-tokenisation cases. Decoding gives the text
// back, in NFC where the file normalizes.
void expectMatchesTokenizers(const std::string &folder, bool normalizes) {
  std::string dir = testDataDir() + "/" + folder;
  auto tokenizer = BpeTokenizer::fromTokenizerJson(dir + "/tokenizer.json");
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
  std::ifstream cases(dir + "/cases.jsonl");
  ASSERT_TRUE(cases.good());
  std::string header;
  std::getline(cases, header);
  llvm::Expected<llvm::json::Value> meta = llvm::json::parse(header);
  ASSERT_TRUE(bool(meta)) << llvm::toString(meta.takeError());
  EXPECT_EQ((*tokenizer)->bosId(),
            std::optional<int32_t>(meta->getAsObject()->getInteger("bos")));
  int checked = 0, differ = 0;
  for (std::string line; std::getline(cases, line);) {
    llvm::Expected<llvm::json::Value> c = llvm::json::parse(line);
    ASSERT_TRUE(bool(c)) << llvm::toString(c.takeError());
    const llvm::json::Array &pair = *c->getAsArray();
    std::string text = pair[0].getAsString()->str();
    std::vector<int32_t> expected;
    for (const llvm::json::Value &id : *pair[1].getAsArray())
      expected.push_back(int32_t(*id.getAsInteger()));
    std::vector<int32_t> ids = encodeOk(**tokenizer, text);
    if (ids != expected && ++differ <= 5)
      ADD_FAILURE() << "text: " << text << "\nkiln:  "
                    << ::testing::PrintToString(ids) << "\ntokenizers: "
                    << ::testing::PrintToString(expected);
    EXPECT_EQ((*tokenizer)->decode(ids).value(), normalizes ? nfc(text) : text);
    ++checked;
  }
  EXPECT_EQ(differ, 0);
  EXPECT_EQ(checked, meta->getAsObject()->getInteger("cases"));
}

TEST(BpeFiles, MatchesHuggingFaceTokenizersWithLlama3Layout) {
  expectMatchesTokenizers("llama3-hf-small", /*normalizes=*/false);
}

// Qwen2's (and Qwen3's) layout: an NFC normalizer, Llama 3's Split with one
// digit a piece, no BOS. The cases include decomposed text that only NFC
// tokenizes as `tokenizers` does and digit runs the Llama 3 split would keep
// together (the vocabulary has multi-digit tokens).
TEST(BpeFiles, MatchesHuggingFaceTokenizersWithQwen2Layout) {
  expectMatchesTokenizers("qwen2-hf-small", /*normalizes=*/true);
}

// Phi-4-mini's layout: o200k's Split (cased words, marks inside them,
// contractions attached), no normalizer, no BOS. Its vocabulary was trained
// on a coarser split, so a splitter that splits more or less than o200k's
// gives other ids (tests/data/phi4-hf-small/README.md).
TEST(BpeFiles, MatchesHuggingFaceTokenizersWithPhi4Layout) {
  expectMatchesTokenizers("phi4-hf-small", /*normalizes=*/false);
}

// The folder as transformers' Qwen2Tokenizer reads it: <|endoftext|> ends a
// text, nothing begins one, and <|im_start|> / <|im_end|> are special tokens.
TEST(BpeFiles, LoadsAQwen2Folder) {
  TokenizerFiles folder;
  folder.directory = testDataDir() + "/qwen2-hf-small";
  auto tokenizer = loadTokenizer(folder);
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
  EXPECT_EQ((*tokenizer)->eosId(), std::optional<int32_t>(1500));
  EXPECT_EQ((*tokenizer)->bosId(), std::nullopt);
  std::vector<int32_t> ids = encodeOk(**tokenizer, "<|im_start|>hi<|im_end|>");
  ASSERT_GE(ids.size(), 3u);
  EXPECT_EQ(ids.front(), 1501);
  EXPECT_EQ(ids.back(), 1502);
}

void expectError(const absl::Status &status, std::string_view where) {
  EXPECT_FALSE(status.ok());
  EXPECT_NE(std::string(status.message()).find(where), std::string::npos)
      << "expected \"" << where << "\" in: " << status.message();
}

// A normalizer kiln does not implement, or Qwen's regex with another digit
// rule, is refused by name rather than tokenized differently.
TEST(BpeFiles, RefusesOtherNormalizersAndPatterns) {
  std::string text =
      readFile(testDataDir() + "/qwen2-hf-small/tokenizer.json").value();
  ASSERT_TRUE(parseTokenizerJson(text, "tokenizer.json").ok());
  auto replaced = [&](std::string_view from, std::string_view to) {
    std::string copy = text;
    size_t at = copy.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return at == std::string::npos ? copy : copy.replace(at, from.size(), to);
  };
  expectError(
      parseTokenizerJson(replaced(R"("type": "NFC")", R"("type": "NFKC")"),
                         "tokenizer.json")
          .status(),
      "tokenizer.json: normalizer: unsupported");
  expectError(parseTokenizerJson(replaced(R"(\\p{N}|)", R"(\\p{N}{1,2}|)"),
                                 "tokenizer.json")
                  .status(),
              "tokenizer.json: pre_tokenizer: unsupported");
}

BpeModel modelOf(std::vector<VocabEntry> vocab,
                 std::vector<MergeEntry> merges = {}) {
  BpeModel model;
  model.vocab = std::move(vocab);
  model.merges = std::move(merges);
  return model;
}

// Llama 3's ignore_merges: a piece that is a token is that token, even where
// the merges would split it ("abc" has no merge; "ab" + "c" otherwise).
TEST(BpeFiles, IgnoreMergesKeepsPiecesThatAreTokens) {
  BpeModel model = modelOf(
      {{"a", 0, ""}, {"b", 1, ""}, {"c", 2, ""}, {"ab", 3, ""}, {"abc", 4, ""}},
      {{"a", "b", ""}});
  auto merging = BpeTokenizer::create(model);
  ASSERT_TRUE(merging.ok()) << merging.status();
  EXPECT_EQ(encodeOk(**merging, "abc"), (std::vector<int32_t>{3, 2}));
  model.ignoreMerges = true;
  auto whole = BpeTokenizer::create(model);
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(encodeOk(**whole, "abc"), (std::vector<int32_t>{4}));
  // A piece that is not a token still merges.
  EXPECT_EQ(encodeOk(**whole, "abcab"), (std::vector<int32_t>{3, 2, 3}));
}

TEST(BpeFiles, MalformedVocabNamesFileAndLine) {
  expectError(parseVocabJson("{\n  \"a\": 0,\n  \"b\": x\n}", "v.json").status(),
              "v.json:3: expected a non-negative integer");
  auto duplicate = BpeTokenizer::create(
      modelOf(*parseVocabJson("{\n  \"a\": 0,\n  \"a\": 1\n}", "v.json")));
  expectError(duplicate.status(), "v.json:3: token \"a\" appears twice");
  auto sharedId = BpeTokenizer::create(
      modelOf(*parseVocabJson("{\"a\": 0,\n\"b\": 0}", "v.json")));
  expectError(sharedId.status(), "v.json:2: id 0 is used by \"b\"");
  // A fuzz-found file: one id of 290 million would have sized the id table
  // (and a model's embedding) by the id alone. Ids up to 65535 stay fine.
  auto sparse = BpeTokenizer::create(
      modelOf(*parseVocabJson("{\"a\": 0,\n\"b\": 290665776}", "v.json")));
  expectError(sparse.status(),
              "v.json:2: token \"b\" has id 290665776: ids must stay below 65536");
  auto gap = BpeTokenizer::create(
      modelOf(*parseVocabJson("{\"a\": 0, \"b\": 65535}", "v.json")));
  ASSERT_TRUE(gap.ok()) << gap.status();
  EXPECT_EQ((*gap)->vocabSize(), 65536);
  expectError(parseVocabJson("{\"a\": 1.5}", "v.json").status(), "v.json:1:");
  expectError(parseVocabJson("{\"a\": 1", "v.json").status(),
              "v.json:1: expected ',' or '}'");
  expectError(parseVocabJson("{\n\"a\\q\": 1}", "v.json").status(),
              "v.json:2: unknown escape");
  expectError(parseVocabJson("[]", "v.json").status(), "v.json:1: expected '{'");
  auto escaped = parseVocabJson(R"({"\u0120\ud83d\udc4b": 3})", "v.json");
  ASSERT_TRUE(escaped.ok()) << escaped.status();
  EXPECT_EQ((*escaped)[0].symbol, "\u0120\U0001F44B");
}

TEST(BpeFiles, MalformedMergesNameFileAndLine) {
  expectError(parseMergesTxt("#version: 0.2\na b\na b c\n", "m.txt").status(),
              "m.txt:3: expected two symbols");
  expectError(parseMergesTxt("a\n", "m.txt").status(), "m.txt:1:");
  auto merges = parseMergesTxt("#version: 0.2\r\nh e\r\nx y\r\n", "m.txt");
  ASSERT_TRUE(merges.ok()) << merges.status();
  ASSERT_EQ(merges->size(), 2u);
  EXPECT_EQ((*merges)[0].right, "e");
  auto vocab = parseVocabJson(R"({"h": 0, "e": 1, "he": 2})", "v.json");
  ASSERT_TRUE(vocab.ok());
  auto tokenizer = BpeTokenizer::create(modelOf(*vocab, *merges));
  expectError(tokenizer.status(),
              "m.txt:3: merge \"x y\": \"x\" is not in the vocabulary");
}

TEST(BpeFiles, MissingOrMalformedFilesAreErrors) {
  auto missing = BpeTokenizer::fromFiles("/nonexistent/vocab.json",
                                         "/nonexistent/merges.txt");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  expectError(parseTokenizerJson("{\"model\": {\"type\": \"WordPiece\"}}",
                                 "t.json")
                  .status(),
              "t.json: model.type: expected \"BPE\"");
  expectError(parseTokenizerJson("{\"model\": {", "t.json").status(),
              "t.json: invalid JSON");
  expectError(
      parseTokenizerJson(R"({"model": {"vocab": {}, "merges": [3]}})", "t.json")
          .status(),
      "t.json: model.merges[0]");
  expectError(parseTokenizerJson(R"({"pre_tokenizer": {"type": "Whitespace"},
      "model": {"vocab": {}, "merges": []}})", "t.json").status(),
              "t.json: pre_tokenizer: unsupported");
  expectError(parseTokenizerJson(R"({"model": {"vocab": {}, "merges": [],
      "byte_fallback": true}})", "t.json").status(),
              "t.json: model.byte_fallback: unsupported");
  // A Split on any regex but Llama 3's would split differently.
  expectError(parseTokenizerJson(R"({"pre_tokenizer": {"type": "Sequence",
      "pretokenizers": [{"type": "Split", "pattern": {"Regex": "\\s+"},
        "behavior": "Isolated", "invert": false},
       {"type": "ByteLevel", "add_prefix_space": false, "use_regex": false}]},
      "model": {"vocab": {}, "merges": []}})", "t.json").status(),
              "t.json: pre_tokenizer: unsupported");
  expectError(parseTokenizerJson(R"({"model": {"type": "Unigram",
      "vocab": []}})", "t.json").status(),
              "t.json: model.type: expected \"BPE\"");
  // 50,000 nested arrays overflowed the parser's stack (a crash) until the
  // nesting was bounded before parsing; brackets inside strings do not
  // count.
  std::string deep =
      "{\"model\": " + std::string(50000, '[') + std::string(50000, ']') + "}";
  expectError(parseTokenizerJson(deep, "t.json").status(),
              "t.json: invalid JSON nested deeper than 512 arrays or objects "
              "[1:522]");
  EXPECT_EQ(jsonNestedTooDeeply("\"" + std::string(2000, '[') + "\""),
            std::nullopt);
  EXPECT_EQ(jsonNestedTooDeeply("[\"\\\"[\"" + std::string(511, '[')),
            std::nullopt);
  EXPECT_NE(jsonNestedTooDeeply("[\"\\\"[\"" + std::string(512, '[')),
            std::nullopt);
  EXPECT_EQ(jsonNestedTooDeeply("[\n [" + std::string(511, '{')),
            "nested deeper than 512 arrays or objects [2:513]");
}

TEST(LoadTokenizer, FallsBackToBytesAndReadsDirectories) {
  auto bytes = loadTokenizer({});
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ((*bytes)->vocabSize(), 256);
  TokenizerFiles files;
  files.directory = testDataDir() + "/gpt2-tiny";
  auto bpe = loadTokenizer(files);
  ASSERT_TRUE(bpe.ok()) << bpe.status();
  EXPECT_EQ(encodeOk(**bpe, "hello"), (std::vector<int32_t>{261}));
  TokenizerFiles half;
  half.vocabJson = "vocab.json";
  EXPECT_FALSE(loadTokenizer(half).ok());
}

// A model trained with the byte-level tokenizer saves a tokenizer_config.json
// naming it (it has no files of its own), so the folder loads again.
TEST(LoadTokenizer, AFolderCanNameTheByteTokenizer) {
  std::string dir = testing::makeTempDir("kiln-tokenizer");
  EXPECT_FALSE(hasTokenizer(dir));
  testing::writeWholeFile(dir + "/tokenizer_config.json",
                          std::string("{\"tokenizer_class\": \"") +
                              kByteTokenizerClass + "\"}");
  EXPECT_TRUE(hasTokenizer(dir));
  TokenizerFiles files;
  files.directory = dir;
  auto bytes = loadTokenizer(files);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ((*bytes)->vocabSize(), 256);
  // Another class without files is no tokenizer.
  testing::writeWholeFile(dir + "/tokenizer_config.json",
                          "{\"tokenizer_class\": \"GPT2Tokenizer\"}");
  EXPECT_FALSE(hasTokenizer(dir));
  std::filesystem::remove_all(dir);
}

// An eos_token a tokenizer_config.json names must be in the vocabulary: it
// was dropped without a word, and instruction data then failed for want of
// an end-of-text token, blaming the byte-level tokenizer.
TEST(LoadTokenizer, AnEosTokenTheVocabularyLacksIsAnError) {
  std::string dir = testing::makeTempDir("kiln-tokenizer");
  for (const char *name : {"vocab.json", "merges.txt"})
    std::filesystem::copy_file(testDataDir() + "/gpt2-tiny/" + name,
                               dir + "/" + name);
  TokenizerFiles files;
  files.directory = dir;
  testing::writeWholeFile(dir + "/tokenizer_config.json",
                          "{\"eos_token\": \"<|nothere|>\"}");
  expectError(loadTokenizer(files).status(),
              dir + "/tokenizer_config.json: eos_token \"<|nothere|>\" is "
                    "not in the vocabulary");
  // Without the file, GPT-2's <|endoftext|> is the default, if present.
  std::filesystem::remove(dir + "/tokenizer_config.json");
  EXPECT_TRUE(loadTokenizer(files).ok());
  std::filesystem::remove_all(dir);
}

} // namespace
} // namespace kiln::data
