// Element types and host tensors: the one tensor representation shared by the
// reference evaluator, the tools and (later) the runtime. No MLIR or LLVM here.
#ifndef KILN_SUPPORT_HOSTTENSOR_H
#define KILN_SUPPORT_HOSTTENSOR_H

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace kiln {

/// The element types of the kiln dialect.
enum class DType : uint8_t { f32, f64, f16, bf16, i1, i32, i64 };

/// Bytes per element (i1 is stored as one byte holding 0 or 1).
size_t byteWidth(DType dtype);
bool isFloat(DType dtype);
/// "f32", "f64", "f16", "bf16", "i1", "i32", "i64".
std::string_view dtypeName(DType dtype);
absl::StatusOr<DType> parseDType(std::string_view name);

/// IEEE half and bfloat16 conversions, round to nearest even, directly from
/// double (no double rounding through f32).
uint16_t doubleToHalf(double value);
double halfToDouble(uint16_t bits);
uint16_t doubleToBFloat16(double value);
double bfloat16ToDouble(uint16_t bits);

/// Rounds `value` to the nearest value representable in the float `dtype`.
double roundToDType(double value, DType dtype);

/// The largest element count a kiln tensor may have (2^40): beyond it no
/// buffer fits any machine kiln runs on, and byte sizes could overflow.
inline constexpr int64_t kMaxTensorElements = int64_t{1} << 40;

/// `dims`' element count, or nullopt when a dimension is negative or the
/// count passes kMaxTensorElements (checked before each product, so it
/// never overflows): the one size check of host tensors, the dialect's
/// types and the graphs a step plans.
std::optional<int64_t> boundedElementCount(absl::Span<const int64_t> dims);

/// Large storage (tensors, a compiled program's arena) is mapped from the
/// kernel page by page; see HostTensor.cpp. allocateMapped returns `bytes`
/// of zero pages, page aligned (null when memory runs out); freeMapped
/// returns them. Both are thread-safe.
std::byte *allocateMapped(size_t bytes);
void freeMapped(std::byte *p, size_t bytes);
/// The mapped storage's bytes resident in memory now (pages a program has
/// touched; untouched zero pages cost nothing): what the process's
/// resident set holds as tensor data rather than code, libraries or heap.
uint64_t residentMappedBytes();

class BufferPool;

namespace detail {
/// A HostTensor's deleter: frees the storage, or hands it back to the pool
/// it came from while that pool lives (a weak handle: tensors may outlive
/// their pool).
struct StorageRelease {
  std::weak_ptr<BufferPool> pool;
  size_t capacity = 0;
  void operator()(std::byte *p) const;
};
} // namespace detail

/// Contents a tensor keeps elsewhere (in a device's memory) until the host
/// first reads them. A device program returns its outputs this way, so a
/// value the host never reads (parameters and optimizer state, handed from
/// one training step to the next) never crosses the bus, and a run need not
/// wait for the device: reading the value is what waits.
class DeferredContents {
public:
  virtual ~DeferredContents() = default;
  /// Writes the contents to `dst` (`bytes` long). Called at most once, when
  /// the tensor's data is first asked for.
  virtual absl::Status fetch(std::byte *dst, size_t bytes) = 0;
};

/// A dense row-major tensor in host memory, 64-byte aligned, zero-filled on
/// creation (a tensor a BufferPool hands out is not: see there; a deferred
/// one holds its contents elsewhere until data() is first called). Element
/// accessors convert through double (floats) or int64_t (integers and i1),
/// which represent every kiln element value exactly.
class HostTensor {
public:
  HostTensor() = default;
  HostTensor(DType dtype, std::vector<int64_t> shape);

  /// Fails instead of aborting when the shape is negative or too large.
  static absl::StatusOr<HostTensor> create(DType dtype,
                                           std::vector<int64_t> shape);

  HostTensor(const HostTensor &other);
  HostTensor &operator=(const HostTensor &other);
  HostTensor(HostTensor &&) noexcept = default;
  HostTensor &operator=(HostTensor &&) noexcept = default;

  /// A tensor whose contents `contents` provides on the first host access
  /// (host storage is allocated then, not before).
  static HostTensor deferred(DType dtype, std::vector<int64_t> shape,
                             std::shared_ptr<DeferredContents> contents);
  /// The contents not yet fetched, or null: a device program recognises
  /// its own outputs here when they come back as inputs, and uses the
  /// device copy instead of the host's.
  const std::shared_ptr<DeferredContents> &deferredContents() const {
    return deferred_;
  }
  /// True when the tensor holds bytes or deferred contents (false after it
  /// was moved from), without fetching anything.
  bool hasContents() const { return data_ != nullptr || deferred_ != nullptr; }

  DType dtype() const { return dtype_; }
  const std::vector<int64_t> &shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t numElements() const { return numElements_; }
  size_t byteSize() const { return numElements_ * byteWidth(dtype_); }

  /// The bytes (fetching deferred contents first; a failed fetch, e.g. a
  /// lost device, throws std::runtime_error with the device's message).
  std::byte *data() {
    materialize();
    return data_.get();
  }
  const std::byte *data() const {
    materialize();
    return data_.get();
  }

  /// Element i (row-major) as a double; integers convert exactly up to 2^53.
  double getDouble(int64_t i) const;
  /// Stores `value` rounded to this tensor's dtype (integers truncate toward
  /// zero and saturate, NaN becoming 0; i1 stores value != 0, so NaN is 1).
  void setDouble(int64_t i, double value);
  int64_t getInt(int64_t i) const;
  void setInt(int64_t i, int64_t value);

  /// "tensor<2x3xf32>": the MLIR spelling of this tensor's type.
  std::string typeString() const;

  /// True when dtypes, shapes and bytes are identical.
  bool bitwiseEqual(const HostTensor &other) const;

  /// True when this tensor's storage returns to a BufferPool when it dies.
  bool pooled() const { return !data_.get_deleter().pool.expired(); }

private:
  void materialize() const {
    if (deferred_)
      fetchDeferred();
  }
  void fetchDeferred() const;
  /// Fresh 64-byte-aligned storage for this tensor's size; true when it is
  /// known to be zero (fresh mapped pages), else not cleared.
  bool allocateStorage() const;

  friend class BufferPool;

  using Release = detail::StorageRelease;

  DType dtype_ = DType::f32;
  std::vector<int64_t> shape_;
  int64_t numElements_ = 0;
  // Both change on the first read of a deferred tensor, which is logically
  // const: the value is the same before and after.
  mutable std::unique_ptr<std::byte[], Release> data_;
  mutable std::shared_ptr<DeferredContents> deferred_;
};

/// Recycles tensor storage: a tensor from acquire() gives its storage back
/// to the pool when it dies, and the next acquire() of the same rounded
/// size reuses it instead of touching fresh pages. adopt() takes the
/// storage of a tensor allocated elsewhere. Idle storage per size is capped
/// (setIdleLimits), so a caller holding or donating more than a run needs
/// does not make the pool grow. Thread-safe: tensors may die on any
/// thread. The pool frees its idle storage when destroyed; storage still
/// held by tensors is freed as they die.
class BufferPool : public std::enable_shared_from_this<BufferPool> {
public:
  struct Stats {
    /// Fresh storage allocated by acquire() (pool misses), and its bytes.
    int64_t allocations = 0;
    int64_t allocatedBytes = 0;
    /// acquire() calls served from idle storage.
    int64_t reuses = 0;
    /// Tensors whose storage adopt() took.
    int64_t adoptions = 0;
    /// Storage idle in the pool now.
    int64_t idleBuffers = 0;
    int64_t idleBytes = 0;
  };

  static std::shared_ptr<BufferPool> create();
  ~BufferPool();
  BufferPool(const BufferPool &) = delete;
  BufferPool &operator=(const BufferPool &) = delete;

  /// A tensor of this type whose storage comes from the pool. Reused
  /// storage keeps its old bytes (callers overwrite every element), fresh
  /// storage is zero-filled. Fails instead of aborting on a bad shape or
  /// when memory runs out.
  absl::StatusOr<HostTensor> acquire(DType dtype, std::vector<int64_t> shape);

  /// Takes `tensor`'s storage as idle storage when it was allocated outside
  /// any pool and its size is under the idle limit (else leaves it, to be
  /// freed or returned to its own pool as the tensor dies). True if taken.
  bool adopt(HostTensor &tensor);

  /// At most limit[capacity] idle buffers of each capacity (bytes rounded
  /// up to 64; see storageCapacity) are kept; storage beyond that, and of
  /// any capacity not listed, is freed when given back. Without limits the
  /// pool keeps everything given back.
  void setIdleLimits(std::map<size_t, int64_t> limits);
  /// At most `limit` idle buffers of every capacity: for a pool many
  /// programs share, whose sizes are not known in advance.
  void setIdleLimitPerCapacity(int64_t limit);

  /// The storage a tensor of `bytes` bytes occupies: rounded up to 64 bytes
  /// (the alignment), and never zero.
  static size_t storageCapacity(size_t bytes);

  Stats stats() const;

private:
  BufferPool() = default;
  friend struct detail::StorageRelease;
  /// Keeps `storage` idle, or frees it when over the limit.
  void giveBack(std::byte *storage, size_t capacity);
  bool underLimitLocked(size_t capacity) const;

  mutable std::mutex mutex_;
  /// Idle storage by capacity (bytes rounded up to 64): reused only for
  /// the same capacity, which a training loop's fixed shapes give.
  std::multimap<size_t, std::byte *> idle_;
  std::map<size_t, int64_t> limits_;
  bool limited_ = false;
  /// setIdleLimitPerCapacity's limit, or -1 (limits_ applies).
  int64_t perCapacityLimit_ = -1;
  Stats stats_;
};

} // namespace kiln

#endif // KILN_SUPPORT_HOSTTENSOR_H
