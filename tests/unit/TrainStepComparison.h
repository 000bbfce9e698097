// Training the tiny GPT-2 step (tests/passes/Inputs/gpt2_train_step.mlir,
// or its twin with fused attention and loss) for three steps with two
// programs from the same inputs, each feeding its own outputs back as
// training does, and comparing the loss and gradient norm step by step:
// the step's layout is read from the module (which result carries into
// which argument), the first inputs are drawn. Shared by CudaTrainStepTest
// (cpu against cuda, two GEMM libraries) and CudaFlashAttentionTest (the
// flash attention kernels against attention in chunks).
#ifndef KILN_TESTS_UNIT_TRAINSTEPCOMPARISON_H
#define KILN_TESTS_UNIT_TRAINSTEPCOMPARISON_H

#include "CudaTestSupport.h"
#include "FileTestSupport.h"

#include "ir/TensorConversion.h"

#include "llvm/ADT/DenseSet.h"

#include <cmath>
#include <cstdio>
#include <deque>
#include <functional>

namespace kiln::testing {

/// For each result of `main`: the donated argument whose next value it is,
/// or -1. That is the nearest donated argument of @main in the result's
/// backward slice (breadth first), when it has the result's type: in the
/// AdamW step param' = param·(1 − lr·wd) − …, m' = m + …, v' = v·β2 + …
/// keep the old value within two ops, while every other donated argument
/// (through the gradients) is much further. The loss and the gradient norm
/// are scalars, the type of no donated argument.
inline std::vector<int> carriedArguments(mlir::func::FuncOp main) {
  mlir::Block &body = main.getBody().front();
  std::vector<int> carried;
  for (mlir::Value result : body.getTerminator()->getOperands()) {
    std::deque<mlir::Value> queue = {result};
    llvm::DenseSet<mlir::Value> seen = {result};
    int found = -1;
    while (!queue.empty() && found < 0) {
      mlir::Value value = queue.front();
      queue.pop_front();
      if (auto arg = llvm::dyn_cast<mlir::BlockArgument>(value)) {
        if (arg.getOwner() == &body &&
            main.getArgAttr(arg.getArgNumber(), "kiln.donate"))
          found = static_cast<int>(arg.getArgNumber());
        continue;
      }
      for (mlir::Value operand : value.getDefiningOp()->getOperands())
        if (seen.insert(operand).second)
          queue.push_back(operand);
    }
    carried.push_back(found >= 0 && main.getArgument(found).getType() ==
                                        result.getType()
                          ? found
                          : -1);
  }
  return carried;
}

/// The step's interface, read from the module and checked.
struct StepLayout {
  std::vector<int> carried; // per result, as carriedArguments
  std::vector<int> scalarResults; // results carried into no input
  int learningRate = -1, stepCount = -1, tokens = -1, rngState = -1;
  std::vector<int> parameters, moments; // arguments
};

inline StepLayout readLayout(mlir::func::FuncOp main) {
  StepLayout layout;
  layout.carried = carriedArguments(main);
  std::vector<int> carriedF32; // arguments, in result order
  std::vector<int> timesCarried(main.getNumArguments(), 0);
  for (size_t r = 0; r < layout.carried.size(); ++r) {
    int arg = layout.carried[r];
    if (arg < 0) {
      layout.scalarResults.push_back(static_cast<int>(r));
      continue;
    }
    ++timesCarried[arg];
    auto type = describeTensorType(main.getArgument(arg).getType());
    if (type.ok() && type->first == DType::f32)
      carriedF32.push_back(arg);
    else
      layout.rngState = arg;
  }
  for (unsigned a = 0; a < main.getNumArguments(); ++a) {
    bool donated = static_cast<bool>(main.getArgAttr(a, "kiln.donate"));
    EXPECT_EQ(timesCarried[a], donated ? 1 : 0)
        << "argument " << a << " is not carried exactly once";
    if (donated)
      continue;
    // The others: the learning rate and the step count t (f64 scalars, in
    // that order: %arg2 scales the weight decay, %arg3 the exponent of
    // AdamW's bias corrections) and the token ids.
    auto type = describeTensorType(main.getArgument(a).getType());
    if (type.ok() && type->first == DType::f64)
      (layout.learningRate < 0 ? layout.learningRate : layout.stepCount) =
          static_cast<int>(a);
    else
      layout.tokens = static_cast<int>(a);
  }
  // frontends/nn's AdamW returns the parameters, then their first moments,
  // then their second moments, in one order: thirds of equal types.
  size_t n = carriedF32.size() / 3;
  EXPECT_EQ(carriedF32.size(), 3 * n);
  for (size_t i = 0; i < n && 3 * n == carriedF32.size(); ++i) {
    mlir::Type p = main.getArgument(carriedF32[i]).getType();
    EXPECT_EQ(p, main.getArgument(carriedF32[n + i]).getType());
    EXPECT_EQ(p, main.getArgument(carriedF32[2 * n + i]).getType());
  }
  layout.parameters.assign(carriedF32.begin(), carriedF32.begin() + n);
  layout.moments.assign(carriedF32.begin() + n, carriedF32.end());
  return layout;
}

/// Step 1's inputs: parameters uniform in [-0.5, 0.5], moments zero (as
/// AdamW starts), learning rate 1e-2, random tokens of the 256-token
/// vocabulary, a fixed dropout seed.
inline std::vector<HostTensor> firstInputs(mlir::func::FuncOp main,
                                    const StepLayout &layout) {
  std::mt19937 rng(7);
  std::vector<HostTensor> inputs;
  for (mlir::Type type : main.getArgumentTypes()) {
    auto described = describeTensorType(type);
    EXPECT_TRUE(described.ok()) << described.status();
    if (described.ok())
      inputs.emplace_back(described->first, described->second);
    else
      inputs.emplace_back(DType::f32, std::vector<int64_t>{});
  }
  for (int p : layout.parameters)
    inputs[p] = randomTensor(DType::f32, inputs[p].shape(), rng, 0.5, false);
  for (int m : layout.moments)
    for (int64_t i = 0; i < inputs[m].numElements(); ++i)
      inputs[m].setDouble(i, 0);
  inputs[layout.learningRate].setDouble(0, 1e-2);
  HostTensor &tokens = inputs[layout.tokens];
  for (int64_t i = 0; i < tokens.numElements(); ++i)
    tokens.setInt(i, rng() % 256);
  inputs[layout.rngState].setInt(0, 1234);
  inputs[layout.rngState].setInt(1, 0);
  return inputs;
}

/// One backend's training run: its program and the inputs of its next step.
struct Trainer {
  std::unique_ptr<runtime::Program> program;
  std::vector<HostTensor> inputs;

