// Every VJP rule against central finite differences, in f64 on random
// inputs: for each case, loss = sum(f(inputs) * R) with fixed random R, the
// gradient from backward() must match (loss(x + h e_i) - loss(x - h e_i)) / 2h
// with h = 1e-5 to rtol 1e-6 (plus atol 1e-9 for gradients that are zero).
// The truncation error is O(h^2) ~ 1e-10 and the rounding error ~1e-11.
#include "frontends/lazy/Tensor.h"

#include <cmath>
#include <functional>
#include <random>

#include <gtest/gtest.h>

namespace kiln {
namespace {

constexpr double kStep = 1e-5;
constexpr double kRtol = 1e-6;
constexpr double kAtol = 1e-9;

using Fn = std::function<Tensor(const std::vector<Tensor> &)>;

HostTensor randomHost(Shape shape, std::mt19937 &rng, double lo = -1,
                      double hi = 1, bool awayFromZero = false) {
  HostTensor t(DType::f64, std::move(shape));
  std::uniform_real_distribution<double> dist(lo, hi);
  for (int64_t i = 0; i < t.numElements(); ++i) {
    double v = dist(rng);
    if (awayFromZero) // keeps |v| >= 0.2 so abs/relu/max kinks stay far away
      v = (v < 0 ? -1 : 1) * (0.2 + std::abs(v));
    t.setDouble(i, v);
  }
  return t;
}

/// f(inputs) weighted by fixed random R and summed: a scalar loss that sees
/// every output element with a different weight.
double evaluateLoss(const Fn &f, const std::vector<HostTensor> &inputs,
                    const HostTensor &weights) {
  std::vector<Tensor> tensors;
  for (const HostTensor &h : inputs)
    tensors.push_back(Tensor::from_host(h));
  return (f(tensors) * Tensor::from_host(weights)).sum().item();
}

/// Checks the gradients of every input marked in `differentiable`.
void checkGradients(const Fn &f, std::vector<HostTensor> inputs,
                    std::vector<bool> differentiable = {}) {
  std::mt19937 rng(1234);
  differentiable.resize(inputs.size(), true);
  std::vector<Tensor> params;
  for (size_t i = 0; i < inputs.size(); ++i)
    params.push_back(Tensor::from_host(inputs[i], differentiable[i]));
  Tensor out = f(params);
  HostTensor weights = randomHost(out.shape(), rng);
  (out * Tensor::from_host(weights)).sum().backward();
  step();
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!differentiable[i])
      continue;
    ASSERT_TRUE(params[i].grad().defined()) << "input " << i;
    std::vector<double> analytic = params[i].grad().to_vector();
    for (int64_t j = 0; j < inputs[i].numElements(); ++j) {
      double x = inputs[i].getDouble(j);
      inputs[i].setDouble(j, x + kStep);
      double plus = evaluateLoss(f, inputs, weights);
      inputs[i].setDouble(j, x - kStep);
      double minus = evaluateLoss(f, inputs, weights);
      inputs[i].setDouble(j, x);
      double numeric = (plus - minus) / (2 * kStep);
      EXPECT_NEAR(analytic[j], numeric,
                  kRtol * std::max(std::abs(numeric), std::abs(analytic[j])) +
                      kAtol)
          << "input " << i << " element " << j;
    }
  }
}

class LazyGrad : public ::testing::Test {
protected:
  std::mt19937 rng{42};
  HostTensor random(Shape shape) { return randomHost(std::move(shape), rng); }
  HostTensor positive(Shape shape) {
    return randomHost(std::move(shape), rng, 0.5, 2);
  }
  HostTensor nonzero(Shape shape) {
    return randomHost(std::move(shape), rng, -1, 1, true);
  }
  HostTensor indices(Shape shape, std::vector<int64_t> values) {
    HostTensor t(DType::i64, std::move(shape));
    for (size_t i = 0; i < values.size(); ++i)
      t.setInt(static_cast<int64_t>(i), values[i]);
    return t;
  }
};

TEST_F(LazyGrad, ArithmeticWithBroadcasting) {
  checkGradients(
      [](const std::vector<Tensor> &v) {
        return (v[0] + v[1]) * v[2] / v[3] - v[0] * 2.0 + 1.0 / v[3];
      },
      {random({2, 3}), random({3}), random({2, 1}), positive({1, 3})});
}

TEST_F(LazyGrad, UnaryOps) {
  checkGradients(
      [](const std::vector<Tensor> &v) {
        const Tensor &x = v[0], &p = v[1];
        return x.exp() + p.log() + x.tanh() + p.sqrt() + p.rsqrt() +
               x.sigmoid() - x + x.pow(3.0) + p.pow(x) + x.gelu();
      },
      {random({2, 3}), positive({2, 3})});
}

TEST_F(LazyGrad, PiecewiseOps) {
  checkGradients(
      [](const std::vector<Tensor> &v) {
        const Tensor &x = v[0], &y = v[1];
        return x.abs() + x.relu() + x.maximum(y) * 2.0 + x.minimum(y) +
               x.clamp(-0.5, 0.5) + where(x.gt(y), x * y, y);
      },
      {nonzero({2, 4}), nonzero({4})});
}

TEST_F(LazyGrad, BroadcastingReductions) {
  checkGradients(
      [](const std::vector<Tensor> &v) {
        const Tensor &x = v[0];
        return x * x.sum({1}, true) + x.mean({0, 2}, true) + x.max({2}, true) -
               x.sum() * 0.1 + x.expand({2, 2, 3, 4}).sum({0});
      },
      {random({2, 3, 4})});
}

