#include "distspec/tensor/ops_cfconv.h"

#include <algorithm>
#include <string>
#include <vector>

namespace distspec::tensor {
namespace {

std::string shape(std::size_t rows, std::size_t cols) { return std::to_string(rows) + " x " + std::to_string(cols); }

void check_args(std::size_t h_rows, std::size_t h_cols, std::size_t radial_rows, std::size_t radial_cols,
                std::size_t cutoff_rows, std::size_t cutoff_cols, std::size_t k_max, std::size_t f,
                std::size_t bias_rows, std::size_t bias_cols, Span<const int> offsets, Span<const int> senders) {
  const std::size_t n_edges = senders.size();
  if (h_cols != f || radial_cols != k_max || bias_rows != 1 || bias_cols != f || radial_rows != n_edges ||
      cutoff_rows != n_edges || cutoff_cols != 1)
    throw Error("tensor.shape", "",
                "cfconv: h is " + shape(h_rows, h_cols) + ", radial " + shape(radial_rows, radial_cols) +
                    ", cutoff " + shape(cutoff_rows, cutoff_cols) + ", weight " + shape(k_max, f) + ", bias " +
                    shape(bias_rows, bias_cols) + ", for " + std::to_string(n_edges) + " edges");
  const std::size_t n_segments = offsets.empty() ? 0 : offsets.size() - 1;
  if (n_segments > 0 && (offsets[0] != 0 || static_cast<std::size_t>(offsets[n_segments]) != n_edges))
    throw Error("tensor.index", "", "cfconv: offsets must run from 0 to the " + std::to_string(n_edges) + " edges");
  for (std::size_t r = 0; r < n_segments; ++r)
    if (offsets[r + 1] < offsets[r]) throw Error("tensor.index", "", "cfconv: offsets must not decrease");
  for (std::size_t e = 0; e < n_edges; ++e)
    if (senders[e] < 0 || static_cast<std::size_t>(senders[e]) >= h_rows)
      throw Error("tensor.index", "",
                  "cfconv: sender " + std::to_string(senders[e]) + " of edge " + std::to_string(e) +
                      " is not a row of h (" + std::to_string(h_rows) + " rows)");
}

// z = radial W + b, one edge's filter before the cutoff: bias first, then the basis functions
// in order, as linear() sums them (so the values agree to the bit). The inner loops run over F
// with unit stride, which the compiler vectorises.
template <class T>
void filter_row(const T* radial, const Tensor<T>& weight, const T* bias, T* z) {
  const std::size_t k_max = weight.rows(), f = weight.cols();
  std::copy_n(bias, f, z);
  for (std::size_t k = 0; k < k_max; ++k) {
    const T rk = radial[k];
    const T* wk = weight.row(k);
    for (std::size_t c = 0; c < f; ++c) z[c] += rk * wk[c];
  }
}

}  // namespace

template <class T>
Var<T> cfconv(Tape& tape, const Var<T>& h, const Var<T>& radial, const Var<T>& cutoff, const Tensor<T>& weight,
              const Tensor<T>& bias, Span<const int> offsets, Span<const int> senders) {
  check_args(h.rows(), h.cols(), radial.rows(), radial.cols(), cutoff.rows(), cutoff.cols(), weight.rows(),
             weight.cols(), bias.rows(), bias.cols(), offsets, senders);
  const std::size_t n_segments = offsets.empty() ? 0 : offsets.size() - 1, f = weight.cols();
  Tensor<T> out = tape.tensor<T>(n_segments, f);
  const Tensor<T>& hv = h.value();
  const Tensor<T>& rv = radial.value();
  const Tensor<T>& cv = cutoff.value();
  std::vector<T> z(f);
  for (std::size_t r = 0; r < n_segments; ++r) {
    T* o = out.row(r);
    for (int e = offsets[r]; e < offsets[r + 1]; ++e) {
      filter_row(rv.row(e), weight, bias.data(), z.data());
      const T fc = cv(e, 0);
      const T* hj = hv.row(senders[e]);
      for (std::size_t c = 0; c < f; ++c) o[c] += hj[c] * (z[c] * fc);
    }
  }
  Var<T> y = Var<T>::result(std::move(out), h.requires_grad() || radial.requires_grad() || cutoff.requires_grad());
  if (!y.requires_grad()) return y;

  tape.record([h, radial, cutoff, y, &weight, &bias, offsets, senders, n_segments, f] {
    const std::size_t k_max = weight.rows();
    const Tensor<T>& gy = y.grad();
    const Tensor<T>& hv = h.value();
    const Tensor<T>& rv = radial.value();
    const Tensor<T>& cv = cutoff.value();
    // W^T, so that grad radial[e] = dz W^T runs over K with unit stride (a vectorisable update
    // per feature, where a dot product per basis function would be a serial reduction).
    std::vector<T> wt(f * k_max);
    for (std::size_t k = 0; k < k_max; ++k)
      for (std::size_t c = 0; c < f; ++c) wt[c * k_max + k] = weight(k, c);
    std::vector<T> z(f), u(f), acc(k_max);
    for (std::size_t r = 0; r < n_segments; ++r) {
      const T* g = gy.row(r);
      for (int e = offsets[r]; e < offsets[r + 1]; ++e) {
        const int j = senders[e];
        filter_row(rv.row(e), weight, bias.data(), z.data());
        const T fc = cv(e, 0);
        if (h.requires_grad()) {
          T* gh = h.grad().row(j);
          for (std::size_t c = 0; c < f; ++c) gh[c] += g[c] * (z[c] * fc);
        }
        if (!radial.requires_grad() && !cutoff.requires_grad()) continue;
        const T* hj = hv.row(j);
        for (std::size_t c = 0; c < f; ++c) u[c] = g[c] * hj[c];
        if (cutoff.requires_grad()) {
          T s = cutoff.grad()(e, 0);
          for (std::size_t c = 0; c < f; ++c) s += u[c] * z[c];
          cutoff.grad()(e, 0) = s;
        }
        if (radial.requires_grad()) {
          std::fill(acc.begin(), acc.end(), T(0));
          for (std::size_t c = 0; c < f; ++c) {
            const T dz = u[c] * fc;
            const T* wc = wt.data() + c * k_max;
            for (std::size_t k = 0; k < k_max; ++k) acc[k] += dz * wc[k];
          }
          T* gr = radial.grad().row(e);
          for (std::size_t k = 0; k < k_max; ++k) gr[k] += acc[k];
        }
      }
    }
  });
  return y;
}

template Var<double> cfconv<double>(Tape&, const Var<double>&, const Var<double>&, const Var<double>&,
                                    const Tensor<double>&, const Tensor<double>&, Span<const int>, Span<const int>);
template Var<float> cfconv<float>(Tape&, const Var<float>&, const Var<float>&, const Var<float>&,
                                  const Tensor<float>&, const Tensor<float>&, Span<const int>, Span<const int>);

}  // namespace distspec::tensor
