#include "distspec/tensor/ops_elementwise.h"

#include <string>

#include "distspec/util/threads.h"

namespace distspec::tensor {
namespace {

std::string shape(std::size_t rows, std::size_t cols) { return std::to_string(rows) + " x " + std::to_string(cols); }

}  // namespace

template <class T>
Var<T> mul(Tape& tape, const Var<T>& a, const Var<T>& b) {
  const std::size_t n = a.rows(), cols = a.cols();
  const bool broadcast = b.cols() == 1 && cols != 1;
  if (b.rows() != n || (b.cols() != cols && !broadcast))
    throw Error(
        "tensor.shape", "",
        "mul: " + shape(n, cols) + " times " + shape(b.rows(), b.cols()) + "; expected equal shapes or one column");
  const std::size_t bstride = broadcast ? 0 : 1;  // column step through b's row
  Tensor<T> y = tape.tensor<T>(n, cols);
  const Tensor<T>& av = a.value();
  const Tensor<T>& bv = b.value();
  parallel_for(
      tape.threads(), n,
      [&](std::size_t begin, std::size_t end, int) {
        for (std::size_t i = begin; i < end; ++i)
          for (std::size_t c = 0; c < cols; ++c) y(i, c) = av(i, c) * bv.row(i)[c * bstride];
      },
      row_grain(cols));
  Var<T> out = Var<T>::result(std::move(y), a.requires_grad() || b.requires_grad());
  if (out.requires_grad())
    tape.record([a, b, out, n, cols, bstride, threads = tape.threads()] {
      const Tensor<T>& gy = out.grad();
      const Tensor<T>& av = a.value();
      const Tensor<T>& bv = b.value();
      Tensor<T>* ga = a.requires_grad() ? &a.grad() : nullptr;
      Tensor<T>* gb = b.requires_grad() ? &b.grad() : nullptr;
      // Rows are independent: a broadcast b sums over its row's columns only.
      parallel_for(
          threads, n,
          [&](std::size_t begin, std::size_t end, int) {
            for (std::size_t i = begin; i < end; ++i)
              for (std::size_t c = 0; c < cols; ++c) {
                if (ga) (*ga)(i, c) += gy(i, c) * bv.row(i)[c * bstride];
                if (gb) gb->row(i)[c * bstride] += gy(i, c) * av(i, c);
              }
          },
          row_grain(cols));
    });
  return out;
}

template <class T>
Var<T> add(Tape& tape, const Var<T>& a, const Var<T>& b) {
  if (a.rows() != b.rows() || a.cols() != b.cols())
    throw Error("tensor.shape", "", "add: " + shape(a.rows(), a.cols()) + " plus " + shape(b.rows(), b.cols()));
  Tensor<T> y = tape.tensor<T>(a.rows(), a.cols());
  const T* av = a.value().data();
  const T* bv = b.value().data();
  T* yv = y.data();
  parallel_for(tape.threads(), y.size(), [&](std::size_t begin, std::size_t end, int) {
    for (std::size_t i = begin; i < end; ++i) yv[i] = av[i] + bv[i];
  });
  Var<T> out = Var<T>::result(std::move(y), a.requires_grad() || b.requires_grad());
  if (out.requires_grad())
    tape.record([a, b, out, threads = tape.threads()] {
      const T* gy = out.grad().data();
      for (const Var<T>* v : {&a, &b}) {
        if (!v->requires_grad()) continue;
        T* g = v->grad().data();
        parallel_for(threads, v->grad().size(), [&](std::size_t begin, std::size_t end, int) {
          for (std::size_t i = begin; i < end; ++i) g[i] += gy[i];
        });
      }
    });
  return out;
}

template Var<double> mul<double>(Tape&, const Var<double>&, const Var<double>&);
template Var<float> mul<float>(Tape&, const Var<float>&, const Var<float>&);
template Var<double> add<double>(Tape&, const Var<double>&, const Var<double>&);
template Var<float> add<float>(Tape&, const Var<float>&, const Var<float>&);

}  // namespace distspec::tensor
