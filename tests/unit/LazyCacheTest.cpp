// The lazy frontend over the persistent cache: with Options.cacheDir a
// process that meets a graph the cache already holds compiles nothing
// (metrics: compiles 0, persistent hits counted), also when only the dump
// directory differs from the run that filled the cache; misses are counted by
// reason; Options.dumpDir writes each distinct graph once, as canonical
// text, with a manifest line carrying the graph tag and the cache key.
#include "frontends/lazy/Tensor.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include <gtest/gtest.h>

namespace kiln {
namespace {

std::string readAll(const std::string &path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class LazyCache : public ::testing::Test {
protected:
  void SetUp() override {
    step();
    clear_graph_cache();
    metrics::reset();
    saved_ = options();
    char dir[] = "/tmp/kiln-lazycache-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    dir_ = dir;
  }
  void TearDown() override {
    set_options(saved_);
    set_graph_tag("step");
    std::system(("rm -rf " + dir_).c_str());
  }

  /// One "training step" of a tiny graph; returns the result.
  std::vector<double> trainStep() {
    Tensor w = Tensor::from_vector({1, 2, 3, 4}, {2, 2});
    Tensor x = Tensor::from_vector({0.5, -1}, {1, 2});
    Tensor y = (x.matmul(w) + 1.0).tanh();
    step();
    return y.to_vector();
  }

  Options saved_;
  std::string dir_;
};

TEST_F(LazyCache, AWarmCacheCompilesNothing) {
  Options o = saved_;
  o.backend = Backend::cpu;
  o.cacheDir = dir_ + "/cache";
  o.dumpDir = dir_ + "/dump"; // a trial run's flag: not part of the key
  set_options(o);
  std::vector<double> cold = trainStep();
  o.dumpDir.clear();
  set_options(o);
  EXPECT_EQ(metrics::counters().compiles, 1);
  EXPECT_EQ(metrics::counters().persistentMisses, 1);
  EXPECT_EQ(metrics::counters().persistentMissReasons.at("no entry"), 1);
  // A new process, as far as the frontend knows: no in-memory programs.
  clear_graph_cache();
  metrics::reset();
  std::vector<double> warm = trainStep();
  EXPECT_EQ(metrics::counters().compiles, 0);
  EXPECT_EQ(metrics::counters().persistentHits, 1);
  EXPECT_EQ(cold, warm);
  EXPECT_NE(metrics::report().find("persistent cache: 1 hits ("),
            std::string::npos)
      << metrics::report();
}

TEST_F(LazyCache, AnUnusableCacheDirectoryOnlyCostsCaching) {
  std::ofstream(dir_ + "/file") << "x";
  Options o = saved_;
  o.backend = Backend::cpu;
  o.cacheDir = dir_ + "/file/cache";
  set_options(o);
  std::vector<double> values = trainStep();
  EXPECT_EQ(values.size(), 2u);
  EXPECT_EQ(metrics::counters().compiles, 1);
  EXPECT_EQ(metrics::counters().persistentMissReasons.at("cache disabled"), 1);
}

TEST_F(LazyCache, DumpsEachGraphOnceWithItsTag) {
  Options o = saved_;
  o.dumpDir = dir_ + "/dump";
  set_options(o);
  set_graph_tag("first step");
  trainStep();
  set_graph_tag("train step");
  trainStep(); // the same graph: an in-memory hit, not dumped again
  std::string manifest = readAll(dir_ + "/dump/manifest.jsonl");
  EXPECT_NE(manifest.find("\"tag\": \"first step\""), std::string::npos)
      << manifest;
  EXPECT_EQ(manifest.find("train step"), std::string::npos) << manifest;
  ASSERT_EQ(metrics::counters().compileLog.size(), 1u);
  char name[64];
  std::snprintf(name, sizeof name, "/graph-%016llx.mlir",
                static_cast<unsigned long long>(
                    metrics::counters().compileLog[0].graphHash));
  std::string text = readAll(dir_ + "/dump" + name);
  EXPECT_NE(text.find("func.func @main"), std::string::npos) << text;
  EXPECT_EQ(text.find("loc("), std::string::npos) << text;
  EXPECT_NE(manifest.find(name + 1), std::string::npos) << manifest;
}

} // namespace
} // namespace kiln
