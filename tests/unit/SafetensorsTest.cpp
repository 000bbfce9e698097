// Tests of the safetensors reader and writer: every dtype round-trips
// bitwise; truncation, corrupt headers, flipped bits, bad offsets and
// overflowing shapes are rejected with messages that say what is wrong; a
// failing save leaves the previous file untouched.
#include "frontends/nn/Safetensors.h"

#include "FileTestSupport.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <signal.h>
#include <sstream>
#include <sys/resource.h>
#include <unistd.h>

namespace kiln::nn {
namespace {

HostTensor filled(DType dtype, std::vector<int64_t> shape) {
  HostTensor t(dtype, std::move(shape));
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.setDouble(i, dtype == DType::i1 ? i % 2
                   : isFloat(dtype)   ? 0.25 * i - 1.5
                                      : -3 * i + 7);
  return t;
}

std::vector<NamedTensor> everyDType() {
  std::vector<NamedTensor> ts;
  ts.push_back({"a.f32", filled(DType::f32, {2, 3})});
  ts.push_back({"b.f64", filled(DType::f64, {3})});
  ts.push_back({"c.f16", filled(DType::f16, {2, 2})});
  ts.push_back({"d.bf16", filled(DType::bf16, {5})});
  ts.push_back({"e.i64", filled(DType::i64, {2, 1})});
  ts.push_back({"f.i32", filled(DType::i32, {4})});
  ts.push_back({"g.bool", filled(DType::i1, {3})});
  ts.push_back({"h.scalar", filled(DType::f32, {})});
  ts.push_back({"i.empty", filled(DType::f32, {0, 4})});
  return ts;
}

SafetensorsReadOptions strict() {
  SafetensorsReadOptions o;
  o.requireChecksum = true;
  return o;
}

std::string serialized(const std::vector<NamedTensor> &ts,
                       std::map<std::string, std::string> meta = {}) {
  absl::StatusOr<std::string> bytes = serializeSafetensors(ts, meta);
  EXPECT_TRUE(bytes.ok()) << bytes.status();
  return bytes.ok() ? *bytes : std::string();
}

/// A file with a hand-written header (no checksum, as Hugging Face writes).
std::string rawFile(const std::string &header, size_t dataBytes) {
  uint64_t len = header.size();
  std::string out(reinterpret_cast<const char *>(&len), 8);
  return out + header + std::string(dataBytes, '\x01');
}

std::string errorOf(const std::string &bytes,
                    SafetensorsReadOptions options = {}) {
  absl::StatusOr<SafetensorsData> r = parseSafetensors(bytes, options, "f");
  return r.ok() ? "OK" : std::string(r.status().message());
}

std::string tempDir() { return kiln::testing::makeTempDir("kiln-safetensors"); }

std::string readFile(const std::string &path) {
  return kiln::testing::readWholeFile(path);
}

std::vector<std::string> listDir(const std::string &dir) {
  std::vector<std::string> names;
  if (DIR *d = ::opendir(dir.c_str())) {
    while (dirent *e = ::readdir(d))
      if (e->d_name[0] != '.')
        names.push_back(e->d_name);
    ::closedir(d);
  }
  return names;
}

TEST(Safetensors, RoundTripsEveryDTypeBitwise) {
  std::vector<NamedTensor> ts = everyDType();
  std::string bytes = serialized(ts, {{"step", "42"}, {"format", "pt"}});
  absl::StatusOr<SafetensorsData> back = parseSafetensors(bytes, strict());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(back->checksummed);
  ASSERT_EQ(back->tensors.size(), ts.size());
  for (const NamedTensor &t : ts) {
    const HostTensor *got = back->find(t.name);
    ASSERT_NE(got, nullptr) << t.name;
    EXPECT_TRUE(got->bitwiseEqual(t.tensor)) << t.name;
  }
  EXPECT_EQ(back->metadata.at("step"), "42");
  EXPECT_EQ(back->metadata.at("format"), "pt");
  EXPECT_EQ(back->metadata.count(kChecksumKey), 0u);
  // The data section starts 8-byte aligned, as the reference writer does.
  uint64_t headerLen;
  std::memcpy(&headerLen, bytes.data(), 8);
  EXPECT_EQ(headerLen % 8, 0u);
}

TEST(Safetensors, RoundTripsThroughAFile) {
  std::string dir = tempDir();
  std::string path = dir + "/model.safetensors";
  std::vector<NamedTensor> ts = everyDType();
  ASSERT_TRUE(saveSafetensors(path, ts, {{"k", "v"}}).ok());
  absl::StatusOr<SafetensorsData> back = loadSafetensors(path);
  ASSERT_TRUE(back.ok()) << back.status();
  for (const NamedTensor &t : ts)
    EXPECT_TRUE(back->find(t.name)->bitwiseEqual(t.tensor)) << t.name;
  EXPECT_EQ(listDir(dir), std::vector<std::string>{"model.safetensors"});
  ::unlink(path.c_str());
  ::rmdir(dir.c_str());
}

TEST(Safetensors, LoadsFilesWithoutChecksumUnlessRequired) {
  // As Hugging Face writes them: no kiln checksum, keys in any order.
  std::string hf =
      rawFile(R"({"__metadata__":{"format":"pt"},)"
              R"("w":{"dtype":"F32","shape":[2],"data_offsets":[4,12]},)"
              R"("b":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
              12);
  absl::StatusOr<SafetensorsData> r = parseSafetensors(hf);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->checksummed);
  EXPECT_EQ(r->tensors[0].name, "b");
  EXPECT_EQ(r->find("w")->shape(), (std::vector<int64_t>{2}));
  EXPECT_NE(errorOf(hf, strict()).find("no 'kiln.crc32'"), std::string::npos);
}

TEST(Safetensors, RejectsTruncatedFiles) {
  std::string bytes = serialized(everyDType());
  uint64_t headerLen;
  std::memcpy(&headerLen, bytes.data(), 8);
  for (size_t keep :
       {size_t(0), size_t(5), size_t(8), size_t(8 + headerLen / 2),
        size_t(8 + headerLen + 3), bytes.size() - 1}) {
    std::string err = errorOf(bytes.substr(0, keep));
    EXPECT_NE(err.find("truncated"), std::string::npos)
        << "kept " << keep << " bytes: " << err;
  }
}

TEST(Safetensors, RejectsAHeaderLengthBeyondTheFileOrTheCap) {
  std::string bytes = serialized(everyDType());
  uint64_t huge = bytes.size();
  std::memcpy(bytes.data(), &huge, 8);
  EXPECT_NE(errorOf(bytes).find("exceeds the file size"), std::string::npos);
  huge = ~0ull;
  std::memcpy(bytes.data(), &huge, 8);
  EXPECT_NE(errorOf(bytes).find("exceeds the limit"), std::string::npos);
}

TEST(Safetensors, DetectsEveryFlippedBitInTheHeader) {
  std::vector<NamedTensor> ts;
  ts.push_back({"w", filled(DType::f32, {2, 3})});
  ts.push_back({"mask", filled(DType::i1, {2})});
  std::string bytes = serialized(ts, {{"step", "12"}});
  uint64_t headerLen;
  std::memcpy(&headerLen, bytes.data(), 8);
  for (uint64_t byte = 8; byte < 8 + headerLen; ++byte)
    for (int bit = 0; bit < 8; ++bit) {
      std::string bad = bytes;
      bad[byte] ^= static_cast<char>(1 << bit);
      EXPECT_NE(errorOf(bad, strict()), "OK")
          << "flip of bit " << bit << " of header byte " << byte << " ('"
          << bytes[byte] << "') was not detected";
    }
}

TEST(Safetensors, DetectsEveryFlippedBitInTheDataByChecksum) {
  std::vector<NamedTensor> ts;
  ts.push_back({"w", filled(DType::f32, {2, 3})});
  ts.push_back({"i", filled(DType::i64, {2})});
  std::string bytes = serialized(ts);
  uint64_t headerLen;
  std::memcpy(&headerLen, bytes.data(), 8);
  for (uint64_t byte = 8 + headerLen; byte < bytes.size(); ++byte)
    for (int bit = 0; bit < 8; ++bit) {
      std::string bad = bytes;
      bad[byte] ^= static_cast<char>(1 << bit);
      std::string err = errorOf(bad);
      EXPECT_NE(err.find("checksum mismatch"), std::string::npos)
          << "byte " << byte << " bit " << bit << ": " << err;
    }
}

TEST(Safetensors, RejectsOverlappingAndNonContiguousOffsets) {
  std::string overlap =
      rawFile(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
              R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
              12);
  EXPECT_NE(errorOf(overlap).find("ranges overlap"), std::string::npos)
      << errorOf(overlap);
  std::string gap =
      rawFile(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
              R"("b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
              12);
  EXPECT_NE(errorOf(gap).find("gap between ranges"), std::string::npos);
  std::string notFromZero =
      rawFile(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", 8);
  EXPECT_NE(errorOf(notFromZero).find("starts at 0"), std::string::npos);
  std::string trailing =
      rawFile(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", 8);
  EXPECT_NE(errorOf(trailing).find("data section holds 8"), std::string::npos);
  std::string backwards =
      rawFile(R"({"a":{"dtype":"F32","shape":[0],"data_offsets":[4,0]}})", 4);
  EXPECT_NE(errorOf(backwards).find("end before they begin"),
            std::string::npos);
}

TEST(Safetensors, RejectsShapesThatOverflowOrMismatchTheirBytes) {
  std::string overflow =
      rawFile(R"({"a":{"dtype":"F32","shape":[4611686018427387904,4],)"
              R"("data_offsets":[0,0]}})",
              0);
  EXPECT_NE(errorOf(overflow).find("overflows"), std::string::npos)
      << errorOf(overflow);
  std::string mismatch = rawFile(
      R"({"a":{"dtype":"F64","shape":[2,3],"data_offsets":[0,24]}})", 24);
  EXPECT_NE(errorOf(mismatch).find("hold 24 bytes but shape [2, 3] of F64 "
                                   "needs 48"),
            std::string::npos)
      << errorOf(mismatch);
  std::string negative =
      rawFile(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", 4);
  EXPECT_NE(errorOf(negative).find("non-negative"), std::string::npos);
}

TEST(Safetensors, RejectsMalformedHeaders) {
  auto err = [](const std::string &header) {
    return errorOf(rawFile(header, 4));
  };
  EXPECT_NE(err("{not json").find("not valid JSON"), std::string::npos);
  EXPECT_NE(err("[1, 2]").find("not a JSON object"), std::string::npos);
  EXPECT_NE(err(R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}})")
                .find("unsupported dtype 'U8'"),
            std::string::npos);
  EXPECT_NE(err(R"({"a":{"shape":[1],"data_offsets":[0,4]}})")
                .find("missing string field 'dtype'"),
            std::string::npos);
  EXPECT_NE(
      err(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"x":1}})")
          .find("unknown field 'x'"),
      std::string::npos);
  EXPECT_NE(err(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0]}})")
                .find("[begin, end]"),
            std::string::npos);
  EXPECT_NE(err(R"({"__metadata__":{"step":3},)"
                R"("a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})")
                .find("metadata 'step' is not a string"),
            std::string::npos);
  EXPECT_NE(err(R"({"a":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}})")
                .find("tensor 'a': shape must hold non-negative integers"),
            std::string::npos);
  // Each entry's errors name its tensor (they named '' once the name had
  // been moved into the entry).
  EXPECT_NE(err(R"({"w":{"dtype":"I7","shape":[4],"data_offsets":[0,4]}})")
                .find("tensor 'w': unsupported dtype 'I7'"),
            std::string::npos);
  // 60,000 nested arrays crashed the JSON parser (its stack); a header
  // may be up to 100 MB.
  EXPECT_NE(
      err("{\"a\": " + std::string(60000, '[') + std::string(60000, ']') + "}")
          .find("not valid JSON: nested deeper than 512"),
      std::string::npos);
}

