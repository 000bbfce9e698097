// Data parallelism inside one process: kiln.all_reduce, its gradient, the
// optimizer's averaged gradients and the launcher's variables, with a
// stand-in communicator (a world whose processes all hold what this one
// holds) so that every backend's sums are checked against the reference
// evaluator without a launcher. tests/tools/kiln-train-data-parallel.test
// runs real processes under mpirun.
#include "TinyGPT2.h"
#include "frontends/lazy/Tensor.h"
#include "frontends/nn/Optimizer.h"
#include "runtime/Executable.h"
#include "support/Collectives.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <vector>

namespace kiln {
namespace {

/// `size` processes that all hold this one's values: each sum is the value
/// times `size`. Counts the sums and the elements they carried.
class MirroredWorld final : public Communicator {
public:
  explicit MirroredWorld(int size) : size_(size) {}
  int rank() const override { return 0; }
  int size() const override { return size_; }
  absl::Status allReduceSum(void *data, int64_t count, DType type) override {
    ++sums;
    elements += count;
    for (int64_t i = 0; i < count; ++i)
      switch (type) {
      case DType::f32:
        static_cast<float *>(data)[i] *= size_;
        break;
      case DType::f64:
        static_cast<double *>(data)[i] *= size_;
        break;
      case DType::i32:
        static_cast<int32_t *>(data)[i] *= size_;
        break;
      case DType::i64:
        static_cast<int64_t *>(data)[i] *= size_;
        break;
      default:
        return absl::InvalidArgumentError("type");
      }
    return absl::OkStatus();
  }
  absl::Status barrier() override {
    ++barriers;
    return absl::OkStatus();
  }
  void abort(int exitCode) override { std::_Exit(exitCode); }

