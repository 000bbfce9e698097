// The runtime's buffers: borrowed and donated inputs, output storage
// recycled through a BufferPool (a training loop's steady state allocates
// nothing), and the dead-buffer poisoning check that proves a memory plan's
// reuse safe (results bit-identical with and without it, while a plan that
// reads a dead value is caught).
#include "ExecutableTestSupport.h"
#include "TinyGPT2.h"
#include "frontends/nn/GPT2.h"
#include "frontends/nn/Optimizer.h"
#include "runtime/CpuExecutor.h"
#include "runtime/Executable.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>

namespace kiln {
namespace {

HostTensor filled(std::vector<int64_t> shape, float first) {
  HostTensor t(DType::f32, std::move(shape));
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.setDouble(i, first + i);
  return t;
}

using testing::copyThunk;
using testing::slot;

//===--- BufferPool -------------------------------------------------------===//

TEST(BufferPool, DroppedStorageIsReusedForTheSameSize) {
  auto pool = BufferPool::create();
  const std::byte *first;
  {
    absl::StatusOr<HostTensor> t = pool->acquire(DType::f32, {4, 4});
    ASSERT_TRUE(t.ok());
    EXPECT_TRUE(t->pooled());
    first = t->data();
  }
  absl::StatusOr<HostTensor> again = pool->acquire(DType::i32, {16});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->data(), first); // same 64 bytes, another type
  BufferPool::Stats stats = pool->stats();
  EXPECT_EQ(stats.allocations, 1);
  EXPECT_EQ(stats.allocatedBytes, 64);
  EXPECT_EQ(stats.reuses, 1);
  EXPECT_EQ(stats.idleBuffers, 0);
}

TEST(BufferPool, TensorsMayOutliveTheirPool) {
  auto pool = BufferPool::create();
  absl::StatusOr<HostTensor> t = pool->acquire(DType::f64, {3});
  ASSERT_TRUE(t.ok());
  pool.reset();
  EXPECT_FALSE(t->pooled());
  t->setDouble(2, 1.5); // still valid storage; freed when t dies
  EXPECT_EQ(t->getDouble(2), 1.5);
}

TEST(BufferPool, AdoptsForeignStorageUpToItsIdleLimit) {
  auto pool = BufferPool::create();
  pool->setIdleLimits({{64, 1}});
  HostTensor first(DType::f32, {16}), second(DType::f32, {16});
  HostTensor other(DType::f32, {17}); // 68 bytes: capacity 128, no limit
  const std::byte *storage = first.data();
  EXPECT_TRUE(pool->adopt(first));
  EXPECT_EQ(first.data(), nullptr);
  EXPECT_FALSE(pool->adopt(second)); // one idle 64-byte buffer is enough
  EXPECT_FALSE(pool->adopt(other));
  EXPECT_NE(second.data(), nullptr);
  absl::StatusOr<HostTensor> reused = pool->acquire(DType::f32, {16});
  ASSERT_TRUE(reused.ok());
  EXPECT_EQ(reused->data(), storage);
  EXPECT_EQ(pool->stats().allocations, 0);
  EXPECT_EQ(pool->stats().adoptions, 1);
  // Given back over the limit, storage is freed rather than kept.
  absl::StatusOr<HostTensor> fresh = pool->acquire(DType::f32, {16});
  ASSERT_TRUE(fresh.ok());
  *reused = HostTensor();
  *fresh = HostTensor();
  EXPECT_EQ(pool->stats().idleBuffers, 1);
}

// Storage of 1 MiB and more is mapped (fresh zero pages) and unmapped
// when freed; it is zero like any new tensor's, is reused by a pool like
// small storage, and a shared pool keeps at most its per-size limit.
TEST(BufferPool, LargeStorageIsZeroReusedAndCappedPerSize) {
  HostTensor big(DType::f32, {1 << 19}); // 2 MiB
  for (int64_t i = 0; i < big.numElements(); i += 997)
    ASSERT_EQ(big.getDouble(i), 0.0) << i;
  big.setDouble(7, 3.5);
  EXPECT_EQ(HostTensor(big).getDouble(7), 3.5);

  auto pool = BufferPool::create();
  pool->setIdleLimitPerCapacity(2);
  std::vector<HostTensor> held;
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<HostTensor> t = pool->acquire(DType::f32, {1 << 19});
    ASSERT_TRUE(t.ok());
    EXPECT_EQ(t->getDouble(1 << 18), 0.0); // fresh pages are zero
    held.push_back(*std::move(t));
  }
  held.clear(); // three given back: two kept, one unmapped
  EXPECT_EQ(pool->stats().idleBuffers, 2);
  absl::StatusOr<HostTensor> reused = pool->acquire(DType::i32, {1 << 19});
  ASSERT_TRUE(reused.ok());
  EXPECT_NE(reused->data(), nullptr);
  EXPECT_EQ(pool->stats().reuses, 1);
  EXPECT_EQ(pool->stats().allocations, 3);
  // Other sizes have the same limit.
  absl::StatusOr<HostTensor> small = pool->acquire(DType::f32, {8});
  ASSERT_TRUE(small.ok());
  *small = HostTensor();
  EXPECT_EQ(pool->stats().idleBuffers, 2);
}

