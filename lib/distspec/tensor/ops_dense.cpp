#include "distspec/tensor/ops_dense.h"

#include <string>
#include <vector>

#include "distspec/tensor/row_kernels.h"
#include "distspec/util/threads.h"

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
  // A row costs in x out multiply-adds: a few rows are worth a thread.
  const std::size_t grain = row_grain(in * out);
  parallel_for(
      tape.threads(), n,
      [&](std::size_t begin, std::size_t end, int) {
        for (std::size_t i = begin; i < end; ++i)
          kernels::vec_mat(xv.row(i), in, weight.data(), out, bias.data(), out, y.row(i));
      },
      grain);
  Var<T> result = Var<T>::result(std::move(y), x.requires_grad());
  if (result.requires_grad())
    tape.record([x, result, &weight, n, in, out, grain, threads = tape.threads()] {
      Tensor<T>& gx = x.grad();
      const Tensor<T>& gy = result.grad();
      // grad x[i] += grad y[i] W^T, with W^T stored for unit stride over `in`.
      std::vector<T> wt(in * out);
      kernels::transpose(weight.data(), in, out, wt.data());
      parallel_for(
          threads, n,
          [&](std::size_t begin, std::size_t end, int) {
            std::vector<T> s(in);
            for (std::size_t i = begin; i < end; ++i) {
              kernels::vec_mat(gy.row(i), out, wt.data(), in, static_cast<const T*>(nullptr), in, s.data());
              T* gxi = gx.row(i);
              for (std::size_t k = 0; k < in; ++k) gxi[k] += s[k];
            }
          },
          grain);
    });
  return result;
}

template Var<double> linear<double>(Tape&, const Var<double>&, const Tensor<double>&, const Tensor<double>&);
template Var<float> linear<float>(Tape&, const Var<float>&, const Tensor<float>&, const Tensor<float>&);

}  // namespace distspec::tensor
