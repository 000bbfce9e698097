// Greedy answers to instruction prompts, scored against the references;
// see InstructionEval.h.
#include "examples/InstructionEval.h"

#include "frontends/data/GroupTexts.h"

#include <algorithm>
#include <cctype>

namespace kiln::train {
namespace {

/// Trimmed and lower-cased, the form answers are compared in.
std::string normalised(std::string text) {
  size_t begin = text.find_first_not_of(" \t\r\n");
  size_t end = text.find_last_not_of(" \t\r\n");
  text = begin == std::string::npos ? "" : text.substr(begin, end - begin + 1);
  for (char &c : text)
    c = char(std::tolower((unsigned char)c));
  return text;
}

/// A row being answered: its tokens so far, where the prompt ends, and
/// whether the answer has ended.
struct Row {
  std::vector<int32_t> tokens;
  size_t promptLength = 0;
  bool done = false;
};

} // namespace

GenerationScore scoreGeneration(nn::CausalLM &model,
                                const data::Tokenizer &tokenizer,
                                const data::TextDataset &records,
                                int64_t blockSize, int64_t batchSize, int rank,
                                int processes) {
  std::optional<int32_t> eos = tokenizer.eosId();
  if (!eos)
    throw Error("scoring generated answers needs a tokenizer with an "
                "end-of-text token");
  std::vector<std::string> prompts, references;
  int64_t longest = 0;
  for (size_t i = 0; i < records.texts.size(); ++i) {
    size_t split = std::min(records.promptBytes[i], records.texts[i].size());
    prompts.push_back(records.texts[i].substr(0, split));
    references.push_back(records.texts[i].substr(split));
    absl::StatusOr<std::vector<int32_t>> ids =
        tokenizer.encodeContinuation(references.back()); // as trained
    longest = std::max(longest, ids.ok() ? int64_t(ids->size()) : 0);
  }
  const auto promptRoom =
      size_t(data::instructionPromptRoom(blockSize, longest));
  // Every row stops by then (a step is a forward of the whole batch); the
  // block's end stops a row too, as it bounded the responses in training.
  const int64_t maxNew = longest + 1;

  model.eval();
  set_graph_tag("generate step");
  NoGradGuard noGrad;
  GenerationScore score;
  for (size_t first = 0; first < prompts.size(); first += size_t(batchSize)) {
    if (int64_t(first) / batchSize % processes != rank)
      continue; // another process's batch
    size_t count = std::min(prompts.size() - first, size_t(batchSize));
    std::vector<Row> rows(count);
    for (size_t r = 0; r < count; ++r) {
      absl::StatusOr<std::vector<int32_t>> ids =
          tokenizer.encode(prompts[first + r]);
      if (!ids.ok())
        throw Error(std::string(ids.status().message()));
      if (std::optional<int32_t> bos = tokenizer.bosId())
        ids->insert(ids->begin(), *bos); // as instructionBlocks lays it out
      // The prompt keeps its end, cut as training cut it: every prompt
      // alike, never by its own reference (data::instructionPromptRoom).
      if (ids->size() > promptRoom)
        ids->erase(ids->begin(), ids->end() - std::ptrdiff_t(promptRoom));
      rows[r].tokens = std::move(*ids);
      rows[r].promptLength = rows[r].tokens.size();
      rows[r].done = rows[r].tokens.empty();
    }
    for (int64_t step = 0; step < maxNew; ++step) {
      if (std::all_of(rows.begin(), rows.end(),
                      [](const Row &row) { return row.done; }))
        break;
      HostTensor ids(DType::i64, {batchSize, blockSize});
      for (int64_t i = 0; i < ids.numElements(); ++i)
        ids.setInt(i, *eos);
      for (size_t r = 0; r < count; ++r)
        for (size_t j = 0; j < rows[r].tokens.size(); ++j)
          ids.setInt(int64_t(r) * blockSize + int64_t(j), rows[r].tokens[j]);
      HostTensor next =
          model.forward(Tensor::from_host(std::move(ids))).argmax(-1).to_host();
      for (size_t r = 0; r < count; ++r) {
        Row &row = rows[r];
        if (row.done)
          continue;
        auto token = int32_t(next.getInt(int64_t(r) * blockSize +
                                         int64_t(row.tokens.size()) - 1));
        if (token == *eos || int64_t(row.tokens.size()) >= blockSize) {
          row.done = true;
          continue;
        }
        row.tokens.push_back(token);
        absl::StatusOr<std::string> text = tokenizer.decode(
            absl::MakeConstSpan(row.tokens).subspan(row.promptLength));
        row.done = !text.ok() || text->find('\n') != std::string::npos;
      }
    }
    for (size_t r = 0; r < count; ++r) {
      absl::StatusOr<std::string> answer = tokenizer.decode(
          absl::MakeConstSpan(rows[r].tokens).subspan(rows[r].promptLength));
      std::string text = answer.ok() ? *answer : "";
      text = text.substr(0, text.find('\n'));
      score.correct += normalised(text) == normalised(references[first + r]);
      ++score.total;
    }
  }
  model.train();
  return score;
}

} // namespace kiln::train
