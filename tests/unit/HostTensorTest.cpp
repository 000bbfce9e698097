// Host tensors: element access, dtype rounding and the half/bfloat16
// conversions the evaluator relies on.
#include "support/HostTensor.h"

#include <cmath>
#include <limits>
#include <stdexcept>

#include <gtest/gtest.h>

namespace kiln {
namespace {

TEST(HostTensor, IsZeroFilledAndAligned) {
  HostTensor t(DType::f32, {3, 5});
  EXPECT_EQ(t.numElements(), 15);
  EXPECT_EQ(t.byteSize(), 60u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data()) % 64, 0u);
  for (int64_t i = 0; i < 15; ++i)
    EXPECT_EQ(t.getDouble(i), 0.0);
  EXPECT_EQ(t.typeString(), "tensor<3x5xf32>");
}

TEST(HostTensor, RoundsToItsDType) {
  HostTensor f16(DType::f16, {1});
  f16.setDouble(0, 1.0 + 1.0 / 4096); // below half an f16 ulp above 1
  EXPECT_EQ(f16.getDouble(0), 1.0);
  f16.setDouble(0, 65520.0); // rounds past the largest f16
  EXPECT_TRUE(std::isinf(f16.getDouble(0)));

  HostTensor bf16(DType::bf16, {1});
  bf16.setDouble(0, 1.0 + 1.0 / 128); // exactly one bf16 ulp
  EXPECT_EQ(bf16.getDouble(0), 1.0 + 1.0 / 128);
  bf16.setDouble(0, 1.0 + 1.0 / 256); // a tie rounds to even: 1.0
  EXPECT_EQ(bf16.getDouble(0), 1.0);
  bf16.setDouble(0, 1.0 + 1.0 / 256 + 1e-12); // just above the tie rounds up
  EXPECT_EQ(bf16.getDouble(0), 1.0 + 1.0 / 128);
}

TEST(HostTensor, IntegersSaturateAndTruncate) {
  HostTensor t(DType::i32, {4});
  t.setDouble(0, -2.7);
  t.setDouble(1, 1e20);
  t.setDouble(2, std::numeric_limits<double>::quiet_NaN());
  t.setInt(3, -5);
  EXPECT_EQ(t.getInt(0), -2);
  EXPECT_EQ(t.getInt(1), std::numeric_limits<int32_t>::max());
  EXPECT_EQ(t.getInt(2), 0);
  EXPECT_EQ(t.getDouble(3), -5.0);
}

TEST(HostTensor, CreateRefusesHugeShapes) {
  EXPECT_FALSE(HostTensor::create(DType::f32, {int64_t{1} << 62}).ok());
  EXPECT_FALSE(HostTensor::create(DType::f32, {-1}).ok());
  EXPECT_TRUE(HostTensor::create(DType::i1, {0, 7}).ok());
}

TEST(HostTensor, CopiesAreDeepAndBitwiseEqual) {
  HostTensor a(DType::i64, {2});
  a.setInt(1, 42);
  HostTensor b = a;
  EXPECT_TRUE(a.bitwiseEqual(b));
  b.setInt(1, 43);
  EXPECT_FALSE(a.bitwiseEqual(b));
  EXPECT_EQ(a.getInt(1), 42);
}

/// Deferred contents that count their fetches and fill a pattern (or fail).
class CountingContents : public DeferredContents {
public:
  explicit CountingContents(bool fail = false) : fail_(fail) {}
  absl::Status fetch(std::byte *dst, size_t bytes) override {
    ++fetches;
    if (fail_)
      return absl::UnavailableError("the device is gone");
    for (size_t i = 0; i < bytes; ++i)
      dst[i] = std::byte(i & 0x7f);
    return absl::OkStatus();
  }
  int fetches = 0;

private:
  bool fail_;
};

TEST(HostTensor, DeferredContentsAreFetchedOnceOnFirstRead) {
  auto contents = std::make_shared<CountingContents>();
  HostTensor t = HostTensor::deferred(DType::i32, {2, 3}, contents);
  EXPECT_EQ(t.numElements(), 6);
  EXPECT_EQ(t.byteSize(), 24u);
  EXPECT_EQ(t.deferredContents(), contents);
  EXPECT_EQ(contents->fetches, 0);
  // Bytes 0..3 little-endian: 0x03020100.
  EXPECT_EQ(t.getInt(0), 0x03020100);
  EXPECT_EQ(contents->fetches, 1);
  EXPECT_EQ(t.deferredContents(), nullptr);
  EXPECT_EQ(t.getInt(1), 0x07060504);
  EXPECT_EQ(contents->fetches, 1);
}

TEST(HostTensor, CopyingADeferredTensorFetchesItOnce) {
  auto contents = std::make_shared<CountingContents>();
  HostTensor t = HostTensor::deferred(DType::i64, {4}, contents);
  HostTensor copy = t;
  EXPECT_EQ(contents->fetches, 1);
  EXPECT_TRUE(copy.bitwiseEqual(t));
  HostTensor moved = std::move(t);
  EXPECT_EQ(contents->fetches, 1);
  EXPECT_TRUE(moved.bitwiseEqual(copy));
}

TEST(HostTensor, AFailedFetchThrowsWithTheDevicesMessage) {
  HostTensor t = HostTensor::deferred(
      DType::f32, {8}, std::make_shared<CountingContents>(/*fail=*/true));
  try {
    (void)t.getDouble(0);
    FAIL() << "expected a throw";
  } catch (const std::runtime_error &e) {
    EXPECT_NE(std::string(e.what()).find("the device is gone"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("tensor<8xf32>"), std::string::npos);
  }
}

} // namespace
} // namespace kiln
