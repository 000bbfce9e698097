// Which kernel thunks join a group, and the group's kernel function.
//
// The group kernel, for its part [begin, end) of the joined range:
//
//   b = begin
//   while b < end:
//     (buffers, kind, lo, hi, next) = the member m holding index b, found
//         by a binary tree of compares against the members' starts; its
//         buffers loaded from the group's table at constant positions
//     if lo < hi: the kernel function of `kind` over [lo, hi) of m's range,
//         with m's buffers in a table of its own
//     b = next (m's padded end, or end)
//
// Members of one kernel function ("kind": GPT-2's AdamW has six) share one
// call: the tree yields their buffers rather than calling from its leaves,
// so a GPU entry point inlines each kind's body once, not once per member,
// and the buffers it reads are the entry's own parameters (constant
// positions), which NVPTX knows to be global memory.
#include "compiler/cpu/KernelGroups.h"

#include "compiler/cpu/KernelBuilder.h"

#include "absl/strings/str_cat.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <set>

namespace kiln::compiler::cpu {

using namespace mlir;

namespace {

/// The buffer each slot names while the program runs: an output written
/// over its donor input is that input's buffer.
std::vector<uint32_t> bufferIdentities(const runtime::Executable &exe) {
  const runtime::BufferPlan &plan = exe.plan;
  std::vector<uint32_t> identity(plan.slots.size());
  std::iota(identity.begin(), identity.end(), 0u);
  std::map<uint32_t, uint32_t> slotOfInput;
  for (uint32_t s = 0; s < plan.slots.size(); ++s)
    if (plan.slots[s].kind == runtime::BufferSlot::Kind::input)
      slotOfInput[plan.slots[s].input] = s;
  for (size_t o = 0; o < plan.outputSlots.size(); ++o)
    if (int32_t donor = plan.outputDonors[o]; donor >= 0)
      if (auto it = slotOfInput.find(donor); it != slotOfInput.end())
        identity[plan.outputSlots[o]] = it->second;
  return identity;
}

struct Member {
  const runtime::KernelThunk *thunk;
  /// Group table positions of the member's buffers, in its own order.
  std::vector<uint32_t> positions;
  int64_t start = 0;
};

/// A group's label lists its members' distinct labels until it is this
/// long, then counts the rest.
constexpr size_t kLabelLength = 400;

int64_t paddedRange(int64_t range) {
  int64_t block = runtime::kCudaBlockSize;
  return (range + block - 1) / block * block;
}

/// A run of thunks being joined: what its members read and write, and the
/// distinct slots of their operands and results.
class GroupBuilder {
public:
  GroupBuilder(const std::vector<uint32_t> &identity,
               const KernelGroupOptions &options)
      : identity_(identity), options_(options) {}

  /// Adds `k` when it may run at once with every member so far and the
  /// group's buffers stay within the limit; false (and nothing changed)
  /// otherwise.
  bool tryAdd(const runtime::KernelThunk &k) {
    size_t firstResult = k.slots.size() - k.numResults;
    std::set<uint32_t> reads, writes;
    for (size_t i = 0; i < k.slots.size(); ++i)
      (i < firstResult ? reads : writes).insert(identity_[k.slots[i]]);
    for (uint32_t b : reads)
      if (written_.count(b))
        return false;
    for (uint32_t b : writes)
      if (written_.count(b) || read_.count(b))
        return false;
    std::set<uint32_t> newOperands;
    for (size_t i = 0; i < firstResult; ++i)
      if (!operandPosition_.count(k.slots[i]))
        newOperands.insert(k.slots[i]);
    if (operands_.size() + newOperands.size() + results_ + k.numResults >
        options_.maxBuffers)
      return false;
    Member m{&k, {}, 0};
    for (size_t i = 0; i < k.slots.size(); ++i) {
      if (i < firstResult) {
        auto [it, added] =
            operandPosition_.try_emplace(k.slots[i], operands_.size());
        if (added)
          operands_.push_back(k.slots[i]);
        m.positions.push_back(it->second);
      } else {
        // Result positions count from 0 here; they follow the operands.
        m.positions.push_back(kResultFlag | results_++);
      }
    }
    members_.push_back(std::move(m));
    read_.insert(reads.begin(), reads.end());
    written_.insert(writes.begin(), writes.end());
    return true;
  }

  size_t size() const { return members_.size(); }

  /// The group's thunk. Its kernel function is added to `kernels` unless
  /// an equal group (the same members' kernels, positions and ranges: each
  /// layer's) made one already; `symbols` maps each group's description to
  /// its function.
  runtime::Thunk build(ModuleOp kernels,
                       std::map<std::string, std::string> &symbols);

private:
  static constexpr uint32_t kResultFlag = 1u << 31;
  void emitKernel(ModuleOp kernels, const std::string &symbol);

