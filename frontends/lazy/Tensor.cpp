// kiln::Tensor's handle-level behaviour: kiln::Error, properties, creation of
// leaves (device data and lazy constants), host transfers with their forced
// syncs, autograd flags, assign_, generators and grad mode. The ops
// themselves live in Ops.cpp and Composites.cpp.
#include "frontends/lazy/CallSites.h"
#include "frontends/lazy/Eager.h"
#include "frontends/lazy/Node.h"
#include "frontends/lazy/Step.h"

#include <cmath>

namespace kiln {

using namespace lazy;

// Defined out of line so that kiln::Error's type information is emitted here,
// in a file compiled with RTTI: users catch it by type.
Error::Error(const std::string &message) : std::runtime_error(message) {}
Error::~Error() = default;
OutOfMemoryError::~OutOfMemoryError() = default;

Tensor::Tensor() = default;
Tensor::Tensor(std::shared_ptr<detail::TensorImpl> impl)
    : impl_(std::move(impl)) {}

static const detail::TensorImpl &implOf(const Tensor &t, const char *what) {
  if (!t.defined())
    throw Error(std::string(what) + ": the tensor is undefined");
  return *t.impl();
}

DType Tensor::dtype() const { return implOf(*this, "dtype").node->dtype; }
const Shape &Tensor::shape() const {
  return implOf(*this, "shape").node->shape;
}
int64_t Tensor::dim() const { return static_cast<int64_t>(shape().size()); }
int64_t Tensor::numel() const { return implOf(*this, "numel").node->numel(); }
bool Tensor::is_pending() const {
  return !implOf(*this, "is_pending").node->isMaterialized();
}

int64_t Tensor::size(int64_t d) const {
  int64_t rank = dim();
  if (d < -rank || d >= rank)
    throw Error("size: dimension " + std::to_string(d) +
                " is out of range for shape " + shapeString(shape()));
  return shape()[d < 0 ? d + rank : d];
}

std::string Tensor::str() const {
  if (!defined())
    return "Tensor<undefined>";
  std::string s = "Tensor<";
  for (int64_t d : shape())
    s += std::to_string(d) + "x";
  s += std::string(dtypeName(dtype()));
  return s + (is_pending() ? ", pending>" : ">");
}

//===--- Creation ---------------------------------------------------------===//

Tensor Tensor::from_host(HostTensor value, bool requires_grad) {
  if (requires_grad && !isFloat(value.dtype()))
    throw Error("from_host: only float tensors can require grad, got " +
                std::string(dtypeName(value.dtype())));
  return makeTensor(dataNode(std::make_shared<HostTensor>(std::move(value)),
                             sites::current()),
                    requires_grad, true);
}

Tensor Tensor::from_vector(const std::vector<double> &values, Shape shape,
                           DType dtype, bool requires_grad) {
  auto host = HostTensor::create(dtype, shape);
  if (!host.ok())
    throw Error("from_vector: " + std::string(host.status().message()));
  if (static_cast<int64_t>(values.size()) != host->numElements())
    throw Error("from_vector: " + std::to_string(values.size()) +
                " values do not fill shape " + shapeString(shape));
  for (size_t i = 0; i < values.size(); ++i)
    host->setDouble(static_cast<int64_t>(i), values[i]);
  return from_host(std::move(*host), requires_grad);
}

Tensor Tensor::scalar(double value, DType dtype) {
  return from_vector({value}, {}, dtype);
}

static void checkShape(const Shape &shape, const char *op) {
  for (int64_t d : shape)
    if (d < 0)
      throw Error(std::string(op) + ": negative dimension in shape " +
                  shapeString(shape));
}

Tensor Tensor::full(Shape shape, double value, DType dtype) {
  checkShape(shape, "full");
  return makeTensor(constant(value, dtype, std::move(shape)));
}
Tensor Tensor::zeros(Shape shape, DType dtype) {
  return full(std::move(shape), 0, dtype);
}
Tensor Tensor::ones(Shape shape, DType dtype) {
  return full(std::move(shape), 1, dtype);
}

Tensor Tensor::arange(int64_t end, DType dtype) {
  return arange(0, end, 1, dtype);
}

Tensor Tensor::arange(int64_t start, int64_t end, int64_t step, DType dtype) {
  if (step == 0)
    throw Error("arange: step must not be zero");
  int64_t n =
      std::max<int64_t>(0, (end - start + step - (step > 0 ? 1 : -1)) / step);
  NodePtr node = iota(dtype, {n}, 0);
  if (step != 1)
    node = binary(Op::Mul, node, constant(step, dtype, {n}));
  if (start != 0)
    node = binary(Op::Add, node, constant(start, dtype, {n}));
  return makeTensor(node);
}

Tensor Tensor::rand(Shape shape, DType dtype, Generator *generator) {
  checkShape(shape, "rand");
  return (generator ? *generator : default_generator()).uniform(shape, dtype);
}

//===--- Host transfers ---------------------------------------------------===//

HostTensor Tensor::to_host() const { return host_data(); }

const HostTensor &Tensor::host_data() const {
  const detail::TensorImpl &impl = implOf(*this, "to_host");
  if (!impl.node->isMaterialized())
    forcedSync();
  return *impl.node->data;
}

std::vector<double> Tensor::to_vector() const {
  HostTensor host = to_host();
  std::vector<double> values(host.numElements());
  for (int64_t i = 0; i < host.numElements(); ++i)
    values[i] = host.getDouble(i);
  return values;
}

double Tensor::item() const {
  if (numel() != 1)
    throw Error("item: expected one element, got shape " +
                shapeString(shape()));
  return to_host().getDouble(0);
}

//===--- Autograd flags ---------------------------------------------------===//

bool Tensor::requires_grad() const { return defined() && impl_->requiresGrad; }
bool Tensor::is_leaf() const { return implOf(*this, "is_leaf").isLeaf; }

Tensor &Tensor::requires_grad_(bool requires_grad) {
  implOf(*this, "requires_grad_");
  if (!impl_->isLeaf)
    throw Error("requires_grad_: only leaves can be marked; use detach() "
                "to make a leaf from " +
                str());
  if (requires_grad && !isFloat(dtype()))
    throw Error("requires_grad_: only float tensors can require grad, got " +
                std::string(dtypeName(dtype())));
  // A pending leaf (e.g. zeros) may be an interned node shared with another
  // leaf: a tagged detach gives this parameter a node of its own.
  if (requires_grad && !impl_->node->isData() &&
      !(impl_->node->op == Op::Detach && impl_->node->ints[0] != 0))
    impl_->node = lazy::detach(impl_->node, freshTag());
  impl_->requiresGrad = requires_grad;
  return *this;
}

Tensor Tensor::grad() const { return implOf(*this, "grad").grad; }
void Tensor::set_grad(const Tensor &grad) {
  implOf(*this, "set_grad");
  if (grad.defined() && (grad.shape() != shape() || grad.dtype() != dtype()))
    throw Error("set_grad: gradient " + grad.str() + " does not match " +
                str());
  impl_->grad = grad;
}
void Tensor::zero_grad() {
  implOf(*this, "zero_grad");
  impl_->grad = Tensor();
}

Tensor Tensor::detach() const {
  const NodePtr &node = implOf(*this, "detach").node;
  return makeTensor(requires_grad() ? lazy::detach(node) : node);
}

//===--- In-place update --------------------------------------------------===//

namespace lazy {
void assignNode(detail::TensorImpl &impl, NodePtr node) {
  // Eager mode donates nothing: the old buffer dies with its last holder.
  if (impl.node->isData() && !impl.assignedFrom && !eager::enabled())
    impl.assignedFrom = impl.node;
  impl.node = eager::settle(std::move(node), false);
}
} // namespace lazy

Tensor &Tensor::assign_(const Tensor &value) {
  implOf(*this, "assign_");
  implOf(value, "assign_");
  if (value.shape() != shape() || value.dtype() != dtype())
    throw Error("assign_: cannot assign " + value.str() + " to " + str());
  NodePtr node = nodeOf(value);
  if (impl_->requiresGrad && impl_->isLeaf)
    node = lazy::detach(node, freshTag());
  else if (value.requires_grad())
    node = lazy::detach(node);
  if (!impl_->isLeaf) {
    impl_->isLeaf = true;
    impl_->requiresGrad = false;
  }
  assignNode(*impl_, std::move(node));
  return *this;
}

Tensor &Tensor::set_data_(const Tensor &value) {
  implOf(*this, "set_data_");
  implOf(value, "set_data_");
  if (value.shape() != shape())
    throw Error("set_data_: cannot set " + value.str() + " as the data of " +
                str());
  if (!impl_->isLeaf || impl_->requiresGrad)
    throw Error("set_data_: " + str() +
                " must be a leaf that does not require grad (an optimizer's "
                "parameter keeps its dtype)");
  NodePtr node = nodeOf(value);
  if (value.requires_grad())
    node = lazy::detach(node);
  assignNode(*impl_, std::move(node));
  return *this;
}

//===--- Generators -------------------------------------------------------===//

Generator::Generator(uint64_t seed) { manual_seed(seed); }

void Generator::manual_seed(uint64_t seed) {
  HostTensor state(DType::i64, {2});
  state.setInt(0, static_cast<int64_t>(seed));
  Tensor value = Tensor::from_host(std::move(state));
  if (state_.defined())
    state_.assign_(value);
  else
    state_ = value;
}

Tensor Generator::uniform(Shape shape, DType dtype) {
  if (!isFloat(dtype))
    throw Error("uniform: expected a float dtype, got " +
                std::string(dtypeName(dtype)));
  // rng_uniform defines f32, f16 and bf16 bits; f64 converts from f32.
  DType drawn = dtype == DType::f64 ? DType::f32 : dtype;
  NodePtr values = rngUniform(nodeOf(state_), drawn, shape);
  assignNode(*state_.impl(), rngAdvance(nodeOf(state_), values->numel()));
  return makeTensor(convert(values, dtype));
}

Tensor Generator::take_state(int64_t values) {
  Tensor current = makeTensor(nodeOf(state_));
  assignNode(*state_.impl(), rngAdvance(nodeOf(state_), values));
  return current;
}

Generator &default_generator() {
  static Generator generator(0);
  return generator;
}

void manual_seed(uint64_t seed) { default_generator().manual_seed(seed); }

//===--- Grad mode --------------------------------------------------------===//

static bool gradEnabled = true;

NoGradGuard::NoGradGuard() : previous_(gradEnabled) { gradEnabled = false; }
NoGradGuard::~NoGradGuard() { gradEnabled = previous_; }
bool is_grad_enabled() { return gradEnabled; }

} // namespace kiln
