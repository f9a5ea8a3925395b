#include "distspec/tensor/ops_activation.h"

#include <algorithm>
#include <cmath>

namespace distspec::tensor {
namespace {

constexpr double kLn2 = 0.693147180559945309417;

template <class T>
T sigmoid(T x) {
  return T(1) / (T(1) + std::exp(-x));
}

// y = f(x) element-wise; the adjoint multiplies by f'(x), recomputed from the saved input.
template <class T, class F, class DF>
Var<T> elementwise(Tape& tape, const Var<T>& x, F f, DF df) {
  Tensor<T> y = tape.tensor<T>(x.rows(), x.cols());
  const Tensor<T>& xv = x.value();
  for (std::size_t i = 0; i < y.size(); ++i) y.data()[i] = f(xv.data()[i]);
  Var<T> out = Var<T>::result(std::move(y), x.requires_grad());
  if (out.requires_grad())
    tape.record([x, out, df] {
      Tensor<T>& gx = x.grad();
      const Tensor<T>& gy = out.grad();
      const Tensor<T>& xv = x.value();
      for (std::size_t i = 0; i < gx.size(); ++i) gx.data()[i] += gy.data()[i] * df(xv.data()[i]);
    });
  return out;
}

}  // namespace

template <class T>
Var<T> silu(Tape& tape, const Var<T>& x) {
  return elementwise(
      tape, x, [](T v) { return v * sigmoid(v); },
      [](T v) {
        const T s = sigmoid(v);
        return s * (T(1) + v * (T(1) - s));
      });
}

template <class T>
Var<T> shifted_softplus(Tape& tape, const Var<T>& x) {
  // softplus(v) = max(v, 0) + log1p(e^-|v|) never overflows; its derivative is sigmoid(v).
  return elementwise(
      tape, x, [](T v) { return std::max(v, T(0)) + std::log1p(std::exp(-std::abs(v))) - T(kLn2); },
      [](T v) { return sigmoid(v); });
}

template Var<double> silu<double>(Tape&, const Var<double>&);
template Var<float> silu<float>(Tape&, const Var<float>&);
template Var<double> shifted_softplus<double>(Tape&, const Var<double>&);
template Var<float> shifted_softplus<float>(Tape&, const Var<float>&);

}  // namespace distspec::tensor
