// The persistent cache key's completeness and the cached compile path:
// changing the IR, the compiler version, the CPU features or a
// result-changing option changes the key; changing only locations or SSA
// names does not, and neither does printing and re-parsing (the path a
// dumped graph takes through kilnc precompile). compileCached hits without
// compiling, and a damaged entry is a miss that is replaced, never run.
#include "compiler/CachedCompiler.h"
#include "ir/Serialization.h"
#include "runtime/CpuExecutor.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <unistd.h>

namespace kiln::compiler {
namespace {

const char *kModule = R"mlir(
func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32> {kiln.donate}) -> tensor<4xf32> {
  %s = kiln.add %x, %y : tensor<4xf32>
  %t = kiln.tanh %s : tensor<4xf32>
  return %t : tensor<4xf32>
}
)mlir";

// The same IR with other SSA names and with locations.
const char *kRenamed = R"mlir(
func.func @main(%a: tensor<4xf32> loc("a.py":1:2), %b: tensor<4xf32> {kiln.donate} loc("a.py":3:4)) -> tensor<4xf32> {
  %0 = kiln.add %a, %b : tensor<4xf32> loc("model.py":10:1)
  %result = kiln.tanh %0 : tensor<4xf32> loc(fused["x", "y"])
  return %result : tensor<4xf32> loc(unknown)
} loc("f")
)mlir";

// One op differs (exp instead of tanh).
const char *kChanged = R"mlir(
func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32> {kiln.donate}) -> tensor<4xf32> {
  %s = kiln.add %x, %y : tensor<4xf32>
  %t = kiln.exp %s : tensor<4xf32>
  return %t : tensor<4xf32>
}
)mlir";

class CacheKeyTest : public ::testing::Test {
protected:
  CacheKeyTest() { loadKilnDialects(context_); }

  mlir::OwningOpRef<mlir::ModuleOp> parse(const char *text) {
    auto module = parseModule(text, &context_);
    EXPECT_TRUE(module.ok()) << module.status().message();
    return module.ok() ? std::move(*module) : nullptr;
  }
  std::string key(const char *text, const KeyOptions &options = {},
                  const KeyEnvironment &env = hostKeyEnvironment()) {
    auto module = parse(text);
    return computeCacheKey(*module, options, env).hex;
  }

  mlir::MLIRContext context_;
};

TEST_F(CacheKeyTest, LocationsAndSsaNamesDoNotChangeTheKey) {
  EXPECT_EQ(key(kModule), key(kRenamed));
}

TEST_F(CacheKeyTest, PrintingAndReparsingKeepsTheKey) {
  auto module = parse(kRenamed);
  std::string text = canonicalText(*module);
  mlir::MLIRContext other;
  loadKilnDialects(other);
  auto reparsed = parseModule(text, &other);
  ASSERT_TRUE(reparsed.ok());
  EXPECT_EQ(computeCacheKey(**reparsed, {}).hex, key(kModule));
}

TEST_F(CacheKeyTest, ChangingTheIrChangesTheKey) {
  EXPECT_NE(key(kModule), key(kChanged));
}

TEST_F(CacheKeyTest, CompilerVersionAndTargetEnterTheKey) {
  KeyEnvironment env = hostKeyEnvironment();
  std::string base = key(kModule, {}, env);
  KeyEnvironment version = env;
  version.compilerVersion += " (next)";
  EXPECT_NE(key(kModule, {}, version), base);
  KeyEnvironment features = env;
  features.targetFeatures += ",+newfeature";
  EXPECT_NE(key(kModule, {}, features), base);
  KeyEnvironment cpu = env;
  cpu.targetCpu = "othercpu";
  EXPECT_NE(key(kModule, {}, cpu), base);
  EXPECT_NE(env.compilerVersion.find(std::string(buildId())),
            std::string::npos);
}

TEST_F(CacheKeyTest, ResultChangingOptionsEnterTheKey) {
  std::string base = key(kModule);
  KeyOptions reference;
  reference.backend = Backend::reference;
  EXPECT_NE(key(kModule, reference), base);
  KeyOptions budget;
  budget.memoryBudget = 1 << 20;
  EXPECT_NE(key(kModule, budget), base);
  KeyOptions named;
  named.function = "main"; // the same function as the default
  EXPECT_EQ(key(kModule, named), base);
}

