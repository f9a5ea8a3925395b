// MACE's element-dependent linears (the skip_tp of its interaction blocks: e3nn's
// FullyConnectedTensorProduct of the node features with the element's one-hot) as a segmented
// matrix product: each path (an input irrep into an output irrep of the same type) multiplies a
// node's [mul_in, 2l + 1] block by its element's [mul_in, mul_out] matrix, one element's nodes at
// a time, so that each node pays for its own element's weights only, not for every element's.
//
//   out[n, out_offset + w d + m] += sum_u x[n, in_offset + u d + m] * W[e_n, weight_offset + u mul_out + w]
//
// (e3nn's mul_ir layout on both sides; d = 2l + 1.) The weights fold e3nn's path normalisation
// (tools/distspec_export/mace_kernels/element_linear.py builds them; doc/mace_kernels.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/mace/nodes_by_element.h"

namespace distspec::models::mace {

// The columns of one path, as the paths table's rows hold them.
struct ElementLinearPath {
  int64_t in_offset, mul_in, out_offset, mul_out, dim, weight_offset;
};
inline constexpr int kElementLinearPathFields = 6;

template <class Real>
struct ElementLinearTables {
  const Real* weights = nullptr;  // [elements, per_element]
  const int64_t* paths = nullptr;  // [n_paths, 6]: ElementLinearPath's fields in order
  int64_t n_paths = 0, elements = 0, per_element = 0, in_dim = 0, out_dim = 0;

  ElementLinearPath path(int64_t p) const {
    const int64_t* f = paths + kElementLinearPathFields * p;
    return {f[0], f[1], f[2], f[3], f[4], f[5]};
  }
};

// Where the host paths break the contract (a block outside the rows or the weights): "" when they
// keep it.
std::string element_linear_table_error(const int64_t* paths, int64_t n_paths, int64_t per_element, int64_t in_dim,
                                       int64_t out_dim);

// out[n, :] for the nodes at positions [begin, end) of nodes.order (zeroed by the caller: paths
// into the same output add).
template <class Real>
void element_linear_cpu(const ElementLinearTables<Real>& tables, const Real* x, const NodesByElement& nodes,
                        int64_t begin, int64_t end, Real* out);

// Each path's matrices transposed, [elements, per_element] with path p's [mul_out, mul_in] at its
// weight_offset: the backward is the forward's product with them.
template <class Real>
std::vector<Real> element_linear_transposed(const ElementLinearTables<Real>& tables);

// grad_x[n, :] = d(sum grad_out * out) / dx for the nodes at positions [begin, end) (zeroed by the
// caller); `transposed` from element_linear_transposed.
template <class Real>
void element_linear_backward_cpu(const ElementLinearTables<Real>& tables, const Real* transposed,
                                 const Real* grad_out, const NodesByElement& nodes, int64_t begin, int64_t end,
                                 Real* grad_x);

// The same on the GPU, queued on `stream` (a cudaStream_t): one thread per output (input) column
// of a node. A node whose species is out of range gets NaN rows.
template <class Real>
void element_linear_cuda(const ElementLinearTables<Real>& tables, const Real* x, const int64_t* species,
                         int64_t nodes, Real* out, void* stream);
template <class Real>
void element_linear_backward_cuda(const ElementLinearTables<Real>& tables, const Real* grad_out,
                                  const int64_t* species, int64_t nodes, Real* grad_x, void* stream);

}  // namespace distspec::models::mace
