// The corpus kiln-train uses when no data file is named: English-like
// sentences generated from a small template grammar by a fixed pseudo-random
// stream, so every machine gets the same text offline with nothing to
// download. The grammar has structure a small model learns within a demo
// (a closed vocabulary, fixed word order, subject-verb number agreement,
// counting sequences), so the loss visibly falls from ln(256) towards the
// grammar's entropy.
#ifndef KILN_EXAMPLES_DEFAULTCORPUS_H
#define KILN_EXAMPLES_DEFAULTCORPUS_H

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::train {

/// `numLines` generated lines (each ending in "\n"), the same for the same
/// `seed` on every platform.
std::vector<std::string> generateCorpus(int64_t numLines, uint64_t seed);

} // namespace kiln::train

#endif // KILN_EXAMPLES_DEFAULTCORPUS_H