// A cuda entry is compiled for a GPU, not for the host: its key names the
// architecture and no host CPU or feature, so a cache filled by `kilnc
// precompile --backend cuda` on a machine without a GPU is warm on the GPU
// machine. Architecture and TF32 change the code, so they change the key.
TEST_F(CacheKeyTest, CudaKeysNameTheArchitectureNotTheHost) {
  KeyOptions cuda;
  cuda.backend = Backend::cuda;
  KeyEnvironment env = hostKeyEnvironment();
  KeyEnvironment otherHost = env;
  otherHost.targetCpu = "othercpu";
  otherHost.targetFeatures = "+avx512f";
  EXPECT_EQ(key(kModule, cuda, env), key(kModule, cuda, otherHost));
  EXPECT_NE(key(kModule, {}, env), key(kModule, {}, otherHost));
  EXPECT_NE(key(kModule, cuda), key(kModule));
  KeyOptions sm80 = cuda;
  sm80.cudaArch = "sm_80";
  EXPECT_NE(key(kModule, sm80), key(kModule, cuda));
  KeyOptions tf32 = cuda;
  tf32.tf32 = true;
  EXPECT_NE(key(kModule, tf32), key(kModule, cuda));
  // The cuda fields mean nothing to the cpu backend's code.
  KeyOptions cpuWithArch;
  cpuWithArch.cudaArch = "sm_80";
  EXPECT_EQ(key(kModule, cpuWithArch), key(kModule));
  auto module = parse(kModule);
  EXPECT_EQ(computeCacheKey(*module, sm80).identity.target, "cuda:sm_80");
}

class CachedCompileTest : public CacheKeyTest {
protected:
  void SetUp() override {
    char dir[] = "/tmp/kiln-cached-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    dir_ = dir;
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }

  runtime::PersistentCacheOptions options() {
    runtime::PersistentCacheOptions o;
    o.directory = dir_;
    o.log = [this](const runtime::CacheLogRecord &r) { log_.push_back(r); };
    return o;
  }
  std::vector<float> run(runtime::Program &program) {
    HostTensor x(DType::f32, {4}), y(DType::f32, {4});
    for (int i = 0; i < 4; ++i) {
      x.setDouble(i, 0.25 * i);
      y.setDouble(i, -0.5 + i);
    }
    std::vector<HostTensor> inputs;
    inputs.push_back(std::move(x));
    inputs.push_back(std::move(y));
    auto results = program.run(std::move(inputs));
    EXPECT_TRUE(results.ok()) << results.status().message();
    std::vector<float> values;
    if (results.ok())
      for (int i = 0; i < 4; ++i)
        values.push_back((*results)[0].getDouble(i));
    return values;
  }

  std::string dir_;
  std::vector<runtime::CacheLogRecord> log_;
};

TEST_F(CachedCompileTest, ASecondCompileHitsWithoutCodegen) {
  CompileOptions cpu;
  cpu.backend = Backend::cpu;
  runtime::PersistentCache cache(options());
  CacheOutcome first, second;
  auto compiled = compileCached(*parse(kModule), cpu, &cache, &first);
  ASSERT_TRUE(compiled.ok()) << compiled.status().message();
  EXPECT_FALSE(first.hit);
  EXPECT_TRUE(first.stored);
  EXPECT_EQ(first.reason, runtime::CacheMiss::noEntry);
  auto loaded = compileCached(*parse(kRenamed), cpu, &cache, &second);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_TRUE(second.hit);
  EXPECT_EQ(second.compileSeconds, 0);
  EXPECT_EQ(run(**compiled), run(**loaded));
}

TEST_F(CachedCompileTest, ADamagedEntryIsReplacedAndNeverRun) {
  CompileOptions cpu;
  cpu.backend = Backend::cpu;
  runtime::PersistentCache cache(options());
  CacheOutcome outcome;
  ASSERT_TRUE(compileCached(*parse(kModule), cpu, &cache, &outcome).ok());
  std::string path = dir_ + "/" + outcome.key + ".kce";
  {
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(-100, std::ios::end);
    file.put('\x5a'); // inside the kernel library
  }
  CacheOutcome damaged;
  auto recompiled = compileCached(*parse(kModule), cpu, &cache, &damaged);
  ASSERT_TRUE(recompiled.ok());
  EXPECT_FALSE(damaged.hit);
  EXPECT_EQ(damaged.reason, runtime::CacheMiss::corruptEntry);
  EXPECT_TRUE(damaged.stored);
  CacheOutcome again;
  ASSERT_TRUE(compileCached(*parse(kModule), cpu, &cache, &again).ok());
  EXPECT_TRUE(again.hit);
}

TEST_F(CachedCompileTest, TheReferenceBackendBypassesTheCache) {
  CompileOptions reference;
  runtime::PersistentCache cache(options());
  CacheOutcome outcome;
  ASSERT_TRUE(compileCached(*parse(kModule), reference, &cache, &outcome).ok());
  EXPECT_FALSE(outcome.consulted);
  EXPECT_TRUE(cache.list().empty());
}

} // namespace
} // namespace kiln::compiler
