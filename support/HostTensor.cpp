// Element types, half/bfloat16 rounding and the host tensor; see HostTensor.h.
#include "support/HostTensor.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <sys/mman.h>
#include <unistd.h>
#include <unordered_map>
#include <stdexcept>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace kiln {

size_t byteWidth(DType dtype) {
  switch (dtype) {
  case DType::f32: return 4;
  case DType::f64: return 8;
  case DType::f16: return 2;
  case DType::bf16: return 2;
  case DType::i1: return 1;
  case DType::i32: return 4;
  case DType::i64: return 8;
  }
  return 0;
}

bool isFloat(DType dtype) {
  return dtype == DType::f32 || dtype == DType::f64 || dtype == DType::f16 ||
         dtype == DType::bf16;
}

std::string_view dtypeName(DType dtype) {
  switch (dtype) {
  case DType::f32: return "f32";
  case DType::f64: return "f64";
  case DType::f16: return "f16";
  case DType::bf16: return "bf16";
  case DType::i1: return "i1";
  case DType::i32: return "i32";
  case DType::i64: return "i64";
  }
  return "?";
}

absl::StatusOr<DType> parseDType(std::string_view name) {
  for (DType d : {DType::f32, DType::f64, DType::f16, DType::bf16, DType::i1, DType::i32,
                  DType::i64})
    if (dtypeName(d) == name)
      return d;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown element type '", std::string(name), "'"));
}

// _Float16 is the compiler's IEEE binary16; conversions from double round
// once, to nearest even.
uint16_t doubleToHalf(double value) {
  _Float16 h = static_cast<_Float16>(value);
  uint16_t bits;
  std::memcpy(&bits, &h, 2);
  return bits;
}

double halfToDouble(uint16_t bits) {
  _Float16 h;
  std::memcpy(&h, &bits, 2);
  return static_cast<double>(h);
}

uint16_t doubleToBFloat16(double value) {
  if (std::isnan(value))
    return std::signbit(value) ? 0xFFC0 : 0x7FC0;
  // Round to f32 with round-to-odd, so the final round to nearest even in
  // bfloat16 is correct (f32 keeps 16 more bits than bfloat16).
  float f = static_cast<float>(value);
  if (static_cast<double>(f) != value && std::isfinite(f)) {
    if (std::fabs(static_cast<double>(f)) > std::fabs(value))
      f = std::nextafter(f, 0.0f);
    uint32_t b;
    std::memcpy(&b, &f, 4);
    b |= 1;
    std::memcpy(&f, &b, 4);
  }
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  uint32_t roundingBias = 0x7FFF + ((bits >> 16) & 1);
  return static_cast<uint16_t>((bits + roundingBias) >> 16);
}

double bfloat16ToDouble(uint16_t bits) {
  uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &wide, 4);
  return f;
}

double roundToDType(double value, DType dtype) {
  switch (dtype) {
  case DType::f32: return static_cast<float>(value);
  case DType::f64: return value;
  case DType::f16: return halfToDouble(doubleToHalf(value));
  case DType::bf16: return bfloat16ToDouble(doubleToBFloat16(value));
  default: return value;
  }
}

size_t BufferPool::storageCapacity(size_t bytes) {
  return (std::max<size_t>(bytes, 1) + 63) / 64 * 64;
}

namespace {

/// Storage this large is mapped from the kernel and unmapped when freed,
/// not taken from malloc's heap: glibc raises its mmap threshold after the
/// first large free (up to 32 MiB), after which tensor-sized blocks come
/// from the heap and their freed pages stay in the process (measured: GPT-2
/// 124M in eager mode peaked at 7.2 GB of RSS, 5.9 GB with a fixed
/// threshold, for the same 3.8 GB of live tensors). Fresh mappings are
/// zero pages, so they need no memset either.
constexpr size_t kMappedBytes = size_t{1} << 20;

/// A transparent huge page on x86-64 and most arm64 kernels.
constexpr size_t kHugePageBytes = size_t{2} << 20;

/// The mapped regions alive now (start → bytes), for residentMappedBytes.
struct MappedRegions {
  std::mutex mutex;
  std::unordered_map<const std::byte *, size_t> sizes;
};
MappedRegions &mappedRegions() {
  static auto *regions = new MappedRegions; // storage outlives statics
  return *regions;
}

/// `capacity` bytes (a storageCapacity), 64-byte aligned; `zeroed` says
/// whether they are known to be zero. Null when memory runs out.
std::byte *allocateBytes(size_t capacity, bool &zeroed) {
  if (capacity >= kMappedBytes) {
    zeroed = true;
    return allocateMapped(capacity);
  }
  zeroed = false;
  return static_cast<std::byte *>(std::aligned_alloc(64, capacity));
}

void freeBytes(std::byte *p, size_t capacity) {
  if (capacity >= kMappedBytes)
    freeMapped(p, capacity);
  else
    std::free(p);
}

} // namespace

