// ZeRO stages 1 and 2 (nn::StateSharding::by_parameter and
// by_parameter_with_gradients) inside one process: which
// parameters each process owns, the state it holds, the exchanges it makes
// and how a checkpoint's full state is checked and loaded. The stand-in
// communicator is one process of a world whose others add zeros to every
// sum: the view of a process that sends every broadcast (what it owns), so
// its owned parameters must train exactly as a replicated optimizer's.
// tests/tools/kiln-train-zero.test runs real processes under mpirun.
#include "TinyGPT2.h"
#include "frontends/lazy/Tensor.h"
#include "frontends/nn/Optimizer.h"
#include "support/Collectives.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace kiln {
namespace {

using nn::NamedTensors;

/// Process `rank` of `size`, the others adding zeros: each sum leaves the
/// values as they are. Counts the sums.
class ZerosFromOthers final : public Communicator {
public:
  ZerosFromOthers(int size, int rank) : size_(size), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  absl::Status allReduceSum(void *, int64_t, DType) override {
    ++sums;
    return absl::OkStatus();
  }
  absl::Status barrier() override { return absl::OkStatus(); }
  void abort(int exitCode) override { std::_Exit(exitCode); }

  int64_t sums = 0;

private:
  int size_, rank_;
};

/// Sets `world` as the process's communicator for one scope.
class WorldScope {
public:
  explicit WorldScope(Communicator *world) { setWorldCommunicator(world); }
  ~WorldScope() { setWorldCommunicator(nullptr); }
};

nn::AdamW::Options sharded() {
  nn::AdamW::Options o;
  o.sharding = nn::StateSharding::by_parameter;
  return o;
}

TEST(ZeroSharding, EachParameterHasOneOwnerAndTheLoadIsBalanced) {
  set_options(Options{});
  nn::GPT2LMHeadModel model(testing::tinyGPT2Config());
  NamedTensors params = model.named_parameters();
  std::vector<int64_t> load(3, 0);
  std::vector<int> owners(params.size(), 0);
  for (int rank = 0; rank < 3; ++rank) {
    ZerosFromOthers world(3, rank);
    WorldScope scope(&world);
    nn::AdamW opt(params, sharded());
    EXPECT_TRUE(opt.sharded());
    for (size_t i = 0; i < params.size(); ++i)
      if (opt.owns(i)) {
        ++owners[i];
        load[rank] += params[i].second.numel();
      }
  }
  for (size_t i = 0; i < params.size(); ++i)
    EXPECT_EQ(owners[i], 1) << params[i].first;
  // The greedy partition's bound: no process owns more than the least
  // loaded one plus the largest parameter.
  int64_t largest = 0;
  for (const auto &entry : params)
    largest = std::max(largest, entry.second.numel());
  auto [least, most] = std::minmax_element(load.begin(), load.end());
  EXPECT_LE(*most - *least, largest);
  EXPECT_GT(*least, 0);
}

TEST(ZeroSharding, AloneOrReplicatedNothingIsSharded) {
  set_options(Options{});
  nn::GPT2LMHeadModel model(testing::tinyGPT2Config());
  nn::AdamW alone(model.named_parameters(), sharded());
  EXPECT_FALSE(alone.sharded());
  EXPECT_EQ(alone.state().size(), 2 * model.named_parameters().size());
  ZerosFromOthers world(2, 1);
  WorldScope scope(&world);
  nn::AdamW replicated(model.named_parameters(), nn::AdamW::Options{});
  EXPECT_FALSE(replicated.sharded());
  EXPECT_TRUE(replicated.owns(0));
  replicated.consolidate_state(); // nothing to gather: no exchange
  EXPECT_EQ(world.sums, 0);
}

TEST(ZeroSharding, OwnedParametersTrainAsReplicatedOnesBitForBit) {
  set_options(Options{});
  ZerosFromOthers world(2, 1);
  WorldScope scope(&world);
  NamedTensors replicatedParams;
  int64_t replicatedSums = 0;
  {
    testing::TinyGPT2Training training(1);
    training.step();
    replicatedSums = world.sums;
    for (auto &[name, p] : training.model.named_parameters())
      replicatedParams.emplace_back(name, Tensor::from_host(p.to_host()));
  }
  world.sums = 0;
  // One step: after it, the parameters others own hold what this world's
  // others sent (zeros), and a second step would start from another model.
  testing::TinyGPT2Training training(1, nn::StateSharding::by_parameter);
  training.step();
  NamedTensors params = training.model.named_parameters();
  // One broadcast per parameter besides the gradients' sums.
  EXPECT_EQ(world.sums, replicatedSums + int64_t(params.size()));
  size_t owned = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    std::vector<double> got = params[i].second.to_vector();
    if (training.opt.owns(i)) {
      ++owned;
      EXPECT_EQ(got, replicatedParams[i].second.to_vector()) << params[i].first;
    } else {
      // What the owner sent: in this world, zeros.
      EXPECT_EQ(got, std::vector<double>(got.size(), 0.0)) << params[i].first;
    }
  }
  EXPECT_GT(owned, 0u);
  EXPECT_LT(owned, params.size());
}

