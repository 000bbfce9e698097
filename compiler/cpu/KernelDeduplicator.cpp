#include "compiler/cpu/KernelDeduplicator.h"

#include "mlir/IR/OperationSupport.h"
#include "llvm/ADT/Hashing.h"

#include <string>

using namespace mlir;

namespace kiln::compiler::cpu {
namespace {

constexpr OperationEquivalence::Flags kIgnoreLocations =
    OperationEquivalence::IgnoreLocations;

/// Every op of `root` (nested ones included, in walk order) by name,
/// attributes and result types, and `root`'s operand types; the uses of
/// values are left to the equivalence tests, which settle collisions.
unsigned structuralHash(Operation *root) {
  llvm::hash_code hash = llvm::hash_combine_range(
      root->getOperandTypes().begin(), root->getOperandTypes().end());
  root->walk([&](Operation *op) {
    hash = llvm::hash_combine(
        hash, OperationEquivalence::computeHash(
                  op, OperationEquivalence::ignoreHashValue,
                  OperationEquivalence::ignoreHashValue, kIgnoreLocations));
  });
  return static_cast<unsigned>(static_cast<size_t>(hash));
}

/// Whether `a` and `b` are the same ops (nested ones included, locations
/// aside), each value `a` defines standing for the one of `b` at its
/// place. With `readsOutside`, a value read from outside both (an op's
/// operand) matches any value: OperationEquivalence has compared their
/// types, and a kernel reads its operands' buffers by position. A kernel
/// module reads nothing from outside.
bool sameOps(Operation *a, Operation *b, bool readsOutside) {
  llvm::DenseMap<Value, Value> counterpart;
  return OperationEquivalence::isEquivalentTo(
      a, b,
      [&](Value x, Value y) {
        auto it = counterpart.find(x);
        return success(it == counterpart.end() ? readsOutside
                                               : it->second == y);
      },
      [&](Value x, Value y) { counterpart[x] = y; }, kIgnoreLocations);
}

} // namespace

std::pair<std::string, bool>
KernelDeduplicator::intern(ModuleOp scratch, llvm::StringRef prefix) {
  llvm::SmallVector<unsigned, 1> &sameHash = byHash_[structuralHash(scratch)];
  for (unsigned index : sameHash)
    if (sameOps(scratch, *kernels_[index].module, /*readsOutside=*/false))
      return {kernels_[index].symbol, false};
  sameHash.push_back(kernels_.size());
  std::string symbol = (prefix + llvm::Twine(kernels_.size())).str();
  kernels_.push_back({OwningOpRef<ModuleOp>(scratch.clone()), symbol});
  return {symbol, true};
}

const KernelDeduplicator::Emitted *
KernelDeduplicator::findSource(Operation *op) {
  auto it = sources_.find(structuralHash(op));
  if (it == sources_.end())
    return nullptr;
  for (const auto &[source, emitted] : it->second)
    if (sameOps(op, source, /*readsOutside=*/true))
      return &emitted;
  return nullptr;
}

void KernelDeduplicator::rememberSource(Operation *op, Emitted emitted) {
  sources_[structuralHash(op)].push_back({op, std::move(emitted)});
}

} // namespace kiln::compiler::cpu