  int64_t sums = 0, elements = 0, barriers = 0;

private:
  int size_;
};

/// Sets `world` as the process's communicator for one test.
class WorldScope {
public:
  explicit WorldScope(Communicator *world) { setWorldCommunicator(world); }
  ~WorldScope() { setWorldCommunicator(nullptr); }
};

std::vector<float> values(Tensor t) {
  std::vector<double> d = t.to_vector();
  return std::vector<float>(d.begin(), d.end());
}

class AllReduceOnBackend : public ::testing::TestWithParam<Backend> {};

TEST_P(AllReduceOnBackend, SumsOverTheWorldInTheStepGraph) {
  Options o;
  o.backend = GetParam();
  set_options(o);
  MirroredWorld world(3);
  WorldScope scope(&world);
  EXPECT_EQ(world_size(), 3);
  EXPECT_EQ(world_rank(), 0);
  Tensor x = Tensor::from_vector({1, -2, 3.5, 4}, {2, 2});
  Tensor y = all_reduce(x * 2.0) + 1.0;
  Tensor n = all_reduce(Tensor::from_vector({7, 8}, {2}, DType::i64));
  kiln::step();
  EXPECT_EQ(values(y), (std::vector<float>{7, -11, 22, 25}));
  EXPECT_EQ(n.to_vector(), (std::vector<double>{21, 24}));
  EXPECT_EQ(world.sums, 2) << "one exchange a sum, in the one step";
  EXPECT_EQ(world.elements, 6);
}

INSTANTIATE_TEST_SUITE_P(Backends, AllReduceOnBackend,
                         ::testing::Values(Backend::cpu, Backend::reference),
                         [](const auto &info) {
                           return std::string(backendName(info.param));
                         });

TEST(AllReduce, EagerModeRunsTheSum) {
  Options o;
  o.backend = Backend::cpu;
  o.mode = Mode::eager;
  set_options(o);
  MirroredWorld world(2);
  WorldScope scope(&world);
  Tensor y = all_reduce(Tensor::from_vector({1.5, 2}, {2}, DType::f64));
  EXPECT_EQ(y.to_vector(), (std::vector<double>{3, 4}));
  EXPECT_EQ(world.sums, 1);
  set_options(Options{});
}

TEST(AllReduce, GradientIsTheSumOfTheProcessesGradients) {
  // L = sum(all_reduce(w * x)) over 3 mirrored processes: each process's
  // w moves all three copies of the sum, and its gradient sums the three
  // processes' dL/d(w x) = x: 3 x.
  set_options(Options{});
  MirroredWorld world(3);
  WorldScope scope(&world);
  Tensor w = Tensor::from_vector({0.5, -1, 2}, {3}).requires_grad_();
  Tensor x = Tensor::from_vector({1, 2, -4}, {3});
  all_reduce(w * x).sum().backward();
  EXPECT_EQ(values(w.grad()), (std::vector<float>{3, 6, -12}));
}

TEST(AllReduce, RefusesSixteenBitTensors) {
  Tensor x = Tensor::from_vector({1, 2}, {2}).to(DType::bf16);
  try {
    all_reduce(x);
    FAIL() << "a bf16 sum over processes was accepted";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("convert a 16-bit tensor to f32"),
              std::string::npos)
        << e.what();
  }
}

TEST(AverageGradients, TrainsAsOneProcessInAWorldOfEqualProcesses) {
  // Two processes with the same batch: the mean of two equal gradients is
  // each (2 g / 2 = g exactly), so the losses equal one process's bit for
  // bit, and every parameter's gradient went through one sum a step.
  set_options(Options{});
  std::vector<double> alone, mirrored;
  {
    testing::TinyGPT2Training training(3);
    for (int s = 0; s < 3; ++s)
      alone.push_back(training.step().item());
  }
  MirroredWorld world(2);
  {
    WorldScope scope(&world);
    testing::TinyGPT2Training training(3);
    for (int s = 0; s < 3; ++s)
      mirrored.push_back(training.step().item());
    EXPECT_EQ(world.sums,
              3 * int64_t(training.model.named_parameters().size()));
  }
  EXPECT_EQ(alone, mirrored);
}

TEST(AverageGradients, NothingAlone) {
  set_options(Options{});
  Tensor w = Tensor::from_vector({1, 2}, {2}).requires_grad_();
  (w * w).sum().backward();
  nn::average_gradients({{"w", w}});
  EXPECT_EQ(values(w.grad()), (std::vector<float>{2, 4}));
}

/// Sets environment variables for one test and removes them after.
class Environment {
public:
  Environment(
      std::initializer_list<std::pair<const char *, const char *>> vars) {
    for (auto [name, value] : vars) {
      setenv(name, value, 1);
      names_.push_back(name);
    }
  }
  ~Environment() {
    for (const char *name : names_)
      unsetenv(name);
  }

private:
  std::vector<const char *> names_;
};

TEST(LauncherPlacement, ReadsOpenMpiAndPmiVariables) {
  {
    absl::StatusOr<WorldPlacement> alone = launcherPlacement();
    ASSERT_TRUE(alone.ok()) << alone.status();
    EXPECT_EQ(alone->size, 1);
    EXPECT_EQ(alone->rank, 0);
  }
  {
    Environment env(
        {{"OMPI_COMM_WORLD_SIZE", "4"}, {"OMPI_COMM_WORLD_RANK", "3"}});
    absl::StatusOr<WorldPlacement> p = launcherPlacement();
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_EQ(p->size, 4);
    EXPECT_EQ(p->rank, 3);
    EXPECT_EQ(p->source, "OMPI_COMM_WORLD_SIZE/RANK");
  }
  {
    Environment env({{"PMI_SIZE", "2"}, {"PMI_RANK", "1"}});
    absl::StatusOr<WorldPlacement> p = launcherPlacement();
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_EQ(p->size, 2);
    EXPECT_EQ(p->rank, 1);
  }
}

TEST(LauncherPlacement, RefusesWhatPlacesNoProcess) {
  for (auto [size, rank] : {std::pair{"2", "2"}, std::pair{"0", "0"},
                            std::pair{"two", "0"}, std::pair{"2", "-1"}}) {
    Environment env(
        {{"OMPI_COMM_WORLD_SIZE", size}, {"OMPI_COMM_WORLD_RANK", rank}});
    absl::StatusOr<WorldPlacement> p = launcherPlacement();
    ASSERT_FALSE(p.ok()) << size << " " << rank;
    EXPECT_NE(std::string(p.status().message()).find("do not place"),
              std::string::npos)
        << p.status();
  }
  Environment torchrun({{"WORLD_SIZE", "2"}, {"RANK", "0"}});
  absl::StatusOr<WorldPlacement> p = launcherPlacement();
  ASSERT_FALSE(p.ok());
  EXPECT_NE(std::string(p.status().message()).find("mpirun -np N"),
            std::string::npos)
      << p.status();
}

TEST(AllReduceSumInPlace, RefusesALargerWorldNotJoined) {
  // A process that a launcher placed among others but that never joined
  // them must not sum alone: the others' shares would silently be missing.
  float data[2] = {1, 2};
  EXPECT_TRUE(allReduceSumInPlace(data, 2, DType::f32).ok());
  Environment env(
      {{"OMPI_COMM_WORLD_SIZE", "2"}, {"OMPI_COMM_WORLD_RANK", "1"}});
  absl::Status s = allReduceSumInPlace(data, 2, DType::f32);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(std::string(s.message()).find("rank 1 of 2"), std::string::npos)
      << s;
  EXPECT_EQ(allReduceSumInPlace(data, 2, DType::bf16).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(AllReduceThunk, RoundTripsAndIsValidated) {
  runtime::Executable exe;
  exe.signature.inputs.push_back({DType::f32, {4}});
  exe.signature.outputs.push_back({DType::f32, {4}});
  exe.plan.arenaBytes = 64;
  exe.plan.slots = {{runtime::BufferSlot::Kind::input, 0, 0, 16},
                    {runtime::BufferSlot::Kind::arena, 0, 0, 16}};
  exe.plan.outputSlots = {1};
  exe.plan.outputDonors = {-1};
  runtime::Thunk t;
  t.kind = runtime::Thunk::Kind::allReduce;
  t.allReduce = {0, 1, DType::f32, 4};
  exe.thunks.push_back(t);
  ASSERT_TRUE(runtime::validateExecutable(exe).ok())
      << runtime::validateExecutable(exe);
  absl::StatusOr<runtime::Executable> back =
      runtime::deserializeExecutable(runtime::serializeExecutable(exe));
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->thunks.size(), 1u);
  const runtime::AllReduceThunk &a = back->thunks[0].allReduce;
  EXPECT_EQ(back->thunks[0].kind, runtime::Thunk::Kind::allReduce);
  EXPECT_EQ(a.src, 0u);
  EXPECT_EQ(a.dst, 1u);
  EXPECT_EQ(a.element, DType::f32);
  EXPECT_EQ(a.count, 4);
  // More elements than its slots hold.
  exe.thunks[0].allReduce.count = 5;
  EXPECT_FALSE(runtime::validateExecutable(exe).ok());
}

} // namespace
} // namespace kiln
