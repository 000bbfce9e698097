// The runtime's profiles (runtime/Profile.h): a CPU program with profiling
// on reports every thunk of a run, in order, inside the run, with its bytes
// and (GEMMs) its work; the Chrome trace is valid JSON with one complete
// event per thunk on one track and names for its process and thread; the
// summary leaves each program's first run out and names the thunks; a
// trace that cannot be written whole leaves no partial file.
#include "CpuTestSupport.h"

#include "runtime/Profile.h"

#include "llvm/Support/JSON.h"

#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace kiln {
namespace {

const char *kModule = R"(
func.func @main(%a: tensor<64x32xf32>, %b: tensor<32x16xf32>) -> tensor<64x16xf32> {
  %d = kiln.dot_general %a, %b, batch = [] x [], contract = [1] x [0] : tensor<64x32xf32>, tensor<32x16xf32> -> tensor<64x16xf32>
  %t = kiln.tanh %d : tensor<64x16xf32>
  %e = kiln.exp %t : tensor<64x16xf32>
  %s = kiln.reduce sum %e, dims = [1] : tensor<64x16xf32> -> tensor<64xf32>
  %r = kiln.broadcast_in_dim %s, dims = [0] : tensor<64xf32> -> tensor<64x16xf32>
  %y = kiln.div %e, %r : tensor<64x16xf32>
  return %y : tensor<64x16xf32>
})";

TEST(Profile, ACpuRunReportsEveryThunkWithinTheRun) {
  testing::ParsedModule parsed = testing::parseModule(kModule);
  ASSERT_TRUE(parsed.module);
  auto program = compiler::cpu::createCpuProgram(*parsed.module, "main");
  ASSERT_TRUE(program.ok()) << program.status();
  std::mt19937 rng(1);
  std::vector<HostTensor> inputs = {
      testing::randomTensor(DType::f32, {64, 32}, rng, 1, false),
      testing::randomTensor(DType::f32, {32, 16}, rng, 1, false)};

  // Off: nothing to take.
  ASSERT_TRUE((*program)->run(runtime::borrowAll(inputs)).ok());
  EXPECT_FALSE((*program)->takeProfile());

  (*program)->setProfiling(true);
  runtime::Profiler profiler;
  for (int run = 0; run < 3; ++run) {
    ASSERT_TRUE((*program)->run(runtime::borrowAll(inputs)).ok());
    std::optional<runtime::RunProfile> profile = (*program)->takeProfile();
    ASSERT_TRUE(profile);
    EXPECT_FALSE((*program)->takeProfile()) << "a profile is taken once";
    EXPECT_EQ(profile->device, "cpu");
    ASSERT_GE(profile->events.size(), 2u); // the GEMM and a kernel at least
    double previousEnd = 0;
    bool gemm = false;
    for (size_t i = 0; i < profile->events.size(); ++i) {
      const runtime::ThunkEvent &e = profile->events[i];
      EXPECT_EQ(e.thunk, i);
      EXPECT_GE(e.startUs, previousEnd) << "thunks run in order";
      EXPECT_GE(e.durationUs, 0);
      EXPECT_GT(e.bytes, 0u) << e.name;
      previousEnd = e.startUs + e.durationUs;
      if (e.category == "gemm") {
        gemm = true;
        EXPECT_EQ(e.flops, 2.0 * 64 * 16 * 32);
        EXPECT_EQ(e.name, "gemm 64x16x32");
        EXPECT_EQ(e.bytes, (64u * 32 + 32 * 16 + 64 * 16) * 4);
      } else {
        EXPECT_EQ(e.category, "kernel");
        EXPECT_FALSE(e.name.empty());
      }
    }
    EXPECT_TRUE(gemm);
    EXPECT_LE(previousEnd, profile->durationUs) << "the run spans its thunks";
    profiler.add(std::move(*profile), 1000.0 * run);
  }

  // The trace: valid JSON, metadata naming the process and the track, one
  // complete event per thunk per run, all on that track.
  llvm::Expected<llvm::json::Value> trace =
      llvm::json::parse(profiler.chromeTrace());
  ASSERT_TRUE(bool(trace)) << llvm::toString(trace.takeError());
  const llvm::json::Array *events =
      trace->getAsObject()->getArray("traceEvents");
  ASSERT_TRUE(events);
  int complete = 0, metadata = 0;
  for (const llvm::json::Value &v : *events) {
    const llvm::json::Object *e = v.getAsObject();
    ASSERT_TRUE(e);
    std::string ph = e->getString("ph")->str();
    if (ph == "M") {
      ++metadata;
      continue;
    }
    EXPECT_EQ(ph, "X");
    EXPECT_EQ(e->getInteger("tid"), 0);
    EXPECT_TRUE(e->getNumber("ts") && e->getNumber("dur"));
    ++complete;
  }
  EXPECT_EQ(metadata, 2); // process_name and thread_name
  EXPECT_EQ(complete % 3, 0);

  // The summary: two runs counted (the first left out), the GEMM named.
  std::string summary = profiler.summary();
  EXPECT_NE(summary.find("2 runs (its first left out)"), std::string::npos)
      << summary;
  EXPECT_NE(summary.find("gemm 64x16x32"), std::string::npos) << summary;
  EXPECT_NE(summary.find("GFLOP/s"), std::string::npos) << summary;
}

