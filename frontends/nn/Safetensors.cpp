// safetensors reading, writing and validation; see Safetensors.h. Both the
// in-memory parser and the file loader run one validator over a byte source,
// so the checks that tests exercise on buffers are the ones files get.
#include "frontends/nn/Safetensors.h"
#include "frontends/nn/JsonText.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "support/JsonNesting.h"
#include "llvm/Support/CRC.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "safetensors data is little-endian; host tensors are native");

namespace kiln::nn {
namespace {

/// One header entry, as validated.
struct Entry {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;
};

/// Random access to the bytes of a file or a buffer.
struct ByteSource {
  std::string what;
  uint64_t size = 0;
  std::function<absl::Status(uint64_t offset, uint64_t n, void *dst)> read;
};

absl::Status invalid(const std::string &what, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(what, ": ", message));
}

std::string shapeString(const std::vector<int64_t> &shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

/// The bytes `shape` of `dtype` needs, or an error on a negative dimension
/// or an overflow of 64 bits.
absl::StatusOr<uint64_t> byteSizeOf(DType dtype,
                                    const std::vector<int64_t> &shape) {
  uint64_t n = byteWidth(dtype);
  for (int64_t d : shape) {
    if (d < 0)
      return absl::InvalidArgumentError(
          absl::StrCat("shape ", shapeString(shape), " has a negative size"));
    if (__builtin_mul_overflow(n, static_cast<uint64_t>(d), &n))
      return absl::InvalidArgumentError(absl::StrCat(
          "shape ", shapeString(shape), " overflows 64-bit byte sizes"));
  }
  return n;
}

/// What the checksum covers besides the data: every entry's meaning and the
/// metadata, length-prefixed so that no two headers share a canonical form.
std::string canonicalHeader(const std::vector<Entry> &entries,
                            const std::map<std::string, std::string> &meta) {
  std::string out;
  for (const Entry &e : entries)
    absl::StrAppend(&out, e.name.size(), ":", e.name, "|",
                    std::string(safetensorsDTypeName(e.dtype)), "|",
                    shapeString(e.shape), "|", e.begin, "-", e.end, "\n");
  for (const auto &[key, value] : meta)
    if (key != kChecksumKey)
      absl::StrAppend(&out, key.size(), ":", key, "=", value.size(), ":", value,
                      "\n");
  return out;
}

uint32_t crcUpdate(uint32_t crc, const void *data, uint64_t n) {
  return llvm::crc32(
      crc, llvm::ArrayRef<uint8_t>(static_cast<const uint8_t *>(data), n));
}

std::string hex32(uint32_t value) {
  char buf[9];
  std::snprintf(buf, sizeof buf, "%08x", value);
  return buf;
}

//===--- Header parsing ---------------------------------------------------===//

absl::StatusOr<uint64_t> parseUInt(const llvm::json::Value &v,
                                   absl::string_view field) {
  if (v.kind() == llvm::json::Value::Number)
    if (std::optional<int64_t> i = v.getAsInteger(); i && *i >= 0)
      return static_cast<uint64_t>(*i);
  return absl::InvalidArgumentError(
      absl::StrCat(field, " must hold non-negative integers"));
}

/// One tensor's JSON object → an Entry (dtype, shape and offsets checked).
absl::StatusOr<Entry> parseEntry(std::string name,
                                 const llvm::json::Value &value) {
  auto fail = [&](absl::string_view message) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor '", name, "': ", message));
  };
  const llvm::json::Object *obj = value.getAsObject();
  if (!obj)
    return fail("entry is not a JSON object");
  for (const auto &kv : *obj) {
    llvm::StringRef key = kv.first;
    if (key != "dtype" && key != "shape" && key != "data_offsets")
      return fail(absl::StrCat("unknown field '", key.str(), "'"));
  }
  Entry e;
  e.name = name; // a copy: fail() below still names the tensor
  std::optional<llvm::StringRef> dtype = obj->getString("dtype");
  if (!dtype)
    return fail("missing string field 'dtype'");
  absl::StatusOr<DType> parsed = parseSafetensorsDType(*dtype);
  if (!parsed.ok())
    return fail(parsed.status().message());
  e.dtype = *parsed;

  const llvm::json::Array *shape = obj->getArray("shape");
  if (!shape)
    return fail("missing array field 'shape'");
  for (const llvm::json::Value &d : *shape) {
    absl::StatusOr<uint64_t> dim = parseUInt(d, "shape");
    if (!dim.ok() || *dim > static_cast<uint64_t>(INT64_MAX))
      return fail("shape must hold non-negative integers");
    e.shape.push_back(static_cast<int64_t>(*dim));
  }

  const llvm::json::Array *offsets = obj->getArray("data_offsets");
  if (!offsets || offsets->size() != 2)
    return fail("'data_offsets' must be an array [begin, end]");
  absl::StatusOr<uint64_t> begin = parseUInt((*offsets)[0], "data_offsets");
  absl::StatusOr<uint64_t> end = parseUInt((*offsets)[1], "data_offsets");
  if (!begin.ok() || !end.ok())
    return fail("data_offsets must hold non-negative integers");
  if (*begin > *end)
    return fail(absl::StrCat("data_offsets [", *begin, ", ", *end,
                             "] end before they begin"));
  e.begin = *begin;
  e.end = *end;

  absl::StatusOr<uint64_t> bytes = byteSizeOf(e.dtype, e.shape);
  if (!bytes.ok())
    return fail(bytes.status().message());
  if (*bytes != e.end - e.begin)
    return fail(absl::StrCat("data_offsets [", e.begin, ", ", e.end, "] hold ",
                             e.end - e.begin, " bytes but shape ",
                             shapeString(e.shape), " of ", dtype->str(),
                             " needs ", *bytes));
  return e;
}

/// Sorted entries must tile [0, dataSize) exactly: no gap, no overlap.
absl::Status checkTiling(std::vector<Entry> &entries, uint64_t dataSize) {
  std::sort(entries.begin(), entries.end(), [](const Entry &a, const Entry &b) {
    return std::tie(a.begin, a.end, a.name) < std::tie(b.begin, b.end, b.name);
  });
  uint64_t cursor = 0;
  const Entry *previous = nullptr;
  for (const Entry &e : entries) {
    if (e.begin != cursor) {
      std::string after =
          previous
              ? absl::StrCat("tensor '", previous->name, "' ends at ", cursor)
              : std::string("the data section starts at 0");
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor '", e.name, "' begins at ", e.begin, " but ", after,
          e.begin < cursor ? " (ranges overlap)" : " (gap between ranges)"));
    }
    cursor = e.end;
    previous = &e;
  }
  if (cursor != dataSize)
    return absl::InvalidArgumentError(
        absl::StrCat("tensors cover ", cursor,
                     " bytes but the data section "
                     "holds ",
                     dataSize, " (truncated or trailing bytes?)"));
  return absl::OkStatus();
}

