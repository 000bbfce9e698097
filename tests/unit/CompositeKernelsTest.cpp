// How many CPU kernels each composite of a transformer step costs after
// fusion: layer norm, softmax, GELU and cross-entropy, forward alone and
// forward + backward, traced by the lazy frontend exactly as a model would
// and compiled by the CPU backend. The fusion issue's bar: at most two
// kernels each forward and two each backward, so forward + backward ≤ 4,
// measured without kiln-partition; with it (the default) at most one more:
// cross-entropy's backward then reads the logits again instead of keeping
// their exponentials from the forward, one logits-sized buffer less.
// Each graph is also run, and its values compared with the reference
// backend, so a fusion that "wins" by computing something else fails.
#include "compiler/cpu/CpuCompiler.h"
#include "frontends/lazy/Tensor.h"
#include "ir/Serialization.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <functional>
#include <unistd.h>

namespace kiln {
namespace {

class CompositeKernels : public ::testing::Test {
protected:
  void SetUp() override {
    step();
    clear_graph_cache();
    saved_ = options();
    char dir[] = "/tmp/kiln-composite-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    dir_ = dir;
  }
  void TearDown() override {
    set_options(saved_);
    std::system(("rm -rf " + dir_).c_str());
  }

  /// Runs `trace` (which returns the tensors to materialise) on `backend`,
  /// dumping its graph into a fresh folder; returns their values.
  std::vector<std::vector<double>>
  run(Backend backend, const std::string &dump,
      const std::function<std::vector<Tensor>()> &trace) {
    Options o = saved_;
    o.backend = backend;
    o.dumpDir = dump;
    set_options(o);
    clear_graph_cache();
    std::vector<Tensor> outputs = trace();
    step();
    std::vector<std::vector<double>> values;
    for (const Tensor &t : outputs)
      values.push_back(t.to_vector());
    return values;
  }

  /// Kernel thunks of the one graph dumped into `dump`, compiled for CPU
  /// with the default pipeline and without kiln-partition.
  struct KernelCounts {
    int partitioned = 0, unpartitioned = 0;
  };
  KernelCounts kernelsOf(const std::string &dump) {
    std::string file;
    int graphs = 0;
    if (DIR *d = ::opendir(dump.c_str())) {
      while (dirent *e = ::readdir(d))
        if (std::string(e->d_name).rfind("graph-", 0) == 0) {
          file = dump + "/" + e->d_name;
          ++graphs;
        }
      ::closedir(d);
    }
    EXPECT_EQ(graphs, 1) << "one graph, the composite's, in " << dump;
    mlir::MLIRContext context;
    loadKilnDialects(context);
    auto module = parseModuleFile(file, &context);
    EXPECT_TRUE(module.ok()) << module.status();
    if (!module.ok())
      return {-1, -1};
    KernelCounts counts;
    for (bool partition : {true, false}) {
      auto copy = mlir::OwningOpRef<mlir::ModuleOp>((**module).clone());
      PipelineOptions pipeline;
      pipeline.partition = partition;
      compiler::cpu::CpuCompileStats stats;
      auto exe =
          compiler::cpu::compileExecutable(*copy, "main", &stats, pipeline);
      EXPECT_TRUE(exe.ok()) << exe.status();
      EXPECT_EQ(stats.gemms, 0);
      (partition ? counts.partitioned : counts.unpartitioned) =
          stats.opKernels;
    }
    return counts;
  }

