// kiln-autocast: mixed precision for matrix products. Every f32 × f32 → f32
// dot_general reads its operands rounded to bf16 and keeps its f32 result
// (the dialect allows 16-bit operands to produce f32), so the GEMM library
// multiplies bf16 and accumulates in f32, as PyTorch's autocast and XLA's
// bf16 mode do. Each rounded value gets one convert, placed right after its
// definition so every product that reads it can share it.
#include "passes/Passes.h"

#include "ir/KilnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

namespace kiln {
#define GEN_PASS_DEF_AUTOCASTPASS
#include "passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace kiln {
namespace {

bool isF32Tensor(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.getElementType().isF32();
}

struct AutocastPass : impl::AutocastPassBase<AutocastPass> {
  using AutocastPassBase::AutocastPassBase;

  void runOnOperation() override {
    func::FuncOp function = getOperation();
    OpBuilder builder(function.getContext());
    Type bf16 = builder.getBF16Type();
    llvm::DenseMap<Value, Value> rounded;
    auto roundOnce = [&](Value v) -> Value {
      Value &copy = rounded[v];
      if (!copy) {
        builder.setInsertionPointAfterValue(v);
        auto type = cast<RankedTensorType>(v.getType());
        copy = ConvertOp::create(builder, v.getLoc(), type.clone(bf16), v);
        ++numRounded;
      }
      return copy;
    };
    SmallVector<DotGeneralOp> products;
    function.walk([&](DotGeneralOp dot) {
      if (isF32Tensor(dot.getLhs()) && isF32Tensor(dot.getRhs()) &&
          isF32Tensor(dot.getResult()))
        products.push_back(dot);
    });
    for (DotGeneralOp dot : products) {
      Value lhs = roundOnce(dot.getLhs()), rhs = roundOnce(dot.getRhs());
      // The operands change in place: the result type (f32) and the
      // dimension numbers stay, and the verifier accepts bf16 → f32.
      dot.getLhsMutable().assign(lhs);
      dot.getRhsMutable().assign(rhs);
      ++numProducts;
    }
  }
};

} // namespace
} // namespace kiln