/// The shared validator: header length, JSON, entries, tiling, data,
/// checksum, in that order, each failure naming `source.what`.
absl::StatusOr<SafetensorsData> readFrom(const ByteSource &source,
                                         const SafetensorsReadOptions &opts) {
  const std::string &what = source.what;
  if (source.size < 8)
    return invalid(what, absl::StrCat("file is ", source.size,
                                      " bytes, shorter than the 8-byte "
                                      "header length (truncated?)"));
  uint64_t headerLen = 0;
  if (absl::Status s = source.read(0, 8, &headerLen); !s.ok())
    return s;
  if (headerLen > opts.maxHeaderBytes)
    return invalid(what, absl::StrCat("header length ", headerLen,
                                      " exceeds the limit of ",
                                      opts.maxHeaderBytes, " bytes"));
  if (headerLen > source.size - 8)
    return invalid(what, absl::StrCat("header length ", headerLen,
                                      " exceeds the file size ", source.size,
                                      " (truncated?)"));
  std::string header(headerLen, '\0');
  if (absl::Status s = source.read(8, headerLen, header.data()); !s.ok())
    return s;

  if (std::optional<std::string> deep = jsonNestedTooDeeply(header))
    return invalid(what, "header is not valid JSON: " + *deep);
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(header);
  if (!json)
    return invalid(what, absl::StrCat("header is not valid JSON: ",
                                      llvm::toString(json.takeError())));
  const llvm::json::Object *root = json->getAsObject();
  if (!root)
    return invalid(what, "header is not a JSON object");

  SafetensorsData out;
  std::vector<Entry> entries;
  for (const auto &kv : *root) {
    std::string name = kv.first.str();
    if (name == "__metadata__") {
      const llvm::json::Object *meta = kv.second.getAsObject();
      if (!meta)
        return invalid(what, "'__metadata__' is not a JSON object");
      for (const auto &m : *meta) {
        std::optional<llvm::StringRef> value = m.second.getAsString();
        if (!value)
          return invalid(what, absl::StrCat("metadata '", m.first.str(),
                                            "' is not a string"));
        out.metadata[m.first.str()] = value->str();
      }
      continue;
    }
    absl::StatusOr<Entry> e = parseEntry(std::move(name), kv.second);
    if (!e.ok())
      return invalid(what, e.status().message());
    entries.push_back(std::move(*e));
  }
  const uint64_t dataStart = 8 + headerLen;
  if (absl::Status s = checkTiling(entries, source.size - dataStart); !s.ok())
    return invalid(what, s.message());

  auto checksum = out.metadata.find(kChecksumKey);
  const bool haveChecksum = checksum != out.metadata.end();
  if (!haveChecksum && opts.requireChecksum)
    return invalid(
        what, absl::StrCat("no '", kChecksumKey, "' checksum in the metadata"));
  uint32_t crc = 0;
  if (haveChecksum) {
    std::string canon = canonicalHeader(entries, out.metadata);
    crc = crcUpdate(0, canon.data(), canon.size());
  }

  for (Entry &e : entries) {
    absl::StatusOr<HostTensor> t = HostTensor::create(e.dtype, e.shape);
    if (!t.ok())
      return invalid(
          what, absl::StrCat("tensor '", e.name, "': ", t.status().message()));
    if (absl::Status s =
            source.read(dataStart + e.begin, e.end - e.begin, t->data());
        !s.ok())
      return s;
    if (haveChecksum)
      crc = crcUpdate(crc, t->data(), e.end - e.begin);
    if (e.dtype == DType::i1)
      for (uint64_t i = 0; i < e.end - e.begin; ++i)
        if (static_cast<uint8_t>(t->data()[i]) > 1)
          return invalid(what, absl::StrCat("tensor '", e.name, "': BOOL byte ",
                                            i, " is not 0 or 1"));
    out.tensors.push_back({std::move(e.name), std::move(*t)});
  }
  if (haveChecksum) {
    if (checksum->second != hex32(crc))
      return absl::DataLossError(
          absl::StrCat(what, ": checksum mismatch (stored ", checksum->second,
                       ", computed ", hex32(crc), "): the file is corrupt"));
    out.metadata.erase(checksum);
    out.checksummed = true;
  }
  return out;
}

