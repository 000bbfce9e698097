// outlineFusion's place in the block: a fusion whose result is read before
// it moves those readers, and what reads them, to the block's end as MLIR's
// sortTopologically would (kiln's memory plans were tuned on that order);
// and the block's op order stays consistent with its list through many
// fusions, a root growing one producer at a time as kiln-fuse-elementwise
// grows it.
#include "ir/KilnDialect.h"
#include "passes/FusionUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kiln {
namespace {

class OutlineFusion : public ::testing::Test {
protected:
  void SetUp() override {
    context_.loadDialect<KilnDialect, mlir::func::FuncDialect>();
  }
  mlir::Block &parse(const std::string &text) {
    module_ = mlir::parseSourceString<mlir::ModuleOp>(text, &context_);
    EXPECT_TRUE(module_);
    auto func = *module_->getOps<mlir::func::FuncOp>().begin();
    return func.getBody().front();
  }
  /// The block's ops by name, in list order.
  static std::vector<std::string> names(mlir::Block &block) {
    std::vector<std::string> out;
    for (mlir::Operation &op : block)
      out.push_back(op.getName().getStringRef().str());
    return out;
  }
  /// Whether isBeforeInBlock agrees with the list for every pair of
  /// neighbours (and so, being a total order, for every pair).
  static bool orderMatchesList(mlir::Block &block) {
    for (mlir::Operation &op : block)
      if (mlir::Operation *next = op.getNextNode();
          next && (!op.isBeforeInBlock(next) || next->isBeforeInBlock(&op)))
        return false;
    return true;
  }
  /// Fuses the block's ops `producer` and `root` (by position) and expects
  /// the block's ops then to be `expected`, in order, MLIR's order to agree
  /// and the module to verify.
  void expectAfterFusing(mlir::Block &block, int producer, int root,
                         const std::vector<std::string> &expected) {
    outlineFusion({nth(block, producer), nth(block, root)}, {},
                  FusionKind::loop);
    EXPECT_EQ(names(block), expected);
    EXPECT_TRUE(orderMatchesList(block));
    EXPECT_TRUE(mlir::succeeded(mlir::verify(*module_)));
  }
  /// The block's n-th op.
  static mlir::Operation *nth(mlir::Block &block, int n) {
    auto it = block.begin();
    std::advance(it, n);
    return &*it;
  }

  mlir::MLIRContext context_;
  mlir::OwningOpRef<mlir::ModuleOp> module_;
};

// exp's result is read by neg before add, where the fusion of exp and add
// goes: neg and abs (which reads neg) move after everything else, in their
// order; sqrt and mul, which do not depend on them, keep theirs.
TEST_F(OutlineFusion, ReadersBeforeTheFusionMoveToTheEnd) {
  mlir::Block &block = parse(R"(
    func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
      %a = kiln.exp %x : tensor<4xf32>
      %r = kiln.neg %a : tensor<4xf32>
      %s = kiln.abs %r : tensor<4xf32>
      %t = kiln.sqrt %x : tensor<4xf32>
      %c = kiln.add %a, %x : tensor<4xf32>
      %d = kiln.mul %c, %t : tensor<4xf32>
      return %s, %d : tensor<4xf32>, tensor<4xf32>
    })");
  expectAfterFusing(block, 0, 4,
                    {"kiln.sqrt", "kiln.fusion", "kiln.mul", "kiln.neg",
                     "kiln.abs", "func.return"});
}

// The same with the early reader's users spread out, the block's last op
// among them: each sinks in its order, after every op that stays.
TEST_F(OutlineFusion, TheLastOpSinksWithTheOtherReaders) {
  mlir::Block &block = parse(R"(
    func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
      %a = kiln.exp %x : tensor<4xf32>
      %r = kiln.neg %a : tensor<4xf32>
      %t = kiln.sqrt %x : tensor<4xf32>
      %u = kiln.log %r : tensor<4xf32>
      %c = kiln.add %a, %x : tensor<4xf32>
      %d = kiln.mul %c, %t : tensor<4xf32>
      %s = kiln.abs %u : tensor<4xf32>
      return %s, %d, %t : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
    })");
  expectAfterFusing(block, 0, 4,
                    {"kiln.sqrt", "kiln.fusion", "kiln.mul", "kiln.neg",
                     "kiln.log", "kiln.abs", "func.return"});
}

// A chain of 64 elementwise ops fused into its last one producer at a
// time: every fusion takes its root's place, and the order MLIR keeps
// still matches the list (each fusion numbered between its neighbours).
TEST_F(OutlineFusion, AGrowingRootKeepsTheBlockOrdered) {
  std::string text = "func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) "
                     "-> (tensor<4xf32>, tensor<4xf32>) {\n"
                     "  %v0 = kiln.exp %x : tensor<4xf32>\n";
  for (int i = 1; i < 64; ++i)
    text += "  %v" + std::to_string(i) + " = kiln.add %v" +
            std::to_string(i - 1) + ", %x : tensor<4xf32>\n  %w" +
            std::to_string(i) + " = kiln.mul %y, %y : tensor<4xf32>\n";
  text += "  return %v63, %w63 : tensor<4xf32>, tensor<4xf32>\n}\n";
  mlir::Block &block = parse(text);
  mlir::Operation *root = nullptr;
  for (mlir::Operation &op : block)
    if (op.getName().getStringRef() == "kiln.add")
      root = &op; // the last add
  ASSERT_NE(root, nullptr);
  while (mlir::Operation *producer = root->getOperand(0).getDefiningOp()) {
    root = outlineFusion({producer, root}, {}, FusionKind::loop);
    ASSERT_TRUE(orderMatchesList(block));
  }
  int fusions = 0;
  for (mlir::Operation &op : block)
    fusions += mlir::isa<FusionOp>(op);
  EXPECT_EQ(fusions, 1);
  EXPECT_TRUE(mlir::succeeded(mlir::verify(*module_)));
}

} // namespace
} // namespace kiln
