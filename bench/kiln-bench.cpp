// kiln-bench: one GPT-2 training configuration run by kiln (compiled and
// eager) and by its peers (PyTorch eager, torch.compile, JAX), every system
// from the same initial weights (a safetensors file by Hugging Face name) and
// the same batches (a .npy of int64 [steps, batch, seq]: a synthetic token
// stream, or an SST-2 / raw text file through frontends/data, BenchData.cpp),
// each in its own subprocess so peak RSS is per run. Reports throughput,
// step and compile time, peak memory, the largest batch under a memory
// budget (a bisection over batch size on the measured peak: the process's
// RSS on the cpu, the device memory allocated on cuda, where every system
// runs capped at the budget) and the loss parity of kiln compiled, kiln eager
// and PyTorch eager (first --parity_steps losses, all losses, and a moving
// average of the curves), as results.json, results.csv, table.md and PNG
// plots (bench/plot.py).
#include "bench/BenchModel.h"
#include "bench/BenchParity.h"
#include "bench/BenchSupport.h"
#include "compiler/Version.h"

#include "frontends/nn/Checkpoint.h"
#include "frontends/nn/Safetensors.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <new>
#include <thread>
#include <unistd.h>

#ifndef KILN_BENCH_SOURCE_DIR
#define KILN_BENCH_SOURCE_DIR "bench"
#endif

using namespace kiln::bench;
namespace json = llvm::json;

namespace {

/// Environment for every run: one pool of 2 threads per process, so the
/// OpenMP (MKL/oneDNN) and OpenBLAS pools do not fight over the 2 cores.
/// Passive OpenMP waiting because the machine is shared: with spinning
/// workers PyTorch's step took 3-8x longer whenever a build was running.
std::map<std::string, std::string> threadEnv() {
  return {{"OMP_NUM_THREADS", "2"},      {"MKL_NUM_THREADS", "2"},
          {"OPENBLAS_NUM_THREADS", "1"}, {"OMP_WAIT_POLICY", "PASSIVE"},
          {"KILN_BENCH_TORCH_THREADS", "2"}, {"PYTHONUNBUFFERED", "1"}};
}

/// True when a run's result says it finished.
bool isOk(const json::Object &r) {
  return r.getString("status") == std::optional<llvm::StringRef>("ok");
}

/// True when a run trained to its end: finished, or diverged (its loss
/// went NaN or inf, a measured outcome whose times and memory stand).
bool succeeded(const json::Object &r) {
  return isOk(r) ||
         r.getString("status") == std::optional<llvm::StringRef>("diverged");
}

struct Driver {
  BenchConfig config;
  std::string self, weights, batches;

  std::string peersDir() const {
    return config.peers_dir.empty()
               ? std::string(KILN_BENCH_SOURCE_DIR) + "/peers"
               : config.peers_dir;
  }
  /// The peers' interpreter: $KILN_BENCH_PYTHON (a machine whose system
  /// python has torch and JAX, such as the GPU machine), else the venv
  /// bench/peers/setup.sh makes.
  std::string python() const {
    const char *env = std::getenv("KILN_BENCH_PYTHON");
    return env && *env ? env : peersDir() + "/.venv/bin/python";
  }
  bool venvPresent() const { return access(python().c_str(), X_OK) == 0; }

  /// system → the command that trains it for `steps` steps on `batchFile`.
  std::vector<std::string> command(const std::string &system,
                                   const std::string &batchFile,
                                   int64_t steps, const std::string &result,
                                   double dropout) const {
    BenchConfig c = config;
    c.dropout = dropout;
    if (dropout == 0) // parity runs: no dropout anywhere, LoRA's included
      c.lora_dropout = 0;
    std::vector<std::string> argv;
    if (system.rfind("kiln_", 0) == 0)
      argv = {self, "--worker", "kiln", "--mode", system.substr(5),
              "--backend", config.backend};
    else if (fineTuneRun(config))
      argv = {python(), peersDir() + "/torch_hf.py", "--mode",
              system == "torch" ? "eager" : "compile"};
    else if (system == "jax")
      argv = {python(), peersDir() + "/jax_gpt2.py"};
    else
      argv = {python(), peersDir() + "/torch_gpt2.py", "--mode",
              system == "torch" ? "eager" : "compile"};
    for (const std::string &f : modelFlags(c))
      argv.push_back(f);
    if (system.rfind("kiln_", 0) != 0) {
      argv.push_back("--device");
      argv.push_back(config.backend == "cuda" ? "cuda" : "cpu");
    }
    for (const std::string &f :
         {std::string("--weights"), weights, std::string("--batches"),
          batchFile, std::string("--result"), result,
          std::string("--steps"), std::to_string(steps)})
      argv.push_back(f);
    return argv;
  }

