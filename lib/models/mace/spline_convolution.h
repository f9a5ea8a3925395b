// One MACE interaction's convolution, edge work and receiver sum in one pass:
//
//   message[r, out_p + u d3 + k] = sum over edges e = (s -> r), paths p, (i, j, k):
//       R_p,u(|v_e|) * cg_p[i, j, k] * x[s, in_p + u d1 + i] * Y_j(v_e / |v_e|)
//
// mace's scatter_sum(conv_tp(node_feats[sender], sh(vectors), conv_tp_weights(edge_feats)),
// receiver) for an e3nn "uvu" TensorProduct (d1 = 2 l1 + 1, d3 = 2 l3 + 1, u the channel), with
// R from the spline table (radial_spline.h), Y from spherical_harmonics.h, and cg_p the Wigner 3j
// symbol times e3nn's path normalisation. No per-edge tensor is stored: the backward recomputes
// R, Y and the contractions per edge. Contract and table layout: doc/mace_kernels.md.
//
// Edges are grouped by receiver (receivers non-decreasing); the CPU forward and backward would
// run on any order, the CUDA forward finds each receiver's edges by binary search.
#pragma once

#include <cstdint>

#include "models/mace/radial_spline.h"
#include "models/mace/spherical_harmonics.h"

struct CUstream_st;  // cudaStream_t, without the CUDA headers in C++ files

namespace distspec::models::mace {

// One row of the path table (int64 [n_paths][kPathColumns]).
enum PathColumn : int { kL1, kL2, kL3, kInOffset, kOutOffset, kCgBegin, kCgEnd, kPathColumns };
// Largest per-channel input width the kernels accept: irreps of l <= 3, one of each parity.
inline constexpr int kMaxInPerChannel = 2 * 16;

template <class T>
struct SplineConvolution {
  int64_t n_edges = 0;
  int64_t channels = 0;  // C: the multiplicity of every input and output irrep
  int64_t in_dim = 0;    // row width of node_feats, C * D_in
  int64_t out_dim = 0;   // row width of message, C * D_mid
  int64_t n_paths = 0;
  const T* node_feats = nullptr;      // [n_rows][in_dim], e3nn layout (mul-major per irrep)
  const T* vectors = nullptr;         // [n_edges][3], mace's: positions[receiver] - positions[sender] + shift
  const int64_t* senders = nullptr;   // [n_edges]
  const int64_t* receivers = nullptr; // [n_edges], each < n_out
  RadialSpline<T> radial;             // width n_paths * channels
  const int64_t* paths = nullptr;     // [n_paths][kPathColumns]; offsets in elements of a row
  const int64_t* cg_ijk = nullptr;    // [n_cg][3]: i, j (within Y_l2), k
  const T* cg_value = nullptr;        // [n_cg]: Wigner 3j * path weight; path p owns [cg_begin, cg_end)
};

// message rows of the edges [edge_begin, edge_end) accumulated (message must start zeroed).
template <class T>
void spline_convolution_forward(const SplineConvolution<T>& conv, int64_t edge_begin, int64_t edge_end,
                                T* message);

// The adjoint over the edges [edge_begin, edge_end): grad_node_feats[s] += d message / d x[s] .
// grad_message (grad_node_feats must start zeroed), grad_vectors[e] = d / d v_e (written).
template <class T>
void spline_convolution_backward(const SplineConvolution<T>& conv, const T* grad_message, int64_t edge_begin,
                                 int64_t edge_end, T* grad_node_feats, T* grad_vectors);

// CUDA (spline_convolution_cuda.cu): one block per receiver row of [0, n_out), channels across
// threads; message [n_out][out_dim] is written whole. The backward runs the same grid, with the
// sender rows' gradient added by atomics into grad_node_feats (zeroed by the caller).
template <class T>
void spline_convolution_forward_cuda(const SplineConvolution<T>& conv, int64_t n_out, T* message,
                                     CUstream_st* stream);
template <class T>
void spline_convolution_backward_cuda(const SplineConvolution<T>& conv, int64_t n_out, const T* grad_message,
                                      T* grad_node_feats, T* grad_vectors, CUstream_st* stream);

}  // namespace distspec::models::mace
