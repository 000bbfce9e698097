// Checkpoint tests: training that saves, loads into a fresh model (other
// seeds) and continues produces the same next five losses, bit for bit, as
// training that never stopped (same backend), dropout RNG and AdamW state
// included; truncated or bit-flipped checkpoints are rejected with clear
// errors and leave the model untouched; a failed save leaves the previous
// checkpoint file as it was.
#include "frontends/nn/Checkpoint.h"
#include "frontends/nn/GPT2.h"
#include "frontends/nn/Optimizer.h"

#include "FileTestSupport.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <random>
#include <signal.h>
#include <sstream>
#include <sys/resource.h>
#include <unistd.h>

namespace kiln::nn {
namespace {

GPT2Config smallConfig(uint64_t seed) {
  GPT2Config c;
  c.vocab_size = 64;
  c.n_positions = 16;
  c.n_embd = 32;
  c.n_layer = 1;
  c.n_head = 2;
  c.with_dropout(0.1);
  c.init_seed = seed;
  c.dropout_seed = seed + 100;
  return c;
}

/// A model, its optimizer and schedule, and a fixed batch.
struct Trainer {
  GPT2LMHeadModel model;
  AdamW opt;
  LambdaLR sched;
  Tensor input;

  explicit Trainer(uint64_t seed)
      : model(smallConfig(seed)), opt(model.named_parameters(), options()),
        sched(opt, linear_schedule_with_warmup(2, 20)) {
    std::mt19937_64 rng(9);
    std::vector<double> ids(2 * 16);
    for (double &id : ids)
      id = static_cast<double>(rng() % 64);
    input = Tensor::from_vector(ids, {2, 16}, DType::i64);
  }
  static AdamW::Options options() {
    AdamW::Options o;
    o.lr = 1e-2;
    return o;
  }
  double trainStep() {
    Tensor loss = model.loss(input, input);
    loss.backward();
    clip_grad_norm_(model.parameters(), 1.0);
    opt.step();
    sched.step();
    opt.zero_grad();
    kiln::step();
    return loss.item();
  }
  NamedGenerators generators() { return {{"dropout", &model.generator()}}; }
};

std::string tempDir() { return kiln::testing::makeTempDir("kiln-ckpt"); }

std::string readFile(const std::string &path) {
  return kiln::testing::readWholeFile(path);
}

std::vector<HostTensor> snapshot(const Module &m) {
  std::vector<HostTensor> out;
  for (const Tensor &p : m.parameters())
    out.push_back(p.to_host());
  return out;
}

bool sameBits(const std::vector<HostTensor> &a,
              const std::vector<HostTensor> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!a[i].bitwiseEqual(b[i]))
      return false;
  return true;
}

std::string loadError(const std::string &path, Trainer &t) {
  try {
    load_checkpoint(path, t.model, &t.opt, t.generators());
  } catch (const Error &e) {
    return e.what();
  }
  return "loaded";
}

TEST(Checkpoint, ResumingGivesTheSameLossesBitwise) {
  std::string dir = tempDir();
  std::string path = dir + "/ckpt.safetensors";

  Trainer a(1);
  for (int i = 0; i < 3; ++i)
    a.trainStep();
  CheckpointState state;
  state.step = 3;
  state.metadata["run"] = "test";
  save_checkpoint(path, a.model, &a.opt, a.generators(), state);
  std::vector<double> uninterrupted;
  for (int i = 0; i < 5; ++i)
    uninterrupted.push_back(a.trainStep());

  Trainer b(2); // other weights and another dropout seed until loaded
  CheckpointState loaded =
      load_checkpoint(path, b.model, &b.opt, b.generators());
  EXPECT_EQ(loaded.step, 3);
  EXPECT_EQ(loaded.metadata.at("run"), "test");
  EXPECT_EQ(b.opt.step_count(), 3);
  b.sched.set_step(loaded.step);
  std::vector<double> resumed;
  for (int i = 0; i < 5; ++i)
    resumed.push_back(b.trainStep());

  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(std::memcmp(&resumed[i], &uninterrupted[i], sizeof(double)), 0)
        << "step " << 4 + i << ": resumed " << resumed[i] << ", uninterrupted "
        << uninterrupted[i];
  EXPECT_TRUE(sameBits(snapshot(a.model), snapshot(b.model)));
  // The losses moved (a resumed flat curve would match too easily).
  EXPECT_NE(uninterrupted.front(), uninterrupted.back());
  ::unlink(path.c_str());
  ::rmdir(dir.c_str());
}

TEST(Checkpoint, ResumingWithoutTheDropoutStateDiverges) {
  // The negative twin of the test above: the dropout generator's state is
  // what makes the resumed masks equal, so leaving it out must show.
  std::string dir = tempDir();
  std::string path = dir + "/ckpt.safetensors";
  Trainer a(1);
  a.trainStep();
  save_checkpoint(path, a.model, &a.opt, a.generators(), {1, {}});
  std::vector<double> uninterrupted, resumed;
  for (int i = 0; i < 5; ++i)
    uninterrupted.push_back(a.trainStep());
  Trainer b(2);
  b.sched.set_step(load_checkpoint(path, b.model, &b.opt, {}).step);
  for (int i = 0; i < 5; ++i)
    resumed.push_back(b.trainStep());
  EXPECT_NE(resumed, uninterrupted);
  ::unlink(path.c_str());
  ::rmdir(dir.c_str());
}

TEST(Checkpoint, RejectsTruncatedAndBitFlippedFilesAndKeepsTheModel) {
  std::string dir = tempDir();
  std::string path = dir + "/ckpt.safetensors";
  Trainer a(1);
  a.trainStep();
  save_checkpoint(path, a.model, &a.opt, a.generators(), {1, {}});
  const std::string good = readFile(path);

  Trainer b(2);
  std::vector<HostTensor> before = snapshot(b.model);

  std::string truncated = dir + "/truncated.safetensors";
  kiln::testing::writeWholeFile(truncated, good.substr(0, good.size() - 100));
  std::string err = loadError(truncated, b);
  EXPECT_NE(err.find("truncated"), std::string::npos) << err;
  EXPECT_NE(err.find(truncated), std::string::npos) << err;

  std::string flipped = dir + "/flipped.safetensors";
  std::string bad = good;
  bad[good.size() - 1000] ^= 0x10; // inside the tensor data
  kiln::testing::writeWholeFile(flipped, bad);
  err = loadError(flipped, b);
  EXPECT_NE(err.find("checksum mismatch"), std::string::npos) << err;

  // Not a checkpoint of this optimizer kind.
  SGD::Options so;
  so.momentum = 0.9;
  SGD sgd(b.model.named_parameters(), so);
  try {
    load_checkpoint(path, b.model, &sgd, b.generators());
    ADD_FAILURE() << "loaded AdamW state into SGD";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("optimizer 'AdamW'"),
              std::string::npos)
        << e.what();
  }