TEST(ZeroSharding, BroadcastValuesLandWhereTheParametersWere) {
  // A parameter's new value comes from an exchange, not from a kernel that
  // updates it in place; the compiled step must still write it over the
  // parameter's buffer, or each step would hold a second copy of the model
  // and the state saved would be spent again. The step's planned peak
  // (its inputs included) falls by the state this process does not hold.
  set_options(Options{});
  ZerosFromOthers world(2, 0);
  WorldScope scope(&world);
  auto plannedPeak = [](nn::StateSharding sharding, int64_t *notHeld) {
    clear_graph_cache();
    metrics::reset();
    testing::TinyGPT2Training training(1, sharding);
    training.step();
    *notHeld = 0;
    for (size_t i = 0; i < training.opt.params().size(); ++i)
      if (!training.opt.owns(i)) // exp_avg and exp_avg_sq, f32
        *notHeld += 2 * 4 * training.opt.params()[i].second.numel();
    int64_t peak = 0;
    for (const auto &record : metrics::counters().compileLog)
      peak = std::max(peak, record.plannedPeakBytes);
    return peak;
  };
  int64_t none = 0, notHeld = 0;
  int64_t replicated = plannedPeak(nn::StateSharding::replicated, &none);
  int64_t sharded = plannedPeak(nn::StateSharding::by_parameter, &notHeld);
  EXPECT_EQ(none, 0);
  EXPECT_GT(notHeld, 0);
  EXPECT_LE(sharded, replicated - notHeld * 9 / 10)
      << "replicated " << replicated << ", sharded " << sharded;
}

TEST(ZeroSharding, GradientsStayWithTheirOwners) {
  // ZeRO stage 2: every gradient is still sent (one sum each, as stage 1),
  // but only its owner keeps the mean; the clipping norm gathers the
  // owners' squares in one more sum. The others' means die as they are
  // made, so the planned peak is never above stage 1's (GPT-2 124M's falls
  // by 52 MB, docs/DATA-PARALLEL.md; this model's peak is its
  // activations').
  set_options(Options{});
  ZerosFromOthers world(2, 0);
  WorldScope scope(&world);
  struct Run {
    int64_t peak = 0, sums = 0, notOwnedGradientBytes = 0;
  };
  // Each step's graph alone: backward, the sums, the clip and the update.
  auto run = [&](nn::StateSharding sharding) {
    clear_graph_cache();
    metrics::reset();
    world.sums = 0;
    testing::TinyGPT2Training training(1, sharding);
    Tensor loss = training.model.loss(training.input, training.input);
    loss.backward();
    training.opt.average_gradients();
    const NamedTensors &params = training.opt.params();
    Run r;
    for (size_t i = 0; i < params.size(); ++i) {
      EXPECT_TRUE(training.opt.has_gradient(i)) << params[i].first;
      const bool kept = params[i].second.grad().defined();
      if (sharding == nn::StateSharding::by_parameter_with_gradients)
        EXPECT_EQ(kept, training.opt.owns(i)) << params[i].first;
      else
        EXPECT_TRUE(kept) << params[i].first;
      if (!training.opt.owns(i))
        r.notOwnedGradientBytes += 4 * params[i].second.numel();
    }
    nn::clip_grad_norm_(training.opt, 1.0);
    training.opt.step();
    training.opt.zero_grad();
    kiln::step();
    for (size_t i = 0; i < params.size(); ++i)
      EXPECT_FALSE(training.opt.has_gradient(i)) << params[i].first;
    for (const auto &record : metrics::counters().compileLog)
      r.peak = std::max(r.peak, record.plannedPeakBytes);
    r.sums = world.sums;
    return r;
  };
  Run stage1 = run(nn::StateSharding::by_parameter);
  Run stage2 = run(nn::StateSharding::by_parameter_with_gradients);
  EXPECT_EQ(stage2.sums, stage1.sums + 1);
  EXPECT_GT(stage2.notOwnedGradientBytes, 0);
  EXPECT_GT(stage1.peak, 0);
  EXPECT_LE(stage2.peak, stage1.peak);
}

TEST(ZeroSharding, StateIsHeldForOwnedParametersAndGatheredForCheckpoints) {
  set_options(Options{});
  ZerosFromOthers world(2, 0);
  WorldScope scope(&world);
  testing::TinyGPT2Training training(1, nn::StateSharding::by_parameter);
  training.step();
  const NamedTensors params = training.model.named_parameters();
  // Not gathered: state() refuses rather than give a part as the whole.
  EXPECT_THROW(training.opt.state(), Error);

  world.sums = 0;
  training.opt.consolidate_state(/*to=*/0);
  // Every parameter's two states, each one exchange, in parameter order.
  EXPECT_EQ(world.sums, 2 * int64_t(params.size()));
  NamedTensors gathered = training.opt.state();
  ASSERT_EQ(gathered.size(), 2 * params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    EXPECT_EQ(gathered[2 * i].first, params[i].first + ".exp_avg");
    EXPECT_EQ(gathered[2 * i + 1].first, params[i].first + ".exp_avg_sq");
    std::vector<double> v = gathered[2 * i + 1].second.to_vector();
    double sum = 0;
    for (double x : v)
      sum += x;
    // An owned parameter's second moment after a step is positive; the
    // others are what their owners sent (zeros here).
    if (training.opt.owns(i))
      EXPECT_GT(sum, 0) << params[i].first;
    else
      EXPECT_EQ(sum, 0) << params[i].first;
  }
  // The gathering lasts until the next step.
  training.step();
  EXPECT_THROW(training.opt.state(), Error);

  // Another process keeps nothing of it.
  training.opt.consolidate_state(/*to=*/1);
  EXPECT_THROW(training.opt.state(), Error);
}