/// Writes all of `n` bytes, retrying short writes and EINTR.
absl::Status writeAll(int fd, const void *data, uint64_t n) {
  const char *p = static_cast<const char *>(data);
  while (n > 0) {
    ssize_t w = ::write(fd, p, std::min<uint64_t>(n, 1ull << 30));
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return absl::InternalError(
          absl::StrCat("write failed: ", std::strerror(errno)));
    p += w;
    n -= static_cast<uint64_t>(w);
  }
  return absl::OkStatus();
}

/// The header bytes (length prefix included) for `tensors`, with the
/// checksum in the metadata; the data follows in the same order.
absl::StatusOr<std::string>
buildHeader(const std::vector<NamedTensorRef> &tensors,
            std::map<std::string, std::string> metadata) {
  if (metadata.count(kChecksumKey))
    return absl::InvalidArgumentError(
        absl::StrCat("metadata key '", kChecksumKey, "' is reserved"));
  std::vector<Entry> entries;
  uint64_t offset = 0;
  for (const NamedTensorRef &t : tensors) {
    if (t.name.empty() || t.name == "__metadata__")
      return absl::InvalidArgumentError(
          absl::StrCat("invalid tensor name '", t.name, "'"));
    entries.push_back({t.name, t.tensor->dtype(), t.tensor->shape(), offset,
                       offset + t.tensor->byteSize()});
    offset += t.tensor->byteSize();
  }
  std::vector<std::string> names;
  for (const Entry &e : entries)
    names.push_back(e.name);
  std::sort(names.begin(), names.end());
  if (auto dup = std::adjacent_find(names.begin(), names.end());
      dup != names.end())
    return absl::InvalidArgumentError(
        absl::StrCat("duplicate tensor name '", *dup, "'"));

  std::string canon = canonicalHeader(entries, metadata);
  uint32_t crc = crcUpdate(0, canon.data(), canon.size());
  for (const NamedTensorRef &t : tensors)
    crc = crcUpdate(crc, t.tensor->data(), t.tensor->byteSize());
  metadata[kChecksumKey] = hex32(crc);

  llvm::json::Object root;
  llvm::json::Object meta;
  for (const auto &[key, value] : metadata)
    meta[key] = value;
  root["__metadata__"] = std::move(meta);
  for (const Entry &e : entries) {
    llvm::json::Array shape;
    for (int64_t d : e.shape)
      shape.push_back(d);
    root[e.name] = llvm::json::Object{
        {"dtype", std::string(safetensorsDTypeName(e.dtype))},
        {"shape", std::move(shape)},
        {"data_offsets", llvm::json::Array{static_cast<int64_t>(e.begin),
                                           static_cast<int64_t>(e.end)}}};
  }
  std::string json;
  llvm::raw_string_ostream os(json);
  os << llvm::json::Value(std::move(root));
  os.flush();
  // Pad with spaces so the data section starts 8-byte aligned, as the
  // reference implementation does.
  json.append((8 - json.size() % 8) % 8, ' ');
  uint64_t len = json.size();
  std::string out(reinterpret_cast<const char *>(&len), 8);
  out += json;
  return out;
}

