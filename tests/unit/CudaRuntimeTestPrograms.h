// Hand-built CUDA executables for the runtime tests on the fake driver
// (CudaRuntimeTest.cpp, CudaDeviceOutputsTest.cpp): kernel and copy
// programs, their runs, loading and statistics.
#ifndef KILN_TESTS_UNIT_CUDARUNTIMETESTPROGRAMS_H
#define KILN_TESTS_UNIT_CUDARUNTIMETESTPROGRAMS_H

#include "FakeCudaSupport.h"

#include <memory>
#include <string>
#include <vector>

namespace kiln::cudatest {

using Kind = runtime::BufferSlot::Kind;

/// PTX-like text declaring each kernel's entry with its parameters (the
/// fake driver counts them): one pointer per slot, then the range size.
inline std::string ptxDeclaring(const std::vector<std::string> &kernels) {
  std::string text = "// kiln test kernels\n.version 8.0\n.target sm_90\n";
  for (const std::string &name : kernels)
    text += ".visible .entry " + name + "(\n\t.param .u64 " + name +
            "_param_0,\n\t.param .u64 " + name + "_param_1,\n\t.param .u64 " +
            name + "_param_2\n)\n{\n\tret;\n}\n";
  return text;
}

/// Three kernel thunks, each taking two slots and the range size:
/// kiln_kernel_0 over 1000 indices (x → an arena value), kiln_kernel_1 over
/// 257 (arena → output 0), kiln_kernel_0 again over 4 updating donated y in
/// place (output 1).
inline runtime::Executable kernelExecutable() {
  runtime::Executable e = cudaExecutable();
  e.signature.inputs = {{DType::f32, {1000}, false}, {DType::f32, {4}, true}};
  e.signature.outputs = {{DType::f32, {1000}}, {DType::f32, {4}}};
  e.plan.arenaBytes = 4096;
  e.plan.slots = {slot(Kind::input, 0, 0, 4000), slot(Kind::input, 1, 0, 16),
                  slot(Kind::arena, 0, 0, 4000), slot(Kind::output, 0, 0, 4000),
                  slot(Kind::output, 1, 0, 16)};
  runtime::Thunk inPlace = kernelThunk("kiln_kernel_0", {1, 4}, 4, true);
  inPlace.kernel.inPlaceOperands = {0};
  e.thunks = {kernelThunk("kiln_kernel_0", {0, 2}, 1000, true),
              kernelThunk("kiln_kernel_1", {2, 3}, 257, true), inPlace};
  e.plan.outputSlots = {3, 4};
  e.plan.outputDonors = {-1, 1};
  e.kernelLibrary = ptxDeclaring({"kiln_kernel_0", "kiln_kernel_1"});
  return e;
}

/// Device memory kernelExecutable() needs: the arena and the device copies
/// (x, y shared with output 1, output 0; each 256-byte aligned).
inline constexpr uint64_t kKernelArenaBytes = 4096;
inline constexpr uint64_t kKernelIoBytes = 4096 + 256 + 4096;

/// Copies only: x → arena → output 0; output 1 returns x itself, output 2
/// the arena value.
inline runtime::Executable copyExecutable() {
  runtime::Executable e = cudaExecutable();
  e.signature.inputs = {{DType::f32, {8}, false}};
  e.signature.outputs = {
      {DType::f32, {8}}, {DType::f32, {8}}, {DType::f32, {8}}};
  e.plan.arenaBytes = 64;
  e.plan.slots = {slot(Kind::input, 0, 0, 32), slot(Kind::arena, 0, 0, 32),
                  slot(Kind::output, 0, 0, 32)};
  e.thunks = {copyThunk(0, 1, 32), copyThunk(1, 2, 32)};
  e.plan.outputSlots = {2, 0, 1};
  e.plan.outputDonors = {-1, -1, -1};
  return e;
}

/// A run of copyExecutable's program on x (borrowed).
inline absl::StatusOr<std::vector<HostTensor>>
runCopy(runtime::Program &program, const HostTensor &x) {
  return program.run(runtime::inputList(runtime::ProgramInput::borrow(x)));
}

inline absl::StatusOr<std::vector<HostTensor>>
runKernels(runtime::Program &program, const HostTensor &x, float yFirst) {
  return program.run(
      runtime::inputList(runtime::ProgramInput::borrow(x),
                         runtime::ProgramInput::donate(iota({4}, yFirst))));
}

inline std::unique_ptr<runtime::Program>
load(runtime::Executable executable,
     runtime::CudaRuntimeOptions options = fakeCudaOptions()) {
  auto program = runtime::loadCudaProgram(std::move(executable), options);
  EXPECT_TRUE(program.ok()) << program.status();
  return program.ok() ? *std::move(program) : nullptr;
}

inline runtime::CudaProgramStats statsOf(const runtime::Program &program) {
  absl::StatusOr<runtime::CudaProgramStats> stats =
      runtime::cudaProgramStats(program);
  EXPECT_TRUE(stats.ok()) << stats.status();
  return stats.ok() ? *stats : runtime::CudaProgramStats();
}

} // namespace kiln::cudatest

#endif // KILN_TESTS_UNIT_CUDARUNTIMETESTPROGRAMS_H
