// The primitive tensor ops: user-facing checks (each failure throws
// kiln::Error naming the op and the shapes or dtypes), NumPy broadcasting,
// then one builder call per dialect primitive. Composites built from these
// (softmax, layer_norm, cross_entropy, ...) live in Composites.cpp.
#include "frontends/lazy/Node.h"
#include "runtime/World.h"
#include "support/Collectives.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <numeric>

namespace kiln {

using namespace lazy;

namespace {

std::string typeName(const Tensor &t) {
  return shapeString(t.shape()) + " " + std::string(dtypeName(t.dtype()));
}

const Tensor &checked(const Tensor &t, const char *op) {
  if (!t.defined())
    throw Error(std::string(op) + ": the tensor is undefined");
  return t;
}

void requireFloat(const Tensor &t, const char *op) {
  if (!isFloat(checked(t, op).dtype()))
    throw Error(std::string(op) + ": expected a float tensor, got " +
                typeName(t));
}

void requireNumeric(const Tensor &t, const char *op) {
  if (checked(t, op).dtype() == DType::i1)
    throw Error(std::string(op) + ": expected a numeric tensor, got " +
                typeName(t));
}

int64_t normDim(int64_t d, int64_t rank, const char *op) {
  if (d < -rank || d >= rank)
    throw Error(std::string(op) + ": dimension " + std::to_string(d) +
                " is out of range for rank " + std::to_string(rank));
  return d < 0 ? d + rank : d;
}

std::vector<int64_t> normDims(std::vector<int64_t> dims, int64_t rank,
                              const char *op) {
  if (dims.empty()) {
    dims.resize(rank);
    std::iota(dims.begin(), dims.end(), 0);
    return dims;
  }
  for (int64_t &d : dims)
    d = normDim(d, rank, op);
  std::sort(dims.begin(), dims.end());
  if (std::adjacent_find(dims.begin(), dims.end()) != dims.end())
    throw Error(std::string(op) + ": repeated dimension");
  return dims;
}

Shape broadcastShapes(const Shape &a, const Shape &b, const char *op) {
  Shape out(std::max(a.size(), b.size()));
  for (size_t i = 0; i < out.size(); ++i) {
    int64_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
    int64_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (da != db && da != 1 && db != 1)
      throw Error(std::string(op) + ": shapes " + shapeString(a) + " and " +
                  shapeString(b) + " cannot be broadcast");
    out[out.size() - 1 - i] = da == 1 ? db : da;
  }
  return out;
}

void requireSameDType(const Tensor &a, const Tensor &b, const char *op) {
  if (a.dtype() != b.dtype())
    throw Error(std::string(op) + ": dtypes differ: " + typeName(a) + " and " +
                typeName(b));
}

Tensor unaryOp(const Tensor &x, Op op, const char *name, bool floatOnly) {
  floatOnly ? requireFloat(x, name) : requireNumeric(x, name);
  return opResult(unary(op, nodeOf(x)), {&x});
}

/// a op b with NumPy broadcasting; operands of one dtype.
Tensor binaryOp(const Tensor &a, const Tensor &b, Op op, const char *name) {
  requireNumeric(a, name);
  requireNumeric(b, name);
  requireSameDType(a, b, name);
  Shape shape = broadcastShapes(a.shape(), b.shape(), name);
  NodePtr node =
      binary(op, broadcastTo(nodeOf(a), shape), broadcastTo(nodeOf(b), shape));
  return opResult(node, {&a, &b});
}

Tensor compareOp(const Tensor &a, const Tensor &b, Cmp direction,
                 const char *name) {
  requireNumeric(a, name);
  requireNumeric(b, name);
  requireSameDType(a, b, name);
  Shape shape = broadcastShapes(a.shape(), b.shape(), name);
  return makeTensor(compare(direction, broadcastTo(nodeOf(a), shape),
                            broadcastTo(nodeOf(b), shape)));
}

/// A constant scalar in `like`'s dtype, as a 0-d tensor (the op it feeds
/// checks the dtype).
Tensor lit(const Tensor &like, double value) {
  return makeTensor(constant(value, checked(like, "scalar").dtype(), {}));
}

/// a op value (or value op a with `valueFirst`): the nodes binaryOp makes
/// of a and lit(a, value), without the literal's tensor handle. Optimizers
/// and losses record thousands of these a step.
Tensor scalarOp(const Tensor &a, double value, bool valueFirst, Op op,
                const char *name) {
  requireNumeric(a, name);
  const NodePtr &x = nodeOf(a);
  NodePtr c = broadcastInDim(constant(value, x->dtype, {}), x->shape, {});
  NodePtr node = valueFirst ? binary(op, c, x) : binary(op, x, c);
  return opResult(node, {&a});
}

} // namespace

Tensor operator+(const Tensor &a, const Tensor &b) {
  return binaryOp(a, b, Op::Add, "add");
}
Tensor operator-(const Tensor &a, const Tensor &b) {
  return binaryOp(a, b, Op::Sub, "sub");
}
Tensor operator*(const Tensor &a, const Tensor &b) {
  return binaryOp(a, b, Op::Mul, "mul");
}
Tensor operator/(const Tensor &a, const Tensor &b) {
  return binaryOp(a, b, Op::Div, "div");
}
Tensor operator+(const Tensor &a, double b) {
  return scalarOp(a, b, false, Op::Add, "add");
}
Tensor operator-(const Tensor &a, double b) {
  return scalarOp(a, b, false, Op::Sub, "sub");
}
Tensor operator*(const Tensor &a, double b) {
  return scalarOp(a, b, false, Op::Mul, "mul");
}
Tensor operator/(const Tensor &a, double b) {
  return scalarOp(a, b, false, Op::Div, "div");
}
Tensor operator+(double a, const Tensor &b) {
  return scalarOp(b, a, true, Op::Add, "add");
}
Tensor operator-(double a, const Tensor &b) {
  return scalarOp(b, a, true, Op::Sub, "sub");
}
Tensor operator*(double a, const Tensor &b) {
  return scalarOp(b, a, true, Op::Mul, "mul");
}
Tensor operator/(double a, const Tensor &b) {
  return scalarOp(b, a, true, Op::Div, "div");
}
Tensor operator-(const Tensor &a) { return a.neg(); }

Tensor Tensor::neg() const { return unaryOp(*this, Op::Neg, "neg", false); }
Tensor Tensor::abs() const { return unaryOp(*this, Op::Abs, "abs", false); }
Tensor Tensor::exp() const { return unaryOp(*this, Op::Exp, "exp", true); }
Tensor Tensor::log() const { return unaryOp(*this, Op::Log, "log", true); }
Tensor Tensor::tanh() const { return unaryOp(*this, Op::Tanh, "tanh", true); }
Tensor Tensor::sqrt() const { return unaryOp(*this, Op::Sqrt, "sqrt", true); }
Tensor Tensor::rsqrt() const {
  return unaryOp(*this, Op::Rsqrt, "rsqrt", true);
}
Tensor Tensor::sigmoid() const {
  return unaryOp(*this, Op::Logistic, "sigmoid", true);
}

Tensor Tensor::to(DType dtype) const {
  checked(*this, "to");
  return opResult(convert(nodeOf(*this), dtype), {this});
}

Tensor Tensor::pow(double exponent) const { return pow(lit(*this, exponent)); }
Tensor Tensor::pow(const Tensor &exponent) const {
  return binaryOp(*this, exponent, Op::Pow, "pow");
}
Tensor Tensor::maximum(const Tensor &other) const {
  return binaryOp(*this, other, Op::Max, "maximum");
}
Tensor Tensor::minimum(const Tensor &other) const {
  return binaryOp(*this, other, Op::Min, "minimum");
}
Tensor Tensor::clamp(double lo, double hi) const {
  if (lo > hi)
    throw Error("clamp: lower bound " + std::to_string(lo) +
                " is above upper bound " + std::to_string(hi));
  return maximum(lit(*this, lo)).minimum(lit(*this, hi));
}

Tensor Tensor::eq(const Tensor &o) const {
  return compareOp(*this, o, Cmp::EQ, "eq");
}
Tensor Tensor::ne(const Tensor &o) const {
  return compareOp(*this, o, Cmp::NE, "ne");
}
Tensor Tensor::lt(const Tensor &o) const {
  return compareOp(*this, o, Cmp::LT, "lt");
}
Tensor Tensor::le(const Tensor &o) const {
  return compareOp(*this, o, Cmp::LE, "le");
}
Tensor Tensor::gt(const Tensor &o) const {
  return compareOp(*this, o, Cmp::GT, "gt");
}
Tensor Tensor::ge(const Tensor &o) const {
  return compareOp(*this, o, Cmp::GE, "ge");
}

namespace {
/// Joins the run's processes (once: joinWorld keeps its first answer) →
/// the world's communicator, null for a process alone. An error becomes
/// kiln::Error.
Communicator *joinedWorld() {
  if (absl::Status s = runtime::joinWorld(); !s.ok())
    throw Error("data parallelism: " + std::string(s.message()));
  return worldCommunicator();
}
} // namespace

int world_size() {
  Communicator *world = joinedWorld();
  return world ? world->size() : 1;
}

int world_rank() {
  Communicator *world = joinedWorld();
  return world ? world->rank() : 0;
}

Tensor all_reduce(const Tensor &x) {
  if (!isAllReduceType(checked(x, "all_reduce").dtype()))
    throw Error("all_reduce: sums f32, f64, i32 or i64 tensors, got " +
                typeName(x) + " (convert a 16-bit tensor to f32 first)");
  joinedWorld();
  return opResult(unary(Op::AllReduce, nodeOf(x)), {&x});
}

Tensor broadcast(const Tensor &x, int root) {
  const int processes = world_size();
  if (root < 0 || root >= processes)
    throw Error("broadcast: root " + std::to_string(root) +
                " is not a process of the " + std::to_string(processes) +
                " of this run");
  if (processes == 1)
    return x;
  const DType dtype = checked(x, "broadcast").dtype();
  if (!isAllReduceType(dtype) && dtype != DType::bf16 && dtype != DType::f16)
    throw Error("broadcast: sends float, i32 or i64 tensors, got " +
                typeName(x));
  // x + 0 + ... + 0 is x exactly, and so is a 16-bit float's round trip
  // through f32.
  const DType wire = isAllReduceType(dtype) ? dtype : DType::f32;
  Tensor sent =
      world_rank() == root ? x.to(wire) : Tensor::full(x.shape(), 0, wire);
  return all_reduce(sent).to(dtype);
}

void barrier() {
  if (Communicator *world = joinedWorld())
    if (absl::Status s = world->barrier(); !s.ok())
      throw Error("barrier: " + std::string(s.message()));
}

void abort_processes(int exit_code) {
  std::fflush(stdout);
  std::fflush(stderr);
  if (Communicator *world = worldCommunicator())
    world->abort(exit_code);
  std::exit(exit_code);
}

Tensor where(const Tensor &cond, const Tensor &a, const Tensor &b) {
  if (checked(cond, "where").dtype() != DType::i1)
    throw Error("where: the condition must be i1, got " + typeName(cond));
  requireSameDType(checked(a, "where"), checked(b, "where"), "where");
  Shape shape = broadcastShapes(
      broadcastShapes(cond.shape(), a.shape(), "where"), b.shape(), "where");
  NodePtr node =
      select(broadcastTo(nodeOf(cond), shape), broadcastTo(nodeOf(a), shape),
             broadcastTo(nodeOf(b), shape));
  return opResult(node, {&a, &b});
}

Tensor Tensor::masked_fill(const Tensor &mask, double value) const {
  return where(mask, lit(*this, value), *this);
}

Tensor Tensor::relu() const {
  requireNumeric(*this, "relu");
  Tensor zero = lit(*this, 0);
  return where(gt(zero), *this, zero);
}

//===--- Reductions -------------------------------------------------------===//

static Tensor reduceOp(const Tensor &x, Op kind, std::vector<int64_t> dims,
                       bool keepdim, const char *name) {
  requireNumeric(x, name);
  dims = normDims(std::move(dims), x.dim(), name);
  NodePtr node = reduce(kind, nodeOf(x), dims);
  if (keepdim) {
    Shape kept = x.shape();
    for (int64_t d : dims)
      kept[d] = 1;
    node = reshape(node, kept);
  }
  return opResult(node, {&x});
}

Tensor Tensor::sum(std::vector<int64_t> dims, bool keepdim) const {
  return reduceOp(*this, Op::ReduceSum, std::move(dims), keepdim, "sum");
}
Tensor Tensor::max(std::vector<int64_t> dims, bool keepdim) const {
  return reduceOp(*this, Op::ReduceMax, std::move(dims), keepdim, "max");
}
Tensor Tensor::mean(std::vector<int64_t> dims, bool keepdim) const {
  requireFloat(*this, "mean");
  std::vector<int64_t> normalized = normDims(dims, dim(), "mean");
  int64_t count = 1;
  for (int64_t d : normalized)
    count *= shape()[d];
  return sum(normalized, keepdim) / static_cast<double>(count);
}

//===--- Shape ------------------------------------------------------------===//

Tensor Tensor::reshape(Shape newShape) const {
  checked(*this, "reshape");
  int64_t known = 1, inferred = -1;
  for (size_t i = 0; i < newShape.size(); ++i) {
    if (newShape[i] == -1 && inferred < 0)
      inferred = static_cast<int64_t>(i);
    else if (newShape[i] < 0)
      throw Error("reshape: invalid shape " + shapeString(newShape));
    else
      known *= newShape[i];
  }
  if (inferred >= 0 && known != 0 && numel() % known == 0)
    newShape[inferred] = numel() / known;
  if (std::accumulate(newShape.begin(), newShape.end(), int64_t{1},
                      std::multiplies<int64_t>()) != numel() ||
      (inferred >= 0 && newShape[inferred] < 0))
    throw Error("reshape: shape " + shapeString(shape()) +
                " cannot be reshaped to " + shapeString(newShape));
  return opResult(lazy::reshape(nodeOf(*this), newShape), {this});
}

Tensor Tensor::permute(std::vector<int64_t> dims) const {
  checked(*this, "permute");
  if (static_cast<int64_t>(dims.size()) != dim())
    throw Error("permute: " + std::to_string(dims.size()) +
                " dimensions given for shape " + shapeString(shape()));
  normDims(dims, dim(), "permute"); // rejects repeated dimensions
  for (int64_t &d : dims)
    d = normDim(d, dim(), "permute");
  return opResult(lazy::transpose(nodeOf(*this), dims), {this});
}

Tensor Tensor::transpose(int64_t dim0, int64_t dim1) const {
  checked(*this, "transpose");
  std::vector<int64_t> perm(dim());
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[normDim(dim0, dim(), "transpose")],
            perm[normDim(dim1, dim(), "transpose")]);
  return permute(perm);
}

