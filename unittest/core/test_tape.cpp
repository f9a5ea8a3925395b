// The tensor/tape runtime: every op's adjoint against central finite differences of a random
// linear functional of its output (tape_check.h), the row kernels against plain loops, the
// tape's replay order, workspaces, and the policy-aware gather's exchanges in both directions.
// The message-passing model's own ops (cfconv, radial bases, edge geometry) are tested beside
// it, in unittest/models/test_mpnn_ops.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include "distspec/dispatch/dispatcher.h"
#include "distspec/halo/indexed_halo_exchange.h"
#include "distspec/tensor/ops_activation.h"
#include "distspec/tensor/ops_dense.h"
#include "distspec/tensor/ops_elementwise.h"
#include "distspec/tensor/ops_halo.h"
#include "distspec/tensor/ops_rows.h"
#include "distspec/tensor/row_kernels.h"
#include "distspec/tensor/tape.h"
#include "distspec/util/threads.h"
#include "tape_check.h"

namespace distspec::tensor {
namespace {

using namespace test;

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
  const EdgeFilterCase in;
  auto pass = [&] {
    Tape tape(ws);
    Tensor<double> x0 = tape.tensor<double>(in.h.rows(), in.h.cols());
    std::copy_n(in.h.data(), in.h.size(), x0.data());
    const Var<double> x = Var<double>::variable(std::move(x0));
    const Var<double> r = Var<double>::variable(in.radial), fc = Var<double>::variable(in.cutoff);
    const Var<double> filter = mul(tape, linear(tape, r, in.weight, in.bias), fc);
    const Var<double> y = silu(tape, segment_sum(tape, mul(tape, gather_rows(tape, x, Span<const int>(in.senders)), filter),
                                                 Span<const int>(in.offsets)));
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
      const Tensor<T> x = tensor_cast<T>(random_tensor(1, n, 1)), m = tensor_cast<T>(random_tensor(n, stride, 2));
      const Tensor<T> b = tensor_cast<T>(random_tensor(1, cols, 3));
      for (const T* bias : {b.data(), static_cast<const T*>(nullptr)}) {
        std::vector<T> y(cols);
        kernels::vec_mat(x.data(), n, m.data(), stride, bias, cols, y.data());
        for (std::size_t c = 0; c < cols; ++c) {
          T s = bias ? bias[c] : T(0);
          for (std::size_t i = 0; i < n; ++i) s += x(0, i) * m(i, c);
          EXPECT_EQ(y[c], s) << cols << " columns, column " << c;
        }
      }
      const Tensor<T> a = tensor_cast<T>(random_tensor(1, cols, 4));
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
