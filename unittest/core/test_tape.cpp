// The tensor/tape runtime: every op's adjoint against central finite differences of a random
// linear functional of its output, fp32 against fp64, the tape's replay order, and the
// policy-aware gather's exchanges in both directions.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include "distspec/dispatch/dispatcher.h"
#include "distspec/halo/indexed_halo_exchange.h"
#include "distspec/tensor/ops_activation.h"
#include "distspec/tensor/ops_dense.h"
#include "distspec/tensor/ops_elementwise.h"
#include "distspec/tensor/ops_geometry.h"
#include "distspec/tensor/ops_halo.h"
#include "distspec/tensor/ops_radial.h"
#include "distspec/tensor/ops_rows.h"
#include "distspec/tensor/tape.h"

namespace distspec::tensor {
namespace {

Tensor<double> random_tensor(std::size_t rows, std::size_t cols, unsigned seed, double lo = -1.0, double hi = 1.0) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  Tensor<double> t(rows, cols);
  for (std::size_t i = 0; i < t.size(); ++i) t.data()[i] = u(rng);
  return t;
}

template <class T>
Tensor<T> cast(const Tensor<double>& t) {
  Tensor<T> out(t.rows(), t.cols());
  for (std::size_t i = 0; i < t.size(); ++i) out.data()[i] = static_cast<T>(t.data()[i]);
  return out;
}

// An op under test: inputs (every one a variable) to one output.
using Op = std::function<Var<double>(Tape&, const std::vector<Var<double>>&)>;

double dot(const Tensor<double>& a, const Tensor<double>& b) {
  double s = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a.data()[i] * b.data()[i];
  return s;
}

// The largest |analytic - numeric| over every element of every input, for the functional
// L = sum(w * op(inputs)) with fixed random w; h is the central-difference step.
double max_gradient_error(const Op& op, const std::vector<Tensor<double>>& inputs, double h = 1e-6) {
  auto evaluate = [&](const std::vector<Tensor<double>>& values, std::vector<Var<double>>* vars, Tape& tape) {
    std::vector<Var<double>> v;
    for (const Tensor<double>& t : values) v.push_back(Var<double>::variable(t));
    if (vars) *vars = v;
    return op(tape, v);
  };
  Tape tape;
  std::vector<Var<double>> vars;
  const Var<double> out = evaluate(inputs, &vars, tape);
  const Tensor<double> w = random_tensor(out.rows(), out.cols(), 99);
  out.grad() = w;
  tape.backward();

  double worst = 0.0;
  for (std::size_t a = 0; a < inputs.size(); ++a)
    for (std::size_t k = 0; k < inputs[a].size(); ++k) {
      std::vector<Tensor<double>> shifted = inputs;
      shifted[a].data()[k] = inputs[a].data()[k] + h;
      Tape t1;
      const double plus = dot(w, evaluate(shifted, nullptr, t1).value());
      shifted[a].data()[k] = inputs[a].data()[k] - h;
      Tape t2;
      const double minus = dot(w, evaluate(shifted, nullptr, t2).value());
      worst = std::max(worst, std::abs(vars[a].grad().data()[k] - (plus - minus) / (2.0 * h)));
    }
  return worst;
}

// Central differences of smooth functions with h = 1e-6: truncation ~1e-12, rounding ~1e-10.
constexpr double kTolerance = 1e-8;

TEST(Tape, ReplaysAdjointsInReverseOrderOnceAndForgetsThem) {
  Tape tape;
  std::vector<int> order;
  for (int i = 0; i < 3; ++i) tape.record([&order, i] { order.push_back(i); });
  EXPECT_EQ(tape.size(), 3u);
  tape.backward();
  EXPECT_EQ(order, (std::vector<int>{2, 1, 0}));
  EXPECT_EQ(tape.size(), 0u);
  tape.backward();
  EXPECT_EQ(order.size(), 3u);
}

TEST(Tape, ConstantsRecordNothingAndHaveNoGradient) {
  Tape tape;
  const Var<double> c = Var<double>::constant(random_tensor(4, 3, 1));
  const Tensor<double> w = random_tensor(3, 2, 2), b = random_tensor(1, 2, 3);
  const Var<double> y = silu(tape, linear(tape, c, w, b));
  EXPECT_FALSE(y.requires_grad());
  EXPECT_EQ(tape.size(), 0u);
  try {
    c.grad();
    FAIL() << "a constant's gradient was handed out";
  } catch (const Error& e) {
    EXPECT_EQ(e.id(), "tensor.grad");
  }
}

TEST(TapeOps, GatherRowsRepeatsAndSkipsRows) {
  const std::vector<int> index{3, 0, 3, 1};  // row 2 unused, row 3 twice
  EXPECT_LT(max_gradient_error([&](Tape& t, const auto& v) { return gather_rows(t, v[0], Span<const int>(index)); },
                               {random_tensor(4, 3, 1)}),
            kTolerance);
}

TEST(TapeOps, ScatterAddIntoBase) {
  const std::vector<int> index{2, 0, 2};
  EXPECT_LT(
      max_gradient_error([&](Tape& t, const auto& v) { return scatter_add(t, v[0], v[1], Span<const int>(index)); },
                         {random_tensor(4, 2, 1), random_tensor(3, 2, 2)}),
      kTolerance);
}

TEST(TapeOps, SegmentSumWithEmptySegments) {
  const std::vector<int> offsets{0, 2, 2, 5};
  EXPECT_LT(max_gradient_error([&](Tape& t, const auto& v) { return segment_sum(t, v[0], Span<const int>(offsets)); },
                               {random_tensor(5, 3, 1)}),
            kTolerance);
}

TEST(TapeOps, SumRows) {
  EXPECT_LT(max_gradient_error([](Tape& t, const auto& v) { return sum_rows(t, v[0]); }, {random_tensor(5, 2, 1)}),
            kTolerance);
}

TEST(TapeOps, Linear) {
  const Tensor<double> w = random_tensor(4, 3, 7), b = random_tensor(1, 3, 8);
  EXPECT_LT(max_gradient_error([&](Tape& t, const auto& v) { return linear(t, v[0], w, b); }, {random_tensor(5, 4, 1)}),
            kTolerance);
}

TEST(TapeOps, Activations) {
  // Wide inputs, to cover both tails of the stable softplus.
  const Tensor<double> x = random_tensor(6, 5, 1, -12.0, 12.0);
  EXPECT_LT(max_gradient_error([](Tape& t, const auto& v) { return silu(t, v[0]); }, {x}), kTolerance);
  EXPECT_LT(max_gradient_error([](Tape& t, const auto& v) { return shifted_softplus(t, v[0]); }, {x}), kTolerance);
  Tape tape;
  const Var<double> zero = shifted_softplus(tape, Var<double>::constant(Tensor<double>(1, 1)));
  EXPECT_NEAR(zero.value()(0, 0), 0.0, 1e-15);
}

TEST(TapeOps, ProductsAndSums) {
  const Tensor<double> a = random_tensor(4, 3, 1), b = random_tensor(4, 3, 2), column = random_tensor(4, 1, 3);
  EXPECT_LT(max_gradient_error([](Tape& t, const auto& v) { return mul(t, v[0], v[1]); }, {a, b}), kTolerance);
  EXPECT_LT(max_gradient_error([](Tape& t, const auto& v) { return mul(t, v[0], v[1]); }, {a, column}), kTolerance);
  EXPECT_LT(max_gradient_error([](Tape& t, const auto& v) { return add(t, v[0], v[1]); }, {a, b}), kTolerance);
}

TEST(TapeOps, RadialBasesAndCutoff) {
  // Lengths on both sides of the switch region [1.5, 3) and beyond it.
  const Tensor<double> r = random_tensor(12, 1, 1, 0.5, 3.5);
  RadialBasis gaussian;
  gaussian.size = 6;
  gaussian.start = 0.5;
  gaussian.stop = 3.0;
  gaussian.width = 0.4;
  RadialBasis bessel;
  bessel.kind = RadialBasis::Kind::bessel;
  bessel.size = 5;
  bessel.cutoff = 3.0;
  EXPECT_LT(max_gradient_error([&](Tape& t, const auto& v) { return radial_basis(t, v[0], gaussian); }, {r}),
            kTolerance);
  EXPECT_LT(max_gradient_error([&](Tape& t, const auto& v) { return radial_basis(t, v[0], bessel); }, {r}), kTolerance);
  EXPECT_LT(max_gradient_error(
                [](Tape& t, const auto& v) {
                  return cosine_cutoff(t, v[0], CosineCutoff{1.5, 3.0});
                },
                {r}),
            kTolerance);
  EXPECT_LT(max_gradient_error(
                [](Tape& t, const auto& v) {
                  return cosine_cutoff(t, v[0], CosineCutoff{0.0, 3.0});
                },
                {r}),
            kTolerance);

  Tape tape;
  Tensor<double> at(3, 1);
  at(0, 0) = 1.0;
  at(1, 0) = 2.25;
  at(2, 0) = 3.0;
  const Var<double> f = cosine_cutoff(tape, Var<double>::constant(at), CosineCutoff{1.5, 3.0});
  EXPECT_EQ(f.value()(0, 0), 1.0);
  EXPECT_NEAR(f.value()(1, 0), 0.5, 1e-15);
  EXPECT_EQ(f.value()(2, 0), 0.0);
}

TEST(TapeOps, EdgeVectorsAndLengths) {
  const std::vector<int> receiver{0, 1, 2, 0}, sender{1, 2, 0, 3};
  const Tensor<double> x = random_tensor(4, 3, 1, -2.0, 2.0);
  EXPECT_LT(max_gradient_error(
                [&](Tape& t, const auto& v) {
                  return edge_vectors<double>(t, v[0], Span<const int>(receiver), Span<const int>(sender));
                },
                {x}),
            kTolerance);
  EXPECT_LT(max_gradient_error(
                [&](Tape& t, const auto& v) {
                  return lengths(t, edge_vectors<double>(t, v[0], Span<const int>(receiver), Span<const int>(sender)));
                },
                {x}),
            kTolerance);
}

TEST(TapeOps, IndicesOutsideTheTensorAreErrors) {
  Tape tape;
  const Var<double> x = Var<double>::variable(random_tensor(3, 2, 1));
  const std::vector<int> bad{0, 3};
  try {
    gather_rows(tape, x, Span<const int>(bad));
    FAIL() << "an index past the last row was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.id(), "tensor.index");
    EXPECT_STREQ(e.what(), "gather_rows: index 3 at position 1 is not a row of a 3-row tensor");
  }
}

// fp32 ops agree with fp64 to a few float ulps of their inputs' scale.
TEST(TapeOps, Fp32AgreesWithFp64) {
  const std::vector<int> receiver{0, 1, 2, 0}, sender{1, 2, 0, 3};
  const Tensor<double> x = random_tensor(4, 3, 1, -2.0, 2.0);
  const Tensor<double> w = random_tensor(5, 4, 2), b = random_tensor(1, 4, 3);
  RadialBasis basis;
  basis.size = 5;
  basis.stop = 4.0;
  basis.width = 0.8;
  auto run = [&](auto zero) {
    using T = decltype(zero);
    Tape tape;
    const Var<double> xv = Var<double>::variable(x);
    const Tensor<T> wt = cast<T>(w), bt = cast<T>(b);
    const Var<T> r = lengths(tape, edge_vectors<T>(tape, xv, Span<const int>(receiver), Span<const int>(sender)));
    const Var<T> h = silu(tape, linear(tape, radial_basis(tape, r, basis), wt, bt));
    const Var<double> e = sum_rows(tape, mul(tape, h, cosine_cutoff(tape, r, CosineCutoff{0.0, 4.0})));
    e.grad().fill(1.0);
    tape.backward();
    return std::pair{e.value(), xv.grad()};
  };
  const auto [e64, g64] = run(double{});
  const auto [e32, g32] = run(float{});
  for (std::size_t c = 0; c < e64.cols(); ++c) EXPECT_NEAR(e32(0, c), e64(0, c), 1e-5);
  for (std::size_t k = 0; k < g64.size(); ++k) EXPECT_NEAR(g32.data()[k], g64.data()[k], 1e-5);
}

TEST(TapeOps, SumRowsAccumulatesFp32InFp64) {
  // 2^24 + 4 x 1: a float accumulator would stay at 2^24.
  Tensor<float> x(5, 1);
  x.fill(1.0f);
  x(0, 0) = 16777216.0f;
  Tape tape;
  EXPECT_EQ(sum_rows(tape, Var<float>::constant(x)).value()(0, 0), 16777220.0);
}

// The policy-aware gather on 3 owned rows and 2 halo rows (images of rows 0 and 2).
class HaloGather : public ::testing::Test {
 protected:
  HaloGather() : halo_(3, {0, 2}) {}

