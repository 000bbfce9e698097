// kiln-bench's flags, its input files (.npy batches) and the subprocess
// runner with its memory watchdog. See BenchSupport.h.
#include "bench/BenchSupport.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <random>
#include <sstream>
#include <sys/resource.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char **environ;

namespace kiln::bench {

namespace {
/// The peers kiln-bench runs beside kiln, and every system a run names.
const std::vector<std::string> kPeers = {"torch", "torch_compile", "jax"};
const std::vector<std::string> kSystems = {"kiln_compiled", "kiln_eager",
                                           "torch", "torch_compile", "jax"};

/// Each of `names` is one of `known`, or an error naming the first that is
/// not: "unknown WHAT 'NAME'WHERE (the known ones)".
absl::Status checkNames(const std::vector<std::string> &names,
                        const std::vector<std::string> &known,
                        const std::string &what, const std::string &where) {
  for (const std::string &name : names)
    if (std::find(known.begin(), known.end(), name) == known.end())
      return absl::InvalidArgumentError(
          absl::StrCat("unknown ", what, " '", name, "'", where, " (",
                       absl::StrJoin(known, ", "), ")"));
  return absl::OkStatus();
}
} // namespace

std::vector<std::string> splitList(const std::string &text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string piece; std::getline(in, piece, ',');)
    if (!piece.empty())
      out.push_back(piece);
  return out;
}

//===--- Flags ------------------------------------------------------------===//