  const std::vector<uint32_t> &identity_;
  const KernelGroupOptions &options_;
  std::set<uint32_t> read_, written_;
  std::map<uint32_t, uint32_t> operandPosition_;
  std::vector<uint32_t> operands_;
  uint32_t results_ = 0;
  std::vector<Member> members_;
};

runtime::Thunk
GroupBuilder::build(ModuleOp kernels,
                    std::map<std::string, std::string> &symbols) {
  runtime::Thunk thunk;
  thunk.kind = runtime::Thunk::Kind::kernel;
  runtime::KernelThunk &g = thunk.kernel;
  g.slots = operands_;
  int64_t start = 0;
  for (Member &m : members_) {
    const runtime::KernelThunk &k = *m.thunk;
    for (size_t i = 0; i < k.slots.size(); ++i)
      if (m.positions[i] & kResultFlag) {
        m.positions[i] = operands_.size() + (m.positions[i] & ~kResultFlag);
        g.slots.push_back(k.slots[i]);
      }
    m.start = start;
    start += paddedRange(k.rangeSize);
    g.workPerIndex = std::max(g.workPerIndex, k.workPerIndex);
  }
  g.numResults = results_;
  g.rangeSize = start;
  g.splittable = true;
  g.label = absl::StrCat("group of ", members_.size(), " kernels:");
  std::set<std::string> seen;
  size_t left = 0;
  for (const Member &m : members_) {
    if (!seen.insert(m.thunk->label).second)
      continue;
    if (g.label.size() < kLabelLength)
      absl::StrAppend(&g.label, seen.size() > 1 ? "; " : " ", m.thunk->label);
    else
      ++left;
  }
  if (left)
    absl::StrAppend(&g.label, "; and ", left, " more");
  std::string description;
  for (const Member &m : members_) {
    absl::StrAppend(&description, m.thunk->symbol, " ", m.start, " ",
                    m.thunk->rangeSize, ":");
    for (uint32_t p : m.positions)
      absl::StrAppend(&description, " ", p);
    description += "\n";
  }
  auto [it, added] = symbols.try_emplace(
      description, absl::StrCat("kiln_kernel_group_", symbols.size()));
  if (added)
    emitKernel(kernels, it->second);
  g.symbol = it->second;
  return thunk;
}

void GroupBuilder::emitKernel(ModuleOp kernels, const std::string &symbol) {
  MLIRContext *ctx = kernels.getContext();
  ImplicitLocOpBuilder b(UnknownLoc::get(ctx), ctx);
  b.setInsertionPointToEnd(kernels.getBody());
  auto ptrType = LLVM::LLVMPointerType::get(ctx);
  Type i64 = b.getI64Type();
  auto func = func::FuncOp::create(
      b, symbol, b.getFunctionType({ptrType, i64, i64}, {}));
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  Value table = entry->getArgument(0), begin = entry->getArgument(1),
        end = entry->getArgument(2);

  // The kinds: one kernel function each, with its buffer count.
  std::vector<std::string> kinds;
  std::vector<size_t> kindBuffers;
  std::vector<unsigned> kindOf;
  size_t mostBuffers = 1;
  for (const Member &m : members_) {
    auto it = std::find(kinds.begin(), kinds.end(), m.thunk->symbol);
    kindOf.push_back(it - kinds.begin());
    if (it == kinds.end()) {
      kinds.push_back(m.thunk->symbol);
      kindBuffers.push_back(m.positions.size());
    }
    mostBuffers = std::max(mostBuffers, m.positions.size());
  }
  KernelBuilder kb(b, kernels, table, 0);
  // One member table for every call, in the entry block (a static slot).
  Value memberTable = kb.stackArray(ptrType, mostBuffers);
  Value null = LLVM::ZeroOp::create(b, ptrType);
  Value trueValue = arith::ConstantOp::create(b, b.getBoolAttr(true));
  Value alignment = kb.index(options_.pointerAlignment);

  // The tree yields the member's buffers and constants only: what depends
  // on `end` is computed once after it, so nothing in a leaf is invariant
  // in the loop (LLVM hoisted every leaf's bounds out of it, and ptxas then
  // spilled them).
  SmallVector<Type> yielded(mostBuffers, ptrType);
  yielded.append({i64, i64, i64, i64}); // kind, start, size, padded end
  auto leaf = [&](size_t index) {
    const Member &m = members_[index];
    SmallVector<Value> out;
    for (uint32_t p : m.positions) {
      Value slot = LLVM::GEPOp::create(
          b, ptrType, ptrType, table,
          ArrayRef<LLVM::GEPArg>{LLVM::GEPArg(static_cast<int32_t>(p))});
      out.push_back(LLVM::LoadOp::create(b, ptrType, slot));
    }
    out.resize(mostBuffers, null);
    out.push_back(kb.index(kindOf[index]));
    out.push_back(kb.index(m.start));
    out.push_back(kb.index(m.thunk->rangeSize));
    out.push_back(kb.index(m.start + paddedRange(m.thunk->rangeSize)));
    return out;
  };
  // Members [lo, hi) → the one holding index `at`.
  std::function<SmallVector<Value>(size_t, size_t, Value)> find =
      [&](size_t lo, size_t hi, Value at) -> SmallVector<Value> {
    if (hi - lo == 1)
      return leaf(lo);
    size_t mid = (lo + hi) / 2;
    Value before = arith::CmpIOp::create(b, arith::CmpIPredicate::slt, at,
                                         kb.index(members_[mid].start));
    auto branch = scf::IfOp::create(b, yielded, before, true, true);
    for (int side = 0; side < 2; ++side) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(side == 0 ? branch.thenBlock()
                                           : branch.elseBlock());
      SmallVector<Value> found =
          side == 0 ? find(lo, mid, at) : find(mid, hi, at);
      scf::YieldOp::create(b, found);
    }
    return SmallVector<Value>(branch.getResults());
  };

