// The reference evaluator's driver: checks the function and its inputs, then
// walks each block in order, mapping every op through one TypeSwitch onto a
// kernel (Kernels.h) and binding its results; kiln.fusion recurses into its
// body, and func.return / kiln.yield hand back their operands; an optional
// observer sees each op with its values (how the frontend finds the first op
// that made a NaN). Every result is checked against the type the IR
// declares, so a kernel that disagrees with the verifier shows up as an
// InternalError, not as wrong numbers.
#include "ir/reference/Evaluator.h"

#include "ir/KilnDialect.h"
#include "ir/TensorConversion.h"
#include "ir/reference/Kernels.h"
#include "support/Collectives.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace kiln::reference {

namespace {

using Tensors = std::vector<HostTensor>;
using Operands = llvm::ArrayRef<const HostTensor *>;

std::string printType(mlir::Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

std::string opName(mlir::Operation *op) {
  return op->getName().getStringRef().str();
}

/// Wraps a one-result kernel's answer as a result list.
absl::StatusOr<Tensors> single(absl::StatusOr<HostTensor> result) {
  if (!result.ok())
    return result.status();
  Tensors results;
  results.push_back(*std::move(result));
  return results;
}

/// The (dtype, shape) the IR declares for result 0 of `op`.
absl::StatusOr<std::pair<DType, std::vector<int64_t>>>
resultType(mlir::Operation *op) {
  if (op->getNumResults() == 0)
    return absl::InvalidArgumentError(
        absl::StrCat("'", opName(op), "' has no results"));
  return describeTensorType(op->getResult(0).getType());
}

UnaryKind unaryKindOf(mlir::Operation *op) {
  return llvm::TypeSwitch<mlir::Operation *, UnaryKind>(op)
      .Case<NegOp>([](auto) { return UnaryKind::Neg; })
      .Case<AbsOp>([](auto) { return UnaryKind::Abs; })
      .Case<SignOp>([](auto) { return UnaryKind::Sign; })
      .Case<ExpOp>([](auto) { return UnaryKind::Exp; })
      .Case<LogOp>([](auto) { return UnaryKind::Log; })
      .Case<Log1pOp>([](auto) { return UnaryKind::Log1p; })
      .Case<TanhOp>([](auto) { return UnaryKind::Tanh; })
      .Case<SqrtOp>([](auto) { return UnaryKind::Sqrt; })
      .Case<RsqrtOp>([](auto) { return UnaryKind::Rsqrt; })
      .Case<LogisticOp>([](auto) { return UnaryKind::Logistic; })
      .Case<ErfOp>([](auto) { return UnaryKind::Erf; })
      .Case<FloorOp>([](auto) { return UnaryKind::Floor; })
      .Default([](auto) { return UnaryKind::Not; });
}

BinaryKind binaryKindOf(mlir::Operation *op) {
  return llvm::TypeSwitch<mlir::Operation *, BinaryKind>(op)
      .Case<AddOp>([](auto) { return BinaryKind::Add; })
      .Case<SubOp>([](auto) { return BinaryKind::Sub; })
      .Case<MulOp>([](auto) { return BinaryKind::Mul; })
      .Case<DivOp>([](auto) { return BinaryKind::Div; })
      .Case<MaxOp>([](auto) { return BinaryKind::Max; })
      .Case<MinOp>([](auto) { return BinaryKind::Min; })
      .Case<PowOp>([](auto) { return BinaryKind::Pow; })
      .Case<AndOp>([](auto) { return BinaryKind::And; })
      .Default([](auto) { return BinaryKind::Or; });
}

CompareKind compareKindOf(ComparisonDirection direction) {
  switch (direction) {
  case ComparisonDirection::EQ: return CompareKind::EQ;
  case ComparisonDirection::NE: return CompareKind::NE;
  case ComparisonDirection::LT: return CompareKind::LT;
  case ComparisonDirection::LE: return CompareKind::LE;
  case ComparisonDirection::GT: return CompareKind::GT;
  case ComparisonDirection::GE: return CompareKind::GE;
  }
  return CompareKind::EQ;
}

ReductionKind reductionKindOf(ReduceKind kind) {
  switch (kind) {
  case ReduceKind::sum: return ReductionKind::Sum;
  case ReduceKind::max: return ReductionKind::Max;
  case ReduceKind::min: return ReductionKind::Min;
  case ReduceKind::prod: return ReductionKind::Prod;
  }
  return ReductionKind::Sum;
}

absl::StatusOr<Tensors> evaluateBlock(mlir::Block &block,
                                      llvm::ArrayRef<HostTensor> arguments,
                                      OpObserver observer);

absl::StatusOr<Tensors> evaluateFusion(FusionOp fusion, Operands operands,
                                       OpObserver observer) {
  Tensors inputs;
  for (const HostTensor *operand : operands)
    inputs.push_back(*operand);
  return evaluateBlock(fusion.getBody().front(), inputs, observer);
}

absl::StatusOr<Tensors> evaluateRng(RngUniformOp op, const HostTensor &state) {
  auto type = resultType(op);
  if (!type.ok())
    return type.status();
  auto result = evalRngUniform(state, type->first, type->second);
  if (!result.ok())
    return result.status();
  Tensors results;
  results.push_back(std::move(result->first));
  results.push_back(std::move(result->second));
  return results;
}

template <typename AttentionOp>
AttentionConfig attentionConfig(AttentionOp op, Operands in, size_t stateAt) {
  AttentionConfig config;
  config.scale = op.getScale().convertToDouble();
  config.causal = op.getCausal();
  config.dropout = op.getDropout().convertToDouble();
  config.window = op.getWindow();
  config.softcap = op.getSoftcap().convertToDouble();
  if (op.getRngState())
    config.rngState = in[stateAt];
  return config;
}

/// A fused gradient kernel's fixed set of results → Tensors.
template <size_t N>
absl::StatusOr<Tensors>
asTensors(absl::StatusOr<std::array<HostTensor, N>> grads) {
  if (!grads.ok())
    return grads.status();
  Tensors results;
  for (HostTensor &g : *grads)
    results.push_back(std::move(g));
  return results;
}

/// Calls kernel(dtype, shape) with the type `op` declares for its result.
template <typename Kernel>
absl::StatusOr<Tensors> withResultType(mlir::Operation *op, Kernel kernel) {
  auto type = resultType(op);
  if (!type.ok())
    return type.status();
  return single(kernel(type->first, type->second));
}

/// A shape, reduction, indexing, random, constant or fusion op and its
/// operand values → its result values; any other op is unimplemented.
absl::StatusOr<Tensors> evaluateStructuredOp(mlir::Operation *op, Operands in,
                                             OpObserver observer) {
  using Result = absl::StatusOr<Tensors>;
  auto withType = [&](auto kernel) { return withResultType(op, kernel); };
  return llvm::TypeSwitch<mlir::Operation *, Result>(op)
      .Case([&](BroadcastInDimOp b) {
        return withType([&](DType, const std::vector<int64_t> &shape) {
          return evalBroadcastInDim(*in[0], b.getBroadcastDimensions(), shape);
        });
      })
      .Case([&](ReshapeOp) {
        return withType([&](DType, const std::vector<int64_t> &shape) {
          return evalReshape(*in[0], shape);
        });
      })
      .Case([&](TransposeOp t) {
        return single(evalTranspose(*in[0], t.getPermutation()));
      })
      .Case([&](SliceOp s) {
        return single(evalSlice(*in[0], s.getStartIndices(),
                                s.getLimitIndices(), s.getStrides()));
      })
      .Case([&](ConcatenateOp c) {
        return single(evalConcatenate(in, c.getDimension()));
      })
      .Case([&](PadOp p) {
        return single(evalPad(*in[0], *in[1], p.getEdgePaddingLow(),
                              p.getEdgePaddingHigh()));
      })
      .Case([&](IotaOp i) {
        return withType([&](DType dtype, const std::vector<int64_t> &shape) {
          return evalIota(dtype, shape, i.getIotaDimension());
        });
      })
      .Case([&](ReduceOp r) {
        return single(evalReduce(reductionKindOf(r.getKind()), *in[0],
                                 r.getDimensions()));
      })
      .Case([&](DotGeneralOp d) {
        return withType([&](DType dtype, const std::vector<int64_t> &) {
          return evalDotGeneral(
              *in[0], *in[1], d.getLhsBatchingDimensions(),
              d.getRhsBatchingDimensions(), d.getLhsContractingDimensions(),
              d.getRhsContractingDimensions(), dtype);
        });
      })
      .Case([&](GatherOp g) {
        return single(evalGather(*in[0], *in[1], g.getAxis()));
      })
      .Case([&](ScatterAddOp s) {
        return single(evalScatterAdd(*in[0], *in[1], *in[2], s.getAxis()));
      })
      .Case([&](RngUniformOp r) { return evaluateRng(r, *in[0]); })
      .Case([&](OptimizationBarrierOp) {
        Tensors results;
        for (const HostTensor *x : in)
          results.push_back(*x);
        return absl::StatusOr<Tensors>(std::move(results));
      })
      .Case([&](AllReduceOp) -> Result {
        // Over the world this process joined (support/Collectives.h).
        HostTensor sum = *in[0];
        if (absl::Status s =
                allReduceSumInPlace(sum.data(), sum.numElements(), sum.dtype());
            !s.ok())
          return s;
        return single(std::move(sum));
      })
      .Case([&](FusedAttentionOp a) {
        return asTensors(evalFusedAttention(*in[0], *in[1], *in[2],
                                            attentionConfig(a, in, 3)));
      })
      .Case([&](FusedAttentionGradOp a) {
        return asTensors(evalFusedAttentionGrad(*in[0], *in[1], *in[2], *in[3],
                                                *in[4], *in[5],
                                                attentionConfig(a, in, 6)));
      })
      .Case([&](FusedLinearCrossEntropyOp l) {
        return single(evalFusedLinearCrossEntropy(
            *in[0], *in[1], *in[2], l.getIgnoreIndex(),
            l.getSoftcap().convertToDouble()));
      })
      .Case([&](FusedLinearCrossEntropyGradOp l) {
        return asTensors(evalFusedLinearCrossEntropyGrad(
            *in[0], *in[1], *in[2], *in[3], l.getIgnoreIndex(),
            l.getSoftcap().convertToDouble()));
      })
      .Case([&](ConstantOp c) { return single(toHostTensor(c.getValue())); })
      .Case([&](FusionOp f) { return evaluateFusion(f, in, observer); })
      .Default([&](mlir::Operation *) -> Result {
        return absl::UnimplementedError(absl::StrCat(
            "the reference evaluator does not implement '", opName(op), "'"));
      });
}

/// One non-terminator op and its operand values → its result values. The
/// elementwise ops are matched here, every other op in evaluateStructuredOp.
absl::StatusOr<Tensors> evaluateOp(mlir::Operation *op, Operands in,
                                   OpObserver observer) {
  using Result = absl::StatusOr<Tensors>;
  return llvm::TypeSwitch<mlir::Operation *, Result>(op)
      .Case<NegOp, AbsOp, SignOp, ExpOp, LogOp, Log1pOp, TanhOp, SqrtOp,
            RsqrtOp, LogisticOp, ErfOp, FloorOp, NotOp>([&](auto) {
        return single(evalUnary(unaryKindOf(op), *in[0]));
      })
      .Case<AddOp, SubOp, MulOp, DivOp, MaxOp, MinOp, PowOp, AndOp, OrOp>(
          [&](auto) {
            return single(evalBinary(binaryKindOf(op), *in[0], *in[1]));
          })
      .Case([&](CompareOp c) {
        return single(
            evalCompare(compareKindOf(c.getDirection()), *in[0], *in[1]));
      })
      .Case([&](SelectOp) {
        return single(evalSelect(*in[0], *in[1], *in[2]));
      })
      .Case([&](ClampOp) {
        return single(evalClamp(*in[0], *in[1], *in[2]));
      })
      .Case([&](ConvertOp) {
        return withResultType(
            op, [&](DType dtype, const std::vector<int64_t> &) {
              return evalConvert(*in[0], dtype);
            });
      })
      .Default([&](mlir::Operation *) {
        return evaluateStructuredOp(op, in, observer);
      });
}

/// An InternalError unless `results` match the types `op` declares: a kernel
/// and the dialect's type inference must agree.
absl::Status checkResults(mlir::Operation *op, const Tensors &results) {
  if (results.size() != op->getNumResults())
    return absl::InternalError(absl::StrCat("'", opName(op), "' produced ",
                                            results.size(), " results, the IR "
                                            "declares ",
                                            op->getNumResults()));
  for (auto [i, result] : llvm::enumerate(op->getResults())) {
    auto declared = describeTensorType(result.getType());
    if (!declared.ok())
      return declared.status();
    if (declared->first != results[i].dtype() ||
        declared->second != results[i].shape())
      return absl::InternalError(absl::StrCat(
          "'", opName(op), "' result ", i, " is ", results[i].typeString(),
          " but the IR declares ", printType(result.getType())));
  }
  return absl::OkStatus();
}

/// Binds `arguments` to the block's arguments, evaluates its ops in order
/// and returns the terminator's (func.return or kiln.yield) operands; each
/// op evaluated is reported to `observer` when there is one.
absl::StatusOr<Tensors> evaluateBlock(mlir::Block &block,
                                      llvm::ArrayRef<HostTensor> arguments,
                                      OpObserver observer) {
  llvm::DenseMap<mlir::Value, HostTensor> values;
  for (auto [argument, tensor] : llvm::zip(block.getArguments(), arguments))
    values[argument] = tensor;
  for (mlir::Operation &op : block) {
    std::vector<const HostTensor *> operands;
    for (mlir::Value operand : op.getOperands()) {
      auto found = values.find(operand);
      if (found == values.end())
        return absl::InvalidArgumentError(absl::StrCat(
            "an operand of '", opName(&op), "' is not defined in its block"));
      operands.push_back(&found->second);
    }
    if (llvm::isa<mlir::func::ReturnOp, YieldOp>(op)) {
      Tensors results;
      for (const HostTensor *operand : operands)
        results.push_back(*operand);
      return results;
    }
    absl::StatusOr<Tensors> results = evaluateOp(&op, operands, observer);
    if (!results.ok())
      return results.status();
    if (absl::Status status = checkResults(&op, *results); !status.ok())
      return status;
    if (observer)
      observer(&op, operands, *results);
    for (auto [result, tensor] : llvm::zip(op.getResults(), *results))
      values[result] = std::move(tensor);
  }
  return absl::InvalidArgumentError("block does not end in a terminator");
}

/// Runs the MLIR verifier, collecting its diagnostics into the error.
absl::Status verifyFunction(mlir::func::FuncOp function) {
  std::string messages;
  mlir::ScopedDiagnosticHandler handler(
      function.getContext(), [&](mlir::Diagnostic &diagnostic) {
        absl::StrAppend(&messages, messages.empty() ? "" : "; ",
                        diagnostic.str());
        return mlir::success();
      });
  if (mlir::failed(mlir::verify(function)))
    return absl::InvalidArgumentError(
        absl::StrCat("function does not verify: ", messages));
  return absl::OkStatus();
}

/// An error naming the argument unless each input has its argument's type.
absl::Status checkInputs(mlir::func::FuncOp function,
                         llvm::ArrayRef<HostTensor> inputs) {
  llvm::ArrayRef<mlir::Type> types = function.getArgumentTypes();
  if (types.size() != inputs.size())
    return absl::InvalidArgumentError(
        absl::StrCat("@", function.getSymName().str(), " takes ",
                     types.size(), " arguments, got ", inputs.size(),
                     " inputs"));
  for (auto [i, type] : llvm::enumerate(types)) {
    auto expected = describeTensorType(type);
    if (!expected.ok())
      return absl::InvalidArgumentError(absl::StrCat(
          "argument ", i, ": ", expected.status().message()));
    if (expected->first != inputs[i].dtype() ||
        expected->second != inputs[i].shape())
      return absl::InvalidArgumentError(
          absl::StrCat("argument ", i, ": expected ", printType(type),
                       ", got ", inputs[i].typeString()));
  }
  return absl::OkStatus();
}

} // namespace

absl::StatusOr<std::vector<HostTensor>>
evaluate(mlir::func::FuncOp function, llvm::ArrayRef<HostTensor> inputs) {
  return evaluate(function, inputs, nullptr);
}

absl::StatusOr<std::vector<HostTensor>>
evaluate(mlir::func::FuncOp function, llvm::ArrayRef<HostTensor> inputs,
         OpObserver observer) {
  if (!function || function.isExternal())
    return absl::InvalidArgumentError("cannot evaluate a function without a "
                                      "body");
  if (absl::Status status = verifyFunction(function); !status.ok())
    return status;
  if (absl::Status status = checkInputs(function, inputs); !status.ok())
    return status;
  return evaluateBlock(function.getBody().front(), inputs, observer);
}

} // namespace kiln::reference
