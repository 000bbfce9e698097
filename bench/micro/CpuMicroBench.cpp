// Micro benchmarks of the CPU backend, each next to a reference measured in
// the same run (absolute numbers vary ±30% on these shared machines; compare
// ratios): a 16M-element add against a STREAM triad, exp/tanh/GELU kernels,
// softmax and layer norm over [4096, 768] built through the pipeline (one
// fused kernel each, bytes/s to compare with the triad), column sums (a
// reduce over the outer dim of [2048, 3072], layer norm's gamma/beta
// gradient fusion over [2048, 768]; bytes read/s), a GPT-2-sized
// dot_general against a direct oneDNN sgemm call, and a Mistral-shaped
// attention and its gradient over 2048 tokens, causal against a sliding
// window of 256 (the chunks skip the keys no row sees). Programs donate
// their first input so steady-state runs allocate nothing.
#include "compiler/cpu/CpuCompiler.h"
#include "ir/KilnDialect.h"
#include "runtime/CpuExecutor.h"
#include "runtime/ThreadPool.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <benchmark/benchmark.h>
#include <oneapi/dnnl/dnnl.h>

#include <cstdio>
#include <random>

namespace {

using kiln::DType;
using kiln::HostTensor;

std::unique_ptr<kiln::runtime::Program> compile(const std::string &source) {
  mlir::MLIRContext context;
  context.loadDialect<kiln::KilnDialect, mlir::func::FuncDialect>();
  auto module = mlir::parseSourceString<mlir::ModuleOp>(source, &context);
  if (!module) {
    std::fprintf(stderr, "benchmark MLIR does not parse\n");
    std::abort();
  }
  kiln::compiler::cpu::CpuCompileStats stats;
  auto exe = kiln::compiler::cpu::compileExecutable(*module, "main", &stats);
  if (!exe.ok()) {
    std::fprintf(stderr, "%s\n", exe.status().ToString().c_str());
    std::abort();
  }
  std::fprintf(stderr,
               "compiled %d kernels (%d unique) in %.3f s: lower %.3f, "
               "-O3 %.3f, emit %.3f, link %.3f\n",
               stats.opKernels, stats.uniqueKernels, stats.codegenSeconds,
               stats.lowerSeconds, stats.optimizeSeconds, stats.emitSeconds,
               stats.linkSeconds);
  auto program = kiln::runtime::loadCpuProgram(*std::move(exe));
  if (!program.ok())
    std::abort();
  return *std::move(program);
}

HostTensor filled(std::vector<int64_t> shape, float lo, float hi) {
  HostTensor t(DType::f32, std::move(shape));
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(lo, hi);
  auto *p = reinterpret_cast<float *>(t.data());
  for (int64_t i = 0; i < t.numElements(); ++i)
    p[i] = u(rng);
  return t;
}

/// Runs `program` with its donated first input fed back each iteration.
void runDonating(benchmark::State &state, kiln::runtime::Program &program,
                 std::vector<HostTensor> inputs, int64_t bytesPerRun) {
  // The program's outputs are its next inputs: the donated buffer returns.
  for (auto _ : state) {
    auto out = program.run(std::move(inputs));
    if (!out.ok()) {
      state.SkipWithError(out.status().ToString().c_str());
      return;
    }
    // Moved one by one: an initializer list would copy the tensors.
    inputs.clear();
    for (HostTensor &t : *out)
      inputs.push_back(std::move(t));
  }
  state.SetBytesProcessed(state.iterations() * bytesPerRun);
}

constexpr int64_t kN = 16 << 20;
const std::string kVec = "tensor<16777216xf32>";

void BM_Cpu_Add16M(benchmark::State &state) {
  static auto program = compile(
      "func.func @main(%a: " + kVec + " {kiln.donate}, %b: " + kVec + ") -> (" +
      kVec + ", " + kVec + ") {\n  %0 = kiln.add %a, %b : " + kVec +
      "\n  return %0, %b : " + kVec + ", " + kVec + "\n}\n");
  runDonating(state, *program, {filled({kN}, -1, 1), filled({kN}, -1, 1)},
              3 * kN * 4);
}
BENCHMARK(BM_Cpu_Add16M)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Stream_Triad16M(benchmark::State &state) {
  // a = b + s * c over two threads, as the CPU runtime splits kernels.
  std::vector<float> a(kN), b(kN, 1.0f), c(kN, 2.0f);
  kiln::runtime::ThreadPool pool(2);
  for (auto _ : state) {
    pool.parallelFor(2, [&](int64_t part) {
      int64_t lo = kN * part / 2, hi = kN * (part + 1) / 2;
      for (int64_t i = lo; i < hi; ++i)
        a[i] = b[i] + 3.0f * c[i];
    });
    benchmark::DoNotOptimize(a.data());
  }
  state.SetBytesProcessed(state.iterations() * 3 * kN * 4);
}
BENCHMARK(BM_Stream_Triad16M)->Unit(benchmark::kMillisecond)->UseRealTime();

void unaryBench(benchmark::State &state, const std::string &op) {
  auto program = compile("func.func @main(%a: " + kVec + " {kiln.donate}) -> " +
                         kVec + " {\n  %0 = kiln." + op + " %a : " + kVec +
                         "\n  return %0 : " + kVec + "\n}\n");
  runDonating(state, *program, {filled({kN}, -0.5f, 0.5f)}, 2 * kN * 4);
  state.SetItemsProcessed(state.iterations() * kN);
}
void BM_Cpu_Exp16M(benchmark::State &state) { unaryBench(state, "exp"); }
void BM_Cpu_Tanh16M(benchmark::State &state) { unaryBench(state, "tanh"); }
BENCHMARK(BM_Cpu_Exp16M)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Cpu_Tanh16M)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Cpu_Gelu16M(benchmark::State &state) {
  // GPT-2's tanh GELU as one elementwise fusion (one kernel).
  const std::string t = kVec;
  auto c = [&](const char *name, const char *v) {
    return std::string("    %") + name + " = kiln.constant dense<" + v +
           "> : " + t + "\n";
  };
  std::string body =
      c("half", "0.5") + c("one", "1.0") + c("k", "0.7978845608") +
      c("cube", "0.044715") + "    %x2 = kiln.mul %x, %x : " + t +
      "\n    %x3 = kiln.mul %x2, %x : " + t +
      "\n    %c3 = kiln.mul %x3, %cube : " + t +
      "\n    %s = kiln.add %x, %c3 : " + t +
      "\n    %u = kiln.mul %s, %k : " + t + "\n    %th = kiln.tanh %u : " + t +
      "\n    %p = kiln.add %th, %one : " + t +
      "\n    %h = kiln.mul %x, %half : " + t +
      "\n    %g = kiln.mul %h, %p : " + t + "\n    kiln.yield %g : " + t + "\n";
  // Not donated: fed back, GELU's output drifts towards zero step by step
  // and, once denormal, every multiply takes the slow path (a 30x
  // slowdown that measures the input, not the kernel). The input is lent
  // and the output comes from the program's pool, so nothing is allocated.
  static auto program =
      compile("func.func @main(%a: " + t + ") -> " + t +
              " {\n  %0 = kiln.fusion loop(%a) : (" + t + ") -> " + t +
              " {\n  ^bb0(%x: " + t + "):\n" + body +
              "  }\n  return %0 : " + t + "\n}\n");
  std::vector<HostTensor> input;
  input.push_back(filled({kN}, -3, 3));
  for (auto _ : state) {
    auto out = program->run(kiln::runtime::borrowAll(input));
    if (!out.ok()) {
      state.SkipWithError(out.status().ToString().c_str());
      return;
    }
    benchmark::DoNotOptimize(out->front().data());
  }
  state.SetBytesProcessed(state.iterations() * 2 * kN * 4);
  state.SetItemsProcessed(state.iterations() * kN);
}
BENCHMARK(BM_Cpu_Gelu16M)->Unit(benchmark::kMillisecond)->UseRealTime();

