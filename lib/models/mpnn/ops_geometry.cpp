#include "models/mpnn/ops_geometry.h"

#include <cmath>
#include <string>

#include "distspec/util/threads.h"

namespace distspec::models::mpnn {

using namespace distspec::tensor;

template <class T>
Var<T> edge_vectors(Tape& tape, const Var<double>& x, Span<const int> receiver, Span<const int> sender) {
  if (x.cols() != 3)
    throw Error("tensor.shape", "", "edge_vectors: coordinates need 3 columns, got " + std::to_string(x.cols()));
  if (receiver.size() != sender.size())
    throw Error("tensor.shape", "",
                "edge_vectors: " + std::to_string(receiver.size()) + " receivers but " + std::to_string(sender.size()) +
                    " senders");
  const std::size_t n_edges = sender.size(), n_rows = x.rows();
  for (std::size_t e = 0; e < n_edges; ++e)
    if (receiver[e] < 0 || sender[e] < 0 || static_cast<std::size_t>(receiver[e]) >= n_rows ||
        static_cast<std::size_t>(sender[e]) >= n_rows)
      throw Error(
          "tensor.index", "",
          "edge_vectors: edge " + std::to_string(e) + " names a row outside [0, " + std::to_string(n_rows) + ")");
  Tensor<T> v = tape.tensor<T>(n_edges, 3);
  const Tensor<double>& xv = x.value();
  parallel_for(tape.threads(), n_edges, [&](std::size_t begin, std::size_t end, int) {
    for (std::size_t e = begin; e < end; ++e)
      for (int c = 0; c < 3; ++c) v(e, c) = static_cast<T>(xv(receiver[e], c) - xv(sender[e], c));
  });
  Var<T> out = Var<T>::result(std::move(v), x.requires_grad());
  if (out.requires_grad())
    tape.record([x, out, receiver, sender, n_edges, threads = tape.threads(), workspace = tape.workspace()] {
      Tensor<double>& gx = x.grad();
      const Tensor<T>& gv = out.grad();
      // Both ends of an edge take its gradient, so threads past the first add into zeroed copies
      // of grad x, summed in thread order.
      const int used = loop_threads(threads, n_edges);
      std::vector<Tensor<double>> copies;
      for (int t = 1; t < used; ++t) copies.emplace_back(gx.rows(), 3, workspace);
      parallel_for(used, n_edges, [&](std::size_t begin, std::size_t end, int t) {
        Tensor<double>& g = t == 0 ? gx : copies[static_cast<std::size_t>(t - 1)];
        for (std::size_t e = begin; e < end; ++e)
          for (int c = 0; c < 3; ++c) {
            g(receiver[e], c) += gv(e, c);
            g(sender[e], c) -= gv(e, c);
          }
      });
      for (const Tensor<double>& copy : copies)
        for (std::size_t k = 0; k < gx.size(); ++k) gx.data()[k] += copy.data()[k];
    });
  return out;
}

template <class T>
Var<T> lengths(Tape& tape, const Var<T>& v) {
  const std::size_t n = v.rows(), cols = v.cols();
  Tensor<T> r = tape.tensor<T>(n, 1);
  const Tensor<T>& vv = v.value();
  parallel_for(tape.threads(), n, [&](std::size_t begin, std::size_t end, int) {
    for (std::size_t i = begin; i < end; ++i) {
      double s = 0.0;
      for (std::size_t c = 0; c < cols; ++c) s += double(vv(i, c)) * vv(i, c);
      r(i, 0) = static_cast<T>(std::sqrt(s));
    }
  });
  Var<T> out = Var<T>::result(std::move(r), v.requires_grad());
  if (out.requires_grad())
    tape.record([v, out, n, cols, threads = tape.threads()] {
      Tensor<T>& gv = v.grad();
      const Tensor<T>& gr = out.grad();
      const Tensor<T>& vv = v.value();
      const Tensor<T>& rv = out.value();
      parallel_for(threads, n, [&](std::size_t begin, std::size_t end, int) {
        for (std::size_t i = begin; i < end; ++i) {
          const T scale = gr(i, 0) / rv(i, 0);
          for (std::size_t c = 0; c < cols; ++c) gv(i, c) += scale * vv(i, c);
        }
      });
    });
  return out;
}

template Var<double> edge_vectors<double>(Tape&, const Var<double>&, Span<const int>, Span<const int>);
template Var<float> edge_vectors<float>(Tape&, const Var<double>&, Span<const int>, Span<const int>);
template Var<double> lengths<double>(Tape&, const Var<double>&);
template Var<float> lengths<float>(Tape&, const Var<float>&);

}  // namespace distspec::models::mpnn