  /// Runs step `t` (from 1) → its results, or a failure.
  absl::StatusOr<std::vector<HostTensor>> step(const StepLayout &layout,
                                               int t) {
    inputs[layout.stepCount].setDouble(0, t);
    absl::StatusOr<std::vector<HostTensor>> results =
        program->run(runtime::borrowAll(inputs));
    if (results.ok())
      for (size_t r = 0; r < layout.carried.size(); ++r)
        if (layout.carried[r] >= 0)
          inputs[layout.carried[r]] = (*results)[r];
    return results;
  }
};

/// Relative agreement of two runs of the step: f32, bf16 and f16 (above).
constexpr double kF32Agreement = 1e-4;
constexpr double kBf16Agreement = 1.0 / 512;
constexpr double kF16Agreement = 1.0 / 2048;

/// module → a program that runs it (one per side of a comparison).
using ProgramMaker =
    std::function<absl::StatusOr<std::unique_ptr<runtime::Program>>(
        mlir::ModuleOp)>;

/// Three steps of programs `a` and `b` (named for the messages) on the
/// tiny GPT-2 step in `stepFile` (under the source tree), compared step by
/// step within `agreement`.
inline void expectProgramsAgreeForThreeSteps(
    const char *nameA, ProgramMaker makeA, const char *nameB,
    ProgramMaker makeB, double agreement,
    const std::string &stepFile = "tests/passes/Inputs/gpt2_train_step.mlir") {
  std::string path = sourcePath(stepFile);
  std::string source = readWholeFile(path);
  ASSERT_FALSE(source.empty())
      << "cannot read " << path << " (set KILN_SOURCE_DIR to the source tree)";
  // One parse per program: compiling runs the pipeline over it in place.
  ParsedModule forCpu = parseModule(source), forCuda = parseModule(source);
  ASSERT_TRUE(forCpu.module && forCuda.module);
  auto main = forCpu.module->lookupSymbol<mlir::func::FuncOp>("main");
  ASSERT_TRUE(main);
  StepLayout layout = readLayout(main);
  // The loss, and the gradient norm where the step clips.
  ASSERT_TRUE(layout.scalarResults.size() == 1 ||
              layout.scalarResults.size() == 2)
      << "expected the loss and the gradient norm, or the loss";
  ASSERT_FALSE(layout.parameters.empty());
  ASSERT_TRUE(layout.learningRate >= 0 && layout.stepCount >= 0 &&
              layout.tokens >= 0 && layout.rngState >= 0);
  std::vector<HostTensor> inputs = firstInputs(main, layout);

  auto cpuProgram = makeA(*forCpu.module);
  ASSERT_TRUE(cpuProgram.ok()) << nameA << ": " << cpuProgram.status();
  auto cudaProgram = makeB(*forCuda.module);
  ASSERT_TRUE(cudaProgram.ok()) << nameB << ": " << cudaProgram.status();
  Trainer cpu{*std::move(cpuProgram), inputs};
  Trainer cuda{*std::move(cudaProgram), inputs};

  // The frozen steps return the mean token loss, then (gpt2_train_step.mlir,
  // which clips) the gradient norm.
  const char *names[] = {"loss", "gradient norm"};
  std::vector<double> losses;
  for (int t = 1; t <= 3; ++t) {
    auto onCpu = cpu.step(layout, t);
    ASSERT_TRUE(onCpu.ok()) << nameA << " step " << t << ": " << onCpu.status();
    auto onCuda = cuda.step(layout, t);
    ASSERT_TRUE(onCuda.ok()) << nameB << " step " << t << ": " << onCuda.status();
    for (size_t k = 0; k < layout.scalarResults.size(); ++k) {
      int r = layout.scalarResults[k];
      double want = (*onCpu)[r].getDouble(0), got = (*onCuda)[r].getDouble(0);
      ASSERT_TRUE(std::isfinite(want) && std::isfinite(got))
          << names[k] << " at step " << t << ": " << nameA << " " << want
          << ", " << nameB << " " << got;
      EXPECT_LE(std::fabs(got - want), agreement * std::fabs(want))
          << names[k] << " at step " << t << ": " << nameA << " " << want
          << ", " << nameB << " " << got;
      std::printf("step %d %-13s %s %.9g %s %.9g (relative difference %.2g)\n",
                  t, names[k], nameA, want, nameB, got,
                  std::fabs(got - want) / std::fabs(want));
    }
    losses.push_back((*onCpu)[layout.scalarResults[0]].getDouble(0));
  }
  // Two flat curves would agree too easily: the loss must move by far more
  // than the tolerance.
  EXPECT_GT(std::fabs(losses.back() - losses.front()),
            1e-2 * std::fabs(losses.front()))
      << "losses " << losses[0] << " → " << losses[2];
}

} // namespace kiln::testing

#endif // KILN_TESTS_UNIT_TRAINSTEPCOMPARISON_H
