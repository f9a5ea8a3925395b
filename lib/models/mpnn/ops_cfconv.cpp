#include "models/mpnn/ops_cfconv.h"

#include <string>
#include <vector>

#include "distspec/tensor/row_kernels.h"
#include "distspec/util/threads.h"

namespace distspec::models::mpnn {

using namespace distspec::tensor;
namespace {

std::string shape(std::size_t rows, std::size_t cols) { return std::to_string(rows) + " x " + std::to_string(cols); }

template <class T>
void check_args(const Tensor<T>& h, const Tensor<T>& radial, const Tensor<T>& cutoff, const Tensor<T>& weight,
                const Tensor<T>& bias, Span<const int> offsets, Span<const int> senders) {
  const std::size_t n_edges = senders.size(), f = weight.cols();
  if (h.cols() != f || radial.cols() != weight.rows() || bias.rows() != 1 || bias.cols() != f ||
      radial.rows() != n_edges || cutoff.rows() != n_edges || cutoff.cols() != 1)
    throw Error("tensor.shape", "",
                "cfconv: h is " + shape(h.rows(), h.cols()) + ", radial " + shape(radial.rows(), radial.cols()) +
                    ", cutoff " + shape(cutoff.rows(), cutoff.cols()) + ", weight " +
                    shape(weight.rows(), weight.cols()) + ", bias " + shape(bias.rows(), bias.cols()) + ", for " +
                    std::to_string(n_edges) + " edges");
  const std::size_t n_segments = offsets.empty() ? 0 : offsets.size() - 1;
  if (n_segments > 0 && (offsets[0] != 0 || static_cast<std::size_t>(offsets[n_segments]) != n_edges))
    throw Error("tensor.index", "", "cfconv: offsets must run from 0 to the " + std::to_string(n_edges) + " edges");
  for (std::size_t r = 0; r < n_segments; ++r)
    if (offsets[r + 1] < offsets[r]) throw Error("tensor.index", "", "cfconv: offsets must not decrease");
  for (std::size_t e = 0; e < n_edges; ++e)
    if (senders[e] < 0 || static_cast<std::size_t>(senders[e]) >= h.rows())
      throw Error("tensor.index", "",
                  "cfconv: sender " + std::to_string(senders[e]) + " of edge " + std::to_string(e) +
                      " is not a row of h (" + std::to_string(h.rows()) + " rows)");
}

// Segments [begin(t), begin(t + 1)) of thread t, of about equal edge counts.
std::vector<std::size_t> segment_ranges(int threads, Span<const int> offsets, std::size_t n_segments) {
  const std::size_t n_edges = n_segments ? static_cast<std::size_t>(offsets[n_segments]) : 0;
  return receiver_ranges(offsets.data(), n_segments, loop_threads(threads, n_edges));
}

// z = radial W + b: one edge's filter before the cutoff, summed as linear() sums it.
template <class T>
void filter_row(const T* radial, const Tensor<T>& weight, const Tensor<T>& bias, T* z) {
  kernels::vec_mat(radial, weight.rows(), weight.data(), weight.cols(), bias.data(), weight.cols(), z);
}

}  // namespace

template <class T>
Var<T> cfconv(Tape& tape, const Var<T>& h, const Var<T>& radial, const Var<T>& cutoff, const Tensor<T>& weight,
              const Tensor<T>& bias, Span<const int> offsets, Span<const int> senders) {
  check_args(h.value(), radial.value(), cutoff.value(), weight, bias, offsets, senders);
  const std::size_t n_segments = offsets.empty() ? 0 : offsets.size() - 1, f = weight.cols();
  Tensor<T> out = tape.tensor<T>(n_segments, f);
  const Tensor<T>& hv = h.value();
  const Tensor<T>& rv = radial.value();
  const Tensor<T>& cv = cutoff.value();
  // Each thread sums whole segments, so out needs no copies.
  const std::vector<std::size_t> ranges = segment_ranges(tape.threads(), offsets, n_segments);
  run_threads(static_cast<int>(ranges.size()) - 1, [&](int t) {
    std::vector<T> z(f);  // the one edge's filter that exists at a time, per thread
    for (std::size_t r = ranges[t]; r < ranges[t + 1]; ++r) {
      T* o = out.row(r);
      for (int e = offsets[r]; e < offsets[r + 1]; ++e) {
        filter_row(rv.row(e), weight, bias, z.data());
        const T fc = cv(e, 0);
        const T* hj = hv.row(senders[e]);
        for (std::size_t c = 0; c < f; ++c) o[c] += hj[c] * (z[c] * fc);
      }
    }
  });
  Var<T> y = Var<T>::result(std::move(out), h.requires_grad() || radial.requires_grad() || cutoff.requires_grad());
  if (!y.requires_grad()) return y;

  tape.record([h, radial, cutoff, y, &weight, &bias, offsets, senders, n_segments, f, threads = tape.threads(),
               workspace = tape.workspace()] {
    const std::size_t k_max = weight.rows();
    const Tensor<T>& gy = y.grad();
    const Tensor<T>& hv = h.value();
    const Tensor<T>& rv = radial.value();
    const Tensor<T>& cv = cutoff.value();
    Tensor<T>* gh = h.requires_grad() ? &h.grad() : nullptr;
    Tensor<T>* gr = radial.requires_grad() ? &radial.grad() : nullptr;
    Tensor<T>* gc = cutoff.requires_grad() ? &cutoff.grad() : nullptr;
    // t = u W^T (u = grad w_e) runs with unit stride over K on W^T.
    std::vector<T> wt(f * k_max);
    kernels::transpose(weight.data(), k_max, f, wt.data());
    // Threads own segments, hence the edges' rows of grad radial and grad cutoff; grad h goes to
    // senders, which any thread may share, so threads past the first add it into zeroed copies,
    // summed in thread order.
    const std::vector<std::size_t> ranges = segment_ranges(threads, offsets, n_segments);
    const int used = static_cast<int>(ranges.size()) - 1;
    std::vector<Tensor<T>> gh_copies;
    if (gh)
      for (int c = 1; c < used; ++c) gh_copies.emplace_back(gh->rows(), f, workspace);
    run_threads(used, [&](int thread) {
      Tensor<T>* ght = !gh ? nullptr : thread == 0 ? gh : &gh_copies[static_cast<std::size_t>(thread - 1)];
      std::vector<T> z(f), u(f), t(k_max);
      for (std::size_t r = ranges[thread]; r < ranges[thread + 1]; ++r) {
        const T* g = gy.row(r);
        for (int e = offsets[r]; e < offsets[r + 1]; ++e) {
          const int j = senders[e];
          const T fc = cv(e, 0);
          if (ght) {
            filter_row(rv.row(e), weight, bias, z.data());
            T* ghj = ght->row(j);
            for (std::size_t c = 0; c < f; ++c) ghj[c] += g[c] * (z[c] * fc);
          }
          if (!gr && !gc) continue;
          const T* hj = hv.row(j);
          for (std::size_t c = 0; c < f; ++c) u[c] = g[c] * hj[c];
          kernels::vec_mat(u.data(), f, wt.data(), k_max, static_cast<const T*>(nullptr), k_max, t.data());
          // grad cutoff[e] = u . z_e = radial[e] . t + b . u: no filter needed, so an h that takes
          // no gradient (the first layer's embedding) spares the edge its recomputation.
          if (gc) (*gc)(e, 0) += kernels::dot(rv.row(e), t.data(), k_max) + kernels::dot(bias.data(), u.data(), f);
          if (gr) {
            T* gre = gr->row(e);
            for (std::size_t k = 0; k < k_max; ++k) gre[k] += fc * t[k];
          }
        }
      }
    });
    if (gh_copies.empty()) return;
    T* real = gh->data();
    parallel_for(used, gh->size(), [&](std::size_t begin, std::size_t end, int) {
      for (const Tensor<T>& copy : gh_copies)
        for (std::size_t k = begin; k < end; ++k) real[k] += copy.data()[k];
    });
  });
  return y;
}

template Var<double> cfconv<double>(Tape&, const Var<double>&, const Var<double>&, const Var<double>&,
                                    const Tensor<double>&, const Tensor<double>&, Span<const int>, Span<const int>);
template Var<float> cfconv<float>(Tape&, const Var<float>&, const Var<float>&, const Var<float>&,
                                  const Tensor<float>&, const Tensor<float>&, Span<const int>, Span<const int>);

}  // namespace distspec::models::mpnn