TEST(Profile, TheSummarySaysWhenNothingRanTwice) {
  runtime::Profiler profiler;
  runtime::RunProfile run;
  run.program = 7;
  run.device = "cpu";
  profiler.add(run, 0);
  EXPECT_NE(profiler.summary().find("nothing to summarise"), std::string::npos);
  EXPECT_EQ(profiler.runs(), 1u);
}

TEST(Profile, TheSummaryRatesThunksAgainstTheirDevicesLimits) {
  EXPECT_GT(runtime::deviceLimits("NVIDIA H100 80GB HBM3").bytesPerSecond, 0);
  EXPECT_EQ(runtime::deviceLimits("cpu").bytesPerSecond, 0);
  runtime::Profiler profiler;
  runtime::RunProfile run;
  run.program = 1;
  run.device = "cuda";
  run.limits = {2e12, 50e12, 800e12};
  run.durationUs = 1000;
  runtime::ThunkEvent copy;
  copy.name = "copy";
  copy.category = "copy";
  copy.durationUs = 500;
  copy.bytes = 500000000; // 0.5 GB in 0.5 ms: 1000 GB/s, half of 2 TB/s
  run.events.push_back(copy);
  // GEMMs of 10 GFLOP in 0.1 ms (100 TFLOP/s): f32 against the f32 peak,
  // bf16 against the tensor cores'.
  runtime::ThunkEvent f32 = copy, bf16 = copy;
  f32.name = "gemm f32";
  bf16.name = "gemm bf16";
  f32.category = bf16.category = "gemm";
  f32.durationUs = bf16.durationUs = 100;
  f32.flops = bf16.flops = 1e10;
  bf16.sixteenBit = true;
  run.events.push_back(f32);
  run.events.push_back(bf16);
  profiler.add(run, 0);
  profiler.add(run, 1000);
  std::string summary = profiler.summary();
  EXPECT_NE(summary.find("1000.0 GB/s (50% of 2000)"), std::string::npos)
      << summary;
  EXPECT_NE(summary.find("100000.0 GFLOP/s (200% of 50000)"), std::string::npos)
      << summary;
  EXPECT_NE(summary.find("100000.0 GFLOP/s (12% of 800000)"), std::string::npos)
      << summary;
  EXPECT_NE(summary.find("account for 70.0% of it"), std::string::npos)
      << summary;
  // Per kind, in order of time, with the time at the limits: the copy's
  // 0.5 GB at 2 TB/s; each GEMM's 0.5 GB (more than its products' 0.2 ms
  // in f32 and 0.0125 ms in bf16).
  size_t copyKind = summary.find(
      "  50.0%      0.500      1  0.250 ms/run             copy\n");
  size_t gemmKind = summary.find(
      "  20.0%      0.200      2  0.500 ms/run             gemm\n");
  EXPECT_NE(copyKind, std::string::npos) << summary;
  EXPECT_NE(gemmKind, std::string::npos) << summary;
  EXPECT_LT(copyKind, gemmKind) << summary;
  EXPECT_LT(gemmKind, summary.find("gemm f32")) << summary;
}

