// Reading and writing the safetensors format (Hugging Face): an 8-byte
// little-endian header length, a JSON header mapping each tensor name to its
// dtype, shape and [begin, end) byte range in the data section, an optional
// "__metadata__" map of strings, then the raw row-major data. Reading checks
// the header strictly (size bounds, JSON, known dtypes, non-negative shapes,
// ranges contiguous and covering the data exactly, sizes without overflow)
// and never trusts a length before checking it against the file. Files this
// module writes carry a CRC-32 of the header's meaning and of the data in the
// metadata ("kiln.crc32"), so a flipped bit anywhere is detected; files
// without it (Hugging Face's) still load unless the caller requires it.
// Writes are atomic: a temporary file in the target's directory, fsync,
// rename, fsync of the directory. Errors are absl::Status values naming the
// file and the offending entry; the nn layer turns them into kiln::Error.
#ifndef KILN_FRONTENDS_NN_SAFETENSORS_H
#define KILN_FRONTENDS_NN_SAFETENSORS_H

#include "support/HostTensor.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::nn {

/// One tensor of a safetensors file.
struct NamedTensor {
  std::string name;
  HostTensor tensor;
};

/// A tensor to save, by reference: the caller keeps it alive until the
/// save returns. A model is written from where its parameters live, with
/// no second copy of it in memory.
struct NamedTensorRef {
  std::string name;
  const HostTensor *tensor = nullptr;
};

/// A parsed safetensors file: tensors in data order, and the metadata.
struct SafetensorsData {
  std::vector<NamedTensor> tensors;
  std::map<std::string, std::string> metadata;
  /// True when the file carried kiln's checksum (and it matched).
  bool checksummed = false;

  /// name → the tensor, or null.
  const HostTensor *find(std::string_view name) const;
};

struct SafetensorsReadOptions {
  /// Reject files without kiln's checksum (kiln's own checkpoints).
  bool requireChecksum = false;
  /// Headers longer than this are rejected before anything is allocated.
  uint64_t maxHeaderBytes = 100ull << 20;
};

/// The metadata key holding the checksum (8 lowercase hex digits).
inline constexpr const char *kChecksumKey = "kiln.crc32";

/// "F32", "F64", "F16", "BF16", "BOOL", "I32", "I64".
std::string_view safetensorsDTypeName(DType dtype);
/// The inverse; fails on dtypes kiln does not have (U8, F8_E4M3, ...).
absl::StatusOr<DType> parseSafetensorsDType(std::string_view name);

/// tensors + metadata → the bytes of a safetensors file (with the checksum
/// added to the metadata). Fails on duplicate, empty or reserved names.
absl::StatusOr<std::string>
serializeSafetensors(const std::vector<NamedTensor> &tensors,
                     const std::map<std::string, std::string> &metadata);

/// The bytes of a safetensors file → its tensors, validated strictly.
/// `what` names the source in error messages (e.g. the path).
absl::StatusOr<SafetensorsData>
parseSafetensors(std::string_view bytes,
                 const SafetensorsReadOptions &options = {},
                 std::string_view what = "safetensors data");

/// The file naming a sharded checkpoint's shards, in Hugging Face's layout.
inline constexpr const char *kSafetensorsIndexFile =
    "model.safetensors.index.json";

/// A model.safetensors.index.json ({"metadata": {...}, "weight_map":
/// {tensor: shard file}}) → its weight map. Fails, naming `what`, on text
/// that is not JSON, a missing weight_map, an entry that is not a string,
/// or a shard that is not a plain file name ("", ".", "..", a path), which
/// would reach outside the model's folder.
absl::StatusOr<std::map<std::string, std::string>>
parseSafetensorsIndex(std::string_view text, std::string_view what);

/// tensors + metadata → a safetensors file at `path`, written atomically: on
/// any failure the previous file at `path` (if any) is untouched and no
/// temporary file is left behind.
absl::Status
saveSafetensors(const std::string &path,
                const std::vector<NamedTensor> &tensors,
                const std::map<std::string, std::string> &metadata);
absl::Status
saveSafetensors(const std::string &path,
                const std::vector<NamedTensorRef> &tensors,
                const std::map<std::string, std::string> &metadata);

/// A safetensors file → its tensors, validated strictly. Reads the header
/// first and each tensor straight into its buffer (no whole-file copy).
absl::StatusOr<SafetensorsData>
loadSafetensors(const std::string &path,
                const SafetensorsReadOptions &options = {});

/// Writes a file atomically: `write(fd)` fills a temporary file in the same
/// directory, which is fsynced and renamed over `path`, then the directory
/// is fsynced. On failure the temporary file is removed.
absl::Status
writeFileAtomically(const std::string &path,
                    const std::function<absl::Status(int fd)> &write);

/// `text` → the file at `path`, atomically as writeFileAtomically.
absl::Status writeTextAtomically(const std::string &path,
                                 std::string_view text);

} // namespace kiln::nn

#endif // KILN_FRONTENDS_NN_SAFETENSORS_H
