// Checks tests/models/mlp_train_step.mlir, a hand-written MLP training step,
// three ways: its outputs on the reference evaluator against an independent
// double-precision C++ implementation written here with plain loops; that
// C++ implementation's analytic gradient against central finite differences
// of its own loss (so the hand derivation itself is verified); and a second
// step from the updated parameters, which must have a lower loss.
#include "ir/KilnDialect.h"
#include "ir/Serialization.h"
#include "ir/reference/Evaluator.h"
#include "support/HostTensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace {

constexpr int kBatch = 4, kIn = 8, kHidden = 16, kClasses = 3;
constexpr double kGeluC = 0.7978845608028654; // sqrt(2 / pi)
constexpr double kGeluK = 0.044715;

/// Row-major parameters, in the order the module takes and returns them.
struct Params {
  std::vector<double> w1 = std::vector<double>(kIn * kHidden);
  std::vector<double> b1 = std::vector<double>(kHidden);
  std::vector<double> w2 = std::vector<double>(kHidden * kClasses);
  std::vector<double> b2 = std::vector<double>(kClasses);

  std::vector<std::vector<double> *> all() { return {&w1, &b1, &w2, &b2}; }
};

struct Batch {
  std::vector<double> x = std::vector<double>(kBatch * kIn);
  std::vector<int> labels = std::vector<int>(kBatch);
};

/// Smooth, irregular values that f32 holds exactly (so the module and the
/// C++ code start from identical numbers).
double f32Value(double v) { return static_cast<float>(v); }

void fillInputs(Params &params, Batch &batch) {
  for (int i = 0; i < kBatch * kIn; ++i)
    batch.x[i] = f32Value(1.5 * std::sin(0.7 * i + 0.3));
  batch.labels = {0, 2, 1, 2};
  for (int i = 0; i < kIn * kHidden; ++i)
    params.w1[i] = f32Value(0.45 * std::sin(1.3 * i + 0.1));
  for (int i = 0; i < kHidden; ++i)
    params.b1[i] = f32Value(0.1 * std::cos(0.9 * i));
  for (int i = 0; i < kHidden * kClasses; ++i)
    params.w2[i] = f32Value(0.5 * std::cos(1.7 * i + 0.2));
  for (int i = 0; i < kClasses; ++i)
    params.b2[i] = f32Value(0.05 * (i - 1));
}

double gelu(double h) {
  return 0.5 * h * (1 + std::tanh(kGeluC * (h + kGeluK * h * h * h)));
}

double geluDerivative(double h) {
  double t = std::tanh(kGeluC * (h + kGeluK * h * h * h));
  return 0.5 * (1 + t) +
         0.5 * h * (1 - t * t) * kGeluC * (1 + 3 * kGeluK * h * h);
}