absl::StatusOr<BenchConfig> parseFlags(int argc, char **argv) {
  BenchConfig c;
  std::map<std::string, int64_t *> ints = {
      {"n_layer", &c.n_layer}, {"n_embd", &c.n_embd},
      {"n_head", &c.n_head}, {"vocab", &c.vocab}, {"seq", &c.seq},
      {"batch", &c.batch}, {"steps", &c.steps},
      {"logging_steps", &c.logging_steps},
      {"warmup_steps", &c.warmup_steps},
      {"bisect_max_batch", &c.bisect_max_batch},
      {"bisect_steps", &c.bisect_steps},
      {"bisect_max_probes", &c.bisect_max_probes},
      {"parity_steps", &c.parity_steps},
      {"parity_window", &c.parity_window},
      {"n_kv_head", &c.n_kv_head}, {"n_inner", &c.n_inner},
      {"lora_r", &c.lora_r}};
  std::map<std::string, double *> reals = {
      {"lr", &c.lr}, {"weight_decay", &c.weight_decay},
      {"dropout", &c.dropout}, {"max_grad_norm", &c.max_grad_norm},
      {"budget_gib", &c.budget_gib}, {"max_rss_gib", &c.max_rss_gib},
      {"lora_alpha", &c.lora_alpha}, {"lora_dropout", &c.lora_dropout}};
  std::map<std::string, std::string *> strings = {
      {"out", &c.out}, {"backend", &c.backend}, {"peers_dir", &c.peers_dir},
      {"precision", &c.precision},
      {"worker", &c.worker}, {"mode", &c.mode}, {"weights", &c.weights},
      {"batches", &c.batches}, {"result", &c.result},
      {"dataset", &c.dataset}, {"train_file", &c.train_file},
      {"tokenizer_dir", &c.tokenizer_dir}, {"model", &c.model},
      {"lora_targets", &c.lora_targets}, {"torch_dtype", &c.torch_dtype},
      {"init", &c.init}};
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag.rfind("--", 0) != 0)
      return absl::InvalidArgumentError(
          absl::StrCat("expected a --flag, got '", flag, "'"));
    std::string name = flag.substr(2), value;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("flag --", name, " needs a value"));
    }
    char *end = nullptr;
    errno = 0;
    if (auto it = ints.find(name); it != ints.end()) {
      long long v = std::strtoll(value.c_str(), &end, 10);
      if (errno || *end || value.empty() || v < 0)
        return absl::InvalidArgumentError(absl::StrCat(
            "--", name, " expects a non-negative integer, got '", value, "'"));
      *it->second = v;
    } else if (auto it = reals.find(name); it != reals.end()) {
      // strtod reads "nan" and "inf" too: refused here, or they would
      // train nothing and reach results.json, which JSON cannot spell.
      double v = std::strtod(value.c_str(), &end);
      if (errno || *end || value.empty() || !std::isfinite(v) || v < 0)
        return absl::InvalidArgumentError(
            absl::StrCat("--", name,
                         " expects a finite non-negative number, "
                         "got '",
                         value, "'"));
      *it->second = v;
    } else if (auto it = strings.find(name); it != strings.end()) {
      *it->second = value;
    } else if (name == "seed") {
      c.seed = std::strtoull(value.c_str(), &end, 10);
      if (*end || value.empty())
        return absl::InvalidArgumentError("--seed expects an integer");
    } else if (name == "peers") {
      c.peers = splitList(value);
      c.peers_given = true;
    } else if (name == "modes") {
      c.modes = splitList(value);
    } else if (name == "bisect_systems") {
      c.bisect_systems = splitList(value);
      if (absl::Status s = checkNames(c.bisect_systems, kSystems, "system",
                                      " in --bisect_systems");
          !s.ok())
        return s;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown flag --", name));
    }
  }
  if (c.n_layer < 1 || c.n_embd < 1 || c.n_head < 1 || c.vocab < 2 ||
      c.seq < 2 || c.batch < 1 || c.steps < 1)
    return absl::InvalidArgumentError(
        "--n_layer, --n_embd, --n_head, --batch, --steps must be >= 1 and "
        "--vocab, --seq >= 2");
  if (c.n_embd % c.n_head != 0)
    return absl::InvalidArgumentError(absl::StrCat(
        "--n_embd ", c.n_embd, " is not a multiple of --n_head ", c.n_head));
  for (const std::string &m : c.modes)
    if (m != "compiled" && m != "eager")
      return absl::InvalidArgumentError(
          absl::StrCat("unknown mode '", m, "' (compiled, eager)"));
  if (c.model != "gpt2" && c.model != "llama")
    return absl::InvalidArgumentError(
        absl::StrCat("unknown model '", c.model, "' (gpt2, llama)"));
  if (c.model == "llama" &&
      (c.n_head % std::max<int64_t>(c.n_kv_head, 1) != 0 ||
       (c.n_embd / c.n_head) % 2 != 0))
    return absl::InvalidArgumentError(
        "--model llama: --n_head must be a multiple of --n_kv_head and the "
        "head size (n_embd / n_head) even");
  if (c.model == "gpt2" && (c.n_kv_head != 0 || c.n_inner != 0))
    return absl::InvalidArgumentError(
        "--n_kv_head and --n_inner shape a Llama (--model llama)");
  if (c.torch_dtype != "float32" && c.torch_dtype != "bfloat16")
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown --torch_dtype '", c.torch_dtype, "' (float32, bfloat16)"));
  if (c.torch_dtype == "bfloat16" && c.lora_r == 0)
    return absl::InvalidArgumentError(
        "--torch_dtype bfloat16 stores a frozen base: it needs --lora_r");
  if (c.lora_dropout >= 1)
    return absl::InvalidArgumentError("--lora_dropout must be below 1");
  if (c.dropout >= 1)
    return absl::InvalidArgumentError("--dropout must be below 1");
  if (c.init != "shared" && c.init != "own")
    return absl::InvalidArgumentError(
        absl::StrCat("unknown --init '", c.init, "' (shared, own)"));
  if (fineTuneRun(c) && !c.peers_given)
    c.peers = {"torch", "torch_compile"};
  if (absl::Status s = checkNames(c.peers, kPeers, "peer", ""); !s.ok())
    return s;
  // The worker is told its one system by --mode; the driver needs one.
  if (c.worker.empty() && c.modes.empty() && c.peers.empty())
    return absl::InvalidArgumentError(
        "nothing to run: --modes and --peers are both empty");
  for (const std::string &p : c.peers)
    if (p == "jax" && fineTuneRun(c))
      return absl::InvalidArgumentError(
          "peer jax trains kiln-bench's GPT-2 only: a Llama or LoRA run "
          "compares with torch and torch_compile (transformers + PEFT)");
  if (c.dataset != "synthetic" && c.dataset != "sst2" && c.dataset != "text")
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown dataset '", c.dataset, "' (synthetic, sst2, text)"));
  if (c.dataset == "synthetic" &&
      (!c.train_file.empty() || !c.tokenizer_dir.empty()))
    return absl::InvalidArgumentError(
        "--train_file and --tokenizer_dir need --dataset sst2 or text");
  if (c.dataset != "synthetic" && c.train_file.empty() && c.worker.empty())
    return absl::InvalidArgumentError(
        absl::StrCat("--dataset ", c.dataset, " needs --train_file PATH"));
  if (c.dataset != "synthetic" && c.tokenizer_dir.empty() && c.vocab < 256)
    return absl::InvalidArgumentError(absl::StrCat(
        "--vocab ", c.vocab, " is smaller than the byte-level tokenizer's "
        "vocabulary (256): use --vocab 256 or more"));
  if (c.parity_window < 1)
    return absl::InvalidArgumentError("--parity_window must be >= 1");
  if (c.logging_steps < 1)
    return absl::InvalidArgumentError("--logging_steps must be >= 1");
  if (c.precision != "f32" && c.precision != "bf16" && c.precision != "fp16")
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown precision '", c.precision, "' (f32, bf16, fp16)"));
  if (c.backend != "cpu" && c.backend != "reference" && c.backend != "cuda")
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown backend '", c.backend, "' (cpu, cuda, reference)"));
  return c;
}