  /// Runs `system` → its result object (status, per-step figures, peak
  /// RSS), killed when its RSS passes `budgetBytes`. `deviceLimitBytes`
  /// (cuda; 0: none) caps the device memory it may allocate: kiln's
  /// KILN_DEVICE_MEMORY_LIMIT, which the peers read as PyTorch's
  /// set_per_process_memory_fraction and JAX's memory fraction.
  json::Object run(const std::string &system, const std::string &batchFile,
                   int64_t steps, const std::string &tag, double dropout,
                   uint64_t budgetBytes, uint64_t deviceLimitBytes = 0) const {
    std::string result = config.out + "/runs/" + system + tag + ".json";
    std::string log = config.out + "/runs/" + system + tag + ".log";
    std::remove(result.c_str());
    std::map<std::string, std::string> env = threadEnv();
    if (system == "kiln_eager")
      env["KILN_MODE"] = "eager";
    if (deviceLimitBytes)
      env["KILN_DEVICE_MEMORY_LIMIT"] = std::to_string(deviceLimitBytes);
    // A fresh inductor cache per run: compile times are cold for every
    // system (kiln's persistent cache is off unless KILN_CACHE_DIR is set).
    if (system == "torch_compile")
      env["TORCHINDUCTOR_CACHE_DIR"] =
          config.out + "/runs/inductor-cache-" + system + tag;
    RunOutcome o = runSubprocess(command(system, batchFile, steps, result,
                                         dropout),
                                 env, log, budgetBytes, 1800);
    std::string unreadable; // why the result file gave no result object
    json::Object out = readResult(result, unreadable);
    // A peer's "ok" with NaN losses (written as null) is a diverged run.
    markDiverged(out);
    if (!out.get("status"))
      out["status"] = o.overBudget ? "over budget" : "error";
    if (o.exitCode != 0 && succeeded(out))
      out["status"] = "error";
    if (!succeeded(out) && !out.get("note")) {
      std::string exit = o.exitCode < 0 ? std::string("killed")
                                        : "exit " + std::to_string(o.exitCode);
      // A worker that exited 0 yet left no readable result: say which
      // file and why, not just "exit 0".
      if (o.exitCode == 0 && !unreadable.empty())
        exit += " but " + unreadable;
      out["note"] = o.overBudget ? llvm::formatv("killed when its RSS passed "
                                                 "{0:f2} GiB",
                                                 budgetBytes / 1073741824.0)
                                       .str()
                                 : exit + ", see " + log;
    }
    out["peak_rss_mib"] = o.peakRssMiB;
    out["wall_s"] = o.wallSeconds;
    return out;
  }