std::byte *allocateMapped(size_t bytes) {
  void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    return nullptr;
  // Transparent huge pages where the system leaves them to the program
  // (the common `madvise` setting): one fault per 2 MiB instead of per 4
  // KiB when a step first touches its arena, moments and gradients, and
  // fewer TLB misses in the kernels that stream them. Untouched ranges
  // stay unbacked either way. Advice only: its failure changes nothing.
  if (bytes >= kHugePageBytes)
    madvise(p, bytes, MADV_HUGEPAGE);
  auto *start = static_cast<std::byte *>(p);
  MappedRegions &regions = mappedRegions();
  std::lock_guard<std::mutex> lock(regions.mutex);
  regions.sizes[start] = bytes;
  return start;
}

void freeMapped(std::byte *p, size_t bytes) {
  if (!p)
    return;
  {
    MappedRegions &regions = mappedRegions();
    std::lock_guard<std::mutex> lock(regions.mutex);
    regions.sizes.erase(p);
  }
  munmap(p, bytes);
}

uint64_t residentMappedBytes() {
  const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  MappedRegions &regions = mappedRegions();
  std::lock_guard<std::mutex> lock(regions.mutex);
  uint64_t resident = 0;
  std::vector<unsigned char> pages;
  for (const auto &[start, bytes] : regions.sizes) {
    pages.resize((bytes + page - 1) / page);
    // mincore's low bit per page: resident. It fails only for an address
    // that is not mapped, which a registered region always is.
    if (mincore(const_cast<std::byte *>(start), bytes, pages.data()) != 0)
      continue;
    for (unsigned char p : pages)
      resident += (p & 1) * page;
  }
  return resident;
}

void detail::StorageRelease::operator()(std::byte *p) const {
  if (std::shared_ptr<BufferPool> owner = pool.lock())
    return owner->giveBack(p, capacity);
  freeBytes(p, capacity);
}

std::optional<int64_t> boundedElementCount(absl::Span<const int64_t> dims) {
  int64_t count = 1;
  for (int64_t d : dims) {
    if (d < 0 || (d != 0 && count > kMaxTensorElements / d))
      return std::nullopt;
    count *= d;
  }
  return count;
}

namespace {
int64_t elementCount(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}
} // namespace

bool HostTensor::allocateStorage() const {
  size_t bytes = BufferPool::storageCapacity(byteSize());
  bool zeroed = false;
  data_ = std::unique_ptr<std::byte[], Release>(allocateBytes(bytes, zeroed),
                                                Release{{}, bytes});
  if (!data_)
    throw std::bad_alloc();
  return zeroed;
}

HostTensor::HostTensor(DType dtype, std::vector<int64_t> shape)
    : dtype_(dtype), shape_(std::move(shape)),
      numElements_(elementCount(shape_)) {
  if (!allocateStorage())
    std::memset(data_.get(), 0, BufferPool::storageCapacity(byteSize()));
}

absl::StatusOr<HostTensor> HostTensor::create(DType dtype,
                                              std::vector<int64_t> shape) {
  std::optional<int64_t> count = boundedElementCount(shape);
  if (!count)
    return absl::InvalidArgumentError(absl::StrCat(
        "tensor shape [", absl::StrJoin(shape, ", "), "] is too large"));
  try {
    return HostTensor(dtype, shape);
  } catch (const std::bad_alloc &) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot allocate ", *count * byteWidth(dtype),
                     " bytes for a tensor of shape [",
                     absl::StrJoin(shape, ", "), "]"));
  }
}

