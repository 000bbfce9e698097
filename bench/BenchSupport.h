// Shared pieces of kiln-bench: the benchmark configuration and its flags,
// the files every system reads (initial weights as safetensors by Hugging
// Face name, batches as a NumPy .npy of int64 [steps, batch, seq]), and
// running a program as a subprocess under a memory watchdog, so that each
// run's peak RSS is its own and a run over the budget is stopped early.
#ifndef KILN_BENCH_BENCHSUPPORT_H
#define KILN_BENCH_BENCHSUPPORT_H

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include "llvm/Support/JSON.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kiln::bench {

/// One benchmark configuration (the flags of kiln-bench).
struct BenchConfig {
  int64_t n_layer = 2, n_embd = 64, n_head = 4, vocab = 512, seq = 32;
  int64_t batch = 4, steps = 20, warmup_steps = 2;
  /// How often each system reads its loss back (the Trainer's
  /// --logging_steps): 1 reads every step, so a step's time is the whole
  /// step on the device; N > 1 reads step 0's at once (its time holds the
  /// compile), then every N steps, as the Trainer syncs only to log, so
  /// the host may prepare a step while the device runs the last. A
  /// window's wall time is split evenly over its steps.
  int64_t logging_steps = 1;
  double lr = 1e-3, weight_decay = 0.01, dropout = 0.0, max_grad_norm = 1.0;
  uint64_t seed = 0;
  std::string out = "bench-out";
  std::vector<std::string> peers = {"torch", "torch_compile", "jax"};
  std::vector<std::string> modes = {"compiled", "eager"};
  std::string backend = "cpu";
  /// "f32", or "bf16" / "fp16": mixed precision for every system (kiln's
  /// kiln-autocast; PyTorch's autocast; 16-bit products in JAX), weights
  /// and optimizer in f32 everywhere; fp16 adds dynamic loss scaling
  /// (nn::GradScaler, torch.amp.GradScaler, the same rule in JAX's step).
  std::string precision = "f32";
  double budget_gib = 8;
  /// Every run is killed when its RSS passes this (protects the machine).
  double max_rss_gib = 16;
  /// Largest-batch search (off when bisect_max_batch is 0): at most
  /// bisect_max_probes runs of bisect_steps steps, batches up to the max.
  int64_t bisect_max_batch = 64, bisect_steps = 2, bisect_max_probes = 4;
  /// The systems the search runs for (empty: every system); the others run
  /// at --batch only (a peer whose every probe recompiles, torch.compile,
  /// can then give its figures at the batch without its search's minutes).
  std::vector<std::string> bisect_systems;
  int64_t parity_steps = 20;
  /// Window of the trailing moving average the parity report smooths the
  /// loss curves with.
  int64_t parity_window = 10;
  /// Where the batches come from: "synthetic" (makeBatches), "sst2" (a GLUE
  /// TSV) or "text" (raw text, one example per line) from train_file,
  /// tokenized byte-level or with the GPT-2 BPE in tokenizer_dir.
  std::string dataset = "synthetic", train_file, tokenizer_dir;
  /// Where the peers' scripts and venv live (default: next to the source).
  std::string peers_dir;
  /// The model: "gpt2", or "llama" (n_kv_head key/value heads, 0: as many
  /// as n_head; n_inner the MLP's width, 0: 4 n_embd; RoPE theta 500000,
  /// untied head, as Llama 3).
  std::string model = "gpt2";
  int64_t n_kv_head = 0, n_inner = 0;
  /// LoRA (PEFT's): lora_r > 0 adapts lora_targets (empty: the model
  /// type's default) and freezes the rest; torch_dtype "bfloat16" stores
  /// that frozen base in bf16 (transformers' from_pretrained(torch_dtype=)).
  int64_t lora_r = 0;
  double lora_alpha = 16, lora_dropout = 0.05;
  std::string lora_targets, torch_dtype = "float32";
  /// "shared": every system starts from the weights file kiln-bench writes;
  /// "own": each draws its own random weights on its device (a model too
  /// large to write: time and memory compare, losses do not).
  std::string init = "shared";
  /// Whether --peers was given (fine-tuning runs default to PyTorch's).
  bool peers_given = false;
  /// Hidden: run one system in this process ("kiln") with these files.
  std::string worker, mode = "compiled", weights, batches, result;
};

/// A fine-tuning run (a Llama, or LoRA): the peers are transformers' models
/// with PEFT (bench/peers/torch_hf.py) rather than kiln-bench's own GPT-2
/// scripts, and JAX has no peer for it.
bool fineTuneRun(const BenchConfig &config);