bool fineTuneRun(const BenchConfig &c) {
  return c.model != "gpt2" || c.lora_r > 0;
}

std::vector<std::string> modelFlags(const BenchConfig &c) {
  auto f = [](double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return std::string(buf);
  };
  std::vector<std::string> flags = {"--n_layer", std::to_string(c.n_layer), "--n_embd",
          std::to_string(c.n_embd), "--n_head", std::to_string(c.n_head),
          "--vocab", std::to_string(c.vocab), "--seq", std::to_string(c.seq),
          "--warmup_steps", std::to_string(c.warmup_steps), "--lr", f(c.lr),
          "--weight_decay", f(c.weight_decay), "--dropout", f(c.dropout),
          "--max_grad_norm", f(c.max_grad_norm), "--seed",
          std::to_string(c.seed), "--precision", c.precision,
          "--logging_steps", std::to_string(c.logging_steps)};
  // Only a fine-tuning run's peer (torch_hf.py) reads these.
  if (!fineTuneRun(c))
    return flags;
  flags.insert(flags.end(),
               {"--model", c.model, "--n_kv_head", std::to_string(c.n_kv_head),
                "--n_inner", std::to_string(c.n_inner), "--lora_r",
                std::to_string(c.lora_r), "--lora_alpha", f(c.lora_alpha),
                "--lora_dropout", f(c.lora_dropout), "--torch_dtype",
                c.torch_dtype, "--init", c.init});
  if (!c.lora_targets.empty())
    flags.insert(flags.end(), {"--lora_targets", c.lora_targets});
  return flags;
}

//===--- Batches ----------------------------------------------------------===//

std::vector<int64_t> makeBatches(int64_t steps, int64_t batch, int64_t seq,
                                 int64_t vocab, uint64_t seed) {
  std::mt19937_64 rng(seed * 7919 + 17);
  std::vector<int64_t> ids(steps * batch * seq);
  for (int64_t row = 0; row < steps * batch; ++row) {
    int64_t t = static_cast<int64_t>(rng() % vocab);
    for (int64_t j = 0; j < seq; ++j) {
      ids[row * seq + j] = t;
      // 3 in 4 tokens follow a fixed successor rule: learnable structure.
      t = rng() % 4 ? (t * 31 + 7) % vocab : static_cast<int64_t>(rng() % vocab);
    }
  }
  return ids;
}

absl::Status writeNpyInt64(const std::string &path,
                           const std::vector<int64_t> &ids,
                           const std::vector<int64_t> &shape) {
  std::string dims;
  for (int64_t d : shape)
    absl::StrAppend(&dims, d, ", ");
  std::string header = absl::StrCat(
      "{'descr': '<i8', 'fortran_order': False, 'shape': (", dims, "), }");
  // Magic, version 1.0, header length; the whole preamble is padded with
  // spaces to a multiple of 64 bytes and ends in a newline (the format).
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  std::ofstream f(path, std::ios::binary);
  const uint16_t len = static_cast<uint16_t>(header.size());
  f.write("\x93NUMPY\x01\x00", 8);
  f.put(static_cast<char>(len & 0xff)).put(static_cast<char>(len >> 8));
  f << header;
  f.write(reinterpret_cast<const char *>(ids.data()),
          static_cast<std::streamsize>(ids.size() * sizeof(int64_t)));
  if (!f.good())
    return absl::InternalError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int64_t>> readNpyInt64(const std::string &path,
                                                  std::vector<int64_t> &shape) {
  std::ifstream f(path, std::ios::binary);
  char pre[10];
  if (!f.read(pre, 10) || std::memcmp(pre, "\x93NUMPY\x01\x00", 8) != 0)
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a NumPy v1.0 .npy file"));
  size_t len = static_cast<uint8_t>(pre[8]) | static_cast<uint8_t>(pre[9]) << 8;
  std::string header(len, '\0');
  f.read(header.data(), static_cast<std::streamsize>(len));
  size_t open = header.find("'shape': (");
  if (!f || header.find("'<i8'") == std::string::npos ||
      open == std::string::npos)
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": expected a C-order int64 array"));
  shape.clear();
  int64_t count = 1;
  std::stringstream dims(header.substr(open + 10, header.find(')') - open - 10));
  for (std::string d; std::getline(dims, d, ',');)
    if (d.find_first_not_of(' ') != std::string::npos) {
      shape.push_back(std::stoll(d));
      count *= shape.back();
    }
  std::vector<int64_t> ids(count);
  if (!f.read(reinterpret_cast<char *>(ids.data()),
              static_cast<std::streamsize>(count * sizeof(int64_t))))
    return absl::InvalidArgumentError(absl::StrCat(path, ": truncated data"));
  return ids;
}

