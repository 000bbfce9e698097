// Philox-4x32-10 as docs/IR.md spells it (see Philox.h), and
// the kiln.rng_uniform kernel built on it: group g of four output lanes uses
// counter state[1] + g under key state[0], and each lane's top bits become an
// exactly representable float in [0, 1).
#include "ir/reference/Philox.h"
#include "ir/reference/Indexing.h"
#include "ir/reference/Kernels.h"

#include <cmath>

namespace kiln::reference {

namespace {

constexpr uint32_t kMultiplier0 = 0xD2511F53;
constexpr uint32_t kMultiplier1 = 0xCD9E8D57;
constexpr uint32_t kKeyBump0 = 0x9E3779B9;
constexpr uint32_t kKeyBump1 = 0xBB67AE85;
constexpr int kRounds = 10;

/// The 64-bit product a * b split into (high, low) 32-bit halves.
std::array<uint32_t, 2> mulHiLo(uint32_t a, uint32_t b) {
  uint64_t product = static_cast<uint64_t>(a) * b;
  return {static_cast<uint32_t>(product >> 32), static_cast<uint32_t>(product)};
}

} // namespace

std::array<uint32_t, 4> philox4x32(std::array<uint32_t, 4> x,
                                   std::array<uint32_t, 2> key) {
  for (int round = 0; round < kRounds; ++round) {
    // The key schedule advances between rounds, not before the first one.
    if (round > 0) {
      key[0] += kKeyBump0;
      key[1] += kKeyBump1;
    }
    auto [hi0, lo0] = mulHiLo(kMultiplier0, x[0]);
    auto [hi1, lo1] = mulHiLo(kMultiplier1, x[2]);
    x = {hi1 ^ x[1] ^ key[0], lo1, hi0 ^ x[3] ^ key[1], lo0};
  }
  return x;
}

absl::StatusOr<std::pair<HostTensor, HostTensor>>
evalRngUniform(const HostTensor &state, DType dtype,
               llvm::ArrayRef<int64_t> shape) {
  if (state.dtype() != DType::i64 || state.shape() != std::vector<int64_t>{2})
    return absl::InvalidArgumentError(absl::StrCat(
        "kiln.rng_uniform: state must be tensor<2xi64>, got ",
        state.typeString()));
  if (!isFloat(dtype))
    return absl::InvalidArgumentError(
        absl::StrCat("kiln.rng_uniform: result must be a float type, got ",
                     std::string(dtypeName(dtype))));
  absl::StatusOr<HostTensor> values =
      HostTensor::create(dtype, std::vector<int64_t>(shape));
  if (!values.ok())
    return values.status();
  absl::StatusOr<HostTensor> newState = HostTensor::create(DType::i64, {2});
  if (!newState.ok())
    return newState.status();

  // Keep this many top bits of a lane: the float's significand width, so
  // that bits * 2^-width is exact and below 1. The spec has no f64 recipe;
  // f64 keeps the whole lane (exact, as 32 < 53 bits).
  int width = dtype == DType::f64   ? 32
              : dtype == DType::f32 ? 24
              : dtype == DType::f16 ? 11
                                    : 8;
  uint64_t key = static_cast<uint64_t>(state.getInt(0));
  uint64_t counter = static_cast<uint64_t>(state.getInt(1));
  std::array<uint32_t, 2> keyWords = {static_cast<uint32_t>(key),
                                      static_cast<uint32_t>(key >> 32)};
  int64_t n = values->numElements();
  int64_t groups = (n + 3) / 4;
  for (int64_t g = 0; g < groups; ++g) {
    uint64_t c = counter + static_cast<uint64_t>(g); // wraps mod 2^64
    std::array<uint32_t, 4> lanes = philox4x32(
        {static_cast<uint32_t>(c), static_cast<uint32_t>(c >> 32), 0, 0},
        keyWords);
    for (int64_t lane = 0; lane < 4 && 4 * g + lane < n; ++lane)
      values->setDouble(4 * g + lane,
                        std::ldexp(static_cast<double>(lanes[lane] >>
                                                       (32 - width)),
                                   -width));
  }
  newState->setInt(0, state.getInt(0));
  newState->setInt(1, static_cast<int64_t>(counter +
                                           static_cast<uint64_t>(groups)));
  return std::make_pair(*std::move(values), *std::move(newState));
}

} // namespace kiln::reference