/// argv → config; a bad or unknown flag is an error naming it.
absl::StatusOr<BenchConfig> parseFlags(int argc, char **argv);
/// The flags that reproduce `config`'s model and training setup (for the
/// workers and the peers' scripts).
std::vector<std::string> modelFlags(const BenchConfig &config);

/// Deterministic token ids [steps, batch, seq] with structure a model can
/// learn (mostly a fixed successor rule, sometimes a random token), so the
/// loss falls and two flat curves cannot agree by accident.
std::vector<int64_t> makeBatches(int64_t steps, int64_t batch, int64_t seq,
                                 int64_t vocab, uint64_t seed);
/// ids + shape → a NumPy v1.0 .npy file of little-endian int64.
absl::Status writeNpyInt64(const std::string &path,
                           const std::vector<int64_t> &ids,
                           const std::vector<int64_t> &shape);
/// A file written by writeNpyInt64 → ids; `shape` receives its shape.
absl::StatusOr<std::vector<int64_t>> readNpyInt64(const std::string &path,
                                                  std::vector<int64_t> &shape);

/// What makeDatasetBatches read and how it cut it.
struct DatasetSummary {
  std::string dataset, path, tokenizer;
  int64_t tokenizerVocab = 0;
  int64_t rows = 0, tokens = 0, blocks = 0, batchesPerEpoch = 0, epochs = 0;
  /// The first row of the first batch, decoded and escaped (80 bytes).
  std::string firstBlock;
};
struct DatasetBatches {
  std::vector<int64_t> ids; ///< [steps, batch, seq]
  DatasetSummary summary;
};
/// config.train_file (config.dataset "sst2" or "text") → token ids
/// [steps, batch, seq] (steps >= config.steps; the summary counts epochs
/// for config.steps): frontends/data tokenizes it (byte-level, or the
/// GPT-2 BPE of config.tokenizer_dir), groups it into seq-token blocks as
/// run_clm's group_texts does, and its DataLoader draws steps x batch blocks
/// in an order shuffled by config.seed (a new shuffle per epoch when the
/// steps need more than one). Errors name the flag or file at fault.
absl::StatusOr<DatasetBatches> makeDatasetBatches(const BenchConfig &config,
                                                  int64_t steps);
/// One line for the log: the file, rows, tokens, blocks, epochs.
std::string describe(const DatasetSummary &summary, const BenchConfig &config);

/// What a finished subprocess left behind.
struct RunOutcome {
  int exitCode = -1;  ///< -1 when killed by a signal
  bool overBudget = false; ///< killed by the watchdog
  double peakRssMiB = 0;   ///< from wait4's rusage (includes its children)
  double wallSeconds = 0;
};

/// Runs argv[0] (a path) with `argv` and extra environment `env`, stdout and
/// stderr to `logPath`; kills it when its RSS passes `budgetBytes` (0: no
/// limit) or after `timeoutSeconds` (0: none).
RunOutcome runSubprocess(const std::vector<std::string> &argv,
                         const std::map<std::string, std::string> &env,
                         const std::string &logPath, uint64_t budgetBytes,
                         double timeoutSeconds);

/// The kiln worker: trains `config` from its weights and batches files in
/// this process and writes the result JSON to config.result → exit code.
int runKilnWorker(const BenchConfig &config);

/// A JSON value → the same with every non-finite number (NaN, ±inf: JSON
/// has no spelling for them, and llvm::json would print `nan`) as null,
/// which Python's json and most readers take as missing.
llvm::json::Value finiteOrNull(llvm::json::Value value);
/// value → `path` as indented JSON, non-finite numbers as null; an error
/// names the file and why it could not be written.
absl::Status writeJsonFile(const std::string &path,
                           const llvm::json::Value &value);

/// A run's result whose status is "ok" but whose "losses" are not all
/// finite numbers (NaN or inf, or null once written) → status "diverged",
/// "first_nonfinite_step" (1-based) and a note naming that step. A
/// diverged run is a measured outcome (its times and memory stand), not a
/// failed one. Other results are left alone.
void markDiverged(llvm::json::Object &result);

/// "a,b,c" → {"a", "b", "c"} (empty pieces dropped).
std::vector<std::string> splitList(const std::string &text);

} // namespace kiln::bench

#endif // KILN_BENCH_BENCHSUPPORT_H
