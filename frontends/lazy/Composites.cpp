// Composite ops built only from primitive tensor ops, so that autograd needs
// no rule of its own for them and later fusion sees their primitives: GELU,
// softmax, log_softmax, layer_norm, embedding, cross_entropy, dropout and
// randn (Box–Muller on rng_uniform).
#include "frontends/lazy/Node.h"

#include <cmath>

namespace kiln {

using namespace lazy;

namespace {
std::string typeName(const Tensor &t) {
  return shapeString(t.shape()) + " " + std::string(dtypeName(t.dtype()));
}
} // namespace

void lazy::checkHostIndices(const char *op, const Tensor &indices, int64_t size,
                            const char *what, std::optional<int64_t> allowed) {
  const Node &node = *nodeOf(indices);
  if (!node.data || node.data->deferredContents())
    return;
  const HostTensor &values = *node.data;
  for (int64_t i = 0; i < values.numElements(); ++i) {
    int64_t index = values.getInt(i);
    if ((index >= 0 && index < size) || (allowed && index == *allowed))
      continue;
    std::string expected = "[0, " + std::to_string(size) + ")";
    if (allowed)
      expected += " or " + std::to_string(*allowed);
    throw Error(std::string(op) + ": " + what + " " + std::to_string(index) +
                " at position " + std::to_string(i) + " of " + indices.str() +
                " is outside " + expected);
  }
}

Tensor Tensor::gelu() const {
  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), GPT-2's approximation.
  const Tensor &x = *this;
  Tensor inner = (x + x * x * x * 0.044715) * std::sqrt(2.0 / M_PI);
  return x * 0.5 * (inner.tanh() + 1.0);
}
Tensor gelu(const Tensor &x) { return x.gelu(); }

Tensor Tensor::softmax(int64_t dim) const {
  // The max is a constant shift (detached): it keeps exp in range and
  // cancels from the value and from the gradient.
  Tensor shifted = *this - detach().max({dim}, true);
  Tensor e = shifted.exp();
  return e / e.sum({dim}, true);
}

Tensor Tensor::log_softmax(int64_t dim) const {
  Tensor shifted = *this - detach().max({dim}, true);
  return shifted - shifted.exp().sum({dim}, true).log();
}

Tensor Tensor::argmax(int64_t dim, bool keepdim) const {
  // Among the positions equal to the max, the smallest index: the max of
  // (n - index), mapped back. A NaN counts as the max, as in PyTorch (no
  // position equals a NaN max, and the answer was n, past the end).
  int64_t d = dim < 0 ? dim + this->dim() : dim, n = size(dim);
  if (n == 0)
    throw Error("argmax: dimension " + std::to_string(dim) + " of " + str() +
                " is empty: no position to return");
  Tensor x = detach();
  Tensor m = x.max({dim}, true);
  Tensor hit = x.eq(m);
  if (isFloat(dtype()))
    hit = where(x.ne(x), Tensor::ones({}, DType::i1), hit);
  Tensor reversed = makeTensor(iota(DType::i64, shape(), d));
  reversed = Tensor::full({}, static_cast<double>(n), DType::i64) - reversed;
  Tensor best =
      where(hit, reversed, Tensor::zeros({}, DType::i64)).max({dim}, keepdim);
  return static_cast<double>(n) - best;
}

Tensor softmax(const Tensor &x, int64_t dim) { return x.softmax(dim); }
Tensor log_softmax(const Tensor &x, int64_t dim) { return x.log_softmax(dim); }

Tensor layer_norm(const Tensor &x, const Tensor &weight, const Tensor &bias,
                  double eps, int64_t normalized_dims) {
  if (!x.defined() || normalized_dims < 1 || normalized_dims > x.dim())
    throw Error("layer_norm: cannot normalize the last " +
                std::to_string(normalized_dims) + " dimensions of " + x.str());
  Shape normalized(x.shape().end() - normalized_dims, x.shape().end());
  for (const Tensor *p : {&weight, &bias})
    if (p->defined() && p->shape() != normalized)
      throw Error("layer_norm: weight/bias shape " + shapeString(p->shape()) +
                  " does not match normalized shape " +
                  shapeString(normalized));
  std::vector<int64_t> dims;
  for (int64_t d = x.dim() - normalized_dims; d < x.dim(); ++d)
    dims.push_back(d);
  Tensor centered = x - x.mean(dims, true);
  Tensor variance = (centered * centered).mean(dims, true);
  Tensor y = centered * (variance + eps).rsqrt();
  if (weight.defined())
    y = y * weight;
  if (bias.defined())
    y = y + bias;
  return y;
}