  Dispatcher dispatcher(const std::string& gather_mode) {
    DistributionSpec spec;
    spec.policy = StoragePolicy("halo", std::string(kHaloCorrection), gather_mode);
    Dispatcher d(spec, Device::cpu, {}, 1);
    d.attach(halo_);
    return d;
  }

  IndexedHaloExchange halo_;
  const std::vector<int> index_{3, 4, 1, 3};  // reads both halo rows
};

TEST_F(HaloGather, RefreshesFeaturesForwardAndSendsGradientsBack) {
  Dispatcher d = dispatcher(kHaloRead);
  // The function of all five rows it computes: the halo rows' own values are ignored.
  EXPECT_LT(max_gradient_error(
                [&](Tape& t, const auto& v) {
                  return halo_gather_rows(t, d, v[0], Span<const int>(index_), RowKind::features);
                },
                {random_tensor(5, 2, 1)}),
            kTolerance);

  d.reset_stats();
  Tape tape;
  const Var<double> x = Var<double>::variable(random_tensor(5, 2, 1));
  const Var<double> y = halo_gather_rows(tape, d, x, Span<const int>(index_), RowKind::features);
  EXPECT_EQ(y.value()(0, 1), x.value()(0, 1));  // halo row 3 now holds row 0
  EXPECT_EQ(y.value()(1, 0), x.value()(2, 0));  // halo row 4 holds row 2
  EXPECT_EQ(d.stats().forward, 1u);
  EXPECT_EQ(d.stats().reverse, 0u);
  y.grad().fill(1.0);
  tape.backward();
  EXPECT_EQ(d.stats().reverse, 1u);
  // Row 0 is read twice through its image, row 1 once, row 2 once through its image; the
  // halo rows' gradients went home.
  EXPECT_EQ(x.grad()(0, 0), 2.0);
  EXPECT_EQ(x.grad()(1, 0), 1.0);
  EXPECT_EQ(x.grad()(2, 0), 1.0);
  EXPECT_EQ(x.grad()(3, 0), 0.0);
  EXPECT_EQ(x.grad()(4, 0), 0.0);
}

TEST_F(HaloGather, ReplicatedCoordinateAndLocalReadsExchangeNothing) {
  for (const auto& [mode, kind] :
       {std::pair{std::string(kHaloRead), RowKind::replicated}, std::pair{std::string(kHaloRead), RowKind::coordinates},
        std::pair{std::string("local"), RowKind::features}}) {
    Dispatcher d = dispatcher(mode);
    Tape tape;
    const Tensor<double> x0 = random_tensor(5, 2, 1);
    const Var<double> x = Var<double>::variable(x0);
    const Var<double> y = halo_gather_rows(tape, d, x, Span<const int>(index_), kind);
    EXPECT_EQ(y.value()(0, 0), x0(3, 0));  // the halo row as it was
    y.grad().fill(1.0);
    tape.backward();
    EXPECT_EQ(x.grad()(3, 0), 2.0);  // stays on the halo row, for the host to fold
    EXPECT_EQ(d.stats().forward + d.stats().reverse, 0u);
  }
}

}  // namespace
}  // namespace distspec::tensor
