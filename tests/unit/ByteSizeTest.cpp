// Byte counts as the flags and KILN_DEVICE_MEMORY_LIMIT read them, and as
// messages print them; the on/off values every KILN_* switch takes.
#include "support/ByteSize.h"
#include "support/EnvironmentSwitch.h"

#include "runtime/DeviceMemoryMeter.h"

#include <gtest/gtest.h>

namespace kiln {
namespace {

TEST(EnvironmentSwitch, TakesTheUsualWordsInAnyCase) {
  for (const char *on : {"1", "true", "True", "YES", "on"})
    EXPECT_EQ(switchValue(on), true) << on;
  for (const char *off : {"0", "false", "FALSE", "no", "Off"})
    EXPECT_EQ(switchValue(off), false) << off;
  for (const char *junk : {"", "2", "tru", "enabled", " 1", "1 "})
    EXPECT_EQ(switchValue(junk), std::nullopt) << junk;
}

TEST(ByteSize, ReadsBinaryAndDecimalUnits) {
  EXPECT_EQ(parseByteSize("4000000"), 4000000u);
  EXPECT_EQ(parseByteSize("96B"), 96u);
  EXPECT_EQ(parseByteSize("1K"), 1024u);
  EXPECT_EQ(parseByteSize("1KiB"), 1024u);
  EXPECT_EQ(parseByteSize("1KB"), 1000u);
  EXPECT_EQ(parseByteSize("64MiB"), 64ull << 20);
  EXPECT_EQ(parseByteSize("2M"), 2ull << 20);
  EXPECT_EQ(parseByteSize("512MB"), 512000000u);
  EXPECT_EQ(parseByteSize("16GiB"), 16ull << 30);
  EXPECT_EQ(parseByteSize("1.5G"), 3ull << 29);
  EXPECT_EQ(parseByteSize("8GB"), 8000000000u);
  EXPECT_EQ(parseByteSize("2TiB"), 2ull << 40);
  EXPECT_EQ(parseByteSize("1e9"), 1000000000u);
  EXPECT_EQ(parseByteSize(".5KiB"), 512u);
  EXPECT_EQ(parseByteSize("0"), 0u);
}

TEST(ByteSize, RefusesWhatIsNotACount) {
  for (const char *bad :
       {"", "GiB", "-1", "-1GiB", " 1", "1 GiB", "1GiBx", "1gib", "1X", "inf",
        "nan", "0x10", "1e30", "16EiB", "20000000TB"})
    EXPECT_EQ(parseByteSize(bad), std::nullopt) << "'" << bad << "'";
}

TEST(ByteSize, FormatsForMessages) {
  EXPECT_EQ(formatByteSize(96), "96 B");
  EXPECT_EQ(formatByteSize(1536), "1.5 KiB");
  EXPECT_EQ(formatByteSize(512ull << 20), "512.0 MiB");
  EXPECT_EQ(formatByteSize(16ull << 30), "16.00 GiB");
}

TEST(DeviceMemoryMeter, CountsInUseAndPeak) {
  runtime::DeviceMemoryMeter meter(nullptr);
  ASSERT_TRUE(meter.reserve(100).ok());
  ASSERT_TRUE(meter.reserve(50).ok());
  meter.release(100);
  ASSERT_TRUE(meter.reserve(20).ok());
  runtime::DeviceMemoryMeter::Stats s = meter.stats();
  EXPECT_EQ(s.inUseBytes, 70u);
  EXPECT_EQ(s.peakBytes, 150u);
  EXPECT_EQ(s.limitBytes, 0u);
  meter.resetPeak();
  EXPECT_EQ(meter.stats().peakBytes, 70u);
  meter.release(1000); // more than in use: clamps, never wraps
  EXPECT_EQ(meter.stats().inUseBytes, 0u);
}

TEST(DeviceMemoryMeter, RefusesPastItsLimit) {
  runtime::DeviceMemoryMeter meter("1KiB");
  EXPECT_EQ(meter.stats().limitBytes, 1024u);
  ASSERT_TRUE(meter.reserve(1000).ok());
  absl::Status refused = meter.reserve(25);
  EXPECT_TRUE(absl::IsResourceExhausted(refused));
  EXPECT_NE(refused.message().find("KILN_DEVICE_MEMORY_LIMIT 1.0 KiB"),
            std::string::npos)
      << refused;
  EXPECT_NE(refused.message().find("1000 B in use, 25 B asked"),
            std::string::npos)
      << refused;
  EXPECT_TRUE(meter.reserve(24).ok()); // exactly at the limit fits
  EXPECT_EQ(meter.stats().inUseBytes, 1024u);
  EXPECT_EQ(meter.stats().refusals, 1);
  // A request larger than the limit itself (no wrap-around in the check).
  meter.release(1024);
  EXPECT_TRUE(absl::IsResourceExhausted(meter.reserve(~0ull)));
  meter.setLimit(0);
  EXPECT_TRUE(meter.reserve(1ull << 40).ok());
}

TEST(DeviceMemoryMeter, SaysWhenTheLimitIsNoByteCount) {
  for (const char *bad : {"lots", "0", "-5GiB"}) {
    runtime::DeviceMemoryMeter meter(bad);
    absl::Status s = meter.reserve(1);
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << bad;
    EXPECT_NE(s.message().find("KILN_DEVICE_MEMORY_LIMIT: expected a byte "
                               "count such as 16GiB, got '" +
                               std::string(bad) + "'"),
              std::string::npos)
        << s;
    meter.setLimit(0); // replacing the limit clears the problem
    EXPECT_TRUE(meter.reserve(1).ok());
  }
}

} // namespace
} // namespace kiln
