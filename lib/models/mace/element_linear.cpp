// MACE's element-dependent linears on the CPU (element_linear.h): up to four nodes of one element
// at a time, path by path, as a small matrix product: the group's (node, component) rows gathered
// into a panel, then register tiles of 4 rows by 16 columns summed over the inner
// index, which the compiler vectorizes. The backward is the same product with the transposed
// matrices.
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
// A register tile of the product: kRowTile (node, component) rows by 16 columns.
inline constexpr int64_t kRowTile = 4;  // the four named rows of block_product

// out[rows[b], out_offset + n d + m] += sum_k in[rows[b], in_offset + k d + m] * matrix[k, n] for
// the `count` <= kNodeBlock rows. The inputs are gathered into a [R, K] panel (`panel`, R = count d
// rounded up to kRowTile, zero-padded), then each tile of kRowTile rows by 16 columns sums in
// registers over k, reading the matrix row by row.
template <class Real>
DISTSPEC_MACE_CPU_CLONES void block_product(const Real* in, int64_t in_stride, int64_t in_offset, const Real* matrix,
                                            int64_t K, int64_t N, int64_t d, const int64_t* rows, int64_t count,
                                            Real* out, int64_t out_stride, int64_t out_offset, Real* panel) {
  constexpr int64_t NT = 16;  // columns: one AVX-512 register of fp32, two of fp64 (measured best of 8, 16, 32)
  const int64_t R = count * d, padded = (R + kRowTile - 1) / kRowTile * kRowTile;
  for (int64_t b = 0; b < count; ++b)
    for (int64_t m = 0; m < d; ++m) {
      const Real* x = in + rows[b] * in_stride + in_offset + m;
      Real* a = panel + (b * d + m) * K;
      for (int64_t k = 0; k < K; ++k) a[k] = x[k * d];
    }
  std::fill(panel + R * K, panel + padded * K, Real(0));
  for (int64_t r0 = 0; r0 < padded; r0 += kRowTile) {
    const Real* a = panel + r0 * K;
    for (int64_t n0 = 0; n0 < N; n0 += NT) {
      // Four named rows, one loop over the columns: the form the vectorizer keeps in registers.
      Real acc[kRowTile][NT] = {};
      Real *__restrict c0 = acc[0], *__restrict c1 = acc[1], *__restrict c2 = acc[2], *__restrict c3 = acc[3];
      const Real *a0 = a, *a1 = a + K, *a2 = a + 2 * K, *a3 = a + 3 * K;
      const int64_t width = std::min(NT, N - n0);
      if (width == NT) {
        for (int64_t k = 0; k < K; ++k) {
          const Real* __restrict w = matrix + k * N + n0;
          for (int64_t t = 0; t < NT; ++t) {
            c0[t] += a0[k] * w[t];
            c1[t] += a1[k] * w[t];
            c2[t] += a2[k] * w[t];
            c3[t] += a3[k] * w[t];
          }
        }
      } else {
        for (int64_t k = 0; k < K; ++k) {
          const Real* w = matrix + k * N + n0;
          for (int64_t t = 0; t < width; ++t) {
            c0[t] += a0[k] * w[t];
            c1[t] += a1[k] * w[t];
            c2[t] += a2[k] * w[t];
            c3[t] += a3[k] * w[t];
          }
        }
      }
      for (int64_t r = 0; r < kRowTile && r0 + r < R; ++r) {
        const int64_t b = (r0 + r) / d, m = (r0 + r) % d;
        Real* o = out + rows[b] * out_stride + out_offset + m;
        for (int64_t t = 0; t < width; ++t) o[(n0 + t) * d] += acc[r][t];
      }
    }
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

// The largest panel a path needs: kNodeBlock nodes' components (rounded up to the row tile) by the
// product's inner size (mul_in forward, mul_out backward).
template <class Real>
int64_t panel_size(const ElementLinearTables<Real>& tables, bool backward) {
  int64_t size = 0;
  for (int64_t p = 0; p < tables.n_paths; ++p) {
    const ElementLinearPath path = tables.path(p);
    const int64_t rows = (kNodeBlock * path.dim + kRowTile - 1) / kRowTile * kRowTile;
    size = std::max(size, rows * (backward ? path.mul_out : path.mul_in));
  }
  return size;
}

}  // namespace

template <class Real>
void element_linear_cpu(const ElementLinearTables<Real>& tables, const Real* x, const NodesByElement& nodes,
                        int64_t begin, int64_t end, Real* out) {
  std::vector<Real> panel(panel_size(tables, false));
  for_each_group(nodes, tables.elements, begin, end, [&](int64_t e, const int64_t* rows, int64_t count) {
    for (int64_t p = 0; p < tables.n_paths; ++p) {
      const ElementLinearPath path = tables.path(p);
      block_product(x, tables.in_dim, path.in_offset, tables.weights + e * tables.per_element + path.weight_offset,
                    path.mul_in, path.mul_out, path.dim, rows, count, out, tables.out_dim, path.out_offset,
                    panel.data());
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
  std::vector<Real> panel(panel_size(tables, true));
  for_each_group(nodes, tables.elements, begin, end, [&](int64_t e, const int64_t* rows, int64_t count) {
    for (int64_t p = 0; p < tables.n_paths; ++p) {
      const ElementLinearPath path = tables.path(p);
      block_product(grad_out, tables.out_dim, path.out_offset,
                    transposed + e * tables.per_element + path.weight_offset, path.mul_out, path.mul_in, path.dim,
                    rows, count, grad_x, tables.in_dim, path.in_offset, panel.data());
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