TEST_F(LazyGrad, MatmulAndBmm) {
  checkGradients(
      [](const std::vector<Tensor> &v) {
        Tensor a = v[0].matmul(v[1]);             // [2, 4]
        Tensor b = v[2].matmul(v[1]).sum({0});    // [2,2,3] x [3,4]
        Tensor c = v[2].bmm(v[3]).sum({2});       // [2, 2]
        Tensor d = v[4].matmul(v[3]).sum({0, 2}); // [2,1,2,3] x [2,3,4]
        Tensor e =
            v[0].matmul(v[1].slice(1, 0, 1).squeeze(1)); // matrix x vector
        return a + b + c.matmul(a) + d.unsqueeze(1) + e.unsqueeze(1);
      },
      {random({2, 3}), random({3, 4}), random({2, 2, 3}), random({2, 3, 4}),
       random({2, 1, 2, 3})});
}

TEST_F(LazyGrad, ShapeOps) {
  checkGradients(
      [](const std::vector<Tensor> &v) {
        const Tensor &x = v[0], &y = v[1];
        Tensor t = x.transpose(0, 1).reshape({4, 3}).permute({1, 0});  // [3, 4]
        Tensor s = x.slice(1, 1, 3) * 2.0 + x.slice(1, 0, 3, 2) * 3.0; // [4, 2]
        Tensor c = cat({x, y}, 0).slice(0, 1, 6, 2);                   // [3, 3]
        Tensor p = y.pad({1, 0}, {0, 1}, 0.5);                         // [3, 4]
        return t + p + c.matmul(s.transpose(0, 1).pad({0, 0}, {1, 0})) +
               stack({y, y * y}, 0)
                   .sum({0})
                   .flatten()
                   .slice(0, 0, 4)
                   .unsqueeze(0);
      },
      {random({4, 3}), random({2, 3})});
}

TEST_F(LazyGrad, EmbeddingWithRepeatedIndices) {
  HostTensor ids = indices({2, 3}, {1, 4, 1, 0, 1, 4});
  checkGradients(
      [](const std::vector<Tensor> &v) { return embedding(v[0], v[1]).tanh(); },
      {random({5, 3}), ids}, {true, false});
}

TEST_F(LazyGrad, LayerNorm) {
  checkGradients(
      [](const std::vector<Tensor> &v) {
        return layer_norm(v[0], v[1], v[2], 1e-5) +
               layer_norm(v[0], Tensor(), Tensor(), 1e-5, 2) * 0.5;
      },
      {random({3, 5}), random({5}), random({5})});
}

TEST_F(LazyGrad, SoftmaxAndLogSoftmax) {
  checkGradients(
      [](const std::vector<Tensor> &v) {
        return v[0].softmax(1) + v[0].log_softmax(0) * 0.5 +
               softmax(v[0] * 3.0, -1).log();
      },
      {random({3, 4})});
}

TEST_F(LazyGrad, CrossEntropyWithIgnoreIndex) {
  HostTensor targets = indices({4}, {2, -100, 0, 2});
  checkGradients(
      [](const std::vector<Tensor> &v) {
        return cross_entropy(v[0], v[1], -100).reshape({1});
      },
      {random({4, 3}), targets}, {true, false});
}

TEST_F(LazyGrad, CausalSelfAttention) {
  // [B, H, T, D] = [1, 2, 3, 2]: 4-d batched dot_general, a -inf mask from
  // iotas, softmax and the transposes that split heads.
  checkGradients(
      [](const std::vector<Tensor> &v) {
        const Tensor &x = v[0], &w = v[1]; // x [3, 4], w [4, 12]
        std::vector<Tensor> qkv = x.matmul(w).split(4, 1);
        auto heads = [](const Tensor &t) {
          return t.reshape({1, 3, 2, 2}).transpose(1, 2);
        };
        Tensor q = heads(qkv[0]), k = heads(qkv[1]), val = heads(qkv[2]);
        Tensor row = Tensor::arange(3).unsqueeze(1), col = Tensor::arange(3);
        Tensor scores = q.matmul(k.transpose(-2, -1)) * (1 / std::sqrt(2.0));
        Tensor attention =
            scores.masked_fill(col.gt(row), -INFINITY).softmax(-1);
        return attention.matmul(val).transpose(1, 2).reshape({3, 4});
      },
      {random({3, 4}), random({4, 12})});
}

TEST_F(LazyGrad, ConvertReturnsTheGradientInTheSourceDtype) {
  // Not a finite-difference case: the f32 round trip's rounding swamps h.
  Tensor x = Tensor::from_host(random({3}), true);
  (x.to(DType::f32) * 2.0f).sum().backward();
  EXPECT_EQ(x.grad().dtype(), DType::f64);
  EXPECT_EQ(x.grad().to_vector(), std::vector<double>(3, 2.0));
}

TEST_F(LazyGrad, VectorDotProduct) {
  checkGradients(
      [](const std::vector<Tensor> &v) {
        return v[0].matmul(v[1]).reshape({1});
      },
      {random({4}), random({4})});
}

TEST_F(LazyGrad, DropoutScalesKeptElements) {
  // With a fixed seed the mask is fixed, so dropout is linear in x.
  checkGradients(
      [](const std::vector<Tensor> &v) {
        Generator generator(9);
        return dropout(v[0], 0.3, true, &generator);
      },
      {random({16})});
}

} // namespace
} // namespace kiln