// Softmax and layer norm as the frontend writes them (keepdim reductions
// are a reduce and a reshape, scalars broadcast 0-d constants); the
// pipeline fuses each into one reduction fusion, the backend one kernel.
constexpr int64_t kRows = 4096, kCols = 768;
const std::string kRowsT = "tensor<4096x768xf32>", kRowT = "tensor<4096xf32>",
                  kKeepT = "tensor<4096x1xf32>", kColT = "tensor<768xf32>";

std::string keepdim(const std::string &name, const std::string &kind,
                    const std::string &x) {
  return "  %" + name + "r = kiln.reduce " + kind + " %" + x +
         ", dims = [1] : " + kRowsT + " -> " + kRowT + "\n  %" + name +
         " = kiln.reshape %" + name + "r : " + kRowT + " -> " + kKeepT + "\n";
}
std::string rowBroadcast(const std::string &name, const std::string &x) {
  return "  %" + name + " = kiln.broadcast_in_dim %" + x +
         ", dims = [0, 1] : " + kKeepT + " -> " + kRowsT + "\n";
}
std::string binary(const std::string &name, const std::string &op,
                   const std::string &a, const std::string &b,
                   const std::string &type) {
  return "  %" + name + " = kiln." + op + " %" + a + ", %" + b + " : " +
         type + "\n";
}