Tensor embedding(const Tensor &weight, const Tensor &indices) {
  if (!weight.defined() || !indices.defined() || weight.dim() != 2 ||
      (indices.dtype() != DType::i32 && indices.dtype() != DType::i64))
    throw Error("embedding: expected a [V, D] weight and integer indices, "
                "got " +
                weight.str() + " and " + indices.str());
  checkHostIndices("embedding", indices, weight.size(0), "index");
  return opResult(gather(nodeOf(weight), nodeOf(indices), 0), {&weight});
}

Tensor cross_entropy(const Tensor &logits, const Tensor &targets,
                     int64_t ignore_index) {
  if (!logits.defined() || !targets.defined())
    throw Error("cross_entropy: undefined tensor");
  if (logits.dim() == 1 && targets.dim() == 0)
    return cross_entropy(logits.unsqueeze(0), targets.unsqueeze(0),
                         ignore_index);
  if (logits.dim() != 2 || targets.dim() != 1 ||
      logits.size(0) != targets.size(0) || !isFloat(logits.dtype()) ||
      (targets.dtype() != DType::i32 && targets.dtype() != DType::i64))
    throw Error("cross_entropy: expected float logits [N, C] and integer "
                "targets [N], got " +
                typeName(logits) + " and " + typeName(targets));
  checkHostIndices("cross_entropy", targets, logits.size(1), "target",
                   ignore_index);
  // Pick -log p[target] with a one-hot mask (a compare with an iota), which
  // fuses, instead of a per-row gather.
  int64_t n = logits.size(0), c = logits.size(1);
  Tensor classes = makeTensor(iota(targets.dtype(), {n, c}, 1));
  Tensor onehot = classes.eq(targets.unsqueeze(1));
  Tensor picked =
      where(onehot, logits.log_softmax(1), Tensor::zeros({}, logits.dtype()))
          .sum({1});
  Tensor ignore =
      Tensor::full({}, static_cast<double>(ignore_index), targets.dtype());
  Tensor valid = targets.ne(ignore).to(logits.dtype());
  return -(picked * valid).sum() / valid.sum();
}

Tensor dropout(const Tensor &x, double p, bool training, Generator *generator) {
  if (!x.defined() || !isFloat(x.dtype()))
    throw Error("dropout: expected a float tensor, got " + x.str());
  if (!(p >= 0 && p <= 1))
    throw Error("dropout: probability must be in [0, 1], got " +
                std::to_string(p));
  if (!training || p == 0)
    return x;
  if (p == 1)
    return x * 0.0;
  Tensor u = Tensor::rand(x.shape(), DType::f32, generator);
  Tensor keep = u.ge(Tensor::full({}, p, DType::f32));
  return where(keep, x * (1.0 / (1.0 - p)), Tensor::zeros({}, x.dtype()));
}

Tensor Tensor::randn(Shape shape, DType dtype, Generator *generator) {
  if (!isFloat(dtype))
    throw Error("randn: expected a float dtype, got " +
                std::string(dtypeName(dtype)));
  // Box–Muller: z = sqrt(-2 ln(1 - u1)) * cos(2 pi u2). The dialect has no
  // cos, so cos(2 pi u2) = -cos(x) with x = 2 pi (u2 - 1/2) in [-pi, pi) is
  // its Taylor series to x^20 (error < 1e-10 there), by Horner in x^2.
  DType compute = dtype == DType::f64 ? DType::f64 : DType::f32;
  Tensor u1 = rand(shape, DType::f32, generator).to(compute);
  Tensor u2 = rand(shape, DType::f32, generator).to(compute);
  Tensor radius = ((1.0 - u1).log() * -2.0).sqrt();
  Tensor x = (u2 - 0.5) * (2 * M_PI);
  Tensor x2 = x * x;
  double factorial = 1;
  std::vector<double> coefficients; // (-1)^k / (2k)!
  for (int k = 0; k <= 10; ++k) {
    if (k > 0)
      factorial *= (2.0 * k - 1) * (2.0 * k);
    coefficients.push_back((k % 2 ? -1.0 : 1.0) / factorial);
  }
  Tensor cosine = Tensor::full({}, coefficients.back(), compute);
  for (int k = 9; k >= 0; --k)
    cosine = cosine * x2 + coefficients[k];
  return (-(radius * cosine)).to(dtype);
}

} // namespace kiln
