// Tests of frontends/data's data sets, group_texts and loader: SST-2 TSV in
// both column orders and its errors, WikiText-style raw text, the JSONL
// instruction template, group_texts on a hand example, loader determinism,
// drop_last and the padded last batch; and, when /work/shared/data (or
// $KILN_DATA_DIR) holds the real files, their row counts.
#include "frontends/data/DataLoader.h"
#include "frontends/data/Datasets.h"
#include "frontends/data/GroupTexts.h"
#include "frontends/data/Tokenizer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <set>

namespace kiln::data {
namespace {

using Texts = std::vector<std::string>;
using Ids = std::vector<int32_t>;

void expectError(const absl::Status &status, std::string_view where) {
  EXPECT_FALSE(status.ok());
  EXPECT_NE(std::string(status.message()).find(where), std::string::npos)
      << "expected \"" << where << "\" in: " << status.message();
}

TEST(Tsv, ReadsSst2InEitherColumnOrder) {
  auto labelFirst =
      parseTsv("label\tsentence\r\n0\thide new secretions \r\n1\tgreat fun\r\n",
               "train.tsv");
  ASSERT_TRUE(labelFirst.ok()) << labelFirst.status();
  EXPECT_EQ(labelFirst->texts, (Texts{"hide new secretions ", "great fun"}));
  EXPECT_EQ(labelFirst->labels, (std::vector<int64_t>{0, 1}));
  auto textFirst =
      parseTsv("sentence\tlabel\nit 's a charming journey\t1\n\nbad\t0",
               "glue.tsv");
  ASSERT_TRUE(textFirst.ok()) << textFirst.status();
  EXPECT_EQ(textFirst->texts, (Texts{"it 's a charming journey", "bad"}));
  EXPECT_EQ(textFirst->labels, (std::vector<int64_t>{1, 0}));
  auto content = parseTsv("label\tcontent\n1\tfine\n", "dev.tsv");
  ASSERT_TRUE(content.ok());
  EXPECT_EQ(content->texts, (Texts{"fine"}));
}

TEST(Tsv, LabelColumnIsOptionalAndOtherColumnsIgnored) {
  auto dataset = parseTsv("idx\ttext\n0\tone\n1\ttwo\n", "x.tsv");
  ASSERT_TRUE(dataset.ok()) << dataset.status();
  EXPECT_EQ(dataset->texts, (Texts{"one", "two"}));
  EXPECT_TRUE(dataset->labels.empty());
}

TEST(Tsv, MalformedRowsNameFileAndLine) {
  expectError(parseTsv("label\tsentence\n0\tok\n1\ttoo\tmany\n", "t.tsv")
                  .status(),
              "t.tsv:3: expected 2 tab-separated fields");
  expectError(parseTsv("label\tsentence\npos\tok\n", "t.tsv").status(),
              "t.tsv:2: label \"pos\" is not an integer");
  expectError(parseTsv("label\treview\n0\tok\n", "t.tsv").status(),
              "t.tsv:1: no text column");
  expectError(parseTsv("", "t.tsv").status(), "t.tsv: empty file");
}

// Two articles in WikiText's layout: " = Title = " lines, blank lines between.
constexpr std::string_view kWiki =
    " \n = Lobster = \n \n The lobster is a crustacean . \n\n = = Range = = \n"
    "It lives in the sea .";

TEST(TextFile, OneExamplePerLineKeepingLinebreaks) {
  TextDataset dataset = parseTextLines(kWiki);
  EXPECT_EQ(dataset.texts,
            (Texts{" \n", " = Lobster = \n", " \n",
                   " The lobster is a crustacean . \n", "\n",
                   " = = Range = = \n", "It lives in the sea ."}));
  EXPECT_TRUE(dataset.labels.empty());
}

TEST(TextFile, CanDropLinebreaksAndEmptyLines) {
  TextFileOptions options;
  options.keepLinebreaks = false;
  EXPECT_EQ(parseTextLines("a\r\n\r\nb\rc\n", options).texts,
            (Texts{"a", "", "b", "c"}));
  options.dropEmptyLines = true;
  EXPECT_EQ(parseTextLines("a\n\nb\n", options).texts, (Texts{"a", "b"}));
  EXPECT_TRUE(parseTextLines("").texts.empty());
}

TEST(Jsonl, RendersTheInstructionTemplate) {
  std::string jsonl =
      R"({"instruction": "Name a color.", "context": "", "response": "Blue."})"
      "\n\n"
      R"({"instruction": "Summarize.", "context": "Cats nap.\nA lot.",)"
      R"( "response": "Cats sleep.", "category": "summarization"})"
      "\n"
      R"({"instruction": "Hi?", "context": null, "response": "Hello."})";
  auto dataset = parseJsonRecords(jsonl, "dolly.jsonl");
  ASSERT_TRUE(dataset.ok()) << dataset.status();
  EXPECT_EQ(dataset->texts,
            (Texts{"### Instruction:\nName a color.\n\n### Answer:\nBlue.",
                   "### Instruction:\nSummarize.\n\n### Context:\nCats nap.\n"
                   "A lot.\n\n### Answer:\nCats sleep.",
                   "### Instruction:\nHi?\n\n### Answer:\nHello."}));
}

TEST(Jsonl, MalformedRowsNameFileAndLine) {
  expectError(
      parseJsonRecords(
          "{\"instruction\": \"a\", \"response\": \"b\"}\n{oops}\n", "d.jsonl")
          .status(),
      "d.jsonl:2: invalid JSON");
  expectError(
      parseJsonRecords("\n{\"instruction\": \"a\"}\n", "d.jsonl").status(),
      "d.jsonl:2: missing field \"response\"");
  expectError(parseJsonRecords("{\"instruction\": \"a\", \"response\": null}",
                               "d.jsonl")
                  .status(),
              "d.jsonl:1: field \"response\" is null");
  expectError(
      parseJsonRecords("{\"instruction\": 3, \"response\": \"b\"}", "d.jsonl")
          .status(),
      "d.jsonl:1: field \"instruction\" is not a string");
  expectError(parseJsonRecords("[1, 2]", "d.jsonl").status(),
              "d.jsonl: record 1: expected a JSON object");
  expectError(parseJsonRecords("\"text\"\n", "d.jsonl").status(),
              "d.jsonl:1: expected a JSON object");
  // Neither kind: the message lists what the record has.
  expectError(parseJsonRecords("{\"sentence\": \"a\", \"label\": 1}", "d.jsonl")
                  .status(),
              "d.jsonl:1: a record needs a \"text\" field (language-model "
              "data) or \"instruction\" and \"response\" fields "
              "(instruction data); this one has label, sentence");
  // The first record decides the kind; the rest must be of it.
  expectError(parseJsonRecords("{\"text\": \"a\"}\n{\"instruction\": "
                               "\"b\", \"response\": \"c\"}\n",
                               "d.jsonl")
                  .status(),
              "d.jsonl:2: missing field \"text\"");
  // A line of 50,000 nested arrays crashed the parser (its stack).
  expectError(parseJsonRecords("{\"instruction\": " + std::string(50000, '[') +
                                   std::string(50000, ']') + "}",
                               "d.jsonl")
                  .status(),
              "d.jsonl:1: invalid JSON nested deeper than 512");
}

// A UTF-8 byte-order mark (spreadsheets write one) is not part of the first
// line: pandas and Arrow's JSON reader skip it too.
TEST(DataFiles, AByteOrderMarkIsSkipped) {
  const std::string bom = "\xEF\xBB\xBF";
  auto tsv = parseTsv(bom + "sentence\tlabel\nhello\t1\n", "t.tsv");
  ASSERT_TRUE(tsv.ok()) << tsv.status();
  EXPECT_EQ(tsv->texts, Texts{"hello"});
  auto jsonl = parseJsonRecords(
      bom + "{\"instruction\": \"a\", \"response\": \"b\"}\n", "d.jsonl");
  ASSERT_TRUE(jsonl.ok()) << jsonl.status();
  EXPECT_EQ(jsonl->texts.size(), 1u);
}

// run_clm reads .json files with the datasets library's json loader and
// trains on their "text" column: JSON Lines or one array of records.
TEST(JsonRecords, TextRecordsAreLanguageModelExamples) {
  auto lines =
      parseJsonRecords("{\"text\": \"The Eiffel Tower\", \"id\": 1}\n\n"
                       "{\"text\": \"is in Paris.\\n\"}\n",
                       "lm.jsonl");
  ASSERT_TRUE(lines.ok()) << lines.status();
  EXPECT_EQ(lines->texts, (Texts{"The Eiffel Tower", "is in Paris.\n"}));
  EXPECT_TRUE(lines->promptBytes.empty()); // not instruction data
  EXPECT_EQ(lines->textColumn, "text");
  auto array = parseJsonRecords(
      " [\n {\"text\": \"one\"},\n {\"text\": \"two\"}\n]\n", "lm.json");
  ASSERT_TRUE(array.ok()) << array.status();
  EXPECT_EQ(array->texts, (Texts{"one", "two"}));
  auto dolly = parseJsonRecords(
      "[{\"instruction\": \"Hi?\", \"response\": \"Hello.\"}]", "d.json");
  ASSERT_TRUE(dolly.ok()) << dolly.status();
  EXPECT_EQ(dolly->texts,
            Texts{"### Instruction:\nHi?\n\n### Answer:\nHello."});
  EXPECT_EQ(dolly->promptBytes.size(), 1u);
  expectError(parseJsonRecords("[{\"text\": \"a\"}, {\"text\": 2}]", "lm.json")
                  .status(),
              "lm.json: record 2: field \"text\" is not a string");
  expectError(parseJsonRecords("[{\"text\": \"a\"},", "lm.json").status(),
              "lm.json: invalid JSON");
}

// run_clm's CSV: pandas' reading (RFC 4180 quotes), the "text" column or
// else the first.
TEST(Csv, ReadsTheTextColumnWithQuotedFields) {
  auto csv = parseCsv("label,text,idx\r\n"
                      "0,\"hide new secretions, from the \"\"parental\"\" "
                      "units\",1\r\n"
                      "\n"
                      "1,\"a line\nbreak\",2\n"
                      "1,plain,3\n"
                      "0,,4\n"
                      "1\n"
                      "0,last",
                      "train.csv");
  ASSERT_TRUE(csv.ok()) << csv.status();
  EXPECT_EQ(csv->texts,
            (Texts{"hide new secretions, from the \"parental\" units",
                   "a line\nbreak", "plain", "", "", "last"}));
  EXPECT_EQ(csv->textColumn, "text");
  EXPECT_TRUE(csv->labels.empty()); // run_clm trains on text alone
  auto first = parseCsv("\xEF\xBB\xBFsentence,label\nit 's fun,1\n", "a.csv");
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->texts, Texts{"it 's fun"});
  EXPECT_EQ(first->textColumn, "sentence");
}

TEST(Csv, MalformedRowsNameFileAndLine) {
  // The quoted field's line break counts: the bad row is on line 4.
  expectError(parseCsv("text,b\n\"x\ny\",1\nz,2,3\n", "t.csv").status(),
              "t.csv:4: expected 2 comma-separated fields (text, b), got 3");
  expectError(parseCsv("text\nok\n\"never closed\nmore\n", "t.csv").status(),
              "t.csv:3: a quoted field starts here and has no closing quote");
  expectError(parseCsv("\n\n", "t.csv").status(),
              "t.csv: empty file (expected a header row)");
}

TEST(GroupTexts, ConcatenatesAndDropsTheRemainder) {
  std::vector<Ids> examples = {{1, 2, 3}, {}, {4, 5}, {6, 7, 8, 9}};
  GroupOptions options;
  options.blockSize = 4;
  auto blocks = groupTexts(examples, options);
  ASSERT_TRUE(blocks.ok()) << blocks.status();
  EXPECT_EQ(blocks->numBlocks(), 2);
  EXPECT_EQ(blocks->ids, (Ids{1, 2, 3, 4, 5, 6, 7, 8})); // 9 is dropped
  EXPECT_EQ(Ids(blocks->block(1).begin(), blocks->block(1).end()),
            (Ids{5, 6, 7, 8}));
}

TEST(GroupTexts, DropsARemainderPerGroupOfExamples) {
  std::vector<Ids> examples = {{1, 2, 3}, {4, 5}, {6, 7, 8, 9}};
  GroupOptions options;
  options.blockSize = 4;
  options.examplesPerGroup = 2; // run_clm's map(batched=True) batches
  auto blocks = groupTexts(examples, options);
  ASSERT_TRUE(blocks.ok());
  EXPECT_EQ(blocks->ids, (Ids{1, 2, 3, 4, 6, 7, 8, 9}));
}

TEST(GroupTexts, AppendsEosAfterNonEmptyDocuments) {
  std::vector<Ids> examples = {{1, 2, 3}, {}, {4, 5}, {6, 7, 8, 9}};
  GroupOptions options;
  options.blockSize = 4;
  options.eosId = 0;
  auto blocks = groupTexts(examples, options);
  ASSERT_TRUE(blocks.ok());
  EXPECT_EQ(blocks->ids, (Ids{1, 2, 3, 0, 4, 5, 0, 6, 7, 8, 9, 0}));
  options.blockSize = 0;
  EXPECT_FALSE(groupTexts(examples, options).ok());
}

TEST(InstructionBlocks, OneRecordABlockWithTheLossOnTheResponse) {
  auto bytes = loadTokenizer({"", "", "", ""}); // byte-level: id = byte
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  TextDataset records;
  records.texts = {"P:ab", "xyz:ab", "Q:abcdef"};
  records.promptBytes = {2, 4, 2};
  const int32_t eos = 3, ignore = int32_t(kIgnoreIndex);
  auto blocks = instructionBlocks(**bytes, records, 6, eos);
  ASSERT_TRUE(blocks.ok()) << blocks.status();
  ASSERT_EQ(blocks->numBlocks(), 3);
  // Prompt, response, end-of-text, then end-of-text padding the loss skips.
  EXPECT_EQ(Ids(blocks->block(0).begin(), blocks->block(0).end()),
            (Ids{'P', ':', 'a', 'b', eos, eos}));
  EXPECT_EQ(Ids(blocks->blockLabels(0).begin(), blocks->blockLabels(0).end()),
            (Ids{ignore, ignore, 'a', 'b', eos, ignore}));
  // Too long: the prompt (within instructionPromptRoom(6, 6) = 5) is kept,
  // the response loses its end-of-text.
  EXPECT_EQ(Ids(blocks->block(1).begin(), blocks->block(1).end()),
            (Ids{'x', 'y', 'z', ':', 'a', 'b'}));
  EXPECT_EQ(Ids(blocks->blockLabels(1).begin(), blocks->blockLabels(1).end()),
            (Ids{ignore, ignore, ignore, ignore, 'a', 'b'}));
  // A response longer than the block keeps its prompt and its start.
  EXPECT_EQ(Ids(blocks->block(2).begin(), blocks->block(2).end()),
            (Ids{'Q', ':', 'a', 'b', 'c', 'd'}));
  EXPECT_EQ(Ids(blocks->blockLabels(2).begin(), blocks->blockLabels(2).end()),
            (Ids{ignore, ignore, 'a', 'b', 'c', 'd'}));
  // The loader hands out those labels.
  LoaderOptions o;
  o.batchSize = 3;
  o.shuffle = false;
  auto loader = DataLoader::create(*blocks, o);
  ASSERT_TRUE(loader.ok());
  Batch batch = *loader->next();
  EXPECT_EQ(batch.labels[2], 'a');
  EXPECT_EQ(batch.labels[5], ignore);
  EXPECT_EQ(batch.labels[6], ignore);
  // Plain texts, or a block under 2, are refused.
  TextDataset plain;
  plain.texts = {"abc"};
  EXPECT_FALSE(instructionBlocks(**bytes, plain, 6, eos).ok());
  EXPECT_FALSE(instructionBlocks(**bytes, records, 1, eos).ok());
  // The prompts' room leaves the longest response and its end-of-text
  // their tokens, at most a quarter of the block.
  EXPECT_EQ(instructionPromptRoom(128, 2), 125);
  EXPECT_EQ(instructionPromptRoom(128, 500), 96);
  EXPECT_EQ(instructionPromptRoom(8, 0), 7);
  // A prompt longer than that keeps its end, the same for every response:
  // where a response starts never tells its length (a model would read an
  // answer's label from it).
  EXPECT_EQ(instructionPromptRoom(8, 3), 6);
  TextDataset longPrompts;
  longPrompts.texts = {"0123456789:a", "0123456789:abc"};
  longPrompts.promptBytes = {11, 11};
  InstructionCuts cuts;
  auto cut = instructionBlocks(**bytes, longPrompts, 8, eos, &cuts);
  ASSERT_TRUE(cut.ok()) << cut.status();
  EXPECT_EQ(Ids(cut->block(0).begin(), cut->block(0).end()),
            (Ids{'5', '6', '7', '8', '9', ':', 'a', eos}));
  EXPECT_EQ(Ids(cut->block(1).begin(), cut->block(1).end()),
            (Ids{'5', '6', '7', '8', '9', ':', 'a', 'b'}));
  EXPECT_EQ(Ids(cut->blockLabels(1).begin(), cut->blockLabels(1).end()),
            (Ids{ignore, ignore, ignore, ignore, ignore, ignore, 'a', 'b'}));
  EXPECT_EQ(cuts.promptRoom, 6);
  EXPECT_EQ(cuts.prompts, 2);
  EXPECT_EQ(cuts.responses, 1);
  // JSONL records carry their prompts' lengths.
  auto dolly = parseJsonRecords(
      R"({"instruction": "Hi?", "response": "Hello."})", "d.jsonl");
  ASSERT_TRUE(dolly.ok());
  EXPECT_EQ(dolly->texts[0].substr(dolly->promptBytes[0]), "Hello.");
}

// Ten blocks of two ids; block b holds {10b, 10b + 1}.
LmBlocks tenBlocks() {
  LmBlocks blocks;
  blocks.blockSize = 2;
  for (int32_t b = 0; b < 10; ++b)
    blocks.ids.insert(blocks.ids.end(), {10 * b, 10 * b + 1});
  return blocks;
}

std::vector<int64_t> firstColumn(const Batch &batch) {
  std::vector<int64_t> rows;
  for (int64_t r = 0; r < batch.numRows; ++r)
    rows.push_back(batch.inputIds[r * batch.blockSize] / 10);
  return rows;
}

// All batches next() gives, as lists of block indices.
std::vector<std::vector<int64_t>> drain(DataLoader &loader) {
  std::vector<std::vector<int64_t>> batches;
  while (std::optional<Batch> batch = loader.next())
    batches.push_back(firstColumn(*batch));
  return batches;
}

DataLoader makeLoader(LoaderOptions options) {
  auto loader = DataLoader::create(tenBlocks(), options);
  EXPECT_TRUE(loader.ok()) << loader.status();
  return std::move(*loader);
}

TEST(DataLoader, ShufflesDeterministicallyBySeed) {
  LoaderOptions options;
  options.batchSize = 3;
  options.numEpochs = 2;
  DataLoader a = makeLoader(options), b = makeLoader(options);
  auto batchesA = drain(a);
  EXPECT_EQ(batchesA, drain(b));
  ASSERT_EQ(batchesA.size(), 6u); // 3 full batches per epoch, 2 epochs
  options.seed = 43;
  DataLoader c = makeLoader(options);
  EXPECT_NE(batchesA, drain(c));
  // Each epoch is a permutation, and the two epochs' orders differ.
  std::vector<int64_t> e0 = a.epochOrder(0), e1 = a.epochOrder(1);
  EXPECT_NE(e0, e1);
  std::sort(e0.begin(), e0.end());
  EXPECT_EQ(e0, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  // Pinned so that a change of generator or algorithm is noticed: runs must
  // reproduce across builds and platforms.
  EXPECT_EQ(a.epochOrder(0),
            (std::vector<int64_t>{9, 6, 2, 0, 1, 4, 3, 8, 5, 7}));
}

TEST(DataLoader, DropsTheRaggedLastBatchByDefault) {
  LoaderOptions options;
  options.batchSize = 3;
  options.shuffle = false;
  DataLoader loader = makeLoader(options);
  EXPECT_EQ(loader.batchesPerEpoch(), 3);
  EXPECT_EQ(drain(loader), (std::vector<std::vector<int64_t>>{
                               {0, 1, 2}, {3, 4, 5}, {6, 7, 8}}));
  options.batchSize = 11;
  EXPECT_FALSE(DataLoader::create(tenBlocks(), options).ok());
}

TEST(DataLoader, PadsTheLastBatchWhenNotDropping) {
  LoaderOptions options;
  options.batchSize = 3;
  options.shuffle = false;
  options.dropLast = false;
  options.padId = 99;
  DataLoader loader = makeLoader(options);
  EXPECT_EQ(loader.batchesPerEpoch(), 4);
  std::optional<Batch> batch;
  for (int i = 0; i < 4; ++i)
    batch = loader.next();
  ASSERT_TRUE(batch.has_value());
  EXPECT_FALSE(loader.next().has_value());
  EXPECT_EQ(batch->shape(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(batch->numRows, 1);
  EXPECT_EQ(batch->inputIds, (std::vector<int64_t>{90, 91, 99, 99, 99, 99}));
  EXPECT_EQ(batch->labels,
            (std::vector<int64_t>{90, 91, kIgnoreIndex, kIgnoreIndex,
                                  kIgnoreIndex, kIgnoreIndex}));
  EXPECT_EQ(batch->attentionMask, (std::vector<int64_t>{1, 1, 0, 0, 0, 0}));
  EXPECT_EQ(batch->step, 3);
  EXPECT_EQ(batch->indexInEpoch, 3);
}

TEST(DataLoader, CompletesTheLastBatchFromTheEpochsStartAsAccelerate) {
  // Accelerate's even_batches (BatchSamplerShard) for data-parallel
  // processes: ten blocks in batches of 4, the last round's 2 real rows are
  // followed by the epoch's first 2 (in the epoch's order), all real.
  LoaderOptions options;
  options.batchSize = 4;
  options.dropLast = false;
  options.completeLastFromEpochStart = true;
  options.seed = 3;
  DataLoader loader = makeLoader(options);
  std::vector<int64_t> order = loader.epochOrder(0);
  Batch last = loader.batchAt(2);
  EXPECT_EQ(last.numRows, 4);
  EXPECT_EQ(firstColumn(last),
            (std::vector<int64_t>{order[8], order[9], order[0], order[1]}));
  EXPECT_EQ(last.attentionMask, std::vector<int64_t>(8, 1));
  EXPECT_EQ(last.labels, last.inputIds);
  // An epoch shorter than a batch cycles through itself.
  options.batchSize = 12;
  options.shuffle = false;
  DataLoader short_ = makeLoader(options);
  EXPECT_EQ(firstColumn(short_.batchAt(0)),
            (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1}));
}

TEST(ShardBatch, SplitsAWholeBatchInRankOrder) {
  // Data parallelism: every process draws the same batch of size x B rows
  // and takes B of them, rank r rows [r B, (r + 1) B).
  LoaderOptions options;
  options.batchSize = 4;
  options.shuffle = false;
  DataLoader loader = makeLoader(options);
  Batch whole = *loader.next();
  Batch first = shardBatch(whole, 0, 2), second = shardBatch(whole, 1, 2);
  EXPECT_EQ(first.shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(firstColumn(first), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(firstColumn(second), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(second.inputIds, (std::vector<int64_t>{20, 21, 30, 31}));
  EXPECT_EQ(second.labels, second.inputIds);
  EXPECT_EQ(second.attentionMask, (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(second.step, whole.step);
}

TEST(ShardBatch, SpreadsAPaddedBatchsRowsSoNoProcessHasOnlyPadding) {
  // Ten blocks in batches of 4: the last has 2 real rows. Split over 2
  // processes each gets one; over 4, the rows repeat (even batches).
  LoaderOptions options;
  options.batchSize = 4;
  options.shuffle = false;
  options.dropLast = false;
  options.padId = 99;
  DataLoader loader = makeLoader(options);
  Batch last = loader.batchAt(2);
  ASSERT_EQ(last.numRows, 2);
  Batch a = shardBatch(last, 0, 2), b = shardBatch(last, 1, 2);
  EXPECT_EQ(a.numRows, 1);
  EXPECT_EQ(a.inputIds, (std::vector<int64_t>{80, 81, 99, 99}));
  EXPECT_EQ(a.labels,
            (std::vector<int64_t>{80, 81, kIgnoreIndex, kIgnoreIndex}));
  EXPECT_EQ(a.attentionMask, (std::vector<int64_t>{1, 1, 0, 0}));
  EXPECT_EQ(b.inputIds, (std::vector<int64_t>{90, 91, 99, 99}));
  std::vector<int64_t> rows;
  for (int rank = 0; rank < 4; ++rank) {
    Batch shard = shardBatch(last, rank, 4);
    EXPECT_EQ(shard.numRows, 1);
    EXPECT_EQ(shard.attentionMask, (std::vector<int64_t>{1, 1}));
    rows.push_back(firstColumn(shard)[0]);
  }
  EXPECT_EQ(rows, (std::vector<int64_t>{8, 9, 8, 9}));
}

TEST(DataLoader, CountsStepsAndEpochsAndResumes) {
  LoaderOptions options;
  options.batchSize = 4;
  options.numEpochs = 0; // endless
  DataLoader loader = makeLoader(options);
  EXPECT_EQ(loader.totalSteps(), -1);
  std::vector<Batch> batches;
  for (int i = 0; i < 7; ++i)
    batches.push_back(*loader.next());
  EXPECT_EQ(loader.step(), 7);
  EXPECT_EQ(loader.epoch(), 3); // 2 batches per epoch
  EXPECT_EQ(batches[5].epoch, 2);
  EXPECT_EQ(batches[5].indexInEpoch, 1);
  EXPECT_EQ(batches[5].labels, batches[5].inputIds);
  DataLoader resumed = makeLoader(options);
  resumed.seek(5);
  EXPECT_EQ(resumed.next()->inputIds, batches[5].inputIds);
  EXPECT_EQ(batches[0].inputIdsInt32().size(), 8u);
}

// The real data sets, when this machine has them.
std::string sharedDataDir() {
  if (const char *dir = std::getenv("KILN_DATA_DIR"))
    return dir;
  return std::string(KILN_SOURCE_DIR) + "/../shared/data";
}

TEST(RealData, LoadsSst2AndWikiText) {
  std::string dir = sharedDataDir();
  auto train = loadTsv(dir + "/sst2/train.tsv");
  if (train.status().code() == absl::StatusCode::kNotFound)
    GTEST_SKIP() << "no data at " << dir;
  ASSERT_TRUE(train.ok()) << train.status();
  EXPECT_EQ(train->size(), 67349u);
  EXPECT_EQ(train->labels.size(), 67349u);
  EXPECT_EQ(train->texts[0], "hide new secretions from the parental units");
  auto dev = loadTsv(dir + "/sst2/dev.tsv");
  ASSERT_TRUE(dev.ok()) << dev.status();
  EXPECT_EQ(dev->size(), 872u);
  EXPECT_TRUE(std::all_of(dev->labels.begin(), dev->labels.end(),
                          [](int64_t l) { return l == 0 || l == 1; }));

  auto wiki = loadTextFile(dir + "/wikitext-2/valid.txt");
  ASSERT_TRUE(wiki.ok()) << wiki.status();
  EXPECT_EQ(wiki->size(), 3760u);
  EXPECT_EQ(wiki->texts[1], " = Homarus gammarus = \n");
  ByteTokenizer bytes;
  auto ids = tokenizeTexts(bytes, wiki->texts);
  ASSERT_TRUE(ids.ok()) << ids.status();
  GroupOptions group;
  group.blockSize = 1024;
  auto blocks = groupTexts(*ids, group);
  ASSERT_TRUE(blocks.ok());
  EXPECT_GT(blocks->numBlocks(), 1000); // ~1.1 MB of text
  LoaderOptions options;
  auto loader = DataLoader::create(std::move(*blocks), options);
  ASSERT_TRUE(loader.ok()) << loader.status();
  std::optional<Batch> batch = loader->next();
  ASSERT_TRUE(batch.has_value());
  EXPECT_EQ(batch->shape(), (std::vector<int64_t>{8, 1024}));
}

} // namespace
} // namespace kiln::data