TEST(MappedStorage, CountsTheTouchedPagesOfLiveStorageOnly) {
  constexpr uint64_t MiB = 1 << 20;
  const uint64_t before = residentMappedBytes();
  {
    HostTensor big(DType::f32, {16 << 20}); // 64 MiB of zero pages
    EXPECT_LT(residentMappedBytes(), before + MiB); // untouched: not resident
    for (int64_t i = 0; i < big.numElements() / 2; i += 1024) // every page
      big.setDouble(i, 1.0);
    uint64_t touched = residentMappedBytes() - before;
    EXPECT_GE(touched, 32 * MiB);
    EXPECT_LT(touched, 33 * MiB);
  }
  EXPECT_LT(residentMappedBytes(), before + MiB); // unmapped with the tensor
}

TEST(BufferPool, RefusesABadShapeWithoutAborting) {
  auto pool = BufferPool::create();
  EXPECT_FALSE(pool->acquire(DType::f32, {-1}).ok());
  EXPECT_FALSE(pool->acquire(DType::f32, {int64_t{1} << 40, 1 << 20}).ok());
}

//===--- Hand-built executables (copy and GEMM thunks, no kernels) --------===//

/// C = A·B (GEMM into the output's own buffer), a copy of A returned from
/// the arena, and a copy of B returned from the arena: A (2x3) is not
/// donated, B (3x2) is, so the third output may take B's buffer.
runtime::Executable gemmExecutable() {
  using Kind = runtime::BufferSlot::Kind;
  runtime::Executable e;
  e.compilerVersion = "test";
  e.signature.inputs = {{DType::f32, {2, 3}, false}, {DType::f32, {3, 2}, true}};
  e.signature.outputs = {{DType::f32, {2, 2}},
                         {DType::f32, {2, 3}},
                         {DType::f32, {3, 2}}};
  e.plan.arenaBytes = 128;
  e.plan.slots = {slot(Kind::input, 0, 0, 24), slot(Kind::input, 1, 0, 24),
                  slot(Kind::output, 0, 0, 16), slot(Kind::arena, 0, 0, 24),
                  slot(Kind::arena, 0, 64, 24)};
  runtime::Thunk gemm;
  gemm.kind = runtime::Thunk::Kind::gemm;
  gemm.gemm.a = 0;
  gemm.gemm.b = 1;
  gemm.gemm.c = 2;
  gemm.gemm.m = 2;
  gemm.gemm.n = 2;
  gemm.gemm.k = 3;
  e.thunks = {gemm, copyThunk(0, 3, 24), copyThunk(1, 4, 24)};
  e.plan.outputSlots = {2, 3, 4};
  e.plan.outputDonors = {-1, -1, -1};
  return e;
}

