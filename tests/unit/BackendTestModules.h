// MLIR text of the small functions the backend tests compile (CPU and CUDA
// alike): elementwise ops side by side, one dot_general, and softmax and
// layer norm written as the frontend emits them (unfused primitives the
// pipeline fuses). Each builder returns a module with a func.func @main.
#ifndef KILN_TESTS_UNIT_BACKENDTESTMODULES_H
#define KILN_TESTS_UNIT_BACKENDTESTMODULES_H

#include "support/HostTensor.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kiln::testing {

/// @main(%a: `in`) returning every reduce of `kinds` over every entry of
/// `dimsAndOut` (dims as "[0, 2]", the result shape's prefix as "4x"; the
/// element type `element`).
inline std::string reduceModule(
    const std::string &in, const std::string &element,
    const std::vector<const char *> &kinds,
    const std::vector<std::pair<const char *, std::string>> &dimsAndOut) {
  std::string body, types, results;
  int n = 0;
  for (const char *kind : kinds)
    for (const auto &[dims, out] : dimsAndOut) {
      std::string rt = absl::StrCat("tensor<", out, element, ">");
      body += absl::StrCat("  %r", n, " = kiln.reduce ", kind, " %a, dims = ",
                           dims, " : ", in, " -> ", rt, "\n");
      results += absl::StrCat(n ? ", " : "", "%r", n);
      types += absl::StrCat(n ? ", " : "", rt);
      ++n;
    }
  return absl::StrCat("func.func @main(%a: ", in, ") -> (", types, ") {\n",
                      body, "  return ", results, " : ", types, "\n}\n");
}

/// (dtype, shape) → "tensor<3x37xf32>".
inline std::string tensorType(DType dtype, const std::vector<int64_t> &shape) {
  return HostTensor(dtype, shape).typeString();
}

/// @main(%a[, %b]) returning `op` applied to its arguments, one result per op.
inline std::string elementwiseModule(const std::vector<std::string> &ops,
                                     int arity, const std::string &type,
                                     const std::string &resultType = "") {
  std::string rt = resultType.empty() ? type : resultType;
  std::string args = "%a: " + type;
  if (arity > 1)
    args += ", %b: " + type;
  std::vector<std::string> results, types;
  std::string body;
  for (size_t i = 0; i < ops.size(); ++i) {
    std::string operands = arity > 1 ? "%a, %b" : "%a";
    body += absl::StrCat("  %r", i, " = kiln.", ops[i], " ", operands, " : ",
                         ops[i].rfind("compare", 0) == 0 ? type : rt, "\n");
    results.push_back(absl::StrCat("%r", i));
    types.push_back(rt);
  }
  return absl::StrCat("func.func @main(", args, ") -> (",
                      absl::StrJoin(types, ", "), ") {\n", body, "  return ",
                      absl::StrJoin(results, ", "), " : ",
                      absl::StrJoin(types, ", "), "\n}\n");
}

/// @main(%a: lhs, %b: rhs) -> out: one kiln.dot_general with `dims`
/// ("batch = [...] x [...], contract = [...] x [...]").
inline std::string dotModule(const std::string &lhs, const std::string &rhs,
                             const std::string &out, const std::string &dims) {
  return absl::StrCat("func.func @main(%a: ", lhs, ", %b: ", rhs, ") -> ", out,
                      " {\n  %0 = kiln.dot_general %a, %b, ", dims, " : ", lhs,
                      ", ", rhs, " -> ", out, "\n  return %0 : ", out, "\n}\n");
}

/// Frontend-style softmax over the rows of an f32 [rows, cols] (keepdim =
/// reduce + reshape, scalars broadcast), unfused: the pipeline builds the
/// fusion, a backend one kernel.
inline std::string softmaxSource(int64_t rows, int64_t cols) {
  std::string r = std::to_string(rows), c = std::to_string(cols);
  std::string full = "tensor<" + r + "x" + c + "xf32>";
  std::string row = "tensor<" + r + "xf32>", keep = "tensor<" + r + "x1xf32>";
  return absl::StrCat(
      "func.func @main(%x: ", full, ") -> ", full, " {\n",
      "  %m = kiln.reduce max %x, dims = [1] : ", full, " -> ", row, "\n",
      "  %mk = kiln.reshape %m : ", row, " -> ", keep, "\n",
      "  %mb = kiln.broadcast_in_dim %mk, dims = [0, 1] : ", keep, " -> ", full,
      "\n  %z = kiln.sub %x, %mb : ", full, "\n  %e = kiln.exp %z : ", full,
      "\n  %s = kiln.reduce sum %e, dims = [1] : ", full, " -> ", row, "\n",
      "  %sk = kiln.reshape %s : ", row, " -> ", keep, "\n",
      "  %sb = kiln.broadcast_in_dim %sk, dims = [0, 1] : ", keep, " -> ", full,
      "\n  %y = kiln.div %e, %sb : ", full, "\n  return %y : ", full, "\n}\n");
}

/// Frontend-style layer norm over the rows of an f32 [rows, cols] with
/// weight and bias [cols] (eps 1e-5), unfused, as softmaxSource.
inline std::string layerNormSource(int64_t rows, int64_t cols) {
  std::string r = std::to_string(rows), c = std::to_string(cols);
  std::string full = "tensor<" + r + "x" + c + "xf32>";
  std::string vec = "tensor<" + c + "xf32>";
  std::string row = "tensor<" + r + "xf32>", keep = "tensor<" + r + "x1xf32>";
  return absl::StrCat(
      "func.func @main(%x: ", full, ", %w: ", vec, ", %b: ", vec, ") -> ", full,
      " {\n  %s = kiln.reduce sum %x, dims = [1] : ", full, " -> ", row,
      "\n  %sk = kiln.reshape %s : ", row, " -> ", keep,
      "\n  %n = kiln.constant dense<", c, ".0> : tensor<f32>",
      "\n  %nb = kiln.broadcast_in_dim %n, dims = [] : tensor<f32> -> ", keep,
      "\n  %mean = kiln.div %sk, %nb : ", keep,
      "\n  %meanb = kiln.broadcast_in_dim %mean, dims = [0, 1] : ", keep,
      " -> ", full, "\n  %c = kiln.sub %x, %meanb : ", full,
      "\n  %c2 = kiln.mul %c, %c : ", full,
      "\n  %v = kiln.reduce sum %c2, dims = [1] : ", full, " -> ", row,
      "\n  %vk = kiln.reshape %v : ", row, " -> ", keep,
      "\n  %var = kiln.div %vk, %nb : ", keep,
      "\n  %eps = kiln.constant dense<1.0e-05> : tensor<f32>",
      "\n  %epsb = kiln.broadcast_in_dim %eps, dims = [] : tensor<f32> -> ",
      keep, "\n  %ve = kiln.add %var, %epsb : ", keep,
      "\n  %rs = kiln.rsqrt %ve : ", keep,
      "\n  %rb = kiln.broadcast_in_dim %rs, dims = [0, 1] : ", keep, " -> ",
      full, "\n  %y0 = kiln.mul %c, %rb : ", full,
      "\n  %wb = kiln.broadcast_in_dim %w, dims = [1] : ", vec, " -> ", full,
      "\n  %y1 = kiln.mul %y0, %wb : ", full,
      "\n  %bb = kiln.broadcast_in_dim %b, dims = [1] : ", vec, " -> ", full,
      "\n  %y = kiln.add %y1, %bb : ", full, "\n  return %y : ", full, "\n}\n");
}

} // namespace kiln::testing

#endif // KILN_TESTS_UNIT_BACKENDTESTMODULES_H
