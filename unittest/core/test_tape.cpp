// The tensor/tape runtime: every op's adjoint against central finite differences of a random
// linear functional of its output, the fused cfconv against the ops it fuses, fp32 against
// fp64, the row kernels against plain loops, the tape's replay order, workspaces, and the
// policy-aware gather's exchanges in both directions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include "distspec/dispatch/dispatcher.h"
#include "distspec/halo/indexed_halo_exchange.h"
#include "distspec/tensor/ops_activation.h"
#include "distspec/tensor/ops_cfconv.h"
#include "distspec/tensor/ops_dense.h"
#include "distspec/tensor/ops_elementwise.h"
#include "distspec/tensor/ops_geometry.h"
#include "distspec/tensor/ops_halo.h"
#include "distspec/tensor/ops_radial.h"
#include "distspec/tensor/ops_rows.h"
#include "distspec/tensor/row_kernels.h"
#include "distspec/tensor/tape.h"
#include "distspec/util/threads.h"

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

template <class T>
Tensor<double> cast_back(const Tensor<T>& t) {
  Tensor<double> out(t.rows(), t.cols());
  for (std::size_t i = 0; i < t.size(); ++i) out.data()[i] = t.data()[i];
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

// Inputs of a cfconv on 5 rows and 6 edges: segments of 3, 0, 1 and 2 edges, row 1 sent twice,
// row 4 a sender only. F = 27 and K = 11 exercise every block width of the row kernels.
struct CfconvCase {
  std::size_t f = 27, k = 11;
  std::vector<int> offsets{0, 3, 3, 4, 6}, senders{1, 4, 1, 0, 3, 2};
  Tensor<double> h = random_tensor(5, f, 1), radial = random_tensor(6, k, 2), cutoff = random_tensor(6, 1, 3, 0.0, 1.0);
  Tensor<double> weight = random_tensor(k, f, 4), bias = random_tensor(1, f, 5);
};

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

TEST(Workspace, GivesBuffersBackZeroedAndGrowsOnlyWhenNothingFits) {
  Workspace ws;
  { Tensor<double>(10, 4, &ws).fill(3.0); }
  EXPECT_EQ(ws.allocations(), 1u);
  EXPECT_EQ(ws.free_buffers(), 1u);
  {
    const Tensor<double> t(8, 5, &ws);  // 40 values fit the 40 (+ padding) of the first
    EXPECT_EQ(ws.allocations(), 1u);
    for (std::size_t i = 0; i < t.size(); ++i) EXPECT_EQ(t.data()[i], 0.0);
  }
  { const Tensor<double> t(100, 1, &ws); }  // too large: a new buffer, the outgrown one dropped
  EXPECT_EQ(ws.allocations(), 2u);
  EXPECT_EQ(ws.free_buffers(), 1u);
  { const Tensor<float> t(100, 1, &ws); }  // each precision has its own buffers
  EXPECT_EQ(ws.allocations(), 3u);
  EXPECT_EQ(ws.free_buffers(), 2u);
}

TEST(Workspace, BestFitServesARepeatedStepInAnyOrder) {
  Workspace ws;
  {
    const Tensor<double> small(10, 1, &ws), large(100, 1, &ws);
  }
  {
    const Tensor<double> small(10, 1, &ws), large(100, 1, &ws);  // small first: not the large buffer
    const Tensor<double> large2(100, 1, &ws);
  }
  EXPECT_EQ(ws.allocations(), 3u);
  {
    const Tensor<double> large2(100, 1, &ws), large(100, 1, &ws), small(10, 1, &ws);
  }
  EXPECT_EQ(ws.allocations(), 3u);
}

TEST(Workspace, CopiesAreOnTheHeapAndMovesCarryTheBuffer) {
  Workspace ws;
  Tensor<double> copy;
  {
    Tensor<double> a(3, 2, &ws);
    a(2, 1) = 5.0;
    copy = a;
    Tensor<double> b = std::move(a);
    EXPECT_EQ(ws.free_buffers(), 0u);
    EXPECT_EQ(b(2, 1), 5.0);
  }
  EXPECT_EQ(ws.free_buffers(), 1u);  // b gave it back, a had nothing left to give
  EXPECT_EQ(copy(2, 1), 5.0);
  copy = Tensor<double>(1, 1, &ws);  // moved in: the workspace's buffer
  EXPECT_EQ(ws.free_buffers(), 0u);
  copy = Tensor<double>();  // assigned over: the buffer goes back
  EXPECT_EQ(ws.free_buffers(), 1u);
}

TEST(Workspace, ASecondPassOfATapeAllocatesNothing) {
  Workspace ws;
  const CfconvCase in;
  auto pass = [&] {
    Tape tape(ws);
    Tensor<double> x0 = tape.tensor<double>(in.h.rows(), in.h.cols());
    std::copy_n(in.h.data(), in.h.size(), x0.data());
    const Var<double> x = Var<double>::variable(std::move(x0));
    const Var<double> r = Var<double>::variable(in.radial), fc = Var<double>::variable(in.cutoff);
    const Var<double> y = silu(tape, cfconv(tape, x, r, fc, in.weight, in.bias, Span<const int>(in.offsets),
                                            Span<const int>(in.senders)));
    const Var<double> e = sum_rows(tape, add(tape, y, y));
    e.grad().fill(1.0);
    tape.backward();
    return std::pair{e.value()(0, 3), x.grad()(1, 2)};
  };
  const auto first = pass();
  const std::size_t allocations = ws.allocations();
  EXPECT_GT(allocations, 5u);
  EXPECT_EQ(pass(), first);
  EXPECT_EQ(ws.allocations(), allocations);
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

TEST(TapeOps, LinearAcrossTheKernelsBlockWidths) {
  // 27 = 16 + 8 + 2 + 1 doubles: every block width of the row kernels, and the scalar tail.
  const Tensor<double> w = random_tensor(27, 27, 7), b = random_tensor(1, 27, 8);
  EXPECT_LT(
      max_gradient_error([&](Tape& t, const auto& v) { return linear(t, v[0], w, b); }, {random_tensor(3, 27, 1)}),
      kTolerance);
}

TEST(RowKernels, VecMatEqualsAPlainLoopToTheBit) {
  // Widths around each block width of both precisions (2 doubles or 4 floats per register).
  auto check = [](auto zero) {
    using T = decltype(zero);
    for (std::size_t cols : {1u, 2u, 3u, 8u, 15u, 16u, 27u, 32u, 45u, 64u}) {
      const std::size_t n = 11, stride = cols + 3;
      const Tensor<T> x = cast<T>(random_tensor(1, n, 1)), m = cast<T>(random_tensor(n, stride, 2));
      const Tensor<T> b = cast<T>(random_tensor(1, cols, 3));
      for (const T* bias : {b.data(), static_cast<const T*>(nullptr)}) {
        std::vector<T> y(cols);
        kernels::vec_mat(x.data(), n, m.data(), stride, bias, cols, y.data());
        for (std::size_t c = 0; c < cols; ++c) {
          T s = bias ? bias[c] : T(0);
          for (std::size_t i = 0; i < n; ++i) s += x(0, i) * m(i, c);
          EXPECT_EQ(y[c], s) << cols << " columns, column " << c;
        }
      }
      const Tensor<T> a = cast<T>(random_tensor(1, cols, 4));
      double s = 0.0;
      for (std::size_t c = 0; c < cols; ++c) s += double(a(0, c)) * double(b(0, c));
      EXPECT_NEAR(kernels::dot(a.data(), b.data(), cols), s, 1e-5) << cols;
    }
  };
  check(double{});
  check(float{});
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

// ---------------------------------------------------------------------------------------------
// cfconv


// The value and the input gradients of cfconv, or of the composition of the ops it fuses, for
// the output gradient `seed`.
template <class T>
std::vector<Tensor<double>> run_cfconv(const CfconvCase& c, bool fused, const Tensor<double>& seed) {
  Tape tape;
  const Var<T> h = Var<T>::variable(cast<T>(c.h)), radial = Var<T>::variable(cast<T>(c.radial)),
               cutoff = Var<T>::variable(cast<T>(c.cutoff));
  const Tensor<T> weight = cast<T>(c.weight), bias = cast<T>(c.bias);
  const Span<const int> offsets(c.offsets), senders(c.senders);
  const Var<T> y = fused ? cfconv(tape, h, radial, cutoff, weight, bias, offsets, senders)
                         : segment_sum(tape,
                                       mul(tape, gather_rows(tape, h, senders),
                                           mul(tape, linear(tape, radial, weight, bias), cutoff)),
                                       offsets);
  y.grad() = cast<T>(seed);
  tape.backward();
  std::vector<Tensor<double>> out;
  for (const Tensor<T>* t : {&y.value(), &h.grad(), &radial.grad(), &cutoff.grad()}) out.push_back(cast_back(*t));
  return out;
}

TEST(TapeOps, CfconvAdjointMatchesFiniteDifferences) {
  const CfconvCase c;
  EXPECT_LT(max_gradient_error(
                [&](Tape& t, const auto& v) {
                  return cfconv(t, v[0], v[1], v[2], c.weight, c.bias, Span<const int>(c.offsets),
                                Span<const int>(c.senders));
                },
                {c.h, c.radial, c.cutoff}),
            kTolerance);
}

TEST(TapeOps, CfconvEqualsTheUnfusedOps) {
  const CfconvCase c;
  const Tensor<double> seed = random_tensor(4, c.f, 6);
  const auto fused = run_cfconv<double>(c, true, seed), unfused = run_cfconv<double>(c, false, seed);
  const char* names[] = {"value", "grad h", "grad radial", "grad cutoff"};
  for (std::size_t a = 0; a < fused.size(); ++a)
    for (std::size_t k = 0; k < fused[a].size(); ++k)
      EXPECT_NEAR(fused[a].data()[k], unfused[a].data()[k], 1e-12) << names[a] << " " << k;
  // fp32 against fp64, to float rounding of sums of ~30 terms of order one.
  const auto single = run_cfconv<float>(c, true, seed);
  for (std::size_t a = 0; a < fused.size(); ++a)
    for (std::size_t k = 0; k < fused[a].size(); ++k)
      EXPECT_NEAR(single[a].data()[k], fused[a].data()[k], 1e-4) << names[a] << " " << k;
}

TEST(TapeOps, CfconvOfConstantsRecordsNothing) {
  const CfconvCase c;
  Tape tape;
  const Var<double> y = cfconv(tape, Var<double>::constant(c.h), Var<double>::constant(c.radial),
                               Var<double>::constant(c.cutoff), c.weight, c.bias, Span<const int>(c.offsets),
                               Span<const int>(c.senders));
  EXPECT_FALSE(y.requires_grad());
  EXPECT_EQ(tape.size(), 0u);
  for (std::size_t col = 0; col < c.f; ++col) EXPECT_EQ(y.value()(1, col), 0.0);  // the empty segment
}

TEST(TapeOps, CfconvChecksItsArguments) {
  const CfconvCase c;
  Tape tape;
  const Var<double> h = Var<double>::variable(c.h), radial = Var<double>::variable(c.radial),
                    cutoff = Var<double>::variable(c.cutoff);
  const std::vector<int> bad_senders{1, 4, 1, 0, 5, 2};
  try {
    cfconv(tape, h, radial, cutoff, c.weight, c.bias, Span<const int>(c.offsets), Span<const int>(bad_senders));
    FAIL() << "a sender past the last row was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.id(), "tensor.index");
    EXPECT_STREQ(e.what(), "cfconv: sender 5 of edge 4 is not a row of h (5 rows)");
  }
  try {
    cfconv(tape, radial, radial, cutoff, c.weight, c.bias, Span<const int>(c.offsets), Span<const int>(c.senders));
    FAIL() << "h of the wrong width was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.id(), "tensor.shape");
  }
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

// A network step on a random graph big enough that every op splits its loops over the threads
// (6 000 rows, 60 000 edges, about kMinItemsPerThread x 30): values and gradients on 3 threads
// against 1, which sum in other orders only.
TEST(TapeOps, ThreadsAgreeWithOneThread) {
  constexpr std::size_t n_rows = 6000, n_receivers = 4000, per_receiver = 15, f = 16, k = 8;
  ASSERT_GT(n_receivers * per_receiver, 20 * kMinItemsPerThread);
  std::mt19937 rng(17);
  std::uniform_int_distribution<int> row(0, static_cast<int>(n_rows) - 1);
  std::vector<int> receivers, offsets{0}, receiver, sender;
  for (std::size_t r = 0; r < n_receivers; ++r) {
    receivers.push_back(static_cast<int>(r));
    for (std::size_t e = 0; e < per_receiver; ++e) {
      int j = row(rng);
      if (j == static_cast<int>(r)) j = (j + 1) % static_cast<int>(n_rows);
      receiver.push_back(static_cast<int>(r));
      sender.push_back(j);
    }
    offsets.push_back(static_cast<int>(sender.size()));
  }
  const Tensor<double> x0 = random_tensor(n_rows, 3, 1, 0.0, 4.0), h0 = random_tensor(n_rows, f, 2);
  const Tensor<double> filter_w = random_tensor(k, f, 3), filter_b = random_tensor(1, f, 4);
  const Tensor<double> update_w = random_tensor(f, f, 5), update_b = random_tensor(1, f, 6);
  RadialBasis basis;
  basis.size = static_cast<int>(k);
  basis.stop = 7.0;
  basis.width = 0.9;
  auto run = [&](int threads) {
    Workspace workspace;
    Tape tape(workspace, threads);
    const Var<double> x = Var<double>::variable(x0), h = Var<double>::variable(h0);
    const Var<double> r = lengths(tape, edge_vectors<double>(tape, x, Span<const int>(receiver), Span<const int>(sender)));
    const Var<double> fc = cosine_cutoff(tape, r, CosineCutoff{0.0, 7.0});
    const Var<double> aggregate = cfconv(tape, h, radial_basis(tape, r, basis), fc, filter_w, filter_b,
                                         Span<const int>(offsets), Span<const int>(sender));
    const Var<double> update = shifted_softplus(tape, linear(tape, aggregate, update_w, update_b));
    const Var<double> next = scatter_add(tape, h, mul(tape, update, gather_rows(tape, fc, Span<const int>(receivers))),
                                         Span<const int>(receivers));
    const Var<double> e = sum_rows(tape, add(tape, silu(tape, next), next));
    e.grad().fill(1.0);
    tape.backward();
    return std::vector<Tensor<double>>{e.value(), x.grad(), h.grad()};
  };
  const auto one = run(1), three = run(3);
  const char* names[] = {"energy", "grad x", "grad h"};
  for (std::size_t t = 0; t < one.size(); ++t) {
    double scale = 0.0;
    for (std::size_t i = 0; i < one[t].size(); ++i) scale = std::max(scale, std::abs(one[t].data()[i]));
    for (std::size_t i = 0; i < one[t].size(); ++i)
      ASSERT_NEAR(three[t].data()[i], one[t].data()[i], 1e-12 * scale) << names[t] << " " << i;
  }
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
