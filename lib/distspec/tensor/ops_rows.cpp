#include "distspec/tensor/ops_rows.h"

#include <algorithm>
#include <string>

#include "distspec/util/threads.h"

namespace distspec::tensor {
namespace {

// One pass over the indices turns a caller's bug into an error instead of a wild write.
void check_index(const char* op, Span<const int> index, std::size_t n_rows) {
  for (std::size_t k = 0; k < index.size(); ++k)
    if (index[k] < 0 || static_cast<std::size_t>(index[k]) >= n_rows)
      throw Error("tensor.index", "",
                  std::string(op) + ": index " + std::to_string(index[k]) + " at position " + std::to_string(k) +
                      " is not a row of a " + std::to_string(n_rows) + "-row tensor");
}

template <class T>
void add_row(T* dst, const T* src, std::size_t cols) {
  for (std::size_t c = 0; c < cols; ++c) dst[c] += src[c];
}

}  // namespace

template <class T>
Var<T> gather_rows(Tape& tape, const Var<T>& x, Span<const int> index) {
  check_index("gather_rows", index, x.rows());
  const std::size_t cols = x.cols();
  Tensor<T> out = tape.tensor<T>(index.size(), cols);
  const Tensor<T>& xv = x.value();
  parallel_for(
      tape.threads(), index.size(),
      [&](std::size_t begin, std::size_t end, int) {
        for (std::size_t k = begin; k < end; ++k) std::copy_n(xv.row(index[k]), cols, out.row(k));
      },
      row_grain(cols));
  Var<T> y = Var<T>::result(std::move(out), x.requires_grad());
  if (y.requires_grad())
    tape.record([x, y, index, cols] {
      Tensor<T>& gx = x.grad();
      const Tensor<T>& gy = y.grad();
      for (std::size_t k = 0; k < index.size(); ++k) add_row(gx.row(index[k]), gy.row(k), cols);
    });
  return y;
}

template <class T>
Var<T> scatter_add(Tape& tape, const Var<T>& base, const Var<T>& src, Span<const int> index) {
  if (src.rows() != index.size() || src.cols() != base.cols())
    throw Error("tensor.shape", "",
                "scatter_add: src is " + std::to_string(src.rows()) + " x " + std::to_string(src.cols()) +
                    ", expected " + std::to_string(index.size()) + " x " + std::to_string(base.cols()));
  check_index("scatter_add", index, base.rows());
  const std::size_t cols = base.cols();
  Tensor<T> out = tape.tensor<T>(base.rows(), cols);
  const int threads = tape.threads();
  const T* bv = base.value().data();
  T* ov = out.data();
  parallel_for(threads, out.size(), [&](std::size_t begin, std::size_t end, int) {
    std::copy(bv + begin, bv + end, ov + begin);
  });
  // Indices may repeat: the sum itself stays on one thread.
  const Tensor<T>& sv = src.value();
  for (std::size_t k = 0; k < index.size(); ++k) add_row(out.row(index[k]), sv.row(k), cols);
  Var<T> y = Var<T>::result(std::move(out), base.requires_grad() || src.requires_grad());
  if (y.requires_grad())
    tape.record([base, src, y, index, cols, threads] {
      const Tensor<T>& gy = y.grad();
      if (base.requires_grad()) {
        T* gb = base.grad().data();
        const T* g = gy.data();
        parallel_for(threads, base.grad().size(), [&](std::size_t begin, std::size_t end, int) {
          for (std::size_t i = begin; i < end; ++i) gb[i] += g[i];
        });
      }
      if (src.requires_grad()) {
        Tensor<T>& gs = src.grad();
        parallel_for(
            threads, index.size(),
            [&](std::size_t begin, std::size_t end, int) {
              for (std::size_t k = begin; k < end; ++k) add_row(gs.row(k), gy.row(index[k]), cols);
            },
            row_grain(cols));
      }
    });
  return y;
}

template <class T>
Var<T> segment_sum(Tape& tape, const Var<T>& src, Span<const int> offsets) {
  const std::size_t n_segments = offsets.empty() ? 0 : offsets.size() - 1;
  if (n_segments > 0 && (offsets[0] != 0 || static_cast<std::size_t>(offsets[n_segments]) != src.rows()))
    throw Error("tensor.index", "",
                "segment_sum: offsets must run from 0 to the " + std::to_string(src.rows()) + " rows of src");
  for (std::size_t r = 0; r < n_segments; ++r)
    if (offsets[r + 1] < offsets[r]) throw Error("tensor.index", "", "segment_sum: offsets must not decrease");
  const std::size_t cols = src.cols();
  Tensor<T> out = tape.tensor<T>(n_segments, cols);
  const Tensor<T>& sv = src.value();
  for (std::size_t r = 0; r < n_segments; ++r)
    for (int e = offsets[r]; e < offsets[r + 1]; ++e) add_row(out.row(r), sv.row(e), cols);
  Var<T> y = Var<T>::result(std::move(out), src.requires_grad());
  if (y.requires_grad())
    tape.record([src, y, offsets, n_segments, cols] {
      Tensor<T>& gs = src.grad();
      const Tensor<T>& gy = y.grad();
      for (std::size_t r = 0; r < n_segments; ++r)
        for (int e = offsets[r]; e < offsets[r + 1]; ++e) add_row(gs.row(e), gy.row(r), cols);
    });
  return y;
}

template <class T>
Var<double> sum_rows(Tape& tape, const Var<T>& x) {
  const std::size_t cols = x.cols();
  Tensor<double> out = tape.tensor<double>(1, cols);
  const Tensor<T>& xv = x.value();
  for (std::size_t i = 0; i < xv.rows(); ++i)
    for (std::size_t c = 0; c < cols; ++c) out(0, c) += xv(i, c);
  Var<double> y = Var<double>::result(std::move(out), x.requires_grad());
  if (y.requires_grad())
    tape.record([x, y, cols] {
      Tensor<T>& gx = x.grad();
      const Tensor<double>& gy = y.grad();
      for (std::size_t i = 0; i < gx.rows(); ++i)
        for (std::size_t c = 0; c < cols; ++c) gx(i, c) += static_cast<T>(gy(0, c));
    });
  return y;
}

#define DISTSPEC_INSTANTIATE(T)                                                         \
  template Var<T> gather_rows<T>(Tape&, const Var<T>&, Span<const int>);                \
  template Var<T> scatter_add<T>(Tape&, const Var<T>&, const Var<T>&, Span<const int>); \
  template Var<T> segment_sum<T>(Tape&, const Var<T>&, Span<const int>);                \
  template Var<double> sum_rows<T>(Tape&, const Var<T>&);
DISTSPEC_INSTANTIATE(double)
DISTSPEC_INSTANTIATE(float)
#undef DISTSPEC_INSTANTIATE

}  // namespace distspec::tensor
