#include "distspec/tensor/ops_dense.h"

#include <string>

namespace distspec::tensor {

template <class T>
Var<T> linear(Tape& tape, const Var<T>& x, const Tensor<T>& weight, const Tensor<T>& bias) {
  const std::size_t n = x.rows(), in = weight.rows(), out = weight.cols();
  if (x.cols() != in || bias.rows() != 1 || bias.cols() != out)
    throw Error("tensor.shape", "",
                "linear: x is " + std::to_string(n) + " x " + std::to_string(x.cols()) + ", weight " +
                    std::to_string(in) + " x " + std::to_string(out) + ", bias " + std::to_string(bias.rows()) + " x " +
                    std::to_string(bias.cols()));
  Tensor<T> y = tape.tensor<T>(n, out);
  const Tensor<T>& xv = x.value();
  // Row times matrix with the weight row innermost: unit stride over both weight and output.
  for (std::size_t i = 0; i < n; ++i) {
    T* yi = y.row(i);
    std::copy_n(bias.data(), out, yi);
    const T* xi = xv.row(i);
    for (std::size_t k = 0; k < in; ++k) {
      const T xk = xi[k];
      const T* wk = weight.row(k);
      for (std::size_t c = 0; c < out; ++c) yi[c] += xk * wk[c];
    }
  }
  Var<T> result = Var<T>::result(std::move(y), x.requires_grad());
  if (result.requires_grad())
    tape.record([x, result, &weight, n, in, out] {
      Tensor<T>& gx = x.grad();
      const Tensor<T>& gy = result.grad();
      for (std::size_t i = 0; i < n; ++i) {
        const T* gyi = gy.row(i);
        T* gxi = gx.row(i);
        for (std::size_t k = 0; k < in; ++k) {
          const T* wk = weight.row(k);
          T s = 0;
          for (std::size_t c = 0; c < out; ++c) s += gyi[c] * wk[c];
          gxi[k] += s;
        }
      }
    });
  return result;
}

template Var<double> linear<double>(Tape&, const Var<double>&, const Tensor<double>&, const Tensor<double>&);
template Var<float> linear<float>(Tape&, const Var<float>&, const Tensor<float>&, const Tensor<float>&);

}  // namespace distspec::tensor
