// The message-passing model's tape ops (models/mpnn): radial bases, the cosine cutoff, edge
// vectors and lengths, and the fused cfconv, each adjoint against central finite differences
// (tape_check.h), the cfconv against the core ops it fuses, fp32 against fp64, and a network
// step on N threads against one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "distspec/error.h"
#include "distspec/tensor/ops_activation.h"
#include "distspec/tensor/ops_dense.h"
#include "distspec/tensor/ops_elementwise.h"
#include "distspec/tensor/ops_rows.h"
#include "distspec/tensor/tape.h"
#include "distspec/util/threads.h"
#include "models/mpnn/ops_cfconv.h"
#include "models/mpnn/ops_geometry.h"
#include "models/mpnn/ops_radial.h"
#include "tape_check.h"

namespace distspec::models::mpnn {
namespace {

using namespace distspec::tensor;
using namespace distspec::tensor::test;

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
std::vector<Tensor<double>> run_cfconv(const EdgeFilterCase& c, bool fused, const Tensor<double>& seed) {
  Tape tape;
  const Var<T> h = Var<T>::variable(tensor_cast<T>(c.h)), radial = Var<T>::variable(tensor_cast<T>(c.radial)),
               cutoff = Var<T>::variable(tensor_cast<T>(c.cutoff));
  const Tensor<T> weight = tensor_cast<T>(c.weight), bias = tensor_cast<T>(c.bias);
  const Span<const int> offsets(c.offsets), senders(c.senders);
  const Var<T> y = fused ? cfconv(tape, h, radial, cutoff, weight, bias, offsets, senders)
                         : segment_sum(tape,
                                       mul(tape, gather_rows(tape, h, senders),
                                           mul(tape, linear(tape, radial, weight, bias), cutoff)),
                                       offsets);
  y.grad() = tensor_cast<T>(seed);
  tape.backward();
  std::vector<Tensor<double>> out;
  for (const Tensor<T>* t : {&y.value(), &h.grad(), &radial.grad(), &cutoff.grad()}) out.push_back(tensor_cast<double>(*t));
  return out;
}

TEST(TapeOps, CfconvAdjointMatchesFiniteDifferences) {
  const EdgeFilterCase c;
  EXPECT_LT(max_gradient_error(
                [&](Tape& t, const auto& v) {
                  return cfconv(t, v[0], v[1], v[2], c.weight, c.bias, Span<const int>(c.offsets),
                                Span<const int>(c.senders));
                },
                {c.h, c.radial, c.cutoff}),
            kTolerance);
}

TEST(TapeOps, CfconvEqualsTheUnfusedOps) {
  const EdgeFilterCase c;
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
  const EdgeFilterCase c;
  Tape tape;
  const Var<double> y = cfconv(tape, Var<double>::constant(c.h), Var<double>::constant(c.radial),
                               Var<double>::constant(c.cutoff), c.weight, c.bias, Span<const int>(c.offsets),
                               Span<const int>(c.senders));
  EXPECT_FALSE(y.requires_grad());
  EXPECT_EQ(tape.size(), 0u);
  for (std::size_t col = 0; col < c.f; ++col) EXPECT_EQ(y.value()(1, col), 0.0);  // the empty segment
}

TEST(TapeOps, CfconvChecksItsArguments) {
  const EdgeFilterCase c;
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
    const Tensor<T> wt = tensor_cast<T>(w), bt = tensor_cast<T>(b);
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

}  // namespace
}  // namespace distspec::models::mpnn
