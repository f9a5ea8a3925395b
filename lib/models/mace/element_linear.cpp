// MACE's element-dependent linears on the CPU (element_linear.h): up to four nodes of one element
// at a time, path by path; each row u of the element's matrix is loaded once for the group's
// nodes and components, and each product is a loop over the output multiplicity that the compiler
// vectorizes. The backward is the same product with the transposed matrices.
#include "models/mace/element_linear.h"

#include <algorithm>

#include "models/mace/cpu_clones.h"

namespace distspec::models::mace {

std::string element_linear_table_error(const int64_t* paths, int64_t n_paths, int64_t per_element, int64_t in_dim,
                                       int64_t out_dim) {
  for (int64_t p = 0; p < n_paths; ++p) {
    const int64_t* f = paths + kElementLinearPathFields * p;
    const ElementLinearPath path{f[0], f[1], f[2], f[3], f[4], f[5]};
    const bool fits = path.in_offset >= 0 && path.mul_in >= 0 && path.out_offset >= 0 && path.mul_out >= 0 &&
                      path.dim > 0 && path.weight_offset >= 0 && path.in_offset + path.mul_in * path.dim <= in_dim &&
                      path.out_offset + path.mul_out * path.dim <= out_dim &&
                      path.weight_offset + path.mul_in * path.mul_out <= per_element;
    if (!fits)
      return "path " + std::to_string(p) + " (in_offset " + std::to_string(path.in_offset) + ", mul_in " +
             std::to_string(path.mul_in) + ", out_offset " + std::to_string(path.out_offset) + ", mul_out " +
             std::to_string(path.mul_out) + ", dim " + std::to_string(path.dim) + ", weight_offset " +
             std::to_string(path.weight_offset) + ") reaches beyond x's " + std::to_string(in_dim) +
             " columns, the output's " + std::to_string(out_dim) + " or an element's " +
             std::to_string(per_element) + " weights";
  }
  return "";
}

namespace {

inline constexpr int64_t kNodeBlock = 4;

// out[rows[b], out_offset + n d + m] += sum_k in[rows[b], in_offset + k d + m] * matrix[k, n] for
// the `count` <= kNodeBlock rows; acc holds [count, d, N].
template <class Real>
DISTSPEC_MACE_CPU_CLONES void block_product(const Real* in, int64_t in_stride, int64_t in_offset, const Real* matrix,
                                            int64_t K, int64_t N, int64_t d, const int64_t* rows, int64_t count,
                                            Real* out, int64_t out_stride, int64_t out_offset, Real* acc) {
  std::fill(acc, acc + count * d * N, Real(0));
  for (int64_t k = 0; k < K; ++k) {
    const Real* __restrict row = matrix + k * N;
    for (int64_t b = 0; b < count; ++b)
      for (int64_t m = 0; m < d; ++m) {
        const Real v = in[rows[b] * in_stride + in_offset + k * d + m];
        Real* __restrict a = acc + (b * d + m) * N;
        for (int64_t n = 0; n < N; ++n) a[n] += v * row[n];
      }
  }
  for (int64_t b = 0; b < count; ++b) {
    Real* o = out + rows[b] * out_stride + out_offset;
    for (int64_t m = 0; m < d; ++m)
      for (int64_t n = 0; n < N; ++n) o[n * d + m] += acc[(b * d + m) * N + n];
  }
}

// Groups of up to kNodeBlock consecutive positions of one element within [begin, end).
template <class Visit>
void for_each_group(const NodesByElement& nodes, int64_t elements, int64_t begin, int64_t end, Visit&& visit) {
  for (int64_t e = 0; e < elements; ++e) {
    const int64_t first = std::max(begin, nodes.first[e]), last = std::min(end, nodes.first[e + 1]);
    for (int64_t at = first; at < last; at += kNodeBlock)
      visit(e, nodes.order.data() + at, std::min(kNodeBlock, last - at));
  }
}

}  // namespace

template <class Real>
void element_linear_cpu(const ElementLinearTables<Real>& tables, const Real* x, const NodesByElement& nodes,
                        int64_t begin, int64_t end, Real* out) {
  int64_t widest = 0;
  for (int64_t p = 0; p < tables.n_paths; ++p) widest = std::max(widest, tables.path(p).dim * tables.path(p).mul_out);
  std::vector<Real> acc(kNodeBlock * widest);
  for_each_group(nodes, tables.elements, begin, end, [&](int64_t e, const int64_t* rows, int64_t count) {
    for (int64_t p = 0; p < tables.n_paths; ++p) {
      const ElementLinearPath path = tables.path(p);
      block_product(x, tables.in_dim, path.in_offset, tables.weights + e * tables.per_element + path.weight_offset,
                    path.mul_in, path.mul_out, path.dim, rows, count, out, tables.out_dim, path.out_offset,
                    acc.data());
    }
  });
}

template <class Real>
std::vector<Real> element_linear_transposed(const ElementLinearTables<Real>& tables) {
  std::vector<Real> transposed(tables.elements * tables.per_element, Real(0));
  for (int64_t e = 0; e < tables.elements; ++e)
    for (int64_t p = 0; p < tables.n_paths; ++p) {
      const ElementLinearPath path = tables.path(p);
      const Real* w = tables.weights + e * tables.per_element + path.weight_offset;
      Real* t = transposed.data() + e * tables.per_element + path.weight_offset;
      for (int64_t u = 0; u < path.mul_in; ++u)
        for (int64_t v = 0; v < path.mul_out; ++v) t[v * path.mul_in + u] = w[u * path.mul_out + v];
    }
  return transposed;
}

template <class Real>
void element_linear_backward_cpu(const ElementLinearTables<Real>& tables, const Real* transposed,
                                 const Real* grad_out, const NodesByElement& nodes, int64_t begin, int64_t end,
                                 Real* grad_x) {
  int64_t widest = 0;
  for (int64_t p = 0; p < tables.n_paths; ++p) widest = std::max(widest, tables.path(p).dim * tables.path(p).mul_in);
  std::vector<Real> acc(kNodeBlock * widest);
  for_each_group(nodes, tables.elements, begin, end, [&](int64_t e, const int64_t* rows, int64_t count) {
    for (int64_t p = 0; p < tables.n_paths; ++p) {
      const ElementLinearPath path = tables.path(p);
      block_product(grad_out, tables.out_dim, path.out_offset,
                    transposed + e * tables.per_element + path.weight_offset, path.mul_out, path.mul_in, path.dim,
                    rows, count, grad_x, tables.in_dim, path.in_offset, acc.data());
    }
  });
}

#define DISTSPEC_MACE_ELEMENT_LINEAR(Real)                                                                           \
  template void element_linear_cpu<Real>(const ElementLinearTables<Real>&, const Real*, const NodesByElement&,      \
                                         int64_t, int64_t, Real*);                                                  \
  template std::vector<Real> element_linear_transposed<Real>(const ElementLinearTables<Real>&);                     \
  template void element_linear_backward_cpu<Real>(const ElementLinearTables<Real>&, const Real*, const Real*,       \
                                                  const NodesByElement&, int64_t, int64_t, Real*);
DISTSPEC_MACE_ELEMENT_LINEAR(float)
DISTSPEC_MACE_ELEMENT_LINEAR(double)
#undef DISTSPEC_MACE_ELEMENT_LINEAR

}  // namespace distspec::models::mace
