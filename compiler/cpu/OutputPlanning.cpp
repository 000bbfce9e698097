// Where a lowered function's returned values are written: each computed
// value straight into its output buffer, and into a donated input's bytes
// where that is safe (a parameter updated in place, see FunctionLowering.h).
#include "compiler/cpu/FunctionLowering.h"

#include "compiler/KernelAliasing.h"

namespace kiln::compiler::cpu {

using namespace mlir;

namespace {

/// True when every reader of `x` but `def` runs before `def` (thunks follow
/// block order), following reshapes and the slices GEMMs read in place
/// (`views`), which alias their operand's buffer: then `def` may overwrite
/// x. A returned x is read after every thunk.
bool onlyEarlierReaders(Value x, Operation *def,
                        const DenseMap<Value, SliceOp> &views) {
  for (Operation *user : x.getUsers()) {
    if (user == def)
      continue;
    if (isa<ReshapeOp>(user) ||
        (isa<SliceOp>(user) && views.contains(user->getResult(0)))) {
      if (!onlyEarlierReaders(user->getResult(0), def, views))
        return false;
      continue;
    }
    if (isa<OptimizationBarrierOp>(user)) {
      for (OpOperand &use : x.getUses())
        if (use.getOwner() == user &&
            !onlyEarlierReaders(user->getResult(use.getOperandNumber()), def,
                                views))
          return false;
      continue;
    }
    if (user->getBlock() != def->getBlock() || !user->isBeforeInBlock(def))
      return false;
  }
  return true;
}

} // namespace

int64_t FunctionLowering::aliasedOutput(unsigned arg) {
  auto alias = function_.getArgAttrOfType<IntegerAttr>(
      arg, KilnDialect::kOutputAliasAttrName);
  return alias ? alias.getInt() : -1;
}

bool FunctionLowering::tieAllows(unsigned arg, unsigned output, bool tiedOnly) {
  int64_t tiedTo = aliasedOutput(arg);
  return tiedOnly ? tiedTo == int64_t(output)
                  : tiedTo < 0 || tiedTo == int64_t(output);
}

int32_t FunctionLowering::findDonor(Operation *def, Value v, unsigned output,
                                    const std::set<int32_t> &used) {
  Block *entry = &function_.getBody().front();
  // Two passes: the argument tied to this output first (a parameter's new
  // value then lives where the parameter did, and a device runtime finds it
  // in place next step), then any argument tied to no other output.
  for (bool tiedOnly : {true, false})
    for (auto [index, operand] : llvm::enumerate(def->getOperands())) {
      // An argument read through barriers is still that argument's buffer.
      Value x = operand;
      while (auto barrier = x.getDefiningOp<OptimizationBarrierOp>())
        x = barrier.getOperand(cast<OpResult>(x).getResultNumber());
      auto arg = dyn_cast<BlockArgument>(x);
      if (!arg || arg.getOwner() != entry || x.getType() != v.getType() ||
          !mayWriteResultOverOperand(def, cast<OpResult>(v).getResultNumber(),
                                     index))
        continue;
      int32_t i = arg.getArgNumber();
      if (!tieAllows(i, output, tiedOnly))
        continue;
      if (exe_.signature.inputs[i].donated && !used.count(i) &&
          onlyEarlierReaders(x, def, gemmViews_))
        return i;
    }
  return -1;
}

int32_t FunctionLowering::findOverwritableDonor(Operation *def, Value v,
                                                unsigned output,
                                                const std::set<int32_t> &used) {
  auto overwritable = [&](BlockArgument arg) {
    return arg.use_empty() ||
           (isa<AllReduceOp>(def) && onlyEarlierReaders(arg, def, gemmViews_));
  };
  for (bool tiedOnly : {true, false})
    for (BlockArgument arg : function_.getArguments()) {
      int32_t i = arg.getArgNumber();
      if (!tieAllows(i, output, tiedOnly))
        continue;
      if (arg.getType() == v.getType() && overwritable(arg) &&
          exe_.signature.inputs[i].donated && !used.count(i))
        return i;
    }
  return -1;
}

void FunctionLowering::planOutputs(func::ReturnOp ret) {
  std::set<uint32_t> claimed;
  std::set<int32_t> donors;
  for (auto [o, v] : llvm::enumerate(ret.getOperands())) {
    uint32_t slot = slotOf_.lookup(v);
    runtime::BufferSlot &s = exe_.plan.slots[slot];
    int32_t donor = -1;
    Operation *def = v.getDefiningOp();
    if (def && s.kind == runtime::BufferSlot::Kind::arena &&
        !constantSlots_.count(slot) && claimed.insert(slot).second) {
      s.kind = runtime::BufferSlot::Kind::output;
      s.input = o;
      donor = findDonor(def, v, o, donors);
      if (donor < 0)
        donor = findOverwritableDonor(def, v, o, donors);
      if (donor >= 0)
        donors.insert(donor);
    }
    exe_.plan.outputSlots.push_back(slot);
    exe_.plan.outputDonors.push_back(donor);
  }
}

} // namespace kiln::compiler::cpu
