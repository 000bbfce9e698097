// Philox-4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
// 3", SC'11): the counter-based generator behind kiln.rng_uniform. Exposed on
// its own so a test can check it against the Random123 known answers.
#ifndef KILN_IR_REFERENCE_PHILOX_H
#define KILN_IR_REFERENCE_PHILOX_H

#include <array>
#include <cstdint>

namespace kiln::reference {

/// (counter x0..x3, key k0..k1) → the four 32-bit output lanes after ten
/// rounds of Philox-4x32.
std::array<uint32_t, 4> philox4x32(std::array<uint32_t, 4> counter,
                                   std::array<uint32_t, 2> key);

} // namespace kiln::reference

#endif // KILN_IR_REFERENCE_PHILOX_H