Tensor Tensor::slice(int64_t d, int64_t start, int64_t end,
                     int64_t step) const {
  checked(*this, "slice");
  d = normDim(d, dim(), "slice");
  if (step < 1)
    throw Error("slice: step must be positive, got " + std::to_string(step));
  int64_t n = shape()[d];
  auto clampIndex = [n](int64_t i) {
    return std::clamp<int64_t>(i < 0 ? i + n : i, 0, n);
  };
  start = clampIndex(start);
  end = std::max(start, clampIndex(end));
  std::vector<int64_t> starts(dim(), 0), limits = shape(), strides(dim(), 1);
  starts[d] = start;
  limits[d] = end;
  strides[d] = step;
  return opResult(lazy::slice(nodeOf(*this), starts, limits, strides), {this});
}

Tensor Tensor::expand(Shape target) const {
  checked(*this, "expand");
  if (target.size() < shape().size())
    throw Error("expand: shape " + shapeString(shape()) +
                " cannot be expanded to " + shapeString(target));
  size_t offset = target.size() - shape().size();
  for (size_t i = 0; i < target.size(); ++i) {
    int64_t have = i < offset ? 1 : shape()[i - offset];
    if (target[i] == -1 && i >= offset)
      target[i] = have;
    if (target[i] < 0 || (have != 1 && have != target[i]))
      throw Error("expand: shape " + shapeString(shape()) +
                  " cannot be expanded to " + shapeString(target));
  }
  return opResult(broadcastTo(nodeOf(*this), target), {this});
}

