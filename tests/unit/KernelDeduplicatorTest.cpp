// KernelDeduplicator: kernel modules that are the same ops over the same
// values share a symbol, whatever their locations; a different attribute,
// type or use of a value makes a new one.
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

} // namespace
} // namespace kiln::compiler::cpu
