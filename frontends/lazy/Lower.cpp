// Lowers a lazy graph to one kiln-dialect function with MLIR's builders, one
// op per node (detach disappears; a constant is a 0-d constant broadcast to
// its shape; the RNG state's advance is an add), each op located at its
// node's call site when asked, then hands the module to
// compiler::compileCached (the persistent cache, when one is given), after
// dumping it as canonical text when asked. The frontend's MLIR use is
// confined to this file and Localize.cpp.
#include "frontends/lazy/Lower.h"

#include "compiler/MemoryPlanner.h"
#include "compiler/cpu/CpuCompiler.h"
#include "frontends/lazy/CallSites.h"
#include "frontends/lazy/Graph.h"
#include "frontends/lazy/GraphLowering.h"
#include "ir/KilnDialect.h"
#include "ir/Serialization.h"
#include "ir/TensorConversion.h"
#include "support/AtomicFile.h"

#include "absl/status/status.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace kiln::lazy {

mlir::MLIRContext &lazyContext() {
  static mlir::MLIRContext *context = [] {
    auto *c = new mlir::MLIRContext(mlir::MLIRContext::Threading::DISABLED);
    loadKilnDialects(*c);
    return c;
  }();
  return *context;
}

namespace {

class GraphLowering {
public:
  GraphLowering(mlir::MLIRContext &context, bool locations, OpOrigins *origins)
      : context(context), builder(&context), loc(builder.getUnknownLoc()),
        locations(locations), origins(origins) {}

  mlir::OwningOpRef<mlir::ModuleOp> lower(const Graph &graph);

private:
  mlir::RankedTensorType typeOf(DType dtype, const Shape &shape) {
    return mlir::RankedTensorType::get(shape, elementTypeOf(dtype, &context));
  }
  mlir::RankedTensorType typeOf(const Node &node) {
    return typeOf(node.dtype, node.shape);
  }
  mlir::Value scalarConstant(double value, DType dtype);
  mlir::Value lowerNode(const Node &node);
  mlir::Value lowerAttention(const Node &node);
  mlir::Value lowerLinearCrossEntropy(const Node &node);
  mlir::Value operand(const Node &node, size_t i) {
    return values.lookup(node.srcs[i].get());
  }
  mlir::Location frameLocation(const sites::Frame &frame);
  mlir::Location siteLocation(uint32_t site);
  mlir::Location nodeLocation(const Node &node);

