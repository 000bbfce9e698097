// The kiln side of kiln-bench, run in its own process (kiln-bench --worker
// kiln) so that its peak RSS is its own: the model (BenchModel.h: GPT-2 or
// Llama, LoRA when asked) from the shared weights file or random on the
// device,
// AdamW with Hugging Face's defaults (no decay on biases and LayerNorm
// weights), gradient clipping and a linear warmup/decay schedule, trained on
// the shared batches in graph (compiled) or eager mode, one kiln::step() per
// training step. Writes per-step losses and wall times plus kiln's compile
// and execute metrics as JSON (status "diverged" when a loss is not finite).
#include "bench/BenchModel.h"

#include "frontends/nn/GradScaler.h"
#include "frontends/nn/Optimizer.h"

#include "llvm/Support/JSON.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <sys/resource.h>

namespace kiln::bench {
namespace {

/// result → the result file (non-finite numbers as null); `exitCode`, or 1
/// when the file cannot be written (the driver then says the run wrote no
/// result, and this log says why).
int writeResult(const std::string &path, llvm::json::Object result,
                int exitCode) {
  if (absl::Status s =
          writeJsonFile(path, llvm::json::Value(std::move(result)));
      !s.ok()) {
    std::fprintf(stderr, "kiln-bench worker: %s\n",
                 std::string(s.message()).c_str());
    return 1;
  }
  return exitCode;
}

} // namespace

int runKilnWorker(const BenchConfig &c) {
  try {
    Options options = options_from_env();
    // Eager runs each primitive op as its own kernel: kiln's own baseline
    // without the graph compiler, as PyTorch eager is torch.compile's.
    options.mode = c.mode == "eager" ? Mode::eager : Mode::graph;
    options.productType = c.precision == "bf16"   ? DType::bf16
                          : c.precision == "fp16" ? DType::f16
                                                  : DType::f32;
    set_options(options);
    set_backend(c.backend);
    // A run capped at a device memory limit (a largest-batch search on a
    // GPU) plans its step to fit it, as kiln-train --memory_budget asks:
    // more is recomputed rather than refused (memory_for_plans: the cap,
    // less what runs hold outside their plans). A cap below that margin
    // (the fake driver's tests, whose programs need no workspace) leaves
    // the cap alone to decide.
    if (kiln::options().backend == Backend::cuda &&
        options.memoryBudgetBytes == 0 &&
        metrics::counters().deviceLimitBytes != 0) {
      options = kiln::options();
      try {
        options.memoryBudgetBytes = memory_for_plans();
        set_options(options);
      } catch (const kiln::Error &) {
      }
    }
    std::vector<int64_t> shape;
    absl::StatusOr<std::vector<int64_t>> ids = readNpyInt64(c.batches, shape);
    if (!ids.ok() || shape.size() != 3 || shape[2] != c.seq) {
      std::fprintf(stderr, "kiln-bench worker: bad batches file %s\n",
                   c.batches.c_str());
      return 1;
    }
    const int64_t steps = std::min(c.steps, shape[0]), batch = shape[1];

    BenchModel built = build_bench_model(c, /*draw=*/false,
                                         /*storeBase=*/true);
    nn::CausalLM &model = *built.model;
    if (c.init == "own")
      randomize_on_device(built);
    else // the file holds kiln's own parameter names, LoRA's included
      nn::load_hf_safetensors(
          model, c.weights, /*strict=*/true,
          [](const std::string &name) { return std::optional(name); });
    kiln::step(); // the loaded weights become device data before timing
    model.train();
    int64_t trainableCount = 0;
    for (const auto &entry : built.trainable)
      trainableCount += entry.second.numel();

    nn::AdamW::Options o;
    o.lr = c.lr;
    o.weight_decay = c.weight_decay;
    o.no_decay = nn::bias_and_norm_names(model);
    nn::AdamW opt(built.trainable, o);
    nn::LambdaLR sched(opt, nn::linear_schedule_with_warmup(c.warmup_steps,
                                                            c.steps));
    std::unique_ptr<nn::GradScaler> scaler;
    if (options.productType == DType::f16)
      scaler = std::make_unique<nn::GradScaler>();

    metrics::reset();
    // The process's own memory (code, libraries, heap), which no plan
    // counts, as an advisor sees it: before anything is compiled. Host
    // memory, so part of the peak only where the plan's memory is the
    // host's (on cuda the device's own reserve is not measured here).
    const bool hostPlans = kiln::options().backend != Backend::cuda;
    auto outsidePlansMiB = [&] {
      return hostPlans ? memory_outside_plans() / 1048576.0 : 0.0;
    };
    const double outsideBefore = outsidePlansMiB();
    // recordMs: the host recording the step's ops (forward, backward,
    // clipping, AdamW) before kiln::step(); with kiln_graph_ms (step()'s
    // graph, key and lookup) it is the host time a GPU step waits for
    // when the loss is read every step. stepMs: a window's wall time from
    // the last read to this one, split over its steps (BenchConfig).
    llvm::json::Array losses, stepMs, compileMs, recordMs;
    // Losses not read yet (--logging_steps): on cuda each stays on the
    // device until read, so the host records the next step meanwhile.
    std::vector<Tensor> unread;
    auto windowStart = std::chrono::steady_clock::now();
    for (int64_t s = 0; s < steps; ++s) {
      HostTensor x(DType::i64, {batch, c.seq});
      std::memcpy(x.data(), ids->data() + s * batch * c.seq, x.byteSize());
      double compiledBefore = metrics::counters().compileMilliseconds;
      auto start = std::chrono::steady_clock::now();
      Tensor input = Tensor::from_host(std::move(x));
      Tensor loss = model.loss(input, input);
      nn::backward_and_step(loss, opt, c.max_grad_norm, scaler.get());
      sched.step();
      recordMs.push_back(std::chrono::duration<double, std::milli>(
                             std::chrono::steady_clock::now() - start)
                             .count());
      kiln::step();
      compileMs.push_back(metrics::counters().compileMilliseconds -
                          compiledBefore);
      unread.push_back(loss);
      if (s % c.logging_steps != 0 && s + 1 != steps)
        continue;
      for (const Tensor &l : unread)
        losses.push_back(l.item());
      auto now = std::chrono::steady_clock::now();
      double each = std::chrono::duration<double, std::milli>(now - windowStart)
                        .count() /
                    double(unread.size());
      for (size_t i = 0; i < unread.size(); ++i)
        stepMs.push_back(each);
      unread.clear();
      windowStart = now;
    }
    const metrics::Counters &m = metrics::counters();
    struct rusage usage {};
    getrusage(RUSAGE_SELF, &usage);
    llvm::json::Object result{
        {"status", "ok"},
        {"batch", batch},
        {"losses", std::move(losses)},
        {"step_ms", std::move(stepMs)},
        {"kiln_compile_ms_per_step", std::move(compileMs)},
        {"kiln_compiles", m.compiles},
        {"kiln_cache_hits", m.cacheHits},
        // Graphs loaded from a persistent cache (KILN_CACHE_DIR)
        // instead of compiled, and the time that took.
        {"kiln_persistent_hits", m.persistentHits},
        {"kiln_persistent_load_ms", m.persistentLoadMilliseconds},
        {"kiln_forced_syncs", m.forcedSyncs},
        {"kiln_record_ms_per_step", std::move(recordMs)},
        {"kiln_graph_ms", m.graphMilliseconds},
        {"kiln_execute_ms", m.executeMilliseconds},
        {"kiln_planned_peak_mib", m.plannedPeakBytes / 1048576.0},
        {"kiln_outside_plans_mib", outsideBefore},
        {"kiln_outside_plans_end_mib", outsidePlansMiB()},
        {"fp16_skipped_steps", scaler ? scaler->state().skipped_steps : 0},
        {"backend", c.backend},
        {"trainable_parameters", trainableCount},
        {"total_parameters", model.num_parameters()},
        {"peak_rss_mib_self", usage.ru_maxrss / 1024.0}};
    if (!hostPlans) // the device memory kiln's programs held at most
      result["peak_gpu_mib"] = m.peakDeviceBytes / 1048576.0;
    // A loss that went NaN or inf: a measured outcome, so exit 0.
    markDiverged(result);
    return writeResult(c.result, std::move(result), 0);
  } catch (const kiln::OutOfMemoryError &e) {
    // The device's memory (or the budget's cap on it) ran out, or the step
    // cannot be planned within it: the batch does not fit, which a
    // largest-batch search expects to see.
    std::fprintf(stderr, "kiln-bench worker: %s\n", e.what());
    return writeResult(c.result,
                       llvm::json::Object{{"status", "over budget"},
                                          {"note", std::string(e.what())}},
                       1);
  } catch (const kiln::Error &e) {
    std::fprintf(stderr, "kiln-bench worker: %s\n", e.what());
    return writeResult(c.result,
                       llvm::json::Object{{"status", "error"},
                                          {"note", std::string(e.what())}},
                       1);
  }
}

} // namespace kiln::bench