TEST(RuntimeBuffers, BorrowedInputsAreReadOnlyAndOutputsAreRecycled) {
  auto program = runtime::loadCpuProgram(gemmExecutable());
  ASSERT_TRUE(program.ok()) << program.status();
  HostTensor a = filled({2, 3}, 1);
  HostTensor keep = a;
  std::vector<int64_t> allocations;
  for (int run = 0; run < 4; ++run) {
    HostTensor b = filled({3, 2}, 10);
    const std::byte *donated = b.data();
    auto out = (*program)->run(
        runtime::inputList(runtime::ProgramInput::borrow(a),
                           runtime::ProgramInput::donate(std::move(b))));
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ(out->size(), 3u);
    // [1 2 3; 4 5 6] · [10 11; 12 13; 14 15]
    EXPECT_EQ((*out)[0].getDouble(0), 1 * 10 + 2 * 12 + 3 * 14);
    EXPECT_EQ((*out)[0].getDouble(3), 4 * 11 + 5 * 13 + 6 * 15);
    EXPECT_TRUE((*out)[1].bitwiseEqual(keep));
    EXPECT_NE((*out)[1].data(), a.data()); // a borrowed buffer stays ours
    EXPECT_EQ((*out)[2].data(), donated);  // a donated one may come back
    EXPECT_TRUE(a.bitwiseEqual(keep));
    allocations.push_back((*program)->allocationStats().buffers);
  }
  // The first run allocates the two outputs with no donor; later runs
  // reuse the storage of the outputs dropped at the end of each iteration.
  EXPECT_EQ(allocations.front(), 2);
  EXPECT_EQ(allocations.back(), 2);
}

TEST(RuntimeBuffers, WrongInputsFailWithoutAborting) {
  auto program = runtime::loadCpuProgram(gemmExecutable());
  ASSERT_TRUE(program.ok()) << program.status();
  HostTensor a = filled({2, 3}, 1);
  auto wrong = (*program)->run(
      runtime::inputList(runtime::ProgramInput::borrow(a),
                         runtime::ProgramInput::donate(filled({2, 3}, 0))));
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(wrong.status().message().find("donated input 1"),
            std::string_view::npos)
      << wrong.status();
  auto tooFew =
      (*program)->run(runtime::inputList(runtime::ProgramInput::borrow(a)));
  EXPECT_EQ(tooFew.status().code(), absl::StatusCode::kInvalidArgument);
  HostTensor moved = filled({3, 2}, 0);
  HostTensor thief = std::move(moved);
  auto empty = (*program)->run(runtime::inputList(
      runtime::ProgramInput::borrow(a), runtime::ProgramInput::borrow(moved)));
  EXPECT_FALSE(empty.ok());
}

/// A plan with an aliasing bug the overlap check cannot see: slot 2 shares
/// slot 1's bytes and is read (thunk 1) without ever being written, so it
/// returns slot 1's dead value by luck. Poisoning turns the luck into NaN.
runtime::Executable readsADeadValue() {
  using Kind = runtime::BufferSlot::Kind;
  runtime::Executable e;
  e.compilerVersion = "test";
  e.signature.inputs = {{DType::f32, {4}, false}};
  e.signature.outputs = {{DType::f32, {4}}};
  e.plan.arenaBytes = 128;
  e.plan.slots = {slot(Kind::input, 0, 0, 16), slot(Kind::arena, 0, 0, 16),
                  slot(Kind::arena, 0, 0, 16), slot(Kind::arena, 0, 64, 16)};
  e.thunks = {copyThunk(0, 1, 16), copyThunk(2, 3, 16)};
  e.plan.outputSlots = {3};
  e.plan.outputDonors = {-1};
  return e;
}

