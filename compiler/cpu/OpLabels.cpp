// Op names for reports (OpLabels.h).
#include "compiler/cpu/OpLabels.h"

#include "ir/KilnDialect.h"

#include "mlir/IR/Location.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <vector>

namespace kiln::compiler::cpu {

using namespace mlir;

std::string describeOrigin(Operation *op) {
  std::string text = op->getName().getStringRef().str();
  if (isa<UnknownLoc>(op->getLoc()))
    return text;
  llvm::raw_string_ostream os(text);
  os << " at ";
  op->getLoc().print(os);
  return text;
}

std::string kernelLabel(Operation *op) {
  std::string text = op->getName().stripDialect().str();
  if (auto fusion = dyn_cast<FusionOp>(op)) {
    std::vector<std::string> inner;
    fusion.getBody().walk([&](Operation *o) {
      std::string name = o->getName().stripDialect().str();
      if (!isa<YieldOp>(o) &&
          std::find(inner.begin(), inner.end(), name) == inner.end())
        inner.push_back(name);
    });
    text += "{";
    for (size_t i = 0; i < inner.size(); ++i)
      text += (i ? ", " : "") + inner[i];
    text += "}";
  }
  llvm::raw_string_ostream os(text);
  auto types = [&](TypeRange range) {
    os << "(";
    for (size_t i = 0; i < range.size(); ++i) {
      if (i == 4) {
        os << ", ... " << range.size() - 4 << " more";
        break;
      }
      os << (i ? ", " : "") << range[i];
    }
    os << ")";
  };
  os << " ";
  types(op->getOperandTypes());
  os << " -> ";
  types(op->getResultTypes());
  return text;
}

} // namespace kiln::compiler::cpu