TEST(Profile, KindsWithoutTheDevicesLimitsHaveNoFloor) {
  runtime::Profiler profiler;
  runtime::RunProfile run;
  run.program = 3;
  run.device = "cpu";
  run.durationUs = 400;
  runtime::ThunkEvent kernel;
  kernel.name = "fusion{add}";
  kernel.category = "kernel";
  kernel.durationUs = 300;
  kernel.bytes = 1000;
  run.events.push_back(kernel);
  profiler.add(run, 0);
  profiler.add(run, 500);
  profiler.add(run, 1000);
  std::string summary = profiler.summary();
  EXPECT_NE(summary.find("  75.0%      0.300      1  -                        "
                         "kernel\n"),
            std::string::npos)
      << summary;
}

TEST(Profile, NamesAreEscapedInTheTrace) {
  runtime::Profiler profiler;
  runtime::RunProfile run;
  run.device = "cpu";
  runtime::ThunkEvent e;
  e.name = "fusion{\"quoted\", back\\slash}\n";
  e.category = "kernel";
  run.events.push_back(e);
  profiler.add(run, 0);
  llvm::Expected<llvm::json::Value> trace =
      llvm::json::parse(profiler.chromeTrace());
  ASSERT_TRUE(bool(trace)) << llvm::toString(trace.takeError());
  const llvm::json::Array *events =
      trace->getAsObject()->getArray("traceEvents");
  ASSERT_EQ(events->size(), 3u);
  EXPECT_EQ((*events)[2].getAsObject()->getString("name")->str(), e.name);
}

/// The names in `dir` (not . and ..).
std::vector<std::string> namesIn(const std::string &dir) {
  std::vector<std::string> names;
  if (DIR *d = ::opendir(dir.c_str())) {
    while (dirent *entry = ::readdir(d))
      if (std::string(entry->d_name) != "." &&
          std::string(entry->d_name) != "..")
        names.push_back(entry->d_name);
    ::closedir(d);
  }
  return names;
}

// A trace write that failed part-way (a full disk) left a truncated
// trace.json that Perfetto could not parse. RLIMIT_FSIZE fails a write
// past a few KiB as a full disk does, without a mount: the old file stays
// whole and no temporary file is left. A path under a regular file fails
// cleanly too.
TEST(Profile, AFailedTraceWriteLeavesNoPartialFile) {
  char dir[] = "/tmp/kiln-profile-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  std::string path = std::string(dir) + "/trace.json";
  {
    std::ofstream old(path);
    old << "{\"old\": true}";
  }
  runtime::Profiler profiler;
  for (int r = 0; r < 10; ++r) {
    runtime::RunProfile run;
    run.device = "cpu";
    for (int i = 0; i < 20; ++i) {
      runtime::ThunkEvent e;
      e.thunk = i;
      e.name = "fusion{add, exp} number " + std::to_string(i);
      e.category = "kernel";
      run.events.push_back(e);
    }
    profiler.add(std::move(run), 1000.0 * r);
  }
  ASSERT_GT(profiler.chromeTrace().size(), 16u << 10);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::signal(SIGXFSZ, SIG_IGN); // a write past the limit fails with EFBIG
    struct rlimit limit = {8 << 10, 8 << 10};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    absl::Status written = profiler.writeChromeTrace(path);
    ::_exit(!written.ok() && written.message().find(
                                 "cannot write the trace to '" + path +
                                 "': File too large") != std::string::npos
                ? 0
                : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "the write did not fail as a full disk makes it fail";
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "{\"old\": true}");
  EXPECT_EQ(namesIn(dir), std::vector<std::string>{"trace.json"});

  // Without the limit the trace replaces the old file whole.
  ASSERT_TRUE(profiler.writeChromeTrace(path).ok());
  EXPECT_TRUE(bool(llvm::json::parse(profiler.chromeTrace())));
  EXPECT_EQ(namesIn(dir), std::vector<std::string>{"trace.json"});

  absl::Status underFile = profiler.writeChromeTrace(path + "/trace.json");
  EXPECT_EQ(underFile.message(), "cannot write the trace to '" + path +
                                     "/trace.json': Not a directory");
  std::system(("rm -rf " + std::string(dir)).c_str());
}

} // namespace
} // namespace kiln
