// kiln-bench's real data: an SST-2 TSV or a raw text file, tokenized and
// grouped into --seq blocks as run_clm does, and --steps x --batch blocks
// drawn in a seeded shuffled order, all by frontends/data (tokenizer,
// datasets, group_texts, loader). See BenchSupport.h.
#include "bench/BenchSupport.h"

#include "frontends/data/DataLoader.h"
#include "frontends/data/Datasets.h"
#include "frontends/data/GroupTexts.h"
#include "frontends/data/Tokenizer.h"

#include "absl/strings/str_cat.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sys/stat.h>

namespace kiln::bench {
namespace {

/// Bytes → a printable, quoted-safe excerpt (\n, \t, \" and \xNN escaped).
std::string escaped(const std::string &text, size_t maxBytes) {
  std::string out;
  for (size_t i = 0; i < text.size() && i < maxBytes; ++i) {
    unsigned char ch = static_cast<unsigned char>(text[i]);
    if (ch == '\n') {
      out += "\\n";
    } else if (ch == '\t') {
      out += "\\t";
    } else if (ch == '"' || ch == '\\') {
      out += std::string("\\") + char(ch);
    } else if (ch < 0x20 || ch == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", ch);
      out += buf;
    } else {
      out.push_back(char(ch)); // UTF-8 above ASCII passes through
    }
  }
  if (text.size() > maxBytes)
    out += "...";
  return out;
}

} // namespace

absl::StatusOr<DatasetBatches> makeDatasetBatches(const BenchConfig &c,
                                                  int64_t steps) {
  DatasetBatches out;
  DatasetSummary &s = out.summary;
  s.dataset = c.dataset;
  s.path = c.train_file;

  absl::StatusOr<std::unique_ptr<data::Tokenizer>> tokenizer =
      data::loadTokenizer({c.tokenizer_dir, "", "", ""});
  if (!tokenizer.ok())
    return absl::InvalidArgumentError(absl::StrCat(
        "--tokenizer_dir: ", tokenizer.status().message()));
  s.tokenizer = c.tokenizer_dir.empty() ? "byte-level"
                                        : "GPT-2 BPE from " + c.tokenizer_dir;
  s.tokenizerVocab = (*tokenizer)->vocabSize();
  if (c.vocab < s.tokenizerVocab)
    return absl::InvalidArgumentError(absl::StrCat(
        "--vocab ", c.vocab, " is smaller than the tokenizer's vocabulary (",
        s.tokenizerVocab, ", ", s.tokenizer, ")"));

  struct stat info;
  if (::stat(c.train_file.c_str(), &info) != 0)
    return absl::NotFoundError(absl::StrCat("--train_file ", c.train_file,
                                            ": ", std::strerror(errno)));
  if (!S_ISREG(info.st_mode))
    return absl::InvalidArgumentError(absl::StrCat(
        "--train_file ", c.train_file, ": not a regular file"));
  absl::StatusOr<data::TextDataset> texts =
      c.dataset == "sst2" ? data::loadTsv(c.train_file)
                          : data::loadTextFile(c.train_file);
  if (!texts.ok())
    return absl::Status(
        texts.status().code(),
        absl::StrCat("--train_file ", texts.status().message()));
  s.rows = static_cast<int64_t>(texts->size());

  // run_clm: tokenize every example, then group_texts (1,000 examples per
  // group, remainder dropped per group, no EOS between examples).
  absl::StatusOr<std::vector<std::vector<int32_t>>> ids =
      data::tokenizeTexts(**tokenizer, texts->texts);
  if (!ids.ok())
    return absl::InvalidArgumentError(absl::StrCat(
        "--train_file ", c.train_file, ": cannot tokenize (", s.tokenizer,
        "): ", ids.status().message()));
  for (const std::vector<int32_t> &e : *ids)
    s.tokens += static_cast<int64_t>(e.size());
  data::GroupOptions group;
  group.blockSize = c.seq;
  absl::StatusOr<data::LmBlocks> blocks = data::groupTexts(*ids, group);
  if (!blocks.ok())
    return blocks.status();
  s.blocks = blocks->numBlocks();

  data::LoaderOptions lo;
  lo.batchSize = c.batch;
  lo.shuffle = true;
  lo.seed = c.seed;
  lo.dropLast = true;
  lo.numEpochs = 0; // as many epochs as --steps needs, each reshuffled
  absl::StatusOr<data::DataLoader> loader =
      data::DataLoader::create(std::move(*blocks), lo);
  if (!loader.ok())
    return absl::InvalidArgumentError(absl::StrCat(
        c.train_file, ": ", loader.status().message()));
  s.batchesPerEpoch = loader->batchesPerEpoch();
  s.epochs = (c.steps + s.batchesPerEpoch - 1) / s.batchesPerEpoch;
  out.ids.reserve(static_cast<size_t>(steps * c.batch * c.seq));
  for (int64_t step = 0; step < steps; ++step) {
    data::Batch b = loader->batchAt(step);
    out.ids.insert(out.ids.end(), b.inputIds.begin(), b.inputIds.end());
  }
  // The first row of the first batch, decoded: evidence of where the
  // batches came from.
  std::vector<int32_t> first(out.ids.begin(), out.ids.begin() + c.seq);
  if (absl::StatusOr<std::string> text = (*tokenizer)->decode(first); text.ok())
    s.firstBlock = escaped(*text, 80);
  return out;
}

std::string describe(const DatasetSummary &s, const BenchConfig &c) {
  return absl::StrCat(
      "dataset ", s.dataset, " from ", s.path, ": ", s.rows, " rows, ",
      s.tokens, " tokens (", s.tokenizer, ", vocabulary ", s.tokenizerVocab,
      "), ", s.blocks, " blocks of ", c.seq, "; ", c.steps, " steps x ",
      c.batch, " blocks, shuffled with seed ", c.seed, " (", s.epochs,
      s.epochs == 1 ? " epoch" : " epochs", " of ", s.batchesPerEpoch,
      " batches)");
}

} // namespace kiln::bench