/// The mean softmax cross-entropy of the MLP on `batch`; with `grad`, also
/// its gradient with respect to every parameter.
double lossAndGradient(const Params &p, const Batch &batch,
                       Params *grad = nullptr) {
  std::vector<double> h(kBatch * kHidden), a(kBatch * kHidden);
  for (int b = 0; b < kBatch; ++b)
    for (int j = 0; j < kHidden; ++j) {
      double sum = p.b1[j];
      for (int i = 0; i < kIn; ++i)
        sum += batch.x[b * kIn + i] * p.w1[i * kHidden + j];
      h[b * kHidden + j] = sum;
      a[b * kHidden + j] = gelu(sum);
    }
  double loss = 0;
  std::vector<double> dz(kBatch * kClasses);
  for (int b = 0; b < kBatch; ++b) {
    double z[kClasses];
    for (int c = 0; c < kClasses; ++c) {
      z[c] = p.b2[c];
      for (int j = 0; j < kHidden; ++j)
        z[c] += a[b * kHidden + j] * p.w2[j * kClasses + c];
    }
    double zmax = *std::max_element(z, z + kClasses);
    double sumExp = 0;
    for (double v : z)
      sumExp += std::exp(v - zmax);
    double logSumExp = zmax + std::log(sumExp);
    loss += (logSumExp - z[batch.labels[b]]) / kBatch;
    for (int c = 0; c < kClasses; ++c)
      dz[b * kClasses + c] =
          (std::exp(z[c] - logSumExp) - (c == batch.labels[b] ? 1 : 0)) /
          kBatch;
  }
  if (!grad)
    return loss;

  *grad = Params();
  std::vector<double> dh(kBatch * kHidden);
  for (int b = 0; b < kBatch; ++b)
    for (int j = 0; j < kHidden; ++j) {
      double da = 0;
      for (int c = 0; c < kClasses; ++c) {
        grad->w2[j * kClasses + c] += a[b * kHidden + j] * dz[b * kClasses + c];
        da += dz[b * kClasses + c] * p.w2[j * kClasses + c];
      }
      dh[b * kHidden + j] = da * geluDerivative(h[b * kHidden + j]);
    }
  for (int b = 0; b < kBatch; ++b) {
    for (int c = 0; c < kClasses; ++c)
      grad->b2[c] += dz[b * kClasses + c];
    for (int j = 0; j < kHidden; ++j) {
      grad->b1[j] += dh[b * kHidden + j];
      for (int i = 0; i < kIn; ++i)
        grad->w1[i * kHidden + j] += batch.x[b * kIn + i] * dh[b * kHidden + j];
    }
  }
  return loss;
}

kiln::HostTensor f32Tensor(const std::vector<double> &values,
                           std::vector<int64_t> shape) {
  kiln::HostTensor tensor(kiln::DType::f32, std::move(shape));
  for (size_t i = 0; i < values.size(); ++i)
    tensor.setDouble(i, values[i]);
  return tensor;
}

std::vector<double> toVector(const kiln::HostTensor &tensor) {
  std::vector<double> values(tensor.numElements());
  for (int64_t i = 0; i < tensor.numElements(); ++i)
    values[i] = tensor.getDouble(i);
  return values;
}

class MlpTrainStepTest : public ::testing::Test {
protected:
  void SetUp() override {
    kiln::loadKilnDialects(context);
    auto parsed = kiln::parseModuleFile(
        KILN_SOURCE_DIR "/tests/models/mlp_train_step.mlir", &context);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    module = std::move(*parsed);
    main = module->lookupSymbol<mlir::func::FuncOp>("main");
    ASSERT_TRUE(main);
    fillInputs(params, batch);
  }

  /// One step of the module: loss and the four updated parameters.
  std::pair<double, Params> runStep(const Params &p) {
    kiln::HostTensor labels(kiln::DType::i32, {kBatch});
    for (int b = 0; b < kBatch; ++b)
      labels.setInt(b, batch.labels[b]);
    std::vector<kiln::HostTensor> inputs = {
        f32Tensor(batch.x, {kBatch, kIn}),
        labels,
        f32Tensor(p.w1, {kIn, kHidden}),
        f32Tensor(p.b1, {kHidden}),
        f32Tensor(p.w2, {kHidden, kClasses}),
        f32Tensor(p.b2, {kClasses}),
        f32Tensor({kLearningRate}, {})};
    auto results = kiln::reference::evaluate(main, inputs);
    EXPECT_TRUE(results.ok()) << results.status();
    if (!results.ok() || results->size() != 5) {
      ADD_FAILURE() << "expected 5 results";
      return {NAN, Params()};
    }
    Params updated;
    updated.w1 = toVector((*results)[1]);
    updated.b1 = toVector((*results)[2]);
    updated.w2 = toVector((*results)[3]);
    updated.b2 = toVector((*results)[4]);
    return {(*results)[0].getDouble(0), updated};
  }

  static constexpr double kLearningRate = 0.5;
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::func::FuncOp main;
  Params params;
  Batch batch;
};