  mlir::MLIRContext &context;
  mlir::OpBuilder builder;
  /// The location of the ops being built: the current node's.
  mlir::Location loc;
  bool locations;
  OpOrigins *origins;
  llvm::DenseMap<const Node *, mlir::Value> values;
  llvm::DenseMap<uint32_t, mlir::Location> siteLocations;
  /// The last kiln.all_reduce built, which the next one is tied to.
  mlir::Value lastAllReduce;
};

mlir::Location GraphLowering::frameLocation(const sites::Frame &frame) {
  if (!frame.file.empty())
    return mlir::FileLineColLoc::get(&context, frame.file,
                                     static_cast<unsigned>(frame.line), 0);
  if (!frame.function.empty())
    return mlir::NameLoc::get(builder.getStringAttr(frame.function));
  return builder.getUnknownLoc();
}

/// model.cpp:42 → loc("model.cpp":42:0); a frame in kiln's nn modules →
/// callsite(that frame at its caller); a gradient → "gradient of op"
/// around the forward node's location.
mlir::Location GraphLowering::siteLocation(uint32_t site) {
  if (site == 0)
    return builder.getUnknownLoc();
  if (auto it = siteLocations.find(site); it != siteLocations.end())
    return it->second;
  const sites::ResolvedSite &resolved = sites::resolve(site);
  mlir::Location result = builder.getUnknownLoc();
  if (resolved.forwardOp) {
    result = mlir::NameLoc::get(
        builder.getStringAttr(std::string("gradient of ") +
                              resolved.forwardOp),
        siteLocation(resolved.forwardSite));
  } else if (resolved.frame) {
    result = frameLocation(*resolved.frame);
    if (resolved.caller)
      result = mlir::CallSiteLoc::get(result, frameLocation(*resolved.caller));
  }
  siteLocations.try_emplace(site, result);
  return result;
}

mlir::Location GraphLowering::nodeLocation(const Node &node) {
  if (!locations)
    return builder.getUnknownLoc();
  if (node.site == 0) // built while the option was off
    return mlir::NameLoc::get(
        builder.getStringAttr("node " + std::to_string(node.id)));
  return siteLocation(node.site);
}

mlir::Value GraphLowering::scalarConstant(double value, DType dtype) {
  HostTensor host(dtype, {});
  host.setDouble(0, value);
  return ConstantOp::create(
      builder, loc,
      mlir::cast<mlir::ElementsAttr>(toElementsAttr(host, &context)));
}

template <typename OpTy>
mlir::Value unaryOp(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x) {
  return OpTy::create(b, loc, x.getType(), x);
}
template <typename OpTy>
mlir::Value binaryOp(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                     mlir::Value y) {
  return OpTy::create(b, loc, x.getType(), x, y);
}

mlir::Value GraphLowering::lowerAttention(const Node &node) {
  AttentionAttrs attrs = attentionAttrsOf(node);
  bool grad = node.op == Op::AttentionGrad;
  mlir::Value q = operand(node, 0), k = operand(node, 1), v = operand(node, 2);
  size_t stateAt = grad ? 4 : 3;
  mlir::Value state =
      node.srcs.size() > stateAt ? operand(node, stateAt) : mlir::Value();
  mlir::FloatAttr scale = builder.getF64FloatAttr(attrs.scale);
  mlir::FloatAttr dropout = builder.getF64FloatAttr(attrs.dropout);
  mlir::UnitAttr causal = attrs.causal ? builder.getUnitAttr() : nullptr;
  mlir::FloatAttr softcap = builder.getF64FloatAttr(attrs.softcap);
  // The gradient reads the forward's result and row statistics: the same
  // op built again, which CSE merges with the forward's (as it merges the
  // three gradient ops), or which recomputes it when the forward ran in an
  // earlier graph.
  auto forward = FusedAttentionOp::create(
      builder, loc, q.getType(), FusedAttentionOp::rowStatsType(q), q, k, v,
      state, scale, causal, dropout, builder.getI64IntegerAttr(attrs.window),
      softcap);
  if (!grad)
    return forward.getResult();
  // One op per gradient node; CSE merges the three (they are equal).
  auto op = FusedAttentionGradOp::create(
      builder, loc, q.getType(), k.getType(), v.getType(), q, k, v,
      forward.getResult(), forward.getRowStats(), operand(node, 3), state,
      scale, causal, dropout, builder.getI64IntegerAttr(attrs.window), softcap);
  return op->getResult(node.ints[3]); // {causal, scale, window, which, ...}
}

mlir::Value GraphLowering::lowerLinearCrossEntropy(const Node &node) {
  mlir::Value hidden = operand(node, 0), weight = operand(node, 1),
              labels = operand(node, 2);
  mlir::IntegerAttr ignore = builder.getI64IntegerAttr(node.ints[0]);
  mlir::FloatAttr softcap = builder.getF64FloatAttr(node.scalar);
  if (node.op == Op::LinearCrossEntropy)
    return FusedLinearCrossEntropyOp::create(builder, loc, typeOf(node), hidden,
                                             weight, labels, ignore, softcap);
  // One op per gradient node; CSE merges the two (they are equal).
  auto op = FusedLinearCrossEntropyGradOp::create(
      builder, loc, hidden.getType(), weight.getType(), hidden, weight, labels,
      operand(node, 3), ignore, softcap);
  return op->getResult(node.ints[1]);
}

mlir::Value GraphLowering::lowerNode(const Node &node) {
  mlir::RankedTensorType type = typeOf(node);
  const llvm::ArrayRef<int64_t> v(node.ints.data(), node.ints.size());
  auto x = [&] { return operand(node, 0); };
  auto y = [&] { return operand(node, 1); };
  switch (node.op) {
  case Op::Data:
    break; // block arguments, bound by lower()
  case Op::Constant: {
    mlir::Value scalar = scalarConstant(node.scalar, node.dtype);
    if (node.shape.empty())
      return scalar;
    return BroadcastInDimOp::create(builder, loc, type, scalar,
                                    llvm::ArrayRef<int64_t>{});
  }
  case Op::Iota:
    return IotaOp::create(builder, loc, type, static_cast<uint64_t>(v[0]));
  case Op::Neg:
    return unaryOp<NegOp>(builder, loc, x());
  case Op::Abs:
    return unaryOp<AbsOp>(builder, loc, x());
  case Op::Sign:
    return unaryOp<SignOp>(builder, loc, x());
  case Op::Exp:
    return unaryOp<ExpOp>(builder, loc, x());
  case Op::Log:
    return unaryOp<LogOp>(builder, loc, x());
  case Op::Tanh:
    return unaryOp<TanhOp>(builder, loc, x());
  case Op::Sqrt:
    return unaryOp<SqrtOp>(builder, loc, x());
  case Op::Rsqrt:
    return unaryOp<RsqrtOp>(builder, loc, x());
  case Op::Logistic:
    return unaryOp<LogisticOp>(builder, loc, x());
  case Op::Not:
    return unaryOp<NotOp>(builder, loc, x());
  case Op::Add:
    return binaryOp<AddOp>(builder, loc, x(), y());
  case Op::Sub:
    return binaryOp<SubOp>(builder, loc, x(), y());
  case Op::Mul:
    return binaryOp<MulOp>(builder, loc, x(), y());
  case Op::Div:
    return binaryOp<DivOp>(builder, loc, x(), y());
  case Op::Max:
    return binaryOp<MaxOp>(builder, loc, x(), y());
  case Op::Min:
    return binaryOp<MinOp>(builder, loc, x(), y());
  case Op::Pow:
    return binaryOp<PowOp>(builder, loc, x(), y());
  case Op::And:
    return binaryOp<AndOp>(builder, loc, x(), y());
  case Op::Or:
    return binaryOp<OrOp>(builder, loc, x(), y());
  case Op::Compare:
    return CompareOp::create(builder, loc, type,
                             static_cast<ComparisonDirection>(v[0]), x(), y());
  case Op::Select:
    return SelectOp::create(builder, loc, type, x(), y(), operand(node, 2));
  case Op::Convert:
    return ConvertOp::create(builder, loc, type, x());
  case Op::Broadcast:
    return BroadcastInDimOp::create(builder, loc, type, x(), v);
  case Op::Reshape:
    return ReshapeOp::create(builder, loc, type, x());
  case Op::Transpose:
    return TransposeOp::create(builder, loc, type, x(), v);
  case Op::Slice: {
    size_t rank = node.shape.size();
    llvm::ArrayRef<int64_t> all(v);
    return SliceOp::create(builder, loc, type, x(), all.take_front(rank),
                           all.slice(rank, rank), all.take_back(rank));
  }
  case Op::Concatenate: {
    llvm::SmallVector<mlir::Value> inputs;
    for (size_t i = 0; i < node.srcs.size(); ++i)
      inputs.push_back(operand(node, i));
    return ConcatenateOp::create(builder, loc, type, inputs,
                                 static_cast<uint64_t>(v[0]));
  }
  case Op::Pad: {
    size_t rank = node.shape.size();
    llvm::ArrayRef<int64_t> all(v);
    return PadOp::create(builder, loc, type, x(),
                         scalarConstant(node.scalar, node.dtype),
                         all.take_front(rank), all.take_back(rank));
  }
  case Op::ReduceSum:
  case Op::ReduceMax:
    return ReduceOp::create(
        builder, loc, type,
        node.op == Op::ReduceSum ? ReduceKind::sum : ReduceKind::max, x(), v);
  case Op::DotGeneral: {
    llvm::ArrayRef<int64_t> all(v);
    size_t nb = v[0], nc = v[1];
    return DotGeneralOp::create(
        builder, loc, type, x(), y(), all.slice(2, nb), all.slice(2 + nb, nb),
        all.slice(2 + 2 * nb, nc), all.slice(2 + 2 * nb + nc, nc));
  }
  case Op::Gather:
    return GatherOp::create(builder, loc, type, x(), y(),
                            static_cast<uint64_t>(v[0]));
  case Op::ScatterAdd:
    return ScatterAddOp::create(builder, loc, type, x(), y(), operand(node, 2),
                                static_cast<uint64_t>(v[0]));
  case Op::RngUniform:
    return RngUniformOp::create(builder, loc, type, x().getType(), x())
        .getResult();
  case Op::RngAdvance: {
    // new state = [key, counter + ceil(n / 4)]: the rng_uniform's second
    // result, written as an add so values and state need not share an op.
    HostTensor step(DType::i64, {2});
    step.setInt(1, (v[0] + 3) / 4);
    mlir::Value delta = ConstantOp::create(
        builder, loc,
        mlir::cast<mlir::ElementsAttr>(toElementsAttr(step, &context)));
    return binaryOp<AddOp>(builder, loc, x(), delta);
  }
  case Op::Detach:
    return x();
  case Op::Attention:
  case Op::AttentionGrad:
    return lowerAttention(node);
  case Op::LinearCrossEntropy:
  case Op::LinearCrossEntropyGrad:
    return lowerLinearCrossEntropy(node);
  case Op::AllReduce: {
    // Each sum is tied to the one before it (buildGraph puts them in the
    // program's order): no pass can then reorder them, and every process
    // makes its exchanges in the same order even where their graphs
    // differ (ZeRO's owners update parameters the others do not).
    mlir::Value summed = x();
    if (lastAllReduce)
      summed = OptimizationBarrierOp::create(
                   builder, loc, mlir::ValueRange{summed, lastAllReduce},
                   /*gradient_seed=*/false)
                   .getResult(0);
    lastAllReduce = AllReduceOp::create(builder, loc, summed);
    return lastAllReduce;
  }
  case Op::GradientSeed: {
    auto barrier = OptimizationBarrierOp::create(
        builder, loc, mlir::ValueRange{x(), y()}, /*gradient_seed=*/true);
    return barrier.getResult(0);
  }
  }
  return {};
}

mlir::OwningOpRef<mlir::ModuleOp> GraphLowering::lower(const Graph &graph) {
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(loc);
  builder.setInsertionPointToEnd(module->getBody());
  llvm::SmallVector<mlir::Type> inputTypes, outputTypes;
  for (const NodePtr &input : graph.inputs)
    inputTypes.push_back(typeOf(*input));
  for (const NodePtr &output : graph.outputs)
    outputTypes.push_back(typeOf(*output));
  auto function = mlir::func::FuncOp::create(
      builder, loc, "main", builder.getFunctionType(inputTypes, outputTypes));
  mlir::Location unknown = loc;
  for (size_t i = 0; i < graph.inputs.size(); ++i)
    if (graph.donated[i]) {
      function.setArgAttr(i, KilnDialect::kDonateAttrName,
                          builder.getUnitAttr());
      if (graph.outputAlias[i] >= 0)
        function.setArgAttr(i, KilnDialect::kOutputAliasAttrName,
                            builder.getI64IntegerAttr(graph.outputAlias[i]));
    }
  mlir::Block *entry = function.addEntryBlock();
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    values[graph.inputs[i].get()] = entry->getArgument(i);
    if (locations)
      entry->getArgument(i).setLoc(nodeLocation(*graph.inputs[i]));
  }
  builder.setInsertionPointToEnd(entry);
  for (const NodePtr &node : graph.nodes) {
    if (node->isData())
      continue;
    // Every op a node lowers to (a constant's splat, a pad's padding
    // value) shares the node's location and origin.
    loc = nodeLocation(*node);
    mlir::Operation *last = entry->empty() ? nullptr : &entry->back();
    values[node.get()] = lowerNode(*node);
    if (origins)
      for (auto it = last ? std::next(last->getIterator()) : entry->begin();
           it != entry->end(); ++it)
        (*origins)[&*it] = node.get();
  }
  loc = unknown;
  llvm::SmallVector<mlir::Value> results;
  for (const NodePtr &output : graph.outputs)
    results.push_back(values.lookup(output.get()));
  mlir::func::ReturnOp::create(builder, loc, results);
  return module;
}