Tensor Tensor::unsqueeze(int64_t d) const {
  Shape s = checked(*this, "unsqueeze").shape();
  d = normDim(d, dim() + 1, "unsqueeze");
  s.insert(s.begin() + d, 1);
  return reshape(s);
}

Tensor Tensor::squeeze(int64_t d) const {
  Shape s = checked(*this, "squeeze").shape();
  d = normDim(d, dim(), "squeeze");
  if (s[d] != 1)
    throw Error("squeeze: dimension " + std::to_string(d) + " of shape " +
                shapeString(s) + " is not 1");
  s.erase(s.begin() + d);
  return reshape(s);
}

Tensor Tensor::flatten(int64_t start, int64_t end) const {
  Shape s = checked(*this, "flatten").shape();
  if (s.empty())
    return reshape({1});
  start = normDim(start, dim(), "flatten");
  end = normDim(end, dim(), "flatten");
  if (start > end)
    throw Error("flatten: start dimension is after end dimension");
  Shape out(s.begin(), s.begin() + start);
  out.push_back(std::accumulate(s.begin() + start, s.begin() + end + 1,
                                int64_t{1}, std::multiplies<int64_t>()));
  out.insert(out.end(), s.begin() + end + 1, s.end());
  return reshape(out);
}

std::vector<Tensor> Tensor::split(int64_t size, int64_t d) const {
  checked(*this, "split");
  d = normDim(d, dim(), "split");
  if (size < 1)
    throw Error("split: piece size must be positive, got " +
                std::to_string(size));
  std::vector<Tensor> pieces;
  for (int64_t start = 0; start < shape()[d]; start += size)
    pieces.push_back(slice(d, start, start + size));
  return pieces;
}

