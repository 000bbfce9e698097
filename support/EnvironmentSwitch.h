// The values a KILN_* on/off switch takes, wherever it is read (the
// frontend's KILN_BF16 and KILN_CHECK_NUMERICS, the compiler's
// KILN_GEMM_EPILOGUE and KILN_CUDA_HOLD_ROWS alike): a user who writes
// KILN_BF16=true and KILN_GEMM_EPILOGUE=false means the same thing by both.
#ifndef KILN_SUPPORT_ENVIRONMENTSWITCH_H
#define KILN_SUPPORT_ENVIRONMENTSWITCH_H

#include <optional>
#include <string_view>

namespace kiln {

/// How messages name the accepted values.
inline constexpr const char *kSwitchValues =
    "1 or 0 (true or false, yes or no, on or off)";

/// 1, true, yes, on → true; 0, false, no, off → false (any case);
/// anything else → nullopt.
std::optional<bool> switchValue(std::string_view value);

} // namespace kiln

#endif // KILN_SUPPORT_ENVIRONMENTSWITCH_H