HostTensor HostTensor::deferred(DType dtype, std::vector<int64_t> shape,
                                std::shared_ptr<DeferredContents> contents) {
  HostTensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.numElements_ = elementCount(t.shape_);
  t.deferred_ = std::move(contents);
  return t;
}

void HostTensor::fetchDeferred() const {
  std::shared_ptr<DeferredContents> contents = std::move(deferred_);
  deferred_ = nullptr;
  allocateStorage();
  if (absl::Status s = contents->fetch(data_.get(), byteSize()); !s.ok())
    throw std::runtime_error("reading a tensor " + typeString() +
                             " from the device: " + std::string(s.message()));
}

HostTensor::HostTensor(const HostTensor &other)
    : HostTensor(other.dtype_, other.shape_) {
  other.materialize();
  if (other.data_)
    std::memcpy(data_.get(), other.data_.get(), byteSize());
}

HostTensor &HostTensor::operator=(const HostTensor &other) {
  if (this != &other)
    *this = HostTensor(other);
  return *this;
}

double HostTensor::getDouble(int64_t i) const {
  const std::byte *p = data() + i * byteWidth(dtype_);
  switch (dtype_) {
  case DType::f32: { float v; std::memcpy(&v, p, 4); return v; }
  case DType::f64: { double v; std::memcpy(&v, p, 8); return v; }
  case DType::f16: { uint16_t v; std::memcpy(&v, p, 2); return halfToDouble(v); }
  case DType::bf16: { uint16_t v; std::memcpy(&v, p, 2); return bfloat16ToDouble(v); }
  default: return static_cast<double>(getInt(i));
  }
}

void HostTensor::setDouble(int64_t i, double value) {
  std::byte *p = data() + i * byteWidth(dtype_);
  switch (dtype_) {
  case DType::f32: { float v = static_cast<float>(value); std::memcpy(p, &v, 4); return; }
  case DType::f64: std::memcpy(p, &value, 8); return;
  case DType::f16: { uint16_t v = doubleToHalf(value); std::memcpy(p, &v, 2); return; }
  case DType::bf16: { uint16_t v = doubleToBFloat16(value); std::memcpy(p, &v, 2); return; }
  case DType::i1: setInt(i, value != 0.0 ? 1 : 0); return; // NaN != 0: true
  case DType::i32:
  case DType::i64: {
    if (std::isnan(value))
      return setInt(i, 0);
    double lo = dtype_ == DType::i32 ? -2147483648.0 : -9223372036854775808.0;
    double hi = dtype_ == DType::i32 ? 2147483647.0 : 9223372036854775807.0;
    if (value <= lo)
      return setInt(i, dtype_ == DType::i32 ? std::numeric_limits<int32_t>::min()
                                            : std::numeric_limits<int64_t>::min());
    if (value >= hi)
      return setInt(i, dtype_ == DType::i32 ? std::numeric_limits<int32_t>::max()
                                            : std::numeric_limits<int64_t>::max());
    return setInt(i, static_cast<int64_t>(std::trunc(value)));
  }
  }
}

int64_t HostTensor::getInt(int64_t i) const {
  const std::byte *p = data() + i * byteWidth(dtype_);
  switch (dtype_) {
  case DType::i1: return static_cast<int64_t>(*p) != 0;
  case DType::i32: { int32_t v; std::memcpy(&v, p, 4); return v; }
  case DType::i64: { int64_t v; std::memcpy(&v, p, 8); return v; }
  default: return static_cast<int64_t>(getDouble(i));
  }
}

void HostTensor::setInt(int64_t i, int64_t value) {
  std::byte *p = data() + i * byteWidth(dtype_);
  switch (dtype_) {
  case DType::i1: *p = std::byte(value != 0); return;
  case DType::i32: { int32_t v = static_cast<int32_t>(value); std::memcpy(p, &v, 4); return; }
  case DType::i64: std::memcpy(p, &value, 8); return;
  default: setDouble(i, static_cast<double>(value));
  }
}

