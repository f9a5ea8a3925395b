// MACE's symmetric contraction (mace-torch's SymmetricContraction, the product basis of
// EquivariantProductBasisBlock) as a sparse polynomial per element, with its reverse pass.
//
// For each node n of element e and each channel c, every output component o (the m of one output
// irrep) is a polynomial of degree <= 3 in the D components of the node's channel c:
//
//   out[n, c, o] = sum over monomials p, over p's terms t with output o:
//                    coefficients[e, t, c] * x[n, c, i_p] * x[n, c, j_p] * x[n, c, k_p]
//
// The coefficients fold mace's U tensors (summed over the permutations of each monomial) with
// the element's weights (tools/distspec_export/mace_kernels/symmetric_contraction.py builds them;
// doc/mace_kernels.md gives the contract). A factor index equal to D stands for the constant 1,
// so that monomials of degree 1 and 2 are (i, D, D) and (i, j, D).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/mace/nodes_by_element.h"
#include "models/mace/symmetric_contraction_layout.h"

namespace distspec::models::mace {

template <class Real>
struct SymmetricContractionTables {
  const Real* coefficients = nullptr;     // [elements, terms, channels]
  const int32_t* monomials = nullptr;     // [n_monomials, 3] factor indices in [0, components]
  const int32_t* term_offsets = nullptr;  // [n_monomials + 1]: monomial p's terms are [off[p], off[p+1])
  const int32_t* term_outputs = nullptr;  // [terms]: the output component of each term
  int64_t elements = 0, terms = 0, n_monomials = 0;
  int64_t channels = 0, components = 0;  // C and D of x [n, C, D]
  OutputLayout outputs;
};

// Where the host tables break the contract (an index out of range, offsets not increasing): ""
// when they keep it. The device kernels trust tables that the host checked when they were built.
std::string symmetric_contraction_table_error(const int32_t* monomials, const int32_t* term_offsets,
                                              const int32_t* term_outputs, int64_t n_monomials, int64_t terms,
                                              int64_t components, int64_t outputs);

// The CPU kernels work on blocks of one cache line of channels (8 in float64, 16 in float32);
// blocks [block_begin, block_end) of every node, so that threads can split the channels.
template <class Real>
inline constexpr int64_t kChannelBlock = 64 / sizeof(Real);
template <class Real>
int64_t channel_blocks(int64_t channels) {
  return (channels + kChannelBlock<Real> - 1) / kChannelBlock<Real>;
}

// out[n, :] (mace's layout, OutputLayout); species in [0, elements), checked by the caller.
template <class Real>
void symmetric_contraction_cpu(const SymmetricContractionTables<Real>& tables, const Real* x,
                               const NodesByElement& nodes, int64_t block_begin, int64_t block_end, Real* out);

// grad_x[n, c, :] = d(sum grad_out * out) / dx, recomputing the monomials.
template <class Real>
void symmetric_contraction_backward_cpu(const SymmetricContractionTables<Real>& tables, const Real* grad_out,
                                        const Real* x, const NodesByElement& nodes, int64_t block_begin,
                                        int64_t block_end, Real* grad_x);

// The same on the GPU, queued on `stream` (a cudaStream_t). A node whose species is out of
// range gets NaN rows (checking it on the host would wait for the device).
template <class Real>
void symmetric_contraction_cuda(const SymmetricContractionTables<Real>& tables, const Real* x, const int64_t* species,
                                int64_t nodes, Real* out, void* stream);
template <class Real>
void symmetric_contraction_backward_cuda(const SymmetricContractionTables<Real>& tables, const Real* grad_out,
                                         const Real* x, const int64_t* species, int64_t nodes, Real* grad_x,
                                         void* stream);

}  // namespace distspec::models::mace