/// |got − want| within `relative` of |want|, with a floor of `absolute`.
void expectClose(const std::vector<double> &got, const std::vector<double> &want,
                 double relative, double absolute, const std::string &what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_LE(std::abs(got[i] - want[i]),
              std::max(relative * std::abs(want[i]), absolute))
        << what << "[" << i << "]: got " << got[i] << ", want " << want[i];
}

TEST_F(MlpTrainStepTest, MatchesAnIndependentDoubleImplementation) {
  Params grad;
  double wantLoss = lossAndGradient(params, batch, &grad);
  auto [loss, updated] = runStep(params);
  EXPECT_NEAR(loss, wantLoss, 1e-5 * std::abs(wantLoss));

  Params want = params;
  std::vector<std::vector<double> *> wantAll = want.all(), gradAll = grad.all(),
                                     gotAll = updated.all();
  const char *names[] = {"w1", "b1", "w2", "b2"};
  for (int k = 0; k < 4; ++k) {
    for (size_t i = 0; i < wantAll[k]->size(); ++i)
      (*wantAll[k])[i] -= kLearningRate * (*gradAll[k])[i];
    expectClose(*gotAll[k], *wantAll[k], 1e-5, 1e-6, names[k]);
  }

  // The new parameters alone barely show the gradient (p is much larger than
  // lr·g), so the gradient the module applied is compared directly too.
  Params old = params;
  std::vector<std::vector<double> *> oldAll = old.all();
  for (int k = 0; k < 4; ++k) {
    double scale = 0;
    for (double g : *gradAll[k])
      scale = std::max(scale, std::abs(g));
    std::vector<double> applied(gotAll[k]->size());
    for (size_t i = 0; i < applied.size(); ++i)
      applied[i] = ((*oldAll[k])[i] - (*gotAll[k])[i]) / kLearningRate;
    expectClose(applied, *gradAll[k], 1e-3, 1e-4 * scale,
                std::string("gradient of ") + names[k]);
  }
}

TEST_F(MlpTrainStepTest, HandDerivedGradientMatchesFiniteDifferences) {
  Params grad;
  lossAndGradient(params, batch, &grad);
  std::vector<std::vector<double> *> paramAll = params.all(),
                                     gradAll = grad.all();
  const char *names[] = {"w1", "b1", "w2", "b2"};
  double largest = 0;
  for (int k = 0; k < 4; ++k) {
    std::vector<double> numeric(paramAll[k]->size());
    for (size_t i = 0; i < numeric.size(); ++i) {
      double saved = (*paramAll[k])[i];
      constexpr double eps = 1e-5;
      (*paramAll[k])[i] = saved + eps;
      double up = lossAndGradient(params, batch);
      (*paramAll[k])[i] = saved - eps;
      double down = lossAndGradient(params, batch);
      (*paramAll[k])[i] = saved;
      numeric[i] = (up - down) / (2 * eps);
      largest = std::max(largest, std::abs(numeric[i]));
    }
    expectClose(*gradAll[k], numeric, 1e-6, 1e-9,
                std::string("d loss / d ") + names[k]);
  }
  // A gradient that is zero everywhere would match trivially.
  EXPECT_GT(largest, 1e-2);
}

TEST_F(MlpTrainStepTest, UpdateLowersTheLoss) {
  auto [before, updated] = runStep(params);
  auto [after, twice] = runStep(updated);
  EXPECT_LT(after, 0.95 * before) << "loss went from " << before << " to "
                                  << after;
  // The C++ loss of the module's updated parameters agrees.
  EXPECT_NEAR(lossAndGradient(updated, batch), after, 1e-5 * after);
}

TEST_F(MlpTrainStepTest, DonatesEveryParameterButNotTheData) {
  ASSERT_EQ(main.getNumArguments(), 7u);
  for (unsigned i = 0; i < 7; ++i) {
    bool donated = main.getArgAttr(i, kiln::KilnDialect::kDonateAttrName) !=
                   nullptr;
    EXPECT_EQ(donated, i >= 2 && i <= 5) << "argument #" << i;
  }
}

} // namespace