std::string HostTensor::typeString() const {
  std::string text = "tensor<";
  for (int64_t d : shape_)
    absl::StrAppend(&text, d, "x");
  absl::StrAppend(&text, std::string(dtypeName(dtype_)), ">");
  return text;
}

//===--- BufferPool -------------------------------------------------------===//

std::shared_ptr<BufferPool> BufferPool::create() {
  return std::shared_ptr<BufferPool>(new BufferPool());
}

BufferPool::~BufferPool() {
  for (auto &[capacity, storage] : idle_)
    freeBytes(storage, capacity);
}

absl::StatusOr<HostTensor> BufferPool::acquire(DType dtype,
                                               std::vector<int64_t> shape) {
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0 || (d != 0 && count > (int64_t{1} << 40) / d))
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor shape [", absl::StrJoin(shape, ", "), "] is too large"));
    count *= d;
  }
  size_t capacity = storageCapacity(count * byteWidth(dtype));
  std::byte *storage = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = idle_.find(capacity); it != idle_.end()) {
      storage = it->second;
      idle_.erase(it);
      ++stats_.reuses;
      --stats_.idleBuffers;
      stats_.idleBytes -= static_cast<int64_t>(capacity);
    } else {
      ++stats_.allocations;
      stats_.allocatedBytes += static_cast<int64_t>(capacity);
    }
  }
  if (!storage) {
    // Fresh pages are zeroed like any new HostTensor's (and touched here,
    // once, rather than inside a kernel).
    bool zeroed = false;
    storage = allocateBytes(capacity, zeroed);
    if (!storage)
      return absl::ResourceExhaustedError(
          absl::StrCat("cannot allocate ", capacity, " bytes for a tensor"));
    if (!zeroed)
      std::memset(storage, 0, capacity);
  }
  HostTensor tensor;
  tensor.dtype_ = dtype;
  tensor.shape_ = std::move(shape);
  tensor.numElements_ = count;
  tensor.data_ = std::unique_ptr<std::byte[], HostTensor::Release>(
      storage, HostTensor::Release{weak_from_this(), capacity});
  return tensor;
}

bool BufferPool::underLimitLocked(size_t capacity) const {
  if (!limited_)
    return true;
  if (perCapacityLimit_ >= 0)
    return static_cast<int64_t>(idle_.count(capacity)) < perCapacityLimit_;
  auto limit = limits_.find(capacity);
  return limit != limits_.end() &&
         static_cast<int64_t>(idle_.count(capacity)) < limit->second;
}

void BufferPool::giveBack(std::byte *storage, size_t capacity) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (underLimitLocked(capacity)) {
      idle_.emplace(capacity, storage);
      ++stats_.idleBuffers;
      stats_.idleBytes += static_cast<int64_t>(capacity);
      return;
    }
  }
  freeBytes(storage, capacity);
}

bool BufferPool::adopt(HostTensor &tensor) {
  HostTensor::Release &release = tensor.data_.get_deleter();
  // Pooled storage goes back to its own pool when the tensor dies.
  if (!tensor.data_ || !release.pool.expired() || release.capacity == 0)
    return false;
  std::lock_guard<std::mutex> lock(mutex_);
  if (!underLimitLocked(release.capacity))
    return false;
  idle_.emplace(release.capacity, tensor.data_.release());
  ++stats_.adoptions;
  ++stats_.idleBuffers;
  stats_.idleBytes += static_cast<int64_t>(release.capacity);
  tensor = HostTensor();
  return true;
}

void BufferPool::setIdleLimits(std::map<size_t, int64_t> limits) {
  std::lock_guard<std::mutex> lock(mutex_);
  limits_ = std::move(limits);
  limited_ = true;
  perCapacityLimit_ = -1;
}

void BufferPool::setIdleLimitPerCapacity(int64_t limit) {
  std::lock_guard<std::mutex> lock(mutex_);
  limits_.clear();
  limited_ = true;
  perCapacityLimit_ = limit;
}

BufferPool::Stats BufferPool::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

bool HostTensor::bitwiseEqual(const HostTensor &other) const {
  return dtype_ == other.dtype_ && shape_ == other.shape_ &&
         std::memcmp(data(), other.data(), byteSize()) == 0;
}

} // namespace kiln