  EXPECT_TRUE(sameBits(before, snapshot(b.model)));
  EXPECT_EQ(b.opt.step_count(), 0);
  EXPECT_EQ(readFile(path), good);
  EXPECT_EQ(loadError(path, b), "loaded");
  for (const std::string &p : {path, truncated, flipped})
    ::unlink(p.c_str());
  ::rmdir(dir.c_str());
}

TEST(Checkpoint, AFailedSaveLeavesThePreviousCheckpoint) {
  std::string dir = tempDir();
  std::string path = dir + "/ckpt.safetensors";
  Trainer a(1);
  save_checkpoint(path, a.model, &a.opt, a.generators(), {0, {}});
  const std::string good = readFile(path);
  a.trainStep();

  // The file-size limit makes the write fail midway (root ignores
  // directory permissions, so those cannot make it fail).
  struct rlimit old, limit;
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
  limit = old;
  limit.rlim_cur = good.size() / 2;
  sighandler_t oldHandler = ::signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limit), 0);
  std::string err;
  try {
    save_checkpoint(path, a.model, &a.opt, a.generators(), {1, {}});
  } catch (const Error &e) {
    err = e.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &old);
  ::signal(SIGXFSZ, oldHandler);

  EXPECT_NE(err.find("write failed"), std::string::npos) << err;
  EXPECT_EQ(readFile(path), good);
  Trainer b(2);
  EXPECT_EQ(load_checkpoint(path, b.model, &b.opt, b.generators()).step, 0);
  ::unlink(path.c_str());
  ::rmdir(dir.c_str());
}

} // namespace
} // namespace kiln::nn
