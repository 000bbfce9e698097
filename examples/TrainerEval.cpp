// kiln-train's evaluation: the validation loss (and, on instruction data,
// the generated answers' accuracy), split over a data-parallel run's
// processes as the Trainer splits it, and its log dict.
#include "examples/InstructionEval.h"
#include "examples/Trainer.h"

#include "frontends/data/DataLoader.h"

#include <chrono>
#include <cmath>
#include <cstdio>

namespace kiln::train {
namespace {

/// What an evaluation adds up: the validation loss over rows and the
/// generated answers, summed over a data-parallel run's processes.
struct EvalSums {
  double loss = 0, rows = 0;
  GenerationScore answers;
};

// The loss over the validation blocks, in fixed-shape batches (the last
// padded with ignored rows, so no new shape), weighted by real rows as the
// Trainer's evaluation loop does: summed into `sums`. In a data-parallel
// run each process takes its share of the batches (batch b where b mod
// `processes` is `rank`), as the Trainer splits the evaluation.
void evaluate(nn::CausalLM &model, const data::LmBlocks &blocks,
              int64_t batchSize, int rank, int processes, EvalSums &sums) {
  data::LoaderOptions o;
  o.batchSize = batchSize;
  o.shuffle = false;
  o.dropLast = false;
  auto loader = data::DataLoader::create(blocks, o);
  if (!loader.ok())
    return;
  model.eval();
  set_graph_tag("eval step");
  NoGradGuard noGrad;
  while (std::optional<data::Batch> batch = loader->next()) {
    if (batch->step % processes != rank)
      continue; // another process's batch
    Tensor ids = idsTensor(batch->inputIds, batch->shape());
    Tensor labels = idsTensor(batch->labels, batch->shape());
    Tensor loss = model.loss(ids, labels);
    kiln::step();
    sums.loss += loss.item() * double(batch->numRows);
    sums.rows += double(batch->numRows);
  }
  model.train();
}

/// `sums` added up over the processes of a data-parallel run (one sum of
/// four numbers, exact for counts below 2^53).
void sumOverProcesses(EvalSums &sums) {
  if (world_size() == 1)
    return;
  std::vector<double> total =
      all_reduce(Tensor::from_vector({sums.loss, sums.rows,
                                      double(sums.answers.correct),
                                      double(sums.answers.total)},
                                     {4}, DType::f64))
          .to_vector();
  sums.loss = total[0];
  sums.rows = total[1];
  sums.answers.correct = int64_t(total[2]);
  sums.answers.total = int64_t(total[3]);
}

} // namespace

void Trainer::evaluateAndLog() {
  if (!data_.eval || data_.eval->numBlocks() == 0) {
    std::fprintf(stderr,
                 "kiln-train: warning: the validation data has fewer "
                 "than %lld tokens; no evaluation\n",
                 (long long)args_.blockSize);
    return;
  }
  auto evalStart = std::chrono::steady_clock::now();
  EvalSums sums;
  evaluate(*model_, *data_.eval, args_.evalBatchSize, args_.worldRank,
           args_.worldSize, sums);
  // Instruction data: the answers the model generates, scored.
  if (data_.evalRecords)
    sums.answers = scoreGeneration(
        *model_, *data_.tokenizer, *data_.evalRecords, args_.blockSize,
        args_.evalBatchSize, args_.worldRank, args_.worldSize);
  sumOverProcesses(sums);
  double loss = sums.rows > 0 ? sums.loss / sums.rows : std::nan("");
  double seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - evalStart)
                       .count();
  LogDict eval = {{"eval_loss", loss}, {"perplexity", std::exp(loss)}};
  if (data_.evalRecords)
    eval.push_back({"eval_accuracy", pythonRound(sums.answers.accuracy(), 4)});
  // The Trainer's speed_metrics: every process's samples and batches.
  const auto samples = double(data_.eval->numBlocks());
  const double batches =
      std::ceil(samples / double(args_.evalBatchSize * args_.worldSize));
  eval.push_back({"eval_runtime", pythonRound(seconds, 4)});
  eval.push_back(
      {"eval_samples_per_second", pythonRound(samples / seconds, 3)});
  eval.push_back({"eval_steps_per_second", pythonRound(batches / seconds, 3)});
  eval.push_back({"eval_samples", samples});
  appendEpoch(eval);
  if (bar_)
    bar_->clear();
  std::printf("%s\n", formatLogDict(eval).c_str());
  std::fflush(stdout);
  lastEval_ = eval;
  eval.push_back({"step", double(globalStep_)});
  history_.push_back(eval);
}

} // namespace kiln::train