  /// Kernels of `trace` on the CPU backend without kiln-partition (and at
  /// most one more with it), after checking its values against the
  /// reference backend's.
  int kernels(const std::string &name,
              const std::function<std::vector<Tensor>()> &trace) {
    std::string dump = dir_ + "/" + name;
    auto cpu = run(Backend::cpu, dump, trace);
    auto reference = run(Backend::reference, dir_ + "/ref-" + name, trace);
    EXPECT_EQ(cpu.size(), reference.size());
    for (size_t i = 0; i < cpu.size() && i < reference.size(); ++i) {
      EXPECT_EQ(cpu[i].size(), reference[i].size());
      for (size_t k = 0; k < cpu[i].size(); ++k)
        EXPECT_NEAR(cpu[i][k], reference[i][k],
                    1e-4 + 1e-4 * std::abs(reference[i][k]))
            << name << " output " << i << " element " << k;
    }
    KernelCounts n = kernelsOf(dump);
    EXPECT_GE(n.unpartitioned, 1)
        << name << ": a graph that computes something has kernels";
    EXPECT_LE(n.partitioned, n.unpartitioned + 1) << name;
    std::printf("%s: %d kernels (%d with kiln-partition)\n", name.c_str(),
                n.unpartitioned, n.partitioned);
    return n.unpartitioned;
  }

  Options saved_;
  std::string dir_;
};

/// Device data in [-0.5, 0.5) from a fixed LCG: data, not a graph, so the
/// only graph a test dumps is the composite's.
Tensor randomInput(Shape shape, uint64_t seed, bool grad) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  std::vector<double> values(n);
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  for (double &v : values) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    v = static_cast<double>(state >> 40) / double(1ull << 24) - 0.5;
  }
  return Tensor::from_vector(values, std::move(shape), DType::f32, grad);
}

TEST_F(CompositeKernels, LayerNorm) {
  auto forward = [&](bool backward) {
    return [=]() {
      Tensor x = randomInput({64, 768}, 1, true);
      Tensor g = randomInput({768}, 2, true), b = randomInput({768}, 3, true);
      Tensor dy = randomInput({64, 768}, 4, false);
      Tensor y = layer_norm(x, g, b);
      if (!backward)
        return std::vector<Tensor>{y};
      y.backward(dy);
      return std::vector<Tensor>{x.grad(), g.grad(), b.grad()};
    };
  };
  EXPECT_LE(kernels("ln-fwd", forward(false)), 2);
  EXPECT_LE(kernels("ln-both", forward(true)), 4);
}

TEST_F(CompositeKernels, Softmax) {
  auto forward = [&](bool backward) {
    return [=]() {
      Tensor x = randomInput({12, 128, 128}, 5, true);
      Tensor dy = randomInput({12, 128, 128}, 6, false);
      Tensor y = softmax(x, -1);
      if (!backward)
        return std::vector<Tensor>{y};
      y.backward(dy);
      return std::vector<Tensor>{x.grad()};
    };
  };
  EXPECT_LE(kernels("softmax-fwd", forward(false)), 2);
  EXPECT_LE(kernels("softmax-both", forward(true)), 4);
}

TEST_F(CompositeKernels, Gelu) {
  auto forward = [&](bool backward) {
    return [=]() {
      Tensor x = randomInput({64, 3072}, 7, true);
      Tensor dy = randomInput({64, 3072}, 8, false);
      Tensor y = gelu(x);
      if (!backward)
        return std::vector<Tensor>{y};
      y.backward(dy);
      return std::vector<Tensor>{x.grad()};
    };
  };
  EXPECT_LE(kernels("gelu-fwd", forward(false)), 2);
  EXPECT_LE(kernels("gelu-both", forward(true)), 4);
}

TEST_F(CompositeKernels, CrossEntropy) {
  auto forward = [&](bool backward) {
    return [=]() {
      Tensor logits = randomInput({64, 1024}, 9, true);
      std::vector<double> labels;
      for (int i = 0; i < 64; ++i)
        labels.push_back((i * 131) % 1024);
      Tensor targets = Tensor::from_vector(labels, {64}, DType::i64);
      Tensor loss = cross_entropy(logits, targets);
      if (!backward)
        return std::vector<Tensor>{loss};
      loss.backward();
      return std::vector<Tensor>{logits.grad()};
    };
  };
  EXPECT_LE(kernels("ce-fwd", forward(false)), 2);
  EXPECT_LE(kernels("ce-both", forward(true)), 4);
}

} // namespace
} // namespace kiln
