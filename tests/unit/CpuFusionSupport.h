// What the CPU fusion tests share (CpuFusionTest.cpp, CpuFusionStashTest.cpp):
// a module's fusion, and a function compiled for the CPU, run and compared
// with the reference evaluator.
#ifndef KILN_TESTS_UNIT_CPUFUSIONSUPPORT_H
#define KILN_TESTS_UNIT_CPUFUSIONSUPPORT_H

#include "BackendTestModules.h"
#include "CpuTestSupport.h"

#include "compiler/cpu/CodeGen.h"
#include "compiler/cpu/KernelEmitter.h"

namespace kiln::testing {

/// The last kiln.fusion in `parsed` (the tests hold one), or null.
inline mlir::Operation *onlyFusion(ParsedModule &parsed) {
  mlir::Operation *fusion = nullptr;
  if (parsed.module)
    parsed.module->walk([&](FusionOp f) { fusion = f; });
  return fusion;
}

/// The kernel of `parsed`'s fusion emitted with `options`, before its
/// lowering to LLVM.
inline mlir::OwningOpRef<mlir::ModuleOp> emitFusionKernelModule(
    ParsedModule &parsed,
    const compiler::cpu::detail::FusionKernelOptions &options) {
  mlir::Operation *fusion = onlyFusion(parsed);
  EXPECT_TRUE(fusion);
  if (!fusion)
    return nullptr;
  compiler::cpu::loadKernelDialects(*fusion->getContext());
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::ModuleOp::create(fusion->getLoc());
  EXPECT_TRUE(succeeded(compiler::cpu::detail::emitFusionKernel(
      fusion, *module, "kernel", options)));
  return module;
}

/// How many ops of type OpT the kernel of `source`'s fusion holds, emitted
/// with `options` (-1 when it could not be emitted).
template <typename OpT>
int opsInKernel(const std::string &source,
                const compiler::cpu::detail::FusionKernelOptions &options) {
  ParsedModule parsed = parseModule(source);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      emitFusionKernelModule(parsed, options);
  if (!module)
    return -1;
  int count = 0;
  module->walk([&](OpT) { ++count; });
  return count;
}

struct Compiled {
  compiler::cpu::CpuCompileStats stats;
  std::vector<HostTensor> actual, expected;
};

/// Evaluates @main with the reference, compiles it for the CPU (pipeline
/// included) and runs it; the caller checks kernel counts and values.
inline Compiled compileAndRun(const std::string &source,
                              const std::vector<HostTensor> &inputs,
                              const compiler::cpu::KernelTarget &target = {}) {
  Compiled out;
  ParsedModule parsed = parseModule(source);
  EXPECT_TRUE(parsed.module) << source;
  if (!parsed.module)
    return out;
  auto main = parsed.module->lookupSymbol<mlir::func::FuncOp>("main");
  absl::StatusOr<std::vector<HostTensor>> expected =
      reference::evaluate(main, inputs);
  EXPECT_TRUE(expected.ok()) << expected.status().ToString();
  absl::StatusOr<runtime::Executable> exe = compiler::cpu::compileExecutable(
      *parsed.module, "main", &out.stats, {}, target);
  EXPECT_TRUE(exe.ok()) << exe.status().ToString() << "\n" << source;
  if (!expected.ok() || !exe.ok())
    return out;
  auto program = runtime::loadCpuProgram(*std::move(exe));
  EXPECT_TRUE(program.ok()) << program.status().ToString();
  if (!program.ok())
    return out;
  auto actual = (*program)->run(runtime::borrowAll(inputs));
  EXPECT_TRUE(actual.ok()) << actual.status().ToString();
  if (actual.ok())
    out.actual = *std::move(actual);
  out.expected = *std::move(expected);
  return out;
}

inline void expectValues(const Compiled &c, double scale) {
  ASSERT_EQ(c.actual.size(), c.expected.size());
  for (size_t i = 0; i < c.actual.size(); ++i)
    EXPECT_EQ(compareTensors(c.actual[i], c.expected[i], scale), "")
        << "result " << i;
}

/// The function compiles to one kernel thunk (the fusion) and matches.
inline void expectOneKernel(const std::string &source,
                            const std::vector<HostTensor> &inputs,
                            double scale = 1,
                            const compiler::cpu::KernelTarget &target = {}) {
  SCOPED_TRACE(source);
  Compiled c = compileAndRun(source, inputs, target);
  EXPECT_EQ(c.stats.opKernels, 1);
  EXPECT_EQ(c.stats.gemms, 0);
  expectValues(c, scale);
}

} // namespace kiln::testing

#endif // KILN_TESTS_UNIT_CPUFUSIONSUPPORT_H