Tensor Tensor::pad(std::vector<int64_t> low, std::vector<int64_t> high,
                   double value) const {
  checked(*this, "pad");
  bool bad = static_cast<int64_t>(low.size()) != dim() ||
             static_cast<int64_t>(high.size()) != dim();
  for (size_t i = 0; !bad && i < low.size(); ++i)
    bad = low[i] < 0 || high[i] < 0;
  if (bad)
    throw Error("pad: padding " + shapeString(low) + " / " + shapeString(high) +
                " does not fit shape " + shapeString(shape()) +
                " (one non-negative amount per dimension)");
  return opResult(lazy::pad(nodeOf(*this), low, high, value), {this});
}

Tensor cat(const std::vector<Tensor> &tensors, int64_t dim) {
  if (tensors.empty())
    throw Error("cat: no tensors given");
  const Tensor &first = checked(tensors[0], "cat");
  dim = normDim(dim, first.dim(), "cat");
  std::vector<NodePtr> nodes;
  bool requiresGrad = false; // as opResult, over a vector of inputs
  for (const Tensor &t : tensors) {
    Shape a = first.shape(), b = checked(t, "cat").shape();
    if (a.size() == b.size())
      a[dim] = b[dim];
    if (a != b || t.dtype() != first.dtype())
      throw Error("cat: " + typeName(t) + " does not match " + typeName(first) +
                  " outside dimension " + std::to_string(dim));
    nodes.push_back(nodeOf(t));
    requiresGrad |= t.requires_grad();
  }
  bool grad = requiresGrad && is_grad_enabled() && isFloat(first.dtype());
  return makeTensor(concatenate(nodes, dim), grad, !grad);
}

