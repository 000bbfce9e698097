#include "compiler/cpu/KernelDeduplicator.h"

#include "mlir/IR/OperationSupport.h"
#include "llvm/ADT/Hashing.h"

#include <string>

using namespace mlir;

namespace kiln::compiler::cpu {
namespace {

constexpr OperationEquivalence::Flags kIgnoreLocations =
    OperationEquivalence::IgnoreLocations;

/// Every op of `module` (nested ones included, in walk order) by name,
/// attributes and result types; the uses of values are left to
/// equivalent(), which settles collisions.
unsigned structuralHash(ModuleOp module) {
  llvm::hash_code hash = 0;
  module->walk([&](Operation *op) {
    hash = llvm::hash_combine(
        hash, OperationEquivalence::computeHash(
                  op, OperationEquivalence::ignoreHashValue,
                  OperationEquivalence::ignoreHashValue, kIgnoreLocations));
  });
  return static_cast<unsigned>(static_cast<size_t>(hash));
}

/// Whether `a` and `b` hold the same ops reading the same values: each
/// value of `a` stands for the one of `b` at its place.
bool equivalent(ModuleOp a, ModuleOp b) {
  llvm::DenseMap<Value, Value> counterpart;
  return OperationEquivalence::isEquivalentTo(
      a, b,
      [&](Value x, Value y) { return success(counterpart.lookup(x) == y); },
      [&](Value x, Value y) { counterpart[x] = y; }, kIgnoreLocations);
}

} // namespace

std::pair<std::string, bool>
KernelDeduplicator::intern(ModuleOp scratch, llvm::StringRef prefix) {
  llvm::SmallVector<unsigned, 1> &sameHash = byHash_[structuralHash(scratch)];
  for (unsigned index : sameHash)
    if (equivalent(scratch, *kernels_[index].module))
      return {kernels_[index].symbol, false};
  sameHash.push_back(kernels_.size());
  std::string symbol = (prefix + llvm::Twine(kernels_.size())).str();
  kernels_.push_back({OwningOpRef<ModuleOp>(scratch.clone()), symbol});
  return {symbol, true};
}

} // namespace kiln::compiler::cpu