TEST(Safetensors, RejectsDuplicateAndReservedNamesWhenWriting) {
  std::vector<NamedTensor> dup;
  dup.push_back({"a", filled(DType::f32, {1})});
  dup.push_back({"a", filled(DType::f32, {1})});
  EXPECT_FALSE(serializeSafetensors(dup, {}).ok());
  std::vector<NamedTensor> reserved;
  reserved.push_back({"__metadata__", filled(DType::f32, {1})});
  EXPECT_FALSE(serializeSafetensors(reserved, {}).ok());
  EXPECT_FALSE(serializeSafetensors({}, {{kChecksumKey, "0"}}).ok());
}

TEST(Safetensors, AFailedSaveLeavesThePreviousFileUntouched) {
  std::string dir = tempDir();
  std::string path = dir + "/ckpt.safetensors";
  std::vector<NamedTensor> small;
  small.push_back({"w", filled(DType::f32, {4})});
  ASSERT_TRUE(saveSafetensors(path, small, {}).ok());
  std::string before = readFile(path);

  // Make the write itself fail midway: a file-size limit below the new
  // file's size (works as root, unlike a read-only directory).
  std::vector<NamedTensor> big;
  big.push_back({"w", filled(DType::f32, {1 << 16})});
  struct rlimit old;
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
  struct rlimit limit = old;
  limit.rlim_cur = 4096;
  sighandler_t oldHandler = ::signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limit), 0);
  absl::Status status = saveSafetensors(path, big, {});
  ::setrlimit(RLIMIT_FSIZE, &old);
  ::signal(SIGXFSZ, oldHandler);

  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("write failed"), std::string::npos) << status;
  EXPECT_EQ(readFile(path), before);
  EXPECT_EQ(listDir(dir), std::vector<std::string>{"ckpt.safetensors"});
  EXPECT_TRUE(loadSafetensors(path, strict()).ok());

  // A directory that does not exist fails cleanly too.
  absl::Status missing =
      saveSafetensors(dir + "/no/such/dir/x.safetensors", small, {});
  EXPECT_NE(missing.message().find("cannot create a temporary file"),
            std::string::npos)
      << missing;
  ::unlink(path.c_str());
  ::rmdir(dir.c_str());
}

TEST(Safetensors, ReportsAMissingFile) {
  absl::StatusOr<SafetensorsData> r = loadSafetensors("/nonexistent/x");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("cannot open '/nonexistent/x'"),
            std::string::npos);
}

} // namespace
} // namespace kiln::nn
