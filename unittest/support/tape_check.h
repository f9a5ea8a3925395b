// What the tape tests share: random tensors, casts between precisions, and an op's adjoint
// against central finite differences of a random linear functional of its output.
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include "distspec/tensor/tape.h"

namespace distspec::tensor::test {

inline Tensor<double> random_tensor(std::size_t rows, std::size_t cols, unsigned seed, double lo = -1.0, double hi = 1.0) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  Tensor<double> t(rows, cols);
  for (std::size_t i = 0; i < t.size(); ++i) t.data()[i] = u(rng);
  return t;
}

// An op under test: inputs (every one a variable) to one output.
using Op = std::function<Var<double>(Tape&, const std::vector<Var<double>>&)>;

inline double dot(const Tensor<double>& a, const Tensor<double>& b) {
  double s = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a.data()[i] * b.data()[i];
  return s;
}

// The largest |analytic - numeric| over every element of every input, for the functional
// L = sum(w * op(inputs)) with fixed random w; h is the central-difference step.
inline double max_gradient_error(const Op& op, const std::vector<Tensor<double>>& inputs, double h = 1e-6) {
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
inline constexpr double kTolerance = 1e-8;

// Inputs of an edge filter (a cfconv, or the ops it fuses) on 5 rows and 6 edges: segments of 3, 0, 1 and 2 edges, row 1 sent twice,
// row 4 a sender only. F = 27 and K = 11 exercise every block width of the row kernels.
struct EdgeFilterCase {
  std::size_t f = 27, k = 11;
  std::vector<int> offsets{0, 3, 3, 4, 6}, senders{1, 4, 1, 0, 3, 2};
  Tensor<double> h = random_tensor(5, f, 1), radial = random_tensor(6, k, 2), cutoff = random_tensor(6, 1, 3, 0.0, 1.0);
  Tensor<double> weight = random_tensor(k, f, 4), bias = random_tensor(1, f, 5);
};

}  // namespace distspec::tensor::test