Tensor stack(const std::vector<Tensor> &tensors, int64_t dim) {
  if (tensors.empty())
    throw Error("stack: no tensors given");
  std::vector<Tensor> expanded;
  for (const Tensor &t : tensors) {
    if (checked(t, "stack").shape() != tensors[0].shape())
      throw Error("stack: shapes " + shapeString(tensors[0].shape()) + " and " +
                  shapeString(t.shape()) + " differ");
    expanded.push_back(t.unsqueeze(dim));
  }
  return cat(expanded, dim);
}

//===--- Contractions -----------------------------------------------------===//

Tensor Tensor::matmul(const Tensor &other) const {
  const Tensor &a = checked(*this, "matmul"), &b = checked(other, "matmul");
  requireNumeric(a, "matmul");
  requireSameDType(a, b, "matmul");
  auto fail = [&] {
    throw Error("matmul: shapes " + shapeString(a.shape()) + " and " +
                shapeString(b.shape()) + " cannot be multiplied");
  };
  if (a.dim() == 0 || b.dim() == 0)
    fail();
  // 1-d operands become matrices, and the added dimension is dropped again.
  if (a.dim() == 1 && b.dim() == 1)
    return a.unsqueeze(0).matmul(b.unsqueeze(1)).reshape({});
  if (a.dim() == 1)
    return a.unsqueeze(0).matmul(b).squeeze(-2);
  if (b.dim() == 1)
    return a.matmul(b.unsqueeze(1)).squeeze(-1);
  if (a.size(-1) != b.size(-2))
    fail();
  int64_t ra = a.dim(), rb = b.dim();
  // [.., m, k] x [k, n]: contract directly, with no batch dims (a weight is
  // never broadcast over the batch).
  if (rb == 2)
    return opResult(dotGeneral(nodeOf(a), nodeOf(b), {}, {}, {ra - 1}, {0}),
                    {&a, &b});
  Shape batchA(a.shape().begin(), a.shape().end() - 2);
  Shape batchB(b.shape().begin(), b.shape().end() - 2);
  Shape batch;
  try {
    batch = broadcastShapes(batchA, batchB, "matmul");
  } catch (const Error &) {
    fail();
  }
  Shape shapeA = batch, shapeB = batch;
  shapeA.insert(shapeA.end(), {a.size(-2), a.size(-1)});
  shapeB.insert(shapeB.end(), {b.size(-2), b.size(-1)});
  std::vector<int64_t> batchDims(batch.size());
  std::iota(batchDims.begin(), batchDims.end(), 0);
  int64_t n = static_cast<int64_t>(batch.size());
  NodePtr node =
      dotGeneral(broadcastTo(nodeOf(a), shapeA), broadcastTo(nodeOf(b), shapeB),
                 batchDims, batchDims, {n + 1}, {n});
  return opResult(node, {&a, &b});
}

Tensor Tensor::bmm(const Tensor &other) const {
  const Tensor &a = checked(*this, "bmm"), &b = checked(other, "bmm");
  if (a.dim() != 3 || b.dim() != 3 || a.size(0) != b.size(0) ||
      a.size(2) != b.size(1))
    throw Error("bmm: shapes " + shapeString(a.shape()) + " and " +
                shapeString(b.shape()) + " cannot be multiplied");
  return a.matmul(b);
}

Tensor matmul(const Tensor &a, const Tensor &b) { return a.matmul(b); }
Tensor bmm(const Tensor &a, const Tensor &b) { return a.bmm(b); }
Tensor relu(const Tensor &x) { return x.relu(); }

} // namespace kiln