  auto loop = scf::WhileOp::create(b, TypeRange{i64}, ValueRange{begin});
  {
    Block *before = b.createBlock(&loop.getBefore(), loop.getBefore().end(),
                                  {i64}, {b.getLoc()});
    Value at = before->getArgument(0);
    Value more =
        arith::CmpIOp::create(b, arith::CmpIPredicate::slt, at, end);
    scf::ConditionOp::create(b, more, ValueRange{at});
  }
  Block *after = b.createBlock(&loop.getAfter(), loop.getAfter().end(), {i64},
                               {b.getLoc()});
  Value at = after->getArgument(0);
  SmallVector<Value> found = find(0, members_.size(), at);
  Value kind = found[mostBuffers], start = found[mostBuffers + 1],
        size = found[mostBuffers + 2], paddedEnd = found[mostBuffers + 3];
  Value lo = arith::SubIOp::create(b, at, start);
  Value hi =
      arith::MinSIOp::create(b, arith::SubIOp::create(b, end, start), size);
  Value next = arith::MinSIOp::create(b, end, paddedEnd);
  Value nonEmpty = arith::CmpIOp::create(b, arith::CmpIPredicate::slt, lo, hi);
  auto run = scf::IfOp::create(b, TypeRange{}, nonEmpty,
                               /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(run.thenBlock());
    for (size_t k = 0; k < kinds.size(); ++k) {
      auto callee = kernels.lookupSymbol<func::FuncOp>(kinds[k]);
      Value isKind = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, kind,
                                           kb.index(k));
      auto call = scf::IfOp::create(b, TypeRange{}, isKind,
                                    /*withElseRegion=*/false);
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(call.thenBlock());
      for (size_t j = 0; j < kindBuffers[k]; ++j) {
        if (options_.pointerAlignment)
          LLVM::AssumeOp::create(b, trueValue, LLVM::AssumeAlignTag{},
                                 found[j], alignment);
        kb.storeAt(memberTable, kb.index(j), found[j]);
      }
      func::CallOp::create(b, callee, ValueRange{memberTable, lo, hi});
    }
  }
  scf::YieldOp::create(b, ValueRange{next});
  b.setInsertionPointAfter(loop);
  func::ReturnOp::create(b);
}

bool mayJoin(const runtime::Thunk &t,
             const std::map<std::string, KernelInfo> &kernelInfo) {
  if (t.kind != runtime::Thunk::Kind::kernel || !t.kernel.splittable ||
      t.kernel.rangeSize <= 0)
    return false;
  auto info = kernelInfo.find(t.kernel.symbol);
  return info != kernelInfo.end() && info->second.loop &&
         info->second.lanes == 1;
}

} // namespace

KernelGroupOptions kernelGroupOptionsFor(runtime::Device device) {
  KernelGroupOptions options;
  if (device == runtime::Device::cuda)
    options.pointerAlignment = 16;
  return options;
}

int groupIndependentKernels(runtime::Executable &exe, ModuleOp kernels,
                            const std::map<std::string, KernelInfo> &kernelInfo,
                            const KernelGroupOptions &options) {
  std::vector<uint32_t> identity = bufferIdentities(exe);
  std::vector<runtime::Thunk> thunks;
  thunks.reserve(exe.thunks.size());
  std::map<std::string, std::string> symbols;
  int groups = 0;
  for (size_t i = 0; i < exe.thunks.size();) {
    GroupBuilder group(identity, options);
    size_t j = i;
    while (j < exe.thunks.size() && mayJoin(exe.thunks[j], kernelInfo) &&
           group.tryAdd(exe.thunks[j].kernel))
      ++j;
    if (group.size() < 2) {
      thunks.push_back(std::move(exe.thunks[i]));
      ++i;
      continue;
    }
    thunks.push_back(group.build(kernels, symbols));
    ++groups;
    i = j;
  }
  exe.thunks = std::move(thunks);
  return groups;
}

} // namespace kiln::compiler::cpu
