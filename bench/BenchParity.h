// The loss parity report of kiln-bench (BenchParity.cpp): how far the loss
// curves of kiln compiled, kiln eager and PyTorch eager lie apart.
#ifndef KILN_BENCH_BENCHPARITY_H
#define KILN_BENCH_BENCHPARITY_H

#include "bench/BenchSupport.h"

#include "llvm/Support/JSON.h"

#include <map>
#include <string>
#include <vector>

namespace kiln::bench {

/// Loss curves (system → losses) → the parity report: for each pair the
/// max relative difference over the first `parity_steps` steps, over all
/// steps (and the worst step) and over the curves smoothed by a trailing
/// moving average of `parity_window` steps, with the first losses.
llvm::json::Object
parityReport(std::map<std::string, std::vector<double>> curves,
             const BenchConfig &config, bool fromMainRuns);

/// The parity report → a Markdown section (appended to table.md).
std::string parityMarkdown(const llvm::json::Object &parity,
                           const BenchConfig &config);

} // namespace kiln::bench

#endif // KILN_BENCH_BENCHPARITY_H