void BM_Cpu_Softmax4096x768(benchmark::State &state) {
  static auto program = compile(
      "func.func @main(%x: " + kRowsT + " {kiln.donate}) -> " + kRowsT +
      " {\n" + keepdim("m", "max", "x") + rowBroadcast("mb", "m") +
      binary("z", "sub", "x", "mb", kRowsT) + "  %e = kiln.exp %z : " +
      kRowsT + "\n" + keepdim("s", "sum", "e") + rowBroadcast("sb", "s") +
      binary("y", "div", "e", "sb", kRowsT) + "  return %y : " + kRowsT +
      "\n}\n");
  // Reads x once from memory (each row's passes hit L1) and writes y.
  runDonating(state, *program, {filled({kRows, kCols}, -4, 4)},
              2 * kRows * kCols * 4);
}
BENCHMARK(BM_Cpu_Softmax4096x768)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Cpu_LayerNorm4096x768(benchmark::State &state) {
  auto scalar = [](const std::string &name, const char *v) {
    return "  %" + name + "c = kiln.constant dense<" + v +
           "> : tensor<f32>\n  %" + name + " = kiln.broadcast_in_dim %" +
           name + "c, dims = [] : tensor<f32> -> " + kKeepT + "\n";
  };
  auto columns = [](const std::string &name, const std::string &v) {
    return "  %" + name + " = kiln.broadcast_in_dim %" + v +
           ", dims = [1] : " + kColT + " -> " + kRowsT + "\n";
  };
  static auto program = compile(
      "func.func @main(%x: " + kRowsT + " {kiln.donate}, %w: " + kColT +
      ", %b: " + kColT + ") -> (" + kRowsT + ", " + kColT + ", " + kColT +
      ") {\n" + scalar("n", "768.0") + scalar("eps", "1.0e-05") +
      keepdim("s", "sum", "x") + binary("mean", "div", "s", "n", kKeepT) +
      rowBroadcast("meanb", "mean") + binary("c", "sub", "x", "meanb", kRowsT) +
      binary("c2", "mul", "c", "c", kRowsT) + keepdim("v", "sum", "c2") +
      binary("var", "div", "v", "n", kKeepT) +
      binary("ve", "add", "var", "eps", kKeepT) + "  %rs = kiln.rsqrt %ve : " +
      kKeepT + "\n" + rowBroadcast("rb", "rs") +
      binary("y0", "mul", "c", "rb", kRowsT) + columns("wb", "w") +
      binary("y1", "mul", "y0", "wb", kRowsT) + columns("bb", "b") +
      binary("y", "add", "y1", "bb", kRowsT) + "  return %y, %w, %b : " +
      kRowsT + ", " + kColT + ", " + kColT + "\n}\n");
  runDonating(state, *program,
              {filled({kRows, kCols}, -4, 4), filled({kCols}, 0.5f, 1.5f),
               filled({kCols}, -1, 1)},
              2 * kRows * kCols * 4);
}
BENCHMARK(BM_Cpu_LayerNorm4096x768)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// Column reductions as GPT-2's backward has them (bias and layer-norm
// gamma/beta gradients: sums over the rows of [B*T, C]). Bytes/s of the
// input read, to compare with the triad. The input is borrowed (a donated
// 24 MB input would be copied out when returned).
void runBorrowing(benchmark::State &state, kiln::runtime::Program &program,
                  const std::vector<HostTensor> &inputs, int64_t bytesPerRun) {
  for (auto _ : state) {
    auto out = program.run(kiln::runtime::borrowAll(inputs));
    if (!out.ok()) {
      state.SkipWithError(out.status().ToString().c_str());
      return;
    }
    benchmark::DoNotOptimize(out->data());
  }
  state.SetBytesProcessed(state.iterations() * bytesPerRun);
}