/// A JSON string literal of `text`.
std::string jsonString(const std::string &text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (static_cast<unsigned char>(c) < 0x20)
      out += ' ';
    else
      out += c;
  }
  return out + "\"";
}

/// Writes the graph's canonical text (the very text the cache key hashes,
/// so `kilnc precompile` reproduces the key) atomically, so a failed write
/// (a full disk) leaves no truncated graph, then appends its manifest line
/// with one write(), which O_APPEND keeps whole across processes.
absl::Status writeGraphDump(mlir::ModuleOp module, const Graph &graph,
                            const GraphCompileRequest &request) {
  char name[40];
  std::snprintf(name, sizeof name, "graph-%016llx.mlir",
                static_cast<unsigned long long>(request.graphHash));
  std::string path = request.dumpDir + "/" + name;
  std::error_code error = llvm::sys::fs::create_directories(request.dumpDir);
  if (error)
    return absl::UnavailableError("cannot write " + path + ": " +
                                  error.message());
  if (absl::Status s = writeFileAtomically(path, canonicalText(module));
      !s.ok())
    return absl::UnavailableError("cannot write " + path + ": " +
                                  std::string(s.message()));
  compiler::KeyOptions keyOptions;
  keyOptions.function = "main";
  if (request.backend != compiler::Backend::reference)
    keyOptions.backend = request.backend;
  keyOptions.cudaArch = request.cudaArch;
  keyOptions.tf32 = request.tf32;
  keyOptions.productType = request.productType;
  std::string line =
      "{\"file\": " + jsonString(name) +
      ", \"tag\": " + jsonString(request.tag) + ", \"key\": " +
      jsonString(compiler::computeCacheKey(module, keyOptions).hex) +
      ", \"backend\": " +
      jsonString(std::string(compiler::backendName(request.backend))) +
      // The rest of the key's target, so that kilnc precompile can say
      // when it compiles for another one.
      ", \"precision\": " +
      jsonString(std::string(dtypeName(request.productType))) +
      ", \"cuda_arch\": " + jsonString(request.cudaArch) +
      ", \"tf32\": " + (request.tf32 ? "true" : "false") +
      ", \"nodes\": " + std::to_string(graph.nodes.size()) +
      ", \"inputs\": " + std::to_string(graph.inputs.size()) +
      ", \"outputs\": " + std::to_string(graph.outputs.size()) + "}\n";
  std::string manifest = request.dumpDir + "/manifest.jsonl";
  int fd =
      ::open(manifest.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  ssize_t written = fd >= 0 ? ::write(fd, line.data(), line.size()) : -1;
  std::string reason = written < 0 ? std::strerror(errno)
                       : written != static_cast<ssize_t>(line.size())
                           ? "short write"
                           : "";
  if (fd >= 0 && ::close(fd) != 0 && reason.empty())
    reason = std::strerror(errno);
  if (!reason.empty())
    return absl::UnavailableError("cannot append to " + manifest + ": " +
                                  reason);
  return absl::OkStatus();
}

/// Dumps the graph for KILN_DUMP_GRAPHS / --dump_graphs. A dump is a
/// debugging aid and must not end a training run: the first one that
/// cannot be written (a full disk, a path under a file) is one warning,
/// and the process goes on without dumps.
void dumpGraph(mlir::ModuleOp module, const Graph &graph,
               const GraphCompileRequest &request) {
  static std::atomic<bool> failed{false};
  if (failed.load())
    return;
  absl::Status s = writeGraphDump(module, graph, request);
  if (!s.ok() && !failed.exchange(true))
    std::fprintf(stderr, "kiln: warning: %s; continuing without graph dumps\n",
                 std::string(s.message()).c_str());
}

} // namespace

