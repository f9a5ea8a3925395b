#include "distspec/tensor/ops_activation.h"

#include <algorithm>
#include <cmath>

#include "distspec/util/threads.h"

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
  const T* xv = x.value().data();
  T* yv = y.data();
  parallel_for(tape.threads(), y.size(), [&](std::size_t begin, std::size_t end, int) {
    for (std::size_t i = begin; i < end; ++i) yv[i] = f(xv[i]);
  });
  Var<T> out = Var<T>::result(std::move(y), x.requires_grad());
  if (out.requires_grad())
    tape.record([x, out, df, threads = tape.threads()] {
      T* gx = x.grad().data();
      const T* gy = out.grad().data();
      const T* xv = x.value().data();
      parallel_for(threads, x.grad().size(), [&](std::size_t begin, std::size_t end, int) {
        for (std::size_t i = begin; i < end; ++i) gx[i] += gy[i] * df(xv[i]);
      });
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