std::vector<NamedTensorRef> refsTo(const std::vector<NamedTensor> &tensors) {
  std::vector<NamedTensorRef> refs;
  refs.reserve(tensors.size());
  for (const NamedTensor &t : tensors)
    refs.push_back({t.name, &t.tensor});
  return refs;
}

} // namespace

const HostTensor *SafetensorsData::find(std::string_view name) const {
  for (const NamedTensor &t : tensors)
    if (t.name == name)
      return &t.tensor;
  return nullptr;
}

std::string_view safetensorsDTypeName(DType dtype) {
  switch (dtype) {
  case DType::f32:
    return "F32";
  case DType::f64:
    return "F64";
  case DType::f16:
    return "F16";
  case DType::bf16:
    return "BF16";
  case DType::i1:
    return "BOOL";
  case DType::i32:
    return "I32";
  case DType::i64:
    return "I64";
  }
  return "?";
}

absl::StatusOr<DType> parseSafetensorsDType(std::string_view name) {
  for (DType d : {DType::f32, DType::f64, DType::f16, DType::bf16, DType::i1,
                  DType::i32, DType::i64})
    if (safetensorsDTypeName(d) == name)
      return d;
  return absl::InvalidArgumentError(
      absl::StrCat("unsupported dtype '", std::string(name),
                   "' (expected F32, F64, F16, BF16, BOOL, I32 or I64)"));
}

absl::StatusOr<std::string>
serializeSafetensors(const std::vector<NamedTensor> &tensors,
                     const std::map<std::string, std::string> &metadata) {
  absl::StatusOr<std::string> out = buildHeader(refsTo(tensors), metadata);
  if (!out.ok())
    return out.status();
  for (const NamedTensor &t : tensors)
    out->append(reinterpret_cast<const char *>(t.tensor.data()),
                t.tensor.byteSize());
  return out;
}

absl::StatusOr<SafetensorsData>
parseSafetensors(std::string_view bytes, const SafetensorsReadOptions &options,
                 std::string_view what) {
  ByteSource source;
  source.what = std::string(what);
  source.size = bytes.size();
  source.read = [bytes](uint64_t offset, uint64_t n, void *dst) {
    std::memcpy(dst, bytes.data() + offset, n);
    return absl::OkStatus();
  };
  return readFrom(source, options);
}

absl::Status
writeFileAtomically(const std::string &path,
                    const std::function<absl::Status(int fd)> &write) {
  std::string dir = ".";
  if (size_t slash = path.rfind('/'); slash != std::string::npos)
    dir = slash == 0 ? "/" : path.substr(0, slash);
  std::string tmp = path + ".tmp-XXXXXX";
  int fd = ::mkstemp(tmp.data());
  if (fd < 0)
    return absl::PermissionDeniedError(
        absl::StrCat("cannot create a temporary file next to '", path,
                     "': ", std::strerror(errno)));
  absl::Status status = write(fd);
  if (status.ok() && ::fchmod(fd, 0644) != 0)
    status = absl::InternalError(absl::StrCat("chmod: ", std::strerror(errno)));
  if (status.ok() && ::fsync(fd) != 0)
    status = absl::InternalError(absl::StrCat("fsync: ", std::strerror(errno)));
  if (::close(fd) != 0 && status.ok())
    status = absl::InternalError(absl::StrCat("close: ", std::strerror(errno)));
  if (status.ok() && ::rename(tmp.c_str(), path.c_str()) != 0)
    status = absl::InternalError(
        absl::StrCat("rename to '", path, "': ", std::strerror(errno)));
  if (!status.ok()) {
    ::unlink(tmp.c_str());
    return absl::Status(
        status.code(), absl::StrCat("saving '", path, "': ", status.message()));
  }
  // The rename is durable only once the directory entry is on disk.
  int dirFd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (dirFd < 0)
    return absl::InternalError(absl::StrCat("cannot open directory '", dir,
                                            "': ", std::strerror(errno)));
  int rc = ::fsync(dirFd);
  ::close(dirFd);
  if (rc != 0)
    return absl::InternalError(
        absl::StrCat("fsync of directory '", dir, "': ", std::strerror(errno)));
  return absl::OkStatus();
}