mlir::OwningOpRef<mlir::ModuleOp>
lowerGraph(const Graph &graph, bool locations, OpOrigins *origins) {
  return GraphLowering(lazyContext(), locations, origins).lower(graph);
}

namespace {

/// The compile options a request stands for (its pass dump aside).
compiler::CompileOptions compileOptionsFor(const GraphCompileRequest &request) {
  compiler::CompileOptions options;
  options.backend = request.backend;
  options.function = "main";
  options.memoryBudgetBytes = request.memoryBudgetBytes;
  options.partition = request.partition;
  options.cudaArch = request.cudaArch;
  options.tf32 = request.tf32;
  options.productType = request.productType;
  return options;
}

} // namespace

absl::StatusOr<uint64_t> planGraph(const Graph &graph,
                                   const GraphCompileRequest &request) {
  if (request.backend == compiler::Backend::reference)
    return absl::InvalidArgumentError(
        "the reference backend plans no memory; plan for cpu or cuda");
  mlir::OwningOpRef<mlir::ModuleOp> module = lowerGraph(graph, false);
  if (!request.dumpDir.empty())
    dumpGraph(*module, graph, request);
  compiler::CompileOptions options = compileOptionsFor(request);
  compiler::cpu::KernelTarget target = compiler::cpu::kernelTargetFor(options);
  target.planOnly = true;
  absl::StatusOr<runtime::Executable> executable =
      compiler::cpu::compileExecutable(*module, "main", nullptr,
                                       compiler::cpu::pipelineOptionsFor(options),
                                       target);
  if (!executable.ok())
    return executable.status();
  return compiler::describeMemoryPlan(*executable).peakBytes;
}

absl::StatusOr<GraphCompileResult>
compileGraph(const Graph &graph, const GraphCompileRequest &request) {
  mlir::OwningOpRef<mlir::ModuleOp> module =
      lowerGraph(graph, request.locations);
  compiler::CompileOptions options = compileOptionsFor(request);
  if (!request.passDumpDir.empty()) {
    char name[32];
    std::snprintf(name, sizeof name, "/graph-%016llx",
                  static_cast<unsigned long long>(request.graphHash));
    options.passDumpDir = request.passDumpDir + name;
  }
  if (!request.dumpDir.empty())
    dumpGraph(*module, graph, request);
  GraphCompileResult result;
  auto program =
      compiler::compileCached(*module, options, request.cache, &result.cache);
  if (!program.ok())
    return program.status();
  result.program = std::move(*program);
  return result;
}

} // namespace kiln::lazy