  /// A run's result file → its object; empty, with `why` set, when the
  /// file is missing, is not JSON or is not an object.
  static json::Object readResult(const std::string &path, std::string &why) {
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buf =
        llvm::MemoryBuffer::getFile(path);
    if (!buf) {
      why =
          "its result " + path + " cannot be read: " + buf.getError().message();
      return {};
    }
    llvm::Expected<json::Value> v = json::parse((*buf)->getBuffer());
    if (!v) {
      why = "its result " + path +
            " is not valid JSON: " + llvm::toString(v.takeError());
      return {};
    }
    if (!v->getAsObject()) {
      why = "its result " + path + " is not a JSON object";
      return {};
    }
    return std::move(*v->getAsObject());
  }
};

std::vector<double> numbers(const json::Object &o, llvm::StringRef key) {
  std::vector<double> out;
  if (const json::Array *a = o.getArray(key))
    for (const json::Value &v : *a)
      out.push_back(v.getAsNumber().value_or(NAN));
  return out;
}

double median(std::vector<double> v) {
  if (v.empty())
    return NAN;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2]
                      : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

/// Adds the summary figures to a successful run: steady-state step time is
/// the median over the second half of the steps (after every compile);
/// compile time is the first step minus the steady state.
void summarize(json::Object &r, int64_t batch) {
  std::vector<double> ms = numbers(r, "step_ms");
  if (!succeeded(r) || ms.empty())
    return;
  double steady = ms.size() > 1
                      ? median(std::vector<double>(ms.begin() + ms.size() / 2,
                                                   ms.end()))
                      : ms[0];
  r["step_ms_median"] = steady;
  r["compile_s"] = std::max(0.0, (ms[0] - steady) / 1e3);
  r["samples_per_s"] = 1e3 * batch / steady;
  // kiln also knows its compile time exactly (its metrics).
  std::vector<double> compiles = numbers(r, "kiln_compile_ms_per_step");
  if (!compiles.empty()) {
    double total = 0;
    for (double v : compiles)
      total += v;
    r["kiln_compile_s"] = total / 1e3;
  }
  std::vector<double> losses = numbers(r, "losses");
  if (!losses.empty()) {
    r["first_loss"] = losses.front();
    r["last_loss"] = losses.back();
  }
}

/// On cuda, each run's activation memory per sample at the run's batch:
/// its peak device memory less the model's state (every parameter in its
/// stored type; for each trainable one also its f32 gradient and AdamW's
/// two f32 moments: 12 bytes more), over the batch. The state is the same
/// for every system (the parameter counts kiln's worker reports), so what
/// remains is what each keeps for its step: activations, saved values,
/// workspaces, extra copies of weights. → "state_mib" and each run's
/// "activation_mib_per_sample".
void addActivationMemory(json::Object &systems, const BenchConfig &c) {
  if (c.backend != "cuda")
    return;
  std::optional<double> total, trainable;
  for (auto &entry : systems)
    if (const json::Object *r = entry.second.getAsObject(); r && isOk(*r))
      if (r->getNumber("total_parameters")) {
        total = r->getNumber("total_parameters");
        trainable = r->getNumber("trainable_parameters");
        break;
      }
  if (!total || !trainable)
    return;
  const double frozenBytes = c.torch_dtype == "bfloat16" ? 2 : 4;
  const double state = *trainable * 16 + (*total - *trainable) * frozenBytes;
  for (auto &entry : systems) {
    json::Object *r = entry.second.getAsObject();
    std::optional<double> peak =
        r ? r->getNumber("peak_gpu_mib") : std::nullopt;
    if (!peak || !isOk(*r))
      continue;
    double batch = r->getNumber("batch").value_or(c.batch);
    (*r)["state_mib"] = state / 1048576.0;
    (*r)["activation_mib_per_sample"] = (*peak - state / 1048576.0) / batch;
  }
}

/// kiln compiled's planned peak (what its memory planner reserved before
/// the first step, plus the process's own memory outside any plan, measured
/// then) next to its measured peak RSS, as a Markdown section.
std::string memoryPlanMarkdown(const json::Object &systems) {
  const json::Object *r = systems.getObject("kiln_compiled");
  std::optional<double> planned =
      r ? r->getNumber("kiln_planned_peak_mib") : std::nullopt;
  if (!planned)
    return "";
  double outside = r->getNumber("kiln_outside_plans_mib").value_or(0);
  double measured = r->getNumber("peak_rss_mib").value_or(0);
  double predicted = *planned + outside;
  return llvm::formatv(
      "\n## kiln compiled: memory plan\n\nPlanned peak, known before the "
      "first step: {0:f0} MiB (the step's plan, arena + inputs + fresh "
      "outputs, {1:f0} MiB; the process's memory outside any plan, {2:f0} "
      "MiB). Measured peak RSS of the run: {3:f0} MiB ({4:f1}% {5} the "
      "plan; the compiler's code and state, loaded while compiling, were "
      "{6:f0} MiB outside the plan after the run).\n",
      predicted, *planned, outside, measured,
      measured > 0 ? std::abs(measured - predicted) / measured * 100 : 0.0,
      measured >= predicted ? "above" : "below",
      r->getNumber("kiln_outside_plans_end_mib").value_or(0));
}

/// Writes the initial weights (by Hugging Face name, LoRA's initial
/// adapters by kiln's; none with --init own) and the batches.
absl::Status prepareInputs(const BenchConfig &c, const std::string &weights,
                           const std::string &batches,
                           const std::vector<int64_t> &ids) {
  if (c.init == "shared") {
    BenchModel built = build_bench_model(c, /*draw=*/true,
                                         /*storeBase=*/false);
    kiln::step();
    // Written from where the weights live (an 8B model's are 16 GB).
    kiln::nn::NamedTensors state = built.model->state_dict();
    if (absl::Status s = kiln::nn::saveSafetensors(
            weights, kiln::nn::host_data_refs(state), {{"format", "pt"}});
        !s.ok())
      return s;
  }
  return writeNpyInt64(
      batches,
      std::vector<int64_t>(ids.begin(),
                           ids.begin() + c.steps * c.batch * c.seq),
      {c.steps, c.batch, c.seq});
}

/// What a budget bounds, in MiB: the device memory a run allocated at most
/// on cuda (kiln's metrics, torch.cuda.max_memory_allocated, JAX's
/// peak_bytes_in_use), the process's peak RSS on the cpu. Unknown counts
/// as over any budget.
double budgetedMiB(const BenchConfig &c, const json::Object &r) {
  return r.getNumber(c.backend == "cuda" ? "peak_gpu_mib" : "peak_rss_mib")
      .value_or(1e30);
}

/// The largest batch whose run stays under the budget: doubling from the
/// configured batch, then bisection, at most `bisect_max_probes` runs of
/// `bisect_steps` steps, none above `bisect_max_batch`.
json::Object largestBatch(const Driver &d, const std::string &system,
                          bool configuredFits, uint64_t budget) {
  const BenchConfig &c = d.config;
  int64_t probes = 0;
  auto fits = [&](int64_t b) {
    ++probes;
    std::string file = c.out + "/runs/probe-batches-" + std::to_string(b) + ".npy";
    (void)writeNpyInt64(file, makeBatches(c.bisect_steps, b, c.seq, c.vocab,
                                          c.seed),
                        {c.bisect_steps, b, c.seq});
    // On cuda the run is capped at the budget (a GPU of that size) and
    // its host memory only at --max_rss_gib.
    const bool device = c.backend == "cuda";
    const uint64_t maxRss = static_cast<uint64_t>(c.max_rss_gib * (1ull << 30));
    json::Object r =
        d.run(system, file, c.bisect_steps, "-probe" + std::to_string(b),
              c.dropout, device ? maxRss : budget, device ? budget : 0);
    bool ok = isOk(r) && budgetedMiB(c, r) * 1048576.0 <= budget;
    std::string measured =
        isOk(r) ? llvm::formatv("{0:f1} MiB", budgetedMiB(c, r)).str()
                : r.getString("status").value_or("?").str();
    std::fprintf(stderr, "kiln-bench:   %s batch %lld: %s (%s)\n",
                 system.c_str(), static_cast<long long>(b),
                 ok ? "fits" : "does not fit", measured.c_str());
    return ok;
  };
  int64_t lo = configuredFits ? c.batch : 0, hi = 0;
  if (!configuredFits) {
    hi = c.batch;
    lo = fits(1) ? 1 : 0;
  } else {
    for (int64_t b = 2 * lo; b <= c.bisect_max_batch && probes < c.bisect_max_probes; b *= 2) {
      if (!fits(b)) {
        hi = b;
        break;
      }
      lo = b;
    }
  }
  while (hi && hi - lo > 1 && probes < c.bisect_max_probes) {
    int64_t mid = (lo + hi) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return json::Object{{"largest_batch", lo},
                      {"exact", hi != 0 && hi - lo == 1},
                      // No failing batch found below bisect_max_batch.
                      {"capped", hi == 0},
                      {"first_failing_batch", hi ? json::Value(hi) : nullptr},
                      {"probes", probes}};
}

const char *csvHeader =
    "system,status,batch,samples_per_s,step_ms,compile_s,kiln_compile_s,"
    "peak_rss_mib,largest_batch,first_loss,last_loss\n";

absl::Status writeCsv(const std::string &path, const json::Object &systems,
                      const std::vector<std::string> &order) {
  std::ofstream f(path);
  f << csvHeader;
  auto num = [](const json::Object *o, llvm::StringRef k) {
    std::optional<double> v = o ? o->getNumber(k) : std::nullopt;
    char buf[32] = ""; // empty when missing or not finite, as in the JSON
    if (v && std::isfinite(*v))
      std::snprintf(buf, sizeof buf, "%.6g", *v);
    return std::string(buf);
  };
  for (const std::string &s : order) {
    const json::Object *r = systems.getObject(s);
    const json::Object *lb = r ? r->getObject("budget") : nullptr;
    f << s << "," << (r ? r->getString("status").value_or("?").str() : "?")
      << "," << num(r, "batch") << "," << num(r, "samples_per_s") << ","
      << num(r, "step_ms_median") << "," << num(r, "compile_s") << ","
      << num(r, "kiln_compile_s") << ","
      << num(r, "peak_rss_mib") << "," << num(lb, "largest_batch") << ","
      << num(r, "first_loss") << "," << num(r, "last_loss") << "\n";
  }
  f.close();
  if (!f)
    return absl::UnavailableError("cannot write " + path + ": " +
                                  std::strerror(errno));
  return absl::OkStatus();
}

int runDriver(const BenchConfig &c, const std::string &commandLine) {
  Driver d{c, "", c.out + "/weights.safetensors", c.out + "/batches.npy"};
  d.self = llvm::sys::fs::getMainExecutable(nullptr, (void *)&runDriver);
  // The batches: the synthetic stream, or the data set (read first, so that
  // a bad file fails before anything is written). Enough for the main runs
  // and for parity runs (which use the first parity_steps of the same).
  const int64_t batchSteps = std::max(c.steps, c.parity_steps);
  std::vector<int64_t> batchIds;
  std::optional<DatasetSummary> data;
  if (c.dataset == "synthetic") {
    batchIds = makeBatches(batchSteps, c.batch, c.seq, c.vocab, c.seed);
  } else {
    absl::StatusOr<DatasetBatches> b = makeDatasetBatches(c, batchSteps);
    if (!b.ok()) {
      std::fprintf(stderr, "kiln-bench: %s\n",
                   std::string(b.status().message()).c_str());
      return 2; // the user's flags or files
    }
    batchIds = std::move(b->ids);
    data = b->summary;
    std::fprintf(stderr, "kiln-bench: %s\n", describe(*data, c).c_str());
    std::fprintf(stderr, "kiln-bench: first block: \"%s\"\n",
                 data->firstBlock.c_str());
  }
  // A missing GPU is said before anything is written.
  try {
    kiln::set_backend(c.backend);
    kiln::check_backend_available(kiln::options().backend);
  } catch (const kiln::Error &e) {
    std::fprintf(stderr, "kiln-bench: %s\n", e.what());
    return 1;
  }
  if (std::error_code ec = llvm::sys::fs::create_directories(c.out + "/runs")) {
    std::fprintf(stderr, "kiln-bench: cannot create %s/runs: %s\n",
                 c.out.c_str(), ec.message().c_str());
    return 1;
  }
  try {
    kiln::set_backend(c.backend);
    if (absl::Status s = prepareInputs(c, d.weights, d.batches, batchIds);
        !s.ok()) {
      std::fprintf(stderr, "kiln-bench: %s\n", s.ToString().c_str());
      return 1;
    }
  } catch (const kiln::Error &e) {
    std::fprintf(stderr, "kiln-bench: %s\n", e.what());
    return 1;
  }
  std::vector<std::string> order;
  for (const std::string &m : c.modes)
    order.push_back("kiln_" + m);
  for (const std::string &p : c.peers)
    order.push_back(p);

  const uint64_t maxRss = static_cast<uint64_t>(c.max_rss_gib * (1ull << 30));
  const uint64_t budget = std::min(
      maxRss, static_cast<uint64_t>(c.budget_gib * (1ull << 30)));
  json::Object systems;
  std::vector<std::string> failed;
  for (const std::string &s : order) {
    json::Object r;
    if (s.rfind("kiln_", 0) != 0 && !d.venvPresent()) {
      r = json::Object{{"status", "skipped"},
                       {"note", "no python at " + d.python() +
                                    " (run bench/peers/setup.sh, or set "
                                    "KILN_BENCH_PYTHON)"}};
    } else {
      std::fprintf(stderr, "kiln-bench: running %s\n", s.c_str());
      r = d.run(s, d.batches, c.steps, "", c.dropout, maxRss);
      summarize(r, c.batch);
      bool searched =
          c.bisect_systems.empty() || llvm::is_contained(c.bisect_systems, s);
      if (c.bisect_max_batch > 0 && searched && isOk(r)) {
        bool fitsNow = budgetedMiB(c, r) * 1048576.0 <= budget;
        r["budget"] = largestBatch(d, s, fitsNow, budget);
      }
    }
    // A skipped or failed system says why here too, not only in the
    // results: "torch: skipped" alone sent users looking.
    std::string status = r.getString("status").value_or("?").str();
    std::optional<llvm::StringRef> note = r.getString("note");
    std::fprintf(stderr, "kiln-bench: %s: %s%s%s\n", s.c_str(), status.c_str(),
                 note && status != "ok" ? " (" : "",
                 note && status != "ok" ? (note->str() + ")").c_str() : "");
    // The exit status: a system asked for that neither trained to its end
    // (ok, or diverged: a measured outcome) nor was skipped for a stated
    // reason failed.
    if (!succeeded(r) && status != "skipped")
      failed.push_back(s);
    systems[s] = std::move(r);
  }
  addActivationMemory(systems, c);

  // Parity: the main runs when they use no dropout, else dedicated runs
  // with dropout 0 (dropout masks differ between systems).
  const bool fromMainRuns = c.dropout == 0 &&
                            (c.lora_r == 0 || c.lora_dropout == 0) &&
                            c.steps >= c.parity_steps;
  std::vector<std::string> candidates;
  for (const char *s : {"kiln_compiled", "kiln_eager", "torch"})
    if (const json::Object *r = systems.getObject(s); r && isOk(*r))
      candidates.push_back(s);
  // With --init own every system drew its own weights: no curves compare.
  if (c.init == "own")
    candidates.clear();
  std::map<std::string, std::vector<double>> curves;
  for (const std::string &s : candidates) {
    const json::Object *r = systems.getObject(s);
    if (candidates.size() < 2)
      break; // nothing to compare with
    if (fromMainRuns) {
      curves[s] = numbers(*r, "losses");
      continue;
    }
    // The first parity_steps batches of the main run's.
    std::string file = c.out + "/runs/parity-batches.npy";
    (void)writeNpyInt64(
        file,
        std::vector<int64_t>(batchIds.begin(),
                             batchIds.begin() +
                                 c.parity_steps * c.batch * c.seq),
        {c.parity_steps, c.batch, c.seq});
    curves[s] = numbers(d.run(s, file, c.parity_steps, "-parity", 0.0, maxRss),
                        "losses");
  }
  json::Object parity = parityReport(curves, c, fromMainRuns);

  json::Object env;
  for (const auto &[k, v] : threadEnv())
    env[k] = v;
  json::Object config{{"n_layer", c.n_layer}, {"n_embd", c.n_embd},
                      {"n_head", c.n_head},   {"vocab", c.vocab},
                      {"seq", c.seq},         {"batch", c.batch},
                      {"steps", c.steps},     {"warmup_steps", c.warmup_steps},
                      {"logging_steps", c.logging_steps},
                      {"lr", c.lr},           {"weight_decay", c.weight_decay},
                      {"dropout", c.dropout}, {"max_grad_norm", c.max_grad_norm},
                      {"seed", static_cast<int64_t>(c.seed)},
                      {"backend", c.backend}, {"precision", c.precision},
                      {"budget_gib", c.budget_gib},
                      {"max_rss_gib", c.max_rss_gib},
                      {"dataset", c.dataset},
                      {"model", c.model}};
  if (fineTuneRun(c))
    for (auto [key, value] :
         {std::pair<const char *, json::Value>{"n_kv_head", c.n_kv_head},
          {"n_inner", c.n_inner},
          {"lora_r", c.lora_r},
          {"lora_alpha", c.lora_alpha},
          {"lora_dropout", c.lora_dropout},
          {"lora_targets", c.lora_targets},
          {"torch_dtype", c.torch_dtype},
          {"init", c.init}})
      config[key] = std::move(value);
  if (data)
    config["data"] = json::Object{
        {"train_file", data->path},
        {"tokenizer", data->tokenizer},
        {"tokenizer_vocab", data->tokenizerVocab},
        {"rows", data->rows},
        {"tokens", data->tokens},
        {"blocks", data->blocks},
        {"batches_per_epoch", data->batchesPerEpoch},
        {"epochs", data->epochs},
        {"grouping", "run_clm group_texts: 1,000 examples per group, no EOS"},
        {"order", "frontends/data DataLoader: Fisher-Yates per epoch, seeded "
                  "by (seed, epoch), drop_last"},
        {"first_block", data->firstBlock}};
  json::Array orderJson;
  for (const std::string &s : order)
    orderJson.push_back(s);
  json::Object results{
      {"command", commandLine},
      {"config", std::move(config)},
      {"threads", std::move(env)},
      {"hardware_threads",
       static_cast<int64_t>(std::thread::hardware_concurrency())},
      {"budget_method",
       c.backend == "cuda"
           ? "device memory allocated at most (kiln's metrics, "
             "torch.cuda.max_memory_allocated, JAX's peak_bytes_in_use), "
             "every run capped at the budget; bisection over batch size"
           : "peak RSS of a subprocess (wait4 rusage), killed past the "
             "budget; bisection over batch size"},
      {"order", std::move(orderJson)},
      {"systems", std::move(systems)},
      {"parity", std::move(parity)}};
  absl::Status written =
      writeJsonFile(c.out + "/results.json", json::Object(results));
  if (written.ok())
    written =
        writeCsv(c.out + "/results.csv", *results.getObject("systems"), order);
  if (!written.ok()) {
    std::fprintf(stderr, "kiln-bench: %s\n",
                 std::string(written.message()).c_str());
    return 1;
  }
  std::string parityMd = parityMarkdown(*results.getObject("parity"), c);

  // Plots: the venv's python when present (it has matplotlib), else any.
  // table.md is plot.py's summary (written with or without matplotlib)
  // followed by the parity section.
  std::remove((c.out + "/table.md").c_str());
  std::string py = d.venvPresent() ? d.python() : "/usr/bin/python3";
  RunOutcome p = runSubprocess({py, std::string(KILN_BENCH_SOURCE_DIR) + "/plot.py",
                                c.out + "/results.json", c.out},
                               {}, c.out + "/plot.log", 0, 300);
  {
    std::ofstream md(c.out + "/table.md", std::ios::app);
    md << parityMd << memoryPlanMarkdown(*results.getObject("systems"));
  }
  // plot.py exits 0 without matplotlib too, writing no plot.
  bool plotted = false;
  std::error_code ec;
  for (const auto &entry : std::filesystem::directory_iterator(c.out, ec))
    plotted |= entry.path().extension() == ".png";
  std::fprintf(stderr, "kiln-bench: wrote %s/results.json, results.csv%s\n",
               c.out.c_str(),
               p.exitCode != 0 ? ", table.md (plots failed: see plot.log)"
               : plotted       ? ", table.md and plots"
                               : ", table.md (no plots: see plot.log)");
  if (failed.empty())
    return 0;
  std::string names;
  for (const std::string &s : failed)
    names += (names.empty() ? "" : ", ") + s;
  std::fprintf(stderr, "kiln-bench: %zu of %zu systems failed: %s\n",
               failed.size(), order.size(), names.c_str());
  return 1;
}

} // namespace

constexpr const char *kUsage =
    "usage: kiln-bench [--flag value]...\n"
    "  model: --n_layer --n_embd --n_head --vocab --seq (GPT-2's shape)\n"
    "         --model gpt2|llama (llama: --n_kv_head --n_inner)\n"
    "  fine-tuning: --lora_r R (0: full) --lora_alpha --lora_dropout\n"
    "         --lora_targets a,b --torch_dtype float32|bfloat16 (the\n"
    "         frozen base's storage) --init shared|own (own: random\n"
    "         weights drawn by each system on its device, no weights file);\n"
    "         a Llama or LoRA run's peers are transformers + PEFT\n"
    "  run: --batch --steps --warmup_steps --lr --weight_decay --dropout\n"
    "       --max_grad_norm --seed --precision f32|bf16|fp16\n"
    "       --backend cpu|cuda --logging_steps N (read the loss every\n"
    "       N steps, as the Trainer logs; 1: every step)\n"
    "  systems: --modes compiled,eager --peers torch,torch_compile,jax\n"
    "           (\"\" for none) --peers_dir DIR\n"
    "  memory: --budget_gib --max_rss_gib --bisect_max_batch (0: no\n"
    "          largest-batch search) --bisect_steps --bisect_max_probes\n"
    "          --bisect_systems kiln_compiled,torch (the search's systems;\n"
    "          default all)\n"
    "  parity: --parity_steps --parity_window\n"
    "  data: --dataset synthetic|sst2|text --train_file --tokenizer_dir\n"
    "  output: --out DIR (results.json, results.csv, table.md, plots)\n"
    "exit status: 0 when every system asked for trained to its end (status\n"
    "  ok, or diverged: its loss went NaN or inf) or was skipped for a stated\n"
    "  reason; 1 when one failed (error, over budget, killed) or no results\n"
    "  could be written; 2 for bad flags or input files (also when --modes\n"
    "  and --peers are both empty: nothing to run).\n"
    "docs/PERFORMANCE.md has the commands behind its tables.\n";

int main(int argc, char **argv) {
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") {
      std::printf("%s", kUsage);
      return 0;
    } else if (std::string(argv[i]) == "--version") {
      std::printf("kiln-bench: %s\n", kiln::compiler::versionText().c_str());
      return 0;
    }
  absl::StatusOr<BenchConfig> config = parseFlags(argc, argv);
  if (!config.ok()) {
    std::fprintf(stderr, "kiln-bench: %s\n",
                 std::string(config.status().message()).c_str());
    return 2;
  }
  if (!config->worker.empty() && config->worker != "kiln") {
    std::fprintf(stderr, "kiln-bench: unknown worker '%s'\n",
                 config->worker.c_str());
    return 2;
  }
  std::string commandLine;
  for (int i = 0; i < argc; ++i)
    commandLine += (i ? " " : "") + std::string(argv[i]);
  // A batch, sequence or step count this host cannot hold is an error that
  // says so, not an abort.
  try {
    return config->worker == "kiln" ? runKilnWorker(*config)
                                    : runDriver(*config, commandLine);
  } catch (const std::bad_alloc &) {
    std::fprintf(stderr,
                 "kiln-bench: out of host memory (the batches of --batch x "
                 "--seq tokens, --steps of them, or the model, do not fit "
                 "this machine)\n");
    return 1;
  }
}