TEST(PoisonDeadBuffers, CatchesAPlanThatReadsADeadValue) {
  HostTensor x = filled({4}, 1);
  runtime::CpuRuntimeOptions poison;
  poison.poisonDeadBuffers = true;
  auto lucky = runtime::loadCpuProgram(readsADeadValue());
  auto checked = runtime::loadCpuProgram(readsADeadValue(), poison);
  ASSERT_TRUE(lucky.ok() && checked.ok());
  auto a = (*lucky)->run(runtime::inputList(runtime::ProgramInput::borrow(x)));
  auto b =
      (*checked)->run(runtime::inputList(runtime::ProgramInput::borrow(x)));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE((*a)[0].bitwiseEqual(x));
  EXPECT_TRUE(std::isnan((*b)[0].getDouble(0)));
}

TEST(PoisonDeadBuffers, LeavesACorrectPlanAlone) {
  runtime::CpuRuntimeOptions poison;
  poison.poisonDeadBuffers = true;
  auto program = runtime::loadCpuProgram(gemmExecutable(), poison);
  ASSERT_TRUE(program.ok());
  HostTensor a = filled({2, 3}, 1);
  for (int run = 0; run < 2; ++run) {
    auto out = (*program)->run(std::vector<HostTensor>{a, filled({3, 2}, 10)});
    ASSERT_TRUE(out.ok());
    EXPECT_EQ((*out)[0].getDouble(1), 1 * 11 + 2 * 13 + 3 * 15);
    EXPECT_TRUE((*out)[1].bitwiseEqual(a));
  }
}

//===--- Through the frontend ----------------------------------------------===//

void useOptions(bool poison) {
  Options o = options_from_env();
  o.mode = Mode::graph;
  o.backend = Backend::cpu;
  o.poisonDeadBuffers = poison;
  set_options(o);
}

TEST(PoisonDeadBuffers, TheFrontendOptionReachesTheRuntime) {
  setenv("KILN_POISON_DEAD_BUFFERS", "1", 1);
  EXPECT_TRUE(options_from_env().poisonDeadBuffers);
  unsetenv("KILN_POISON_DEAD_BUFFERS");
  EXPECT_FALSE(options_from_env().poisonDeadBuffers);
  useOptions(true);
  EXPECT_TRUE(runtime::defaultCpuRuntimeOptions().poisonDeadBuffers);
  useOptions(false);
  EXPECT_FALSE(runtime::defaultCpuRuntimeOptions().poisonDeadBuffers);
}

/// Builds a graph's values with `build`, runs it with and without poisoning,
/// and expects bit-identical results.
void expectPoisonChangesNothing(
    const std::function<std::vector<Tensor>()> &build) {
  std::vector<std::vector<HostTensor>> results;
  for (bool poison : {false, true}) {
    useOptions(poison);
    std::vector<Tensor> values = build();
    kiln::step();
    results.emplace_back();
    for (const Tensor &v : values)
      results.back().push_back(v.to_host());
  }
  useOptions(false);
  ASSERT_EQ(results[0].size(), results[1].size());
  for (size_t i = 0; i < results[0].size(); ++i)
    EXPECT_TRUE(results[0][i].bitwiseEqual(results[1][i])) << "value " << i;
}

Tensor randomTensor(Shape shape, uint64_t seed, bool grad = false) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> n(0, 1);
  int64_t count = 1;
  for (int64_t d : shape)
    count *= d;
  std::vector<double> values(count);
  for (double &v : values)
    v = n(rng);
  Tensor t = Tensor::from_vector(values, shape);
  if (grad)
    t.requires_grad_();
  return t;
}

