// The loss parity of kiln-bench's systems: for each pair of kiln
// compiled, kiln eager and PyTorch eager, the largest relative difference
// of their loss curves over the first --parity_steps steps, over all steps
// and over the smoothed curves, as results.json's "parity" object and as a
// Markdown section of table.md.
#include "bench/BenchParity.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>

namespace kiln::bench {

namespace json = llvm::json;

namespace {

/// Max over the first `n` steps of |a - b| / |b|.
json::Value maxRelDiff(const std::vector<double> &a,
                       const std::vector<double> &b, size_t n) {
  n = std::min({n, a.size(), b.size()});
  if (n == 0)
    return nullptr;
  double worst = 0;
  for (size_t i = 0; i < n; ++i)
    worst = std::max(worst, std::fabs(a[i] - b[i]) / std::fabs(b[i]));
  return worst;
}

/// Max over all common steps of |a - b| / |b|, and the (1-based) step.
std::pair<double, int64_t> worstRelDiff(const std::vector<double> &a,
                                        const std::vector<double> &b) {
  double worst = 0;
  int64_t at = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    if (double d = std::fabs(a[i] - b[i]) / std::fabs(b[i]);
        d > worst || std::isnan(d)) {
      worst = d;
      at = static_cast<int64_t>(i) + 1;
      if (std::isnan(d))
        break;
    }
  return {worst, at};
}

/// The trailing moving average over `window` steps, full windows only:
/// entry i is the mean of steps i+1 .. i+window (empty when too short).
std::vector<double> movingAverage(const std::vector<double> &v, size_t window) {
  std::vector<double> out;
  double sum = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    sum += v[i];
    if (i >= window)
      sum -= v[i - window];
    if (i + 1 >= window)
      out.push_back(sum / static_cast<double>(window));
  }
  return out;
}

const std::pair<const char *, const char *> parityPairs[] = {
    {"kiln_compiled", "torch"},
    {"kiln_eager", "torch"},
    {"kiln_compiled", "kiln_eager"}};

} // namespace

/// The parity report of the loss curves (name → losses): for each pair the
/// first `parity_steps` steps (the 1e-4 check), all steps and the
/// smoothed curves (the 1% check over a long run).
json::Object parityReport(std::map<std::string, std::vector<double>> curves,
                          const BenchConfig &c, bool fromMainRuns) {
  json::Object parity{
      {"steps_compared", c.parity_steps},
      {"dropout", 0.0},
      {"source", fromMainRuns ? "main runs" : "parity runs"},
      {"relative_difference", "|a - b| / |b|, b the second system of the pair"},
      {"smoothing",
       llvm::formatv("trailing moving average over {0} steps (mean of steps "
                     "i-{1}..i, for i from {0} to the last step)",
                     c.parity_window, c.parity_window - 1)
           .str()},
      {"smoothing_window", c.parity_window}};
  // The 20-step figures under their original keys.
  for (const auto &[a, b] : parityPairs)
    if (curves.count(a) && curves.count(b))
      parity[std::string(a) + "_vs_" + b + "_max_rel_diff"] =
          maxRelDiff(curves[a], curves[b], c.parity_steps);
  json::Object pairs;
  for (const auto &[a, b] : parityPairs) {
    if (!curves.count(a) || !curves.count(b))
      continue;
    const std::vector<double> &x = curves[a], &y = curves[b];
    auto [all, at] = worstRelDiff(x, y);
    json::Value worstStep = at ? json::Value(at) : nullptr; // null: equal
    std::vector<double> mx = movingAverage(x, c.parity_window),
                        my = movingAverage(y, c.parity_window);
    json::Value smoothed = nullptr;
    if (!mx.empty() && !my.empty())
      smoothed = worstRelDiff(mx, my).first;
    json::Value first = maxRelDiff(x, y, c.parity_steps);
    auto within = [](const json::Value &v, double tol) -> json::Value {
      std::optional<double> d = v.getAsNumber();
      return d ? json::Value(*d <= tol) : nullptr;
    };
    pairs[std::string(a) + "_vs_" + b] = json::Object{
        {"steps", static_cast<int64_t>(std::min(x.size(), y.size()))},
        {"first_steps_max_rel_diff", first},
        {"all_steps_max_rel_diff", all},
        {"all_steps_worst_step", std::move(worstStep)},
        {"smoothed_max_rel_diff", smoothed},
        {"first_steps_within_1e-4", within(first, 1e-4)},
        {"all_steps_within_1pct", within(all, 1e-2)},
        {"smoothed_within_1pct", within(smoothed, 1e-2)}};
  }
  parity["pairs"] = std::move(pairs);
  for (auto &[name, losses] : curves) {
    losses.resize(std::min<size_t>(losses.size(), c.parity_steps));
    parity[name + "_losses"] = json::Array(losses);
  }
  return parity;
}

/// The parity report as a Markdown section (appended to table.md).
std::string parityMarkdown(const json::Object &parity, const BenchConfig &c) {
  auto fmt = [](const json::Object &o, llvm::StringRef k) {
    std::optional<double> v = o.getNumber(k);
    return v ? (*v == 0 ? std::string("0") : llvm::formatv("{0:e2}", *v).str())
             : std::string("n/a");
  };
  std::string md = llvm::formatv(
      "\n## Parity (dropout 0, {0})\n\nMax relative difference |a - b| / |b| "
      "of the losses; smoothed: {1}.\n\n| pair | first {2} steps | all steps "
      "(worst step) | smoothed |\n|---|---|---|---|\n",
      parity.getString("source").value_or("?"),
      parity.getString("smoothing").value_or("?"), c.parity_steps);
  const json::Object *pairs = parity.getObject("pairs");
  if (c.init == "own")
    return md + "| (--init own: every system drew its own weights, so no "
                "losses compare) | | | |\n";
  if (!pairs || pairs->empty())
    return md + "| (fewer than two of kiln_compiled, kiln_eager, torch ran) "
                "| | | |\n";
  for (const auto &[a, b] : parityPairs)
    if (const json::Object *p = pairs->getObject(std::string(a) + "_vs_" + b))
      md += llvm::formatv(
          "| {0} vs {1} | {2} | {3} over {4}{5} | {6} |\n", a, b,
          fmt(*p, "first_steps_max_rel_diff"),
          fmt(*p, "all_steps_max_rel_diff"), p->getInteger("steps").value_or(0),
          p->getInteger("all_steps_worst_step")
              ? llvm::formatv(" (step {0})",
                              *p->getInteger("all_steps_worst_step"))
                    .str()
              : std::string(),
          fmt(*p, "smoothed_max_rel_diff"));
  return md;
}

} // namespace kiln::bench
