// KernelDeduplicator: kernel modules that are the same ops over the same
// values share a symbol, whatever their locations; a different attribute,
// type or use of a value makes a new one. And an op like one remembered
// (reading any values of the same types) finds the kernel emitted for it.
#include "compiler/cpu/KernelDeduplicator.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <string>

namespace kiln::compiler::cpu {
namespace {

class KernelDeduplicatorTest : public ::testing::Test {
protected:
  void SetUp() override {
    context_.loadDialect<mlir::arith::ArithDialect, mlir::func::FuncDialect>();
  }
  /// A scratch module holding `body` as kiln_kernel(%a, %b: f32) -> f32.
  mlir::OwningOpRef<mlir::ModuleOp> kernel(const std::string &body,
                                           const std::string &type = "f32") {
    std::string text = "func.func @kiln_kernel(%a: " + type + ", %b: " + type +
                       ") -> " + type + " {\n" + body + "\n}";
    auto module = mlir::parseSourceString<mlir::ModuleOp>(text, &context_);
    EXPECT_TRUE(module) << text;
    return module;
  }

  mlir::MLIRContext context_;
  KernelDeduplicator names_;
};

TEST_F(KernelDeduplicatorTest, SameOpsShareASymbolWhateverTheirLocations) {
  auto first = kernel("%s = arith.subf %a, %b : f32 loc(\"layer0\")\n"
                      "return %s : f32");
  auto second = kernel("%s = arith.subf %a, %b : f32 loc(\"layer7\")\n"
                       "return %s : f32");
  auto [symbol, isNew] = names_.intern(*first, "kiln_kernel_");
  EXPECT_EQ(symbol, "kiln_kernel_0");
  EXPECT_TRUE(isNew);
  auto [again, againNew] = names_.intern(*second, "kiln_kernel_");
  EXPECT_EQ(again, "kiln_kernel_0");
  EXPECT_FALSE(againNew);
  EXPECT_EQ(names_.size(), 1u);
}

TEST_F(KernelDeduplicatorTest, OperandsInAnotherOrderMakeANewKernel) {
  // Same ops, names, attributes and types: only the uses differ, which a
  // hash over ops alone cannot see.
  auto ab = kernel("%s = arith.subf %a, %b : f32\nreturn %s : f32");
  auto ba = kernel("%s = arith.subf %b, %a : f32\nreturn %s : f32");
  EXPECT_EQ(names_.intern(*ab, "k").first, "k0");
  auto [symbol, isNew] = names_.intern(*ba, "k");
  EXPECT_EQ(symbol, "k1");
  EXPECT_TRUE(isNew);
  // And each is found again.
  EXPECT_EQ(names_
                .intern(*kernel("%s = arith.subf %b, %a : f32\n"
                                "return %s : f32"),
                        "k")
                .first,
            "k1");
}

TEST_F(KernelDeduplicatorTest, AttributesAndTypesTellKernelsApart) {
  auto fast = kernel("%s = arith.addf %a, %b fastmath<fast> : f32\n"
                     "return %s : f32");
  auto exact = kernel("%s = arith.addf %a, %b : f32\nreturn %s : f32");
  auto wide = kernel("%s = arith.addf %a, %b : f64\nreturn %s : f64", "f64");
  auto one = kernel("%c = arith.constant 1.0 : f32\n"
                    "%s = arith.addf %a, %c : f32\nreturn %s : f32");
  auto two = kernel("%c = arith.constant 2.0 : f32\n"
                    "%s = arith.addf %a, %c : f32\nreturn %s : f32");
  for (auto *module : {&fast, &exact, &wide, &one, &two})
    EXPECT_TRUE(names_.intern(**module, "k").second);
  EXPECT_EQ(names_.size(), 5u);
}

TEST_F(KernelDeduplicatorTest, TheRememberedKernelOutlivesTheScratchModule) {
  // The lowering moves a new kernel's ops into its kernel module (and
  // renames it) right after interning it: the copy is what later kernels
  // are compared with.
  {
    auto first = kernel("%s = arith.mulf %a, %b : f32\nreturn %s : f32");
    EXPECT_TRUE(names_.intern(*first, "k").second);
    (*first).getBody()->clear();
  }
  auto second = kernel("%s = arith.mulf %a, %b : f32\nreturn %s : f32");
  EXPECT_FALSE(names_.intern(*second, "k").second);
}

/// The first op of kiln_kernel's body in `module`.
mlir::Operation *firstOp(mlir::ModuleOp module) {
  auto kernel = *module.getOps<mlir::func::FuncOp>().begin();
  return &kernel.getBody().front().front();
}

TEST_F(KernelDeduplicatorTest, AnOpLikeARememberedOneFindsItsKernel) {
  auto remembered = kernel("%s = arith.subf %a, %b : f32\nreturn %s : f32");
  KernelDeduplicator::Emitted emitted;
  emitted.symbol = "kiln_kernel_3";
  emitted.info.rangeSize = 42;
  names_.rememberSource(firstOp(*remembered), emitted);
  // The values read may differ (a kernel reads its operands' buffers by
  // position), their types may not; nor may the op or its attributes.
  auto swapped = kernel("%s = arith.subf %b, %a : f32\nreturn %s : f32");
  const KernelDeduplicator::Emitted *found =
      names_.findSource(firstOp(*swapped));
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->symbol, "kiln_kernel_3");
  EXPECT_EQ(found->info.rangeSize, 42);
  auto wide = kernel("%s = arith.subf %a, %b : f64\nreturn %s : f64", "f64");
  EXPECT_EQ(names_.findSource(firstOp(*wide)), nullptr);
  auto add = kernel("%s = arith.addf %a, %b : f32\nreturn %s : f32");
  EXPECT_EQ(names_.findSource(firstOp(*add)), nullptr);
  auto fast =
      kernel("%s = arith.subf %a, %b fastmath<fast> : f32\nreturn %s : f32");
  EXPECT_EQ(names_.findSource(firstOp(*fast)), nullptr);
  // Operands of other types, the result's the same.
  auto fromHalf = mlir::parseSourceString<mlir::ModuleOp>(
      "func.func @kiln_kernel(%h: f16) -> f64 {\n"
      "%w = arith.extf %h : f16 to f64\nreturn %w : f64\n}",
      &context_);
  auto fromFloat = mlir::parseSourceString<mlir::ModuleOp>(
      "func.func @kiln_kernel(%h: f32) -> f64 {\n"
      "%w = arith.extf %h : f32 to f64\nreturn %w : f64\n}",
      &context_);
  names_.rememberSource(firstOp(*fromHalf), emitted);
  EXPECT_EQ(names_.findSource(firstOp(*fromFloat)), nullptr);
  // The remembered op itself, once more.
  EXPECT_NE(names_.findSource(firstOp(*remembered)), nullptr);
}

} // namespace
} // namespace kiln::compiler::cpu