TEST(PoisonDeadBuffers, MlpStepIsBitIdentical) {
  expectPoisonChangesNothing([] {
    Tensor x = randomTensor({8, 16}, 1);
    Tensor w1 = randomTensor({16, 32}, 2, true), w2 = randomTensor({32, 4}, 3, true);
    Tensor h = x.matmul(w1).gelu();
    Tensor loss = h.matmul(w2).log_softmax(1).mean().neg();
    loss.backward();
    return std::vector<Tensor>{loss, w1.grad(), w2.grad(), h.sum({0})};
  });
}

TEST(PoisonDeadBuffers, AttentionAndShapeOpsAreBitIdentical) {
  expectPoisonChangesNothing([] {
    Tensor q = randomTensor({2, 8, 16}, 4), k = randomTensor({2, 8, 16}, 5);
    Tensor v = randomTensor({2, 8, 16}, 6);
    Tensor scores = q.bmm(k.transpose(1, 2)) * Tensor::scalar(0.25);
    Tensor attention = scores.softmax(2).bmm(v);
    Tensor halves = attention.slice(2, 0, 8) + attention.slice(2, 8, 16);
    Tensor padded = halves.pad({0, 1, 0}, {0, 1, 2}).relu();
    return std::vector<Tensor>{attention, padded.max({2}), padded.sum({1})};
  });
}

struct TrainRun {
  std::vector<double> losses;
  std::vector<HostTensor> parameters;
  /// Runtime allocations (buffers, bytes) counted after each step.
  std::vector<int64_t> allocations, allocatedBytes;
};

/// The GPT2TrainTest model (2 layers, n_embd 64, dropout, AdamW, clipping,
/// warmup + cosine) trained for `steps` steps.
TrainRun trainGPT2(int64_t steps, bool poison) {
  useOptions(poison);
  kiln::testing::TinyGPT2Training training;
  metrics::reset();
  TrainRun result;
  for (int64_t s = 0; s < steps; ++s) {
    result.losses.push_back(training.step().item());
    result.allocations.push_back(metrics::counters().runtimeAllocations);
    result.allocatedBytes.push_back(metrics::counters().runtimeAllocatedBytes);
  }
  for (const Tensor &p : training.model.parameters())
    result.parameters.push_back(p.to_host());
  useOptions(false);
  return result;
}

TEST(RuntimeAllocations, GPT2TrainingAllocatesNothingInSteadyState) {
  TrainRun run = trainGPT2(10, false);
  for (size_t s = 0; s < run.allocations.size(); ++s)
    std::printf("after step %zu: %lld runtime buffers (%lld bytes)\n", s + 1,
                static_cast<long long>(run.allocations[s]),
                static_cast<long long>(run.allocatedBytes[s]));
  // The first step fills the pool (its outputs with no donated buffer);
  // from then on outputs reuse donated or dropped buffers.
  EXPECT_GT(run.allocations.front(), 0);
  EXPECT_EQ(run.allocations[9], run.allocations[2]) << metrics::report();
  EXPECT_EQ(run.allocatedBytes[9], run.allocatedBytes[2]);
  for (double loss : run.losses)
    EXPECT_TRUE(std::isfinite(loss));
}

TEST(PoisonDeadBuffers, GPT2TrainingStepsAreBitIdentical) {
  TrainRun plain = trainGPT2(3, false);
  TrainRun poisoned = trainGPT2(3, true);
  for (size_t s = 0; s < plain.losses.size(); ++s) {
    ASSERT_TRUE(std::isfinite(poisoned.losses[s])) << "step " << s;
    EXPECT_EQ(std::memcmp(&plain.losses[s], &poisoned.losses[s],
                          sizeof(double)),
              0)
        << "step " << s << ": " << plain.losses[s] << " vs "
        << poisoned.losses[s];
  }
  ASSERT_EQ(plain.parameters.size(), poisoned.parameters.size());
  for (size_t i = 0; i < plain.parameters.size(); ++i)
    EXPECT_TRUE(plain.parameters[i].bitwiseEqual(poisoned.parameters[i]))
        << "parameter " << i;
}

} // namespace
} // namespace kiln
