// kiln-fuse-gemm-epilogue: a matrix product and the f32 add that is its
// only reader become one `kiln.fusion gemm`, which a backend runs as a
// single GEMM library call that adds the other operand as it stores the
// product (beta = 1: cuBLASLt's C, oneDNN's sum post-op, BLAS's beta). The
// sum is then never stored apart from the product: the loss's lm_head
// weight gradient, summed over its chunks, is one GEMM per chunk adding
// into the running f32 sum instead of a GEMM and an add kernel. A product
// padded with zeros along its rows before the add (productPaddedAlongRows:
// attention's key and value gradients of a chunk of queries, padded to
// every key) adds into those rows of the sum alone (the GEMM's C viewed as
// blocks of the sum's rows); the rest of the sum is the accumulator's.
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
  /// The kiln.pad that places the product in blocks of the sum's rows, or
  /// null when the product is added as it is.
  PadOp pad;
  Value accumulator;
};

/// `add` as a product (perhaps padded along its rows: attention's key and
/// value gradients of a chunk of queries, padded to every key) plus an
/// accumulator: an f32 GEMM only the add (or its pad) reads, and an
/// accumulator gemmAccumulatorOf accepts (a sum stored anyway, of a value
/// stored anyway: else a loop reads them from fewer bytes).
std::optional<Epilogue> epilogueOf(AddOp add) {
  for (unsigned i = 0; i < 2; ++i) {
    Value term = add->getOperand(i);
    DotGeneralOp dot = productPaddedAlongRows(term);
    auto pad = term.getDefiningOp<PadOp>();
    if (!dot || !dot->hasOneUse() || !isF32Gemm(dot) ||
        (pad && !pad->hasOneUse()))
      continue;
    if (Value accumulator = gemmAccumulatorOf(add, term))
      return Epilogue{dot, pad, accumulator};
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
      // The product's only reader is the add (or its pad, whose only
      // reader is the add), so the group has no outside path between its
      // members and outlining it cannot make a cycle.
      SmallVector<Operation *> members = {epilogue->product, add};
      if (epilogue->pad)
        members.push_back(epilogue->pad);
      FusionOp fusion = outlineFusion(members, {}, FusionKind::gemm);
      // The body's add reads the (padded) product first, then the
      // accumulator: the order every backend's lowering expects (IEEE
      // addition commutes).
      auto inner = cast<AddOp>(
          fusion.getBody().front().getTerminator()->getOperand(0)
              .getDefiningOp());
      if (!productPaddedAlongRows(inner.getLhs())) {
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
