// Outlining groups of top-level kiln ops into kiln.fusion ops, and the
// checks every fusion pass shares. A group is a set of ops of one block;
// its inputs are the values it reads from outside (constants are cloned in
// instead: the fusion is IsolatedFromAbove), its results the values of its
// members that outside ops (or the function's return) still read.
#include "passes/FusionUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;

namespace kiln {

bool reducesInnermost(ArrayRef<int64_t> shape, ArrayRef<int64_t> dims) {
  for (int64_t kept = 0; kept < static_cast<int64_t>(shape.size()); ++kept)
    if (shape[kept] != 1 && !llvm::is_contained(dims, kept) &&
        llvm::any_of(dims, [&](int64_t d) { return shape[d] != 1 && d < kept; }))
      return false;
  return true;
}

int64_t numElementsOf(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor ? tensor.getNumElements() : 1;
}

int64_t byteSizeOf(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return 0;
  int64_t bits = tensor.getElementType().getIntOrFloatBitWidth();
  return tensor.getNumElements() * std::max<int64_t>(1, bits / 8);
}

bool isElementwiseLike(Operation *op) {
  if (op->hasTrait<mlir::OpTrait::Elementwise>())
    return true;
  return isa<BroadcastInDimOp, ReshapeOp, TransposeOp, IotaOp>(op);
}

bool isMadeFromFewerBytes(Value value) {
  Operation *def = value.getDefiningOp();
  if (!def)
    return false;
  if (def->hasTrait<mlir::OpTrait::ConstantLike>())
    return true;
  if (!isElementwiseLike(def) && !isa<ConvertOp>(def))
    return false;
  int64_t read = 0;
  for (Value operand : def->getOperands())
    read += byteSizeOf(operand.getType());
  return read < byteSizeOf(value.getType());
}

bool isSumStoredAnyway(Value sum) {
  for (Operation *user : sum.getUsers()) {
    if (isa<func::ReturnOp, OptimizationBarrierOp, DotGeneralOp, GatherOp,
            ScatterAddOp>(user))
      return true;
    if (auto fusion = dyn_cast<FusionOp>(user);
        fusion && fusion.getKind() == FusionKind::gemm)
      return true;
    // The accumulator of the next term of a sum of products: stored when
    // that sum is (a chain a loop ends is summed by the loop instead).
    if (auto add = dyn_cast<AddOp>(user))
      for (Value operand : add->getOperands())
        if (operand != sum && productPaddedAlongRows(operand) &&
            isSumStoredAnyway(add.getResult()))
          return true;
  }
  return false;
}

std::optional<int64_t> contiguousSliceCut(SliceOp slice) {
  ArrayRef<int64_t> source =
      cast<ShapedType>(slice.getOperand().getType()).getShape();
  ArrayRef<int64_t> start = slice.getStartIndices();
  ArrayRef<int64_t> limit = slice.getLimitIndices();
  if (llvm::any_of(slice.getStrides(), [](int64_t s) { return s != 1; }))
    return std::nullopt;
  auto whole = [&](int64_t d) {
    return start[d] == 0 && limit[d] == source[d];
  };
  int64_t rank = source.size(), cut = 0;
  while (cut < rank && whole(cut))
    ++cut;
  for (int64_t d = cut + 1; d < rank; ++d)
    if (!whole(d))
      return std::nullopt;
  return cut;
}

bool isOneRunOfItsSource(SliceOp slice) {
  std::optional<int64_t> cut = contiguousSliceCut(slice);
  if (!cut)
    return false;
  ArrayRef<int64_t> source =
      cast<ShapedType>(slice.getOperand().getType()).getShape();
  int64_t outer = 1;
  for (int64_t d = 0; d < *cut; ++d)
    outer *= source[d];
  return *cut == int64_t(source.size()) || outer == 1;
}

DotGeneralOp productPaddedAlongRows(Value value) {
  auto pad = value.getDefiningOp<PadOp>();
  if (!pad)
    return value.getDefiningOp<DotGeneralOp>();
  auto dot = pad.getOperand().getDefiningOp<DotGeneralOp>();
  ElementsAttr zero;
  if (!dot || !matchPattern(pad.getPaddingValue(), m_Constant(&zero)) ||
      !zero.isSplat() || !isa<FloatType>(zero.getElementType()) ||
      !zero.getSplatValue<APFloat>().isZero())
    return DotGeneralOp();
  // One free dim on each side: the result is [batch..., M, N].
  int64_t rank = cast<RankedTensorType>(dot.getType()).getRank();
  int64_t batch = dot.getLhsBatchingDimensions().size();
  int64_t lhsRank = cast<RankedTensorType>(dot.getLhs().getType()).getRank();
  int64_t rhsRank = cast<RankedTensorType>(dot.getRhs().getType()).getRank();
  int64_t contracted = dot.getLhsContractingDimensions().size();
  if (rank != batch + 2 || lhsRank != batch + contracted + 1 ||
      rhsRank != batch + contracted + 1)
    return DotGeneralOp();
  for (int64_t d = 0; d < rank; ++d) {
    int64_t low = pad.getEdgePaddingLow()[d], high = pad.getEdgePaddingHigh()[d];
    if (low < 0 || high < 0 || (d != rank - 2 && (low || high)))
      return DotGeneralOp();
  }
  return dot;
}

Value gemmAccumulatorOf(AddOp add, Value term) {
  auto type = dyn_cast<RankedTensorType>(add.getType());
  if (!type || !type.getElementType().isF32() || term.getType() != type ||
      !isSumStoredAnyway(add.getResult()))
    return Value();
  Value other = add.getLhs() == term ? add.getRhs() : add.getLhs();
  if (other == term || other.getType() != type || isMadeFromFewerBytes(other))
    return Value();
  return other;
}

bool isTie(OpOperand &use) {
  auto barrier = dyn_cast<OptimizationBarrierOp>(use.getOwner());
  return barrier && !barrier.getGradientSeed() &&
         barrier->getResult(use.getOperandNumber()).use_empty();
}

bool isCheapToDuplicate(Operation *op) {
  return isa<BroadcastInDimOp, ReshapeOp, TransposeOp, IotaOp, ConvertOp,
             ConstantOp, NegOp, AbsOp, SignOp, FloorOp, NotOp, AddOp, SubOp,
             MulOp, MaxOp, MinOp, AndOp, OrOp, CompareOp, SelectOp, ClampOp>(
      op);
}

bool wouldCreateCycle(ArrayRef<Operation *> group, unsigned maxVisited) {
  if (group.empty())
    return false;
  llvm::SmallPtrSet<Operation *, 16> members(group.begin(), group.end());
  Operation *last = group.front();
  for (Operation *op : group)
    if (last->isBeforeInBlock(op))
      last = op;
  // Walk forward from the group's outside users; every path back into the
  // group must end at or before its last op, so later ops are not explored.
  SmallVector<Operation *> stack;
  llvm::SmallPtrSet<Operation *, 32> visited;
  auto pushUsers = [&](Operation *op, bool fromGroup) {
    for (Operation *user : op->getUsers()) {
      if (members.contains(user)) {
        if (!fromGroup)
          return true;
        continue;
      }
      if (user->getBlock() == last->getBlock() &&
          !user->hasTrait<mlir::OpTrait::IsTerminator>())
        stack.push_back(user);
    }
    return false;
  };
  for (Operation *op : group)
    pushUsers(op, /*fromGroup=*/true);
  while (!stack.empty()) {
    Operation *op = stack.pop_back_val();
    if (!visited.insert(op).second || last->isBeforeInBlock(op))
      continue;
    if (visited.size() > maxVisited)
      return true;
    if (pushUsers(op, /*fromGroup=*/false))
      return true;
  }
  return false;
}

namespace {

bool isConstant(Value value) {
  Operation *def = value.getDefiningOp();
  return def && def->hasTrait<mlir::OpTrait::ConstantLike>();
}

/// `ops` in block order.
SmallVector<Operation *> sortedByPosition(ArrayRef<Operation *> ops) {
  SmallVector<Operation *> sorted(ops.begin(), ops.end());
  llvm::sort(sorted, [](Operation *a, Operation *b) {
    return a->isBeforeInBlock(b);
  });
  return sorted;
}

/// Clones `op` into the builder's block; a fusion is inlined instead.
void cloneOrInline(OpBuilder &builder, Operation *op, IRMapping &mapping) {
  auto fusion = dyn_cast<FusionOp>(op);
  if (!fusion) {
    builder.clone(*op, mapping);
    return;
  }
  Block &body = fusion.getBody().front();
  for (auto [arg, input] : llvm::zip(body.getArguments(), fusion.getInputs()))
    mapping.map(arg, mapping.lookup(input));
  for (Operation &inner : body.without_terminator())
    builder.clone(inner, mapping);
  for (auto [result, yielded] :
       llvm::zip(fusion.getResults(), body.getTerminator()->getOperands()))
    mapping.map(result, mapping.lookup(yielded));
}

} // namespace

size_t fusedBodyOps(ArrayRef<Operation *> group) {
  size_t ops = 0;
  for (Operation *op : group) {
    auto fusion = dyn_cast<FusionOp>(op);
    ops += fusion ? fusion.getBody().front().getOperations().size() : 1;
  }
  return ops;
}

SetVector<Value> collectFusionInputs(ArrayRef<Operation *> group) {
  llvm::SmallPtrSet<Operation *, 16> members(group.begin(), group.end());
  SetVector<Value> inputs;
  for (Operation *op : sortedByPosition(group))
    for (Value operand : op->getOperands())
      if (!members.contains(operand.getDefiningOp()) && !isConstant(operand))
        inputs.insert(operand);
  return inputs;
}

namespace {

using OpSet = llvm::SmallPtrSet<Operation *, 16>;

/// Members' values that non-members (or the terminator) read.
SmallVector<Value> collectOutputs(ArrayRef<Operation *> all,
                                  const OpSet &members) {
  SmallVector<Value> outputs;
  for (Operation *op : all) {
    if (!members.contains(op))
      continue;
    for (Value result : op->getResults())
      if (llvm::any_of(result.getUsers(), [&](Operation *user) {
            return !members.contains(user);
          }))
        outputs.push_back(result);
  }
  return outputs;
}

/// The fusion op at `all.back()`'s position: block arguments for `inputs`,
/// the constants it reads cloned first, then `all` cloned (fusions
/// inlined), then a yield of `outputs`. When the last op is a member (it
/// goes once the fusion is built), it leaves the block first and the fusion
/// takes its place between its neighbours: MLIR numbers a new op halfway
/// between them, and a root growing one producer at a time would otherwise
/// halve the gap before it at every step until the whole block is
/// renumbered (every two or three fusions of a chain).
FusionOp buildFusion(ArrayRef<Operation *> all, ArrayRef<Value> inputs,
                     ArrayRef<Value> outputs, FusionKind kind,
                     const OpSet &members) {
  Operation *last = all.back();
  OpBuilder builder(last);
  if (members.contains(last)) {
    builder.setInsertionPoint(last->getBlock(), std::next(last->getIterator()));
    last->remove();
  }
  SmallVector<Type> resultTypes, inputTypes;
  for (Value v : outputs)
    resultTypes.push_back(v.getType());
  for (Value v : inputs)
    inputTypes.push_back(v.getType());
  auto fusion =
      FusionOp::create(builder, last->getLoc(), resultTypes, kind, inputs);
  Block *body = builder.createBlock(
      &fusion.getBody(), {}, inputTypes,
      SmallVector<Location>(inputTypes.size(), fusion.getLoc()));
  IRMapping mapping;
  for (auto [input, arg] : llvm::zip(inputs, body->getArguments()))
    mapping.map(input, arg);
  for (Operation *op : all)
    for (Value operand : op->getOperands())
      if (!mapping.contains(operand) && isConstant(operand))
        builder.clone(*operand.getDefiningOp(), mapping);
  for (Operation *op : all)
    cloneOrInline(builder, op, mapping);
  SmallVector<Value> yielded;
  for (Value v : outputs)
    yielded.push_back(mapping.lookup(v));
  YieldOp::create(builder, fusion.getLoc(), yielded);
  return fusion;
}

/// Gives `op` (just inserted) its place in the block's order now, while
/// the op before it has one: MLIR numbers an inserted op lazily and
/// renumbers the whole block when its neighbours have no number.
void numberInPlace(Operation *op) { (void)op->isBeforeInBlock(op); }

/// Whether `op`, or an op nested in it, reads a result of an op of `block`
/// that `sunk` says has sunk.
bool readsSunk(Operation *op, Block *block,
               llvm::function_ref<bool(Operation *)> sunk) {
  auto readsSinking = [&](Operation *reader) {
    for (Value operand : reader->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (def && def->getBlock() != block)
        def = block->findAncestorOpInBlock(*def);
      if (def && sunk(def))
        return true;
    }
    return false;
  };
  // A fusion's body reads only its own arguments.
  if (op->getNumRegions() == 0 ||
      op->hasTrait<mlir::OpTrait::IsIsolatedFromAbove>())
    return readsSinking(op);
  return op
      ->walk([&](Operation *nested) {
        return readsSinking(nested) ? WalkResult::interrupt()
                                    : WalkResult::advance();
      })
      .wasInterrupted();
}

/// The block re-sorted after a fusion whose results `earlyReaders` read
/// before it, as sortTopologically would re-sort it, without sorting: it
/// keeps every op whose operands are ready in place and moves the others,
/// the early readers and whatever reads them (transitively), to the end in
/// their order. One walk from the first early reader to the last op moves
/// them there as it meets them (an op sinks when it is an early reader or
/// reads one that sank), so an op has sunk when it stands after the last
/// op the walk started with. A producer merged into a late consumer can
/// sink most of a large step's backward pass, thousands of times: sorting
/// what sinks and finding it through a worklist of users were most of its
/// compile time.
void sinkEarlyReaders(Block *block, ArrayRef<Operation *> earlyReaders) {
  llvm::SmallPtrSet<Operation *, 8> readers;
  Operation *first = nullptr;
  for (Operation *reader : earlyReaders) {
    Operation *op = block->findAncestorOpInBlock(*reader);
    if (!op || !readers.insert(op).second)
      continue;
    if (!first || op->isBeforeInBlock(first))
      first = op;
  }
  if (!first)
    return;
  Operation *terminator = nullptr;
  if (block->back().hasTrait<mlir::OpTrait::IsTerminator>())
    terminator = &block->back();
  Operation *last = terminator ? terminator->getPrevNode() : &block->back();
  if (terminator)
    terminator->remove();
  auto sunk = [&](Operation *op) { return last->isBeforeInBlock(op); };
  // Taken out and appended, each is numbered from the op before it (after
  // `last`'s number); a move would make MLIR renumber the whole block at
  // its next order query.
  for (Operation *op = first, *next = nullptr; op; op = next) {
    next = op == last ? nullptr : op->getNextNode();
    if (!readers.contains(op) && !readsSunk(op, block, sunk))
      continue;
    if (op == &block->back())
      break; // the last op sinks where it stands
    op->remove();
    block->push_back(op);
    numberInPlace(op);
  }
  if (terminator) {
    block->push_back(terminator);
    numberInPlace(terminator);
  }
}

/// Points non-members at the fusion's results and erases the members,
/// copies and constants nothing reads any more; re-sorts the block when a
/// result is read before the fusion.
void redirectAndErase(FusionOp fusion, ArrayRef<Operation *> all,
                      ArrayRef<Value> outputs, const OpSet &members) {
  numberInPlace(fusion);
  llvm::SetVector<Operation *> earlyReaders;
  for (auto [output, result] : llvm::zip(outputs, fusion.getResults()))
    Value(output).replaceUsesWithIf(result, [&](OpOperand &use) {
      Operation *user = use.getOwner();
      if (members.contains(user))
        return false;
      if (user->isBeforeInBlock(fusion))
        earlyReaders.insert(user);
      return true;
    });
  SetVector<Operation *> constants;
  for (Operation *op : all)
    for (Value operand : op->getOperands())
      if (isConstant(operand) &&
          !llvm::is_contained(all, operand.getDefiningOp()))
        constants.insert(operand.getDefiningOp());
  // Reverse block order: users go before the ops they read. (An early
  // reader may be a copy that nothing reads any more.)
  for (Operation *op : llvm::reverse(all))
    if (members.contains(op) || op->use_empty()) {
      earlyReaders.remove(op);
      op->erase();
    }
  for (Operation *constant : constants)
    if (constant->use_empty())
      constant->erase();
  if (!earlyReaders.empty())
    sinkEarlyReaders(fusion->getBlock(), earlyReaders.getArrayRef());
}

} // namespace

FusionOp outlineFusion(ArrayRef<Operation *> members,
                       ArrayRef<Operation *> copies, FusionKind kind) {
  // 1. Everything cloned, in block order; its inputs and results.
  SmallVector<Operation *> all(members.begin(), members.end());
  all.append(copies.begin(), copies.end());
  all = sortedByPosition(all);
  OpSet memberSet(members.begin(), members.end());
  SetVector<Value> inputs = collectFusionInputs(all);
  SmallVector<Value> outputs = collectOutputs(all, memberSet);

  // 2. The fusion and its body; 3. outside users read it, the rest goes.
  FusionOp fusion =
      buildFusion(all, inputs.getArrayRef(), outputs, kind, memberSet);
  redirectAndErase(fusion, all, outputs, memberSet);

  // 4. Duplicated producers and inlined fusions may repeat ops in the body.
  IRRewriter rewriter(fusion.getContext());
  DominanceInfo dominance(fusion);
  eliminateCommonSubExpressions(rewriter, dominance, fusion);
  return fusion;
}

} // namespace kiln
