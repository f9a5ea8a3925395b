// The symmetric contraction on the CPU (symmetric_contraction.h). A block of one cache line of
// channels at a time, one element's nodes after another: the block's coefficients [terms, V]
// (26 KB for MACE-MP-0-medium's 410 terms) stay in L1 while every node of the element passes,
// and each monomial and term is one loop over the V channels that the compiler vectorizes.
#include "models/mace/symmetric_contraction.h"

#include <algorithm>
#include <vector>

#include "models/mace/cpu_clones.h"

namespace distspec::models::mace {

std::string symmetric_contraction_table_error(const int32_t* monomials, const int32_t* term_offsets,
                                              const int32_t* term_outputs, int64_t n_monomials, int64_t terms,
                                              int64_t components, int64_t outputs) {
  // Sorted factors, the first a feature: the reverse pass stops at the first constant factor.
  for (int64_t p = 0; p < n_monomials; ++p) {
    const int32_t* f = monomials + 3 * p;
    if (f[0] < 0 || f[0] >= components || f[1] < f[0] || f[2] < f[1] || f[2] > components)
      return "monomial " + std::to_string(p) + " has the factors (" + std::to_string(f[0]) + ", " +
             std::to_string(f[1]) + ", " + std::to_string(f[2]) + "); expected 0 <= i < D and i <= j <= k <= D, D = " +
             std::to_string(components) + " standing for the constant 1";
  }
  if (term_offsets[0] != 0 || term_offsets[n_monomials] != terms)
    return "term_offsets must start at 0 and end at the number of terms (" + std::to_string(terms) + ")";
  for (int64_t p = 0; p < n_monomials; ++p)
    if (term_offsets[p + 1] < term_offsets[p]) return "term_offsets decreases at monomial " + std::to_string(p);
  for (int64_t t = 0; t < terms; ++t)
    if (term_outputs[t] < 0 || term_outputs[t] >= outputs)
      return "term_outputs holds " + std::to_string(term_outputs[t]) + ", outside the " + std::to_string(outputs) +
             " output components";
  return "";
}

namespace {

// One element's coefficients of channels [c0, c0 + V) as [terms, V], zero beyond the last channel.
template <class Real>
void load_block_coefficients(const SymmetricContractionTables<Real>& tables, int64_t element, int64_t c0,
                             Real* w) {
  constexpr int64_t V = kChannelBlock<Real>;
  const int64_t C = tables.channels, width = std::min(V, C - c0);
  const Real* coefficients = tables.coefficients + element * tables.terms * C + c0;
  for (int64_t t = 0; t < tables.terms; ++t)
    for (int64_t v = 0; v < V; ++v) w[t * V + v] = v < width ? coefficients[t * C + v] : Real(0);
}

// A node's channels [c0, c0 + width) as rows [D + 1, V]: the features, then the constant 1.
template <class Real>
void load_block_factors(const Real* x_node, int64_t components, int64_t width, Real* factors) {
  constexpr int64_t V = kChannelBlock<Real>;
  for (int64_t v = 0; v < width; ++v)
    for (int64_t i = 0; i < components; ++i) factors[i * V + v] = x_node[v * components + i];
}

// Nodes of one element taken together: a term's coefficients are loaded once for all of them,
// and their sums are independent chains (one node's terms add into the same few outputs, one
// after another, and would wait on each other).
inline constexpr int64_t kNodeBlock = 4;

template <class Real>
DISTSPEC_MACE_CPU_CLONES void forward_block(const SymmetricContractionTables<Real>& tables, const Real* x,
                                           const NodesByElement& nodes, int64_t block, Real* out) {
  constexpr int64_t V = kChannelBlock<Real>, B = kNodeBlock;
  const int64_t C = tables.channels, D = tables.components, c0 = block * V, width = std::min(V, C - c0);
  const OutputLayout& layout = tables.outputs;
  const int64_t F = (D + 1) * V, A = layout.count * V;
  std::vector<Real> w(tables.terms * V), factors(B * F, Real(1)), acc(B * A);
  for (int64_t e = 0; e < tables.elements; ++e) {
    if (nodes.first[e] == nodes.first[e + 1]) continue;
    load_block_coefficients(tables, e, c0, w.data());
    for (int64_t at = nodes.first[e]; at < nodes.first[e + 1]; at += B) {
      const int64_t count = std::min(B, nodes.first[e + 1] - at);
      for (int64_t b = 0; b < count; ++b)
        load_block_factors(x + (nodes.order[at + b] * C + c0) * D, D, width, factors.data() + b * F);
      std::fill(acc.begin(), acc.end(), Real(0));
      for (int64_t p = 0; p < tables.n_monomials; ++p) {
        const int32_t i = tables.monomials[3 * p], j = tables.monomials[3 * p + 1], k = tables.monomials[3 * p + 2];
        Real mono[B][V];
        for (int64_t b = 0; b < B; ++b) {
          const Real* f = factors.data() + b * F;
          for (int64_t v = 0; v < V; ++v) mono[b][v] = f[i * V + v] * f[j * V + v] * f[k * V + v];
        }
        for (int32_t t = tables.term_offsets[p]; t < tables.term_offsets[p + 1]; ++t) {
          const int64_t o = tables.term_outputs[t] * V;
          const Real* __restrict wt = w.data() + t * V;
          for (int64_t b = 0; b < B; ++b)
            for (int64_t v = 0; v < V; ++v) acc[b * A + o + v] += wt[v] * mono[b][v];
        }
      }
      for (int64_t b = 0; b < count; ++b) {
        Real* row = out + nodes.order[at + b] * layout.row;
        for (int32_t o = 0; o < layout.count; ++o)
          for (int64_t v = 0; v < width; ++v)
            row[layout.column(o, static_cast<int32_t>(c0 + v))] = acc[b * A + o * V + v];
      }
    }
  }
}

template <class Real>
DISTSPEC_MACE_CPU_CLONES void backward_block(const SymmetricContractionTables<Real>& tables, const Real* grad_out,
                                            const Real* x, const NodesByElement& nodes, int64_t block,
                                            Real* grad_x) {
  constexpr int64_t V = kChannelBlock<Real>, B = kNodeBlock;
  const int64_t C = tables.channels, D = tables.components, c0 = block * V, width = std::min(V, C - c0);
  const OutputLayout& layout = tables.outputs;
  const int64_t F = (D + 1) * V, A = layout.count * V;
  std::vector<Real> w(tables.terms * V), factors(B * F, Real(1)), grad_factors(B * F), grad(B * A, Real(0));
  for (int64_t e = 0; e < tables.elements; ++e) {
    if (nodes.first[e] == nodes.first[e + 1]) continue;
    load_block_coefficients(tables, e, c0, w.data());
    for (int64_t at = nodes.first[e]; at < nodes.first[e + 1]; at += B) {
      const int64_t count = std::min(B, nodes.first[e + 1] - at);
      for (int64_t b = 0; b < count; ++b) {
        const int64_t n = nodes.order[at + b];
        load_block_factors(x + (n * C + c0) * D, D, width, factors.data() + b * F);
        const Real* row = grad_out + n * layout.row;
        for (int32_t o = 0; o < layout.count; ++o)
          for (int64_t v = 0; v < width; ++v)
            grad[b * A + o * V + v] = row[layout.column(o, static_cast<int32_t>(c0 + v))];
      }
      std::fill(grad_factors.begin(), grad_factors.end(), Real(0));
      // Monomials are sorted by (i, j, k): the partials of rows i and j are summed in registers
      // while they stay the same, and added to their rows when they change.
      Real gi[B][V] = {}, gj[B][V] = {};
      int32_t row_i = 0, row_j = D;
      const auto flush = [&](Real (&partial)[B][V], int32_t row) {
        for (int64_t b = 0; b < B; ++b)
          for (int64_t v = 0; v < V; ++v) {
            grad_factors[b * F + row * V + v] += partial[b][v];
            partial[b][v] = Real(0);
          }
      };
      for (int64_t p = 0; p < tables.n_monomials; ++p) {
        // d(sum grad * out) / d(monomial), then the product rule onto each factor; the
        // constant's row D is never a first factor, and the pass stops at it.
        Real gm[B][V] = {};
        for (int32_t t = tables.term_offsets[p]; t < tables.term_offsets[p + 1]; ++t) {
          const int64_t o = tables.term_outputs[t] * V;
          const Real* __restrict wt = w.data() + t * V;
          for (int64_t b = 0; b < B; ++b)
            for (int64_t v = 0; v < V; ++v) gm[b][v] += wt[v] * grad[b * A + o + v];
        }
        const int32_t i = tables.monomials[3 * p], j = tables.monomials[3 * p + 1], k = tables.monomials[3 * p + 2];
        if (i != row_i) {
          flush(gi, row_i);
          row_i = i;
        }
        if (j != row_j) {
          flush(gj, row_j);
          row_j = j;
        }
        for (int64_t b = 0; b < B; ++b) {
          const Real* __restrict f = factors.data() + b * F;
          for (int64_t v = 0; v < V; ++v) gi[b][v] += gm[b][v] * f[j * V + v] * f[k * V + v];
        }
        if (j == D) continue;
        for (int64_t b = 0; b < B; ++b) {
          const Real* __restrict f = factors.data() + b * F;
          for (int64_t v = 0; v < V; ++v) gj[b][v] += gm[b][v] * f[i * V + v] * f[k * V + v];
        }
        if (k == D) continue;
        for (int64_t b = 0; b < B; ++b) {
          const Real* __restrict f = factors.data() + b * F;
          Real* __restrict g = grad_factors.data() + b * F;
          for (int64_t v = 0; v < V; ++v) g[k * V + v] += gm[b][v] * f[i * V + v] * f[j * V + v];
        }
      }
      flush(gi, row_i);
      flush(gj, row_j);
      for (int64_t b = 0; b < count; ++b) {
        Real* g_node = grad_x + (nodes.order[at + b] * C + c0) * D;
        for (int64_t v = 0; v < width; ++v)
          for (int64_t d = 0; d < D; ++d) g_node[v * D + d] = grad_factors[b * F + d * V + v];
      }
    }
  }
}

}  // namespace

template <class Real>
void symmetric_contraction_cpu(const SymmetricContractionTables<Real>& tables, const Real* x,
                               const NodesByElement& nodes, int64_t block_begin, int64_t block_end, Real* out) {
  for (int64_t block = block_begin; block < block_end; ++block) forward_block(tables, x, nodes, block, out);
}

template <class Real>
void symmetric_contraction_backward_cpu(const SymmetricContractionTables<Real>& tables, const Real* grad_out,
                                        const Real* x, const NodesByElement& nodes, int64_t block_begin,
                                        int64_t block_end, Real* grad_x) {
  for (int64_t block = block_begin; block < block_end; ++block)
    backward_block(tables, grad_out, x, nodes, block, grad_x);
}

template void symmetric_contraction_cpu<float>(const SymmetricContractionTables<float>&, const float*,
                                               const NodesByElement&, int64_t, int64_t, float*);
template void symmetric_contraction_cpu<double>(const SymmetricContractionTables<double>&, const double*,
                                                const NodesByElement&, int64_t, int64_t, double*);
template void symmetric_contraction_backward_cpu<float>(const SymmetricContractionTables<float>&, const float*,
                                                        const float*, const NodesByElement&, int64_t, int64_t,
                                                        float*);
template void symmetric_contraction_backward_cpu<double>(const SymmetricContractionTables<double>&, const double*,
                                                         const double*, const NodesByElement&, int64_t, int64_t,
                                                         double*);

}  // namespace distspec::models::mace
