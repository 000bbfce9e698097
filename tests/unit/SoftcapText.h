// A soft cap written with kiln's primitive ops, as the fused ops' tests
// spell what their `softcap` attribute stands for (Gemma 2's scores and
// logits): out = cap · tanh(in / cap).
#ifndef KILN_TESTS_UNIT_SOFTCAPTEXT_H
#define KILN_TESTS_UNIT_SOFTCAPTEXT_H

#include "llvm/Support/FormatVariadic.h"

#include <string>

namespace kiln::testing {

/// Lines of a kiln-dialect function body computing `out` from `in`, both
/// of `type` (a tensor of `element`), the cap a broadcast scalar constant.
/// Their other values are named after `out` ("%s" → "%s_cap", ...).
inline std::string softcapAsPrimitives(const std::string &in,
                                       const std::string &out,
                                       const std::string &type,
                                       const std::string &element,
                                       double cap) {
  return llvm::formatv(R"(  {1}_cap = kiln.constant dense<{4}> : tensor<{3}>
  {1}_capb = kiln.broadcast_in_dim {1}_cap, dims = [] : tensor<{3}> -> {2}
  {1}_q = kiln.div {0}, {1}_capb : {2}
  {1}_t = kiln.tanh {1}_q : {2}
  {1} = kiln.mul {1}_capb, {1}_t : {2}
)",
                       in, out, type, element, cap)
      .str();
}

} // namespace kiln::testing

#endif // KILN_TESTS_UNIT_SOFTCAPTEXT_H
