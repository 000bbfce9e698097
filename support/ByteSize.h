// Byte counts as people write them ("16GiB", "512MiB", "1.5G", "4000000"),
// for every flag and variable that takes one (kilnc's and kiln-train's
// --memory_budget, KILN_DEVICE_MEMORY_LIMIT), so that they all read the
// same text the same way.
#ifndef KILN_SUPPORT_BYTESIZE_H
#define KILN_SUPPORT_BYTESIZE_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kiln {

/// A non-negative number (a fraction is allowed) and an optional unit: B;
/// K, M, G, T and KiB, MiB, GiB, TiB (powers of 1024, as ulimit and the
/// GPU tools mean them); KB, MB, GB, TB (powers of 1000). → nullopt for
/// anything else, a negative or non-finite number, or a count of 2^64 or
/// more.
std::optional<uint64_t> parseByteSize(std::string_view text);

/// `bytes` for a message: "16.00 GiB", "512.0 MiB", "1.5 KiB", "96 B".
std::string formatByteSize(uint64_t bytes);

} // namespace kiln

#endif // KILN_SUPPORT_BYTESIZE_H