TEST(ZeroSharding, LoadsItsShareOfAFullStateAndChecksTheWhole) {
  set_options(Options{});
  nn::GPT2LMHeadModel model(testing::tinyGPT2Config());
  NamedTensors params = model.named_parameters();
  std::map<std::string, HostTensor> full;
  for (size_t i = 0; i < params.size(); ++i)
    for (const char *state : {"exp_avg", "exp_avg_sq"}) {
      HostTensor value(DType::f32, params[i].second.shape());
      for (int64_t j = 0; j < value.numElements(); ++j)
        value.setDouble(j, double(i) + 0.5);
      full.emplace(params[i].first + "." + state, std::move(value));
    }
  ZerosFromOthers world(2, 1);
  WorldScope scope(&world);
  nn::AdamW opt(params, sharded());
  opt.load_state(full, /*step_count=*/7);
  EXPECT_EQ(opt.step_count(), 7);
  opt.consolidate_state(/*to=*/1);
  NamedTensors gathered = opt.state();
  for (size_t i = 0; i < params.size(); ++i) {
    std::vector<double> v = gathered[2 * i].second.to_vector();
    EXPECT_EQ(v.front(), opt.owns(i) ? double(i) + 0.5 : 0.0)
        << params[i].first;
  }

  // Every parameter's entry is required, owned here or not.
  for (size_t i = 0; i < params.size(); ++i) {
    if (opt.owns(i))
      continue;
    std::map<std::string, HostTensor> partial = full;
    partial.erase(params[i].first + ".exp_avg");
    try {
      opt.check_state(partial);
      ADD_FAILURE() << "a missing entry was taken";
    } catch (const Error &e) {
      EXPECT_NE(std::string(e.what()).find(params[i].first + ".exp_avg"),
                std::string::npos)
          << e.what();
    }
    break;
  }
}

TEST(Broadcast, SendsTheRootsValueAndChecksTheRoot) {
  set_options(Options{});
  Tensor x = Tensor::from_vector({1.5, -2}, {2});
  // Alone: x itself.
  EXPECT_EQ(broadcast(x, 0).to_vector(), x.to_vector());
  EXPECT_THROW(broadcast(x, 1), Error);
  ZerosFromOthers world(2, 0);
  WorldScope scope(&world);
  EXPECT_EQ(broadcast(x, 0).to_vector(), (std::vector<double>{1.5, -2}));
  // Not the root: what the root sent (zeros, in this world), in x's dtype.
  Tensor half = x.to(DType::bf16);
  Tensor got = broadcast(half, 1);
  EXPECT_EQ(got.dtype(), DType::bf16);
  EXPECT_EQ(got.to_vector(), (std::vector<double>{0, 0}));
  EXPECT_THROW(broadcast(x, 2), Error);
  EXPECT_THROW(broadcast(x, -1), Error);
}

TEST(AllReduce, EachCallIsOneExchange) {
  // Two sums of one tensor are two exchanges, never one shared result:
  // processes whose graphs differ must still make the same calls.
  set_options(Options{});
  ZerosFromOthers world(2, 0);
  WorldScope scope(&world);
  Tensor x = Tensor::from_vector({1, 2}, {2});
  Tensor a = all_reduce(x);
  Tensor b = all_reduce(x);
  kiln::step();
  EXPECT_EQ(world.sums, 2);
  EXPECT_EQ(a.to_vector(), b.to_vector());
}

TEST(AllReduce, ASumWhoseResultIsDroppedStillRuns) {
  // As torch.distributed: every call is made, read or not. A process that
  // drops a sum (ZeRO stage 2 drops the gradients others own) would
  // otherwise skip an exchange the others make.
  set_options(Options{});
  ZerosFromOthers world(2, 0);
  WorldScope scope(&world);
  Tensor x = Tensor::from_vector({1, 2}, {2});
  (void)all_reduce(x * 2.0);
  Tensor kept = all_reduce(x);
  (void)all_reduce(x + 1.0);
  kiln::step();
  EXPECT_EQ(world.sums, 3);
  EXPECT_EQ(kept.to_vector(), (std::vector<double>{1, 2}));
  // Made once: the next step does not make them again.
  Tensor y = x + 1.0;
  kiln::step();
  EXPECT_EQ(world.sums, 3);
  // A step of dropped sums alone still runs.
  (void)all_reduce(x);
  kiln::step();
  EXPECT_EQ(world.sums, 4);
}

} // namespace
} // namespace kiln