absl::Status
saveSafetensors(const std::string &path,
                const std::vector<NamedTensor> &tensors,
                const std::map<std::string, std::string> &metadata) {
  return saveSafetensors(path, refsTo(tensors), metadata);
}

absl::Status
saveSafetensors(const std::string &path,
                const std::vector<NamedTensorRef> &tensors,
                const std::map<std::string, std::string> &metadata) {
  absl::StatusOr<std::string> header = buildHeader(tensors, metadata);
  if (!header.ok())
    return absl::Status(
        header.status().code(),
        absl::StrCat("saving '", path, "': ", header.status().message()));
  return writeFileAtomically(path, [&](int fd) -> absl::Status {
    if (absl::Status s = writeAll(fd, header->data(), header->size()); !s.ok())
      return s;
    for (const NamedTensorRef &t : tensors)
      if (absl::Status s = writeAll(fd, t.tensor->data(), t.tensor->byteSize());
          !s.ok())
        return s;
    return absl::OkStatus();
  });
}

absl::StatusOr<SafetensorsData>
loadSafetensors(const std::string &path,
                const SafetensorsReadOptions &options) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return absl::NotFoundError(
        absl::StrCat("cannot open '", path, "': ", std::strerror(errno)));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return absl::InternalError(
        absl::StrCat("cannot stat '", path, "': ", std::strerror(errno)));
  }
  ByteSource source;
  source.what = path;
  source.size = static_cast<uint64_t>(st.st_size);
  source.read = [fd, &path](uint64_t offset, uint64_t n,
                            void *dst) -> absl::Status {
    char *p = static_cast<char *>(dst);
    while (n > 0) {
      ssize_t r = ::pread(fd, p, std::min<uint64_t>(n, 1ull << 30),
                          static_cast<off_t>(offset));
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0)
        return absl::DataLossError(absl::StrCat(
            "reading '", path, "' at byte ", offset, ": ",
            r == 0 ? "unexpected end of file" : std::strerror(errno)));
      p += r;
      offset += static_cast<uint64_t>(r);
      n -= static_cast<uint64_t>(r);
    }
    return absl::OkStatus();
  };
  absl::StatusOr<SafetensorsData> out = readFrom(source, options);
  ::close(fd);
  return out;
}

absl::Status writeTextAtomically(const std::string &path,
                                 std::string_view text) {
  return writeFileAtomically(path, [&](int fd) {
    return writeAll(fd, text.data(), text.size());
  });
}

absl::StatusOr<std::map<std::string, std::string>>
parseSafetensorsIndex(std::string_view text, std::string_view what) {
  auto fail = [&](const std::string &message) {
    return invalid(std::string(what), message);
  };
  absl::StatusOr<llvm::json::Value> parsed = parseJsonText(text);
  if (!parsed.ok())
    return fail(std::string(parsed.status().message()));
  const llvm::json::Object *root = parsed->getAsObject();
  const llvm::json::Object *map =
      root ? root->getObject("weight_map") : nullptr;
  if (!map)
    return fail("no \"weight_map\" object");
  std::map<std::string, std::string> shards;
  for (const auto &[name, file] : *map) {
    std::optional<llvm::StringRef> shard = file.getAsString();
    if (!shard || shard->empty() || *shard == "." || *shard == ".." ||
        shard->contains('/') || shard->contains('\0'))
      return fail("the file of " + name.str() +
                  " is not a file name in the folder");
    shards[name.str()] = shard->str();
  }
  return shards;
}

} // namespace kiln::nn
