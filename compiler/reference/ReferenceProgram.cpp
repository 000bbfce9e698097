// The reference backend's program: a private MLIRContext holding a copy of
// the module, run through kiln::reference::evaluate.
#include "compiler/reference/ReferenceProgram.h"

#include "compiler/Signature.h"
#include "ir/KilnDialect.h"
#include "ir/reference/Evaluator.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

#include <mutex>

namespace kiln::compiler {
namespace {

class ReferenceProgram final : public runtime::Program {
public:
  ReferenceProgram(std::unique_ptr<mlir::MLIRContext> context,
                   mlir::OwningOpRef<mlir::ModuleOp> module,
                   mlir::func::FuncOp function,
                   runtime::ProgramSignature signature)
      : context_(std::move(context)), module_(std::move(module)),
        function_(function), signature_(std::move(signature)) {}

  const runtime::ProgramSignature &signature() const override {
    return signature_;
  }
  std::string_view backendName() const override { return "reference"; }

  runtime::AllocationStats allocationStats() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return allocations_;
  }

protected:
  /// The evaluator takes a contiguous array of tensors, so borrowed inputs
  /// are copied (the oracle stays simple); every result is a fresh buffer.
  absl::StatusOr<std::vector<HostTensor>>
  execute(std::vector<runtime::ProgramInput> inputs) override {
    std::vector<HostTensor> tensors;
    tensors.reserve(inputs.size());
    for (runtime::ProgramInput &input : inputs)
      tensors.push_back(input.isDonated() ? input.take() : input.tensor());
    absl::StatusOr<std::vector<HostTensor>> results =
        reference::evaluate(function_, tensors);
    if (results.ok()) {
      std::lock_guard<std::mutex> lock(mutex_);
      for (const HostTensor &result : *results) {
        ++allocations_.buffers;
        allocations_.bytes += static_cast<int64_t>(result.byteSize());
      }
    }
    return results;
  }

private:
  mutable std::mutex mutex_;
  runtime::AllocationStats allocations_;
  std::unique_ptr<mlir::MLIRContext> context_;
  mlir::OwningOpRef<mlir::ModuleOp> module_;
  mlir::func::FuncOp function_;
  runtime::ProgramSignature signature_;
};

} // namespace

absl::StatusOr<std::unique_ptr<runtime::Program>>
createReferenceProgram(mlir::ModuleOp module, const std::string &function) {
  // Copy the module into a context of our own through bytecode: the program
  // must not depend on the lifetime of the caller's context.
  std::string bytes;
  llvm::raw_string_ostream os(bytes);
  if (mlir::failed(mlir::writeBytecodeToFile(module, os)))
    return absl::InternalError("cannot serialize the module to bytecode");
  os.flush();

  auto context = std::make_unique<mlir::MLIRContext>();
  context->getOrLoadDialect<KilnDialect>();
  context->getOrLoadDialect<mlir::func::FuncDialect>();
  mlir::ParserConfig config(context.get());
  mlir::OwningOpRef<mlir::ModuleOp> copy =
      mlir::parseSourceString<mlir::ModuleOp>(bytes, config);
  if (!copy)
    return absl::InternalError("cannot re-read the module's bytecode");

  absl::StatusOr<mlir::func::FuncOp> entry = findEntryFunction(*copy, function);
  if (!entry.ok())
    return entry.status();
  absl::StatusOr<runtime::ProgramSignature> signature = signatureOf(*entry);
  if (!signature.ok())
    return signature.status();
  return std::make_unique<ReferenceProgram>(std::move(context), std::move(copy),
                                            *entry, *std::move(signature));
}

} // namespace kiln::compiler