void BM_Cpu_ColumnSum2048x3072(benchmark::State &state) {
  // A standalone reduce over the outer dim (the MLP bias gradient).
  static auto program = compile(
      "func.func @main(%x: tensor<2048x3072xf32>) -> tensor<3072xf32> {\n"
      "  %s = kiln.reduce sum %x, dims = [0] : tensor<2048x3072xf32> -> "
      "tensor<3072xf32>\n  return %s : tensor<3072xf32>\n}\n");
  runBorrowing(state, *program, {filled({2048, 3072}, -1, 1)},
               2048 * 3072 * 4);
}
BENCHMARK(BM_Cpu_ColumnSum2048x3072)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_Cpu_LnGradColumnSums2048x768(benchmark::State &state) {
  // Layer norm's gamma and beta gradients: sum(dy * xhat) and sum(dy) over
  // the rows, one reduction fusion reading two [2048, 768] inputs.
  const std::string t = "tensor<2048x768xf32>", v = "tensor<768xf32>";
  static auto program = compile(
      "func.func @main(%dy: " + t + ", %xh: " + t + ") -> (" + v + ", " + v +
      ") {\n  %r:2 = kiln.fusion multi_output(%dy, %xh) : (" + t + ", " + t +
      ") -> (" + v + ", " + v + ") {\n  ^bb0(%a: " + t + ", %b: " + t +
      "):\n    %p = kiln.mul %a, %b : " + t +
      "\n    %g = kiln.reduce sum %p, dims = [0] : " + t + " -> " + v +
      "\n    %s = kiln.reduce sum %a, dims = [0] : " + t + " -> " + v +
      "\n    kiln.yield %g, %s : " + v + ", " + v + "\n  }\n  return %r#0, %r#1 : " +
      v + ", " + v + "\n}\n");
  runBorrowing(state, *program,
               {filled({2048, 768}, -1, 1), filled({2048, 768}, -1, 1)},
               2 * 2048 * 768 * 4);
}
BENCHMARK(BM_Cpu_LnGradColumnSums2048x768)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

constexpr int64_t kM = 512, kK = 768, kNn = 3072;

