// The collectives' deadline (support/CollectiveTimeout.h): a collective
// that outlasts it ends the process, naming what waited; collectives that
// end in time, however many, never do. Each case runs in a child process
// (a death test), since the deadline ends the whole process.
#include "support/CollectiveTimeout.h"

#include "gtest/gtest.h"

#include <chrono>
#include <cstdlib>
#include <thread>

namespace kiln {
namespace {

/// A world of two whose collectives take `delay` and add one to each f32
/// element, so that a result shows it passed through. A "hung" one takes
/// 10 s: a deadline that failed to end the child lets it exit 0 then, and
/// the test fails rather than hangs.
class SlowWorld final : public Communicator {
public:
  explicit SlowWorld(std::chrono::milliseconds delay) : delay_(delay) {}
  int rank() const override { return 1; }
  int size() const override { return 2; }
  absl::Status allReduceSum(void *data, int64_t count, DType type) override {
    wait();
    if (type == DType::f32)
      for (int64_t i = 0; i < count; ++i)
        static_cast<float *>(data)[i] += 1;
    return absl::OkStatus();
  }
  absl::Status barrier() override {
    wait();
    return absl::OkStatus();
  }
  void abort(int exitCode) override { std::_Exit(exitCode); }

private:
  void wait() { std::this_thread::sleep_for(delay_); }
  std::chrono::milliseconds delay_;
};
constexpr std::chrono::milliseconds kHung{10000};

using namespace std::chrono_literals;

class CollectiveTimeoutTest : public testing::Test {
protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(CollectiveTimeoutTest, ASumThatOutlastsTheDeadlineEndsTheProcess) {
  EXPECT_EXIT(
      {
        setCollectiveTimeout({absl::Milliseconds(300), "--ddp_timeout 0.3"});
        SlowWorld hung(kHung);
        std::unique_ptr<Communicator> world = withCollectiveTimeout(hung);
        float value = 1;
        (void)world->allReduceSum(&value, 1, DType::f32);
        std::exit(0); // reached only if the deadline failed
      },
      testing::ExitedWithCode(1),
      "rank 1 of 2 waited 300ms for the other processes in a sum of 1 f32 "
      "element \\(its collective number 1\\) and ends the run: the "
      "collective timeout is 300ms \\(--ddp_timeout 0.3\\)");
}

TEST_F(CollectiveTimeoutTest, ABarrierThatOutlastsItIsNamedAfterOthersEnded) {
  EXPECT_EXIT(
      {
        setCollectiveTimeout({absl::Milliseconds(300), "a test"});
        SlowWorld quick(1ms);
        std::unique_ptr<Communicator> fine = withCollectiveTimeout(quick);
        std::vector<float> values(4, 0);
        for (int i = 0; i < 3; ++i)
          (void)fine->allReduceSum(values.data(), 4, DType::f32);
        SlowWorld hung(kHung);
        std::unique_ptr<Communicator> world = withCollectiveTimeout(hung);
        (void)world->barrier();
        std::exit(0);
      },
      testing::ExitedWithCode(1),
      "in a barrier \\(its collective number 4\\).*\\(a test\\)");
}

// The negative twin: collectives that end before their deadlines, one of
// them slow, and a long quiet time after them end nothing.
TEST_F(CollectiveTimeoutTest, CollectivesThatEndInTimeNeverEndTheProcess) {
  EXPECT_EXIT(
      {
        setCollectiveTimeout({absl::Milliseconds(400), "a test"});
        SlowWorld quick(1ms);
        SlowWorld slow(200ms);
        std::unique_ptr<Communicator> a = withCollectiveTimeout(quick);
        std::unique_ptr<Communicator> b = withCollectiveTimeout(slow);
        float value = 0;
        for (int i = 0; i < 50; ++i)
          (void)a->allReduceSum(&value, 1, DType::f32);
        // Each deadline counts from its own start: 3 × 200 ms > 400 ms.
        for (int i = 0; i < 3; ++i)
          (void)b->barrier();
        std::this_thread::sleep_for(1000ms); // past every deadline
        std::exit(value == 50 ? 0 : 3);
      },
      testing::ExitedWithCode(0), "");
}

TEST(CollectiveTimeout, TheDefaultIsTheTrainers) {
  EXPECT_EQ(collectiveTimeout().limit, absl::Seconds(1800));
}

TEST(CollectiveTimeout, SecondsAreReadAsUsersWriteThem) {
  absl::StatusOr<absl::Duration> thirty = parseTimeoutSeconds("30", "--t");
  ASSERT_TRUE(thirty.ok()) << thirty.status();
  EXPECT_EQ(*thirty, absl::Seconds(30));
  for (const char *bad : {"0", "-5", "abc", "1.5", "", "31622401", "9e99"}) {
    absl::StatusOr<absl::Duration> parsed =
        parseTimeoutSeconds(bad, "--ddp_timeout");
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_NE(parsed.status().message().find("--ddp_timeout takes"),
              std::string::npos)
        << parsed.status();
    EXPECT_NE(parsed.status().message().find(std::string("'") + bad + "'"),
              std::string::npos)
        << parsed.status();
  }
}

} // namespace
} // namespace kiln
