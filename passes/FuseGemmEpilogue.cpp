// kiln-fuse-gemm-epilogue: a matrix product and the f32 add that is its
// only reader become one `kiln.fusion gemm`, which a backend runs as a
// single GEMM library call that adds the other operand as it stores the
// product (beta = 1: cuBLASLt's C, oneDNN's sum post-op, BLAS's beta). The
// sum is then never stored apart from the product: the loss's lm_head
// weight gradient, summed over its chunks, is one GEMM per chunk adding
// into the running f32 sum instead of a GEMM and an add kernel.
//
// A fusion computes what its body computes (docs/IR.md §4): the product is
// rounded once to f32, then added and rounded again, as the GEMM library's
// f32 epilogue does. Only f32 results qualify: a 16-bit product would be
// rounded to 16 bits before the add in the body, which an epilogue that
// adds in f32 does not do.
#include "passes/Passes.h"

#include "passes/FusionUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace kiln {
#define GEN_PASS_DEF_FUSEGEMMEPILOGUEPASS
#include "passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace kiln {
namespace {

/// A product the GEMM libraries run with an f32 result: f32 operands, or
/// bf16 / f16 ones (the mixed-precision form kiln-autocast makes).
bool isF32Gemm(DotGeneralOp dot) {
  auto element = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getElementType();
  };
  Type in = element(dot.getLhs());
  return element(dot.getResult()).isF32() &&
         (in.isF32() || in.isBF16() || in.isF16());
}

struct Epilogue {
  DotGeneralOp product;
  Value accumulator;
};

/// `add` as a product plus an accumulator: an f32 GEMM only the add reads,
/// and an accumulator gemmAccumulatorOf accepts (a sum stored anyway, of a
/// value stored anyway: else a loop reads them from fewer bytes).
std::optional<Epilogue> epilogueOf(AddOp add) {
  for (unsigned i = 0; i < 2; ++i) {
    auto dot = add->getOperand(i).getDefiningOp<DotGeneralOp>();
    if (!dot || !dot->hasOneUse() || !isF32Gemm(dot))
      continue;
    if (Value accumulator = gemmAccumulatorOf(add, dot.getResult()))
      return Epilogue{dot, accumulator};
  }
  return std::nullopt;
}

struct FuseGemmEpiloguePass
    : impl::FuseGemmEpiloguePassBase<FuseGemmEpiloguePass> {
  using FuseGemmEpiloguePassBase::FuseGemmEpiloguePassBase;

  void runOnOperation() override {
    SmallVector<AddOp> adds;
    getOperation().walk([&](AddOp add) {
      if (isa<func::FuncOp>(add->getParentOp()))
        adds.push_back(add);
    });
    for (AddOp add : adds) {
      std::optional<Epilogue> epilogue = epilogueOf(add);
      if (!epilogue)
        continue;
      // The product's only reader is the add, so the pair has no outside
      // path between them and outlining it cannot make a cycle.
      FusionOp fusion =
          outlineFusion({epilogue->product, add}, {}, FusionKind::gemm);
      // The body's add reads the product first, then the accumulator: the
      // order every backend's lowering expects (IEEE addition commutes).
      auto inner = cast<AddOp>(
          fusion.getBody().front().getTerminator()->getOperand(0)
              .getDefiningOp());
      if (!inner.getLhs().getDefiningOp<DotGeneralOp>()) {
        Value lhs = inner.getLhs();
        inner.getLhsMutable().assign(inner.getRhs());
        inner.getRhsMutable().assign(lhs);
      }
      ++numFused;
    }
  }
};

} // namespace
} // namespace kiln