//===--- Result files -----------------------------------------------------===//

llvm::json::Value finiteOrNull(llvm::json::Value value) {
  if (llvm::json::Array *array = value.getAsArray()) {
    for (llvm::json::Value &element : *array)
      element = finiteOrNull(std::move(element));
  } else if (llvm::json::Object *object = value.getAsObject()) {
    for (auto &entry : *object)
      entry.second = finiteOrNull(std::move(entry.second));
  } else if (std::optional<double> number = value.getAsNumber();
             number && !std::isfinite(*number)) {
    return nullptr;
  }
  return value;
}

absl::Status writeJsonFile(const std::string &path,
                           const llvm::json::Value &value) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return absl::UnavailableError(
        absl::StrCat("cannot write ", path, ": ", ec.message()));
  os << llvm::formatv("{0:2}", finiteOrNull(value)) << "\n";
  os.close();
  if (os.has_error()) {
    std::string why = os.error().message();
    os.clear_error(); // else its destructor aborts on the error
    return absl::UnavailableError(
        absl::StrCat("cannot write ", path, ": ", why));
  }
  return absl::OkStatus();
}

void markDiverged(llvm::json::Object &result) {
  const llvm::json::Array *losses = result.getArray("losses");
  if (!losses || result.getString("status") != "ok")
    return;
  for (size_t i = 0; i < losses->size(); ++i) {
    std::optional<double> loss = (*losses)[i].getAsNumber();
    if (loss && std::isfinite(*loss))
      continue;
    const int64_t step = static_cast<int64_t>(i) + 1;
    result["status"] = "diverged";
    result["first_nonfinite_step"] = step;
    const char *what = !loss               ? "null"
                       : std::isnan(*loss) ? "NaN"
                       : *loss > 0         ? "+inf"
                                           : "-inf";
    result["note"] = llvm::formatv("the loss is first non-finite "
                                   "({0}) at step {1} of {2}",
                                   what, step, losses->size())
                         .str();
    return;
  }
}

//===--- Subprocesses -----------------------------------------------------===//

namespace {
/// The resident set of `pid` in bytes (0 when gone).
uint64_t residentBytes(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmRSS:", 0) == 0)
      return std::stoull(line.substr(6)) * 1024;
  return 0;
}
} // namespace

RunOutcome runSubprocess(const std::vector<std::string> &argv,
                         const std::map<std::string, std::string> &env,
                         const std::string &logPath, uint64_t budgetBytes,
                         double timeoutSeconds) {
  RunOutcome outcome;
  auto start = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid == 0) {
    int fd = open(logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    for (const auto &[k, v] : env)
      setenv(k.c_str(), v.c_str(), 1);
    std::vector<char *> args;
    for (const std::string &a : argv)
      args.push_back(const_cast<char *>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    std::fprintf(stderr, "cannot run %s: %s\n", args[0], std::strerror(errno));
    _exit(127);
  }
  if (pid < 0)
    return outcome;
  int status = 0;
  struct rusage usage {};
  // Poll instead of blocking so the watchdog can stop a run that would
  // take the machine's memory (the budget search probes such runs).
  while (true) {
    pid_t done = wait4(pid, &status, WNOHANG, &usage);
    if (done == pid)
      break;
    double elapsed = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - start).count();
    bool overBudget = budgetBytes && residentBytes(pid) > budgetBytes;
    if (overBudget || (timeoutSeconds > 0 && elapsed > timeoutSeconds)) {
      outcome.overBudget = overBudget;
      kill(pid, SIGKILL);
      wait4(pid, &status, 0, &usage);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  outcome.wallSeconds = std::chrono::duration<double>(
                            std::chrono::steady_clock::now() - start).count();
  outcome.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  outcome.peakRssMiB = usage.ru_maxrss / 1024.0; // KiB on Linux
  return outcome;
}

} // namespace kiln::bench