void BM_Cpu_Dot512x768x3072(benchmark::State &state) {
  static auto program = compile(
      "func.func @main(%out: tensor<512x3072xf32> {kiln.donate}, "
      "%a: tensor<512x768xf32>, %b: tensor<768x3072xf32>) -> "
      "(tensor<512x3072xf32>, tensor<512x768xf32>, tensor<768x3072xf32>) {\n"
      "  %0 = kiln.dot_general %a, %b, batch = [] x [], contract = [1] x [0] "
      ": tensor<512x768xf32>, tensor<768x3072xf32> -> tensor<512x3072xf32>\n"
      "  return %0, %a, %b : tensor<512x3072xf32>, tensor<512x768xf32>, "
      "tensor<768x3072xf32>\n}\n");
  runDonating(state, *program,
              {HostTensor(DType::f32, {kM, kNn}), filled({kM, kK}, -1, 1),
               filled({kK, kNn}, -1, 1)},
              0);
  state.counters["GFLOP/s"] = benchmark::Counter(
      2.0 * kM * kK * kNn * state.iterations(), benchmark::Counter::kIsRate,
      benchmark::Counter::kIs1000);
}
BENCHMARK(BM_Cpu_Dot512x768x3072)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_OneDnn_Sgemm512x768x3072(benchmark::State &state) {
  HostTensor a = filled({kM, kK}, -1, 1), b = filled({kK, kNn}, -1, 1);
  HostTensor c(DType::f32, {kM, kNn});
  for (auto _ : state)
    dnnl_sgemm('N', 'N', kM, kNn, kK, 1.0f,
               reinterpret_cast<const float *>(a.data()), kK,
               reinterpret_cast<const float *>(b.data()), kNn, 0.0f,
               reinterpret_cast<float *>(c.data()), kNn);
  state.counters["GFLOP/s"] = benchmark::Counter(
      2.0 * kM * kK * kNn * state.iterations(), benchmark::Counter::kIsRate,
      benchmark::Counter::kIs1000);
}
BENCHMARK(BM_OneDnn_Sgemm512x768x3072)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// kiln.fused_attention and its gradient, f32, 8 query heads over 2 kv
// heads of 64 over 2048 tokens (one sequence of a Mistral-shaped layer,
// narrowed to fit a CPU), lowered in chunks as the CPU backend runs it;
// state.range(0) is the window (0: causal only).
void BM_Cpu_AttentionStep2048(benchmark::State &state) {
  const int64_t window = state.range(0);
  const std::string q = "tensor<1x8x2048x64xf32>",
                    kv = "tensor<1x2x2048x64xf32>",
                    stats = "tensor<1x8x2048xf32>";
  const std::string attrs =
      "{causal, scale = 0.125 : f64" +
      (window > 0 ? ", window = " + std::to_string(window) + " : i64" : "") +
      "}";
  auto program = compile(
      "func.func @main(%q: " + q + ", %k: " + kv + ", %v: " + kv +
      ", %g: " + q + ") -> (" + q + ", " + q + ", " + kv + ", " + kv + ") {\n" +
      "  %o, %l = kiln.fused_attention %q, %k, %v " + attrs + " : " + q + ", " +
      kv + ", " + kv + " -> " + q + ", " + stats + "\n" +
      "  %dq, %dk, %dv = kiln.fused_attention_grad %q, %k, %v, %o, %l, %g " +
      attrs + " : " + q + ", " + kv + ", " + kv + ", " + q + ", " + stats +
      ", " + q + " -> " + q + ", " + kv + ", " + kv + "\n" +
      "  return %o, %dq, %dk, %dv : " + q + ", " + q + ", " + kv + ", " + kv +
      "\n}\n");
  std::vector<HostTensor> inputs = {
      filled({1, 8, 2048, 64}, -1, 1), filled({1, 2, 2048, 64}, -1, 1),
      filled({1, 2, 2048, 64}, -1, 1), filled({1, 8, 2048, 64}, -1, 1)};
  for (auto _ : state) {
    auto out = program->run(kiln::runtime::borrowAll(inputs));
    if (!out.ok()) {
      state.SkipWithError(out.status().ToString().c_str());
      return;
    }
  }
}
BENCHMARK(BM_Cpu_AttentionStep2048)
    ->Arg(0)
    ->Arg(256)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

} // namespace

BENCHMARK_MAIN();
