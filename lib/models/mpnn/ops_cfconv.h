// Continuous-filter convolution (SchNet's cfconv; Schütt et al., J. Chem. Phys. 148, 241722
// (2018)) as one tape op: per receiver, the sum over its edges of the sender's row times a filter
// that a dense layer makes from the edge's radial features, scaled by the edge's cutoff weight:
//   out[r] = sum_{e in segment r} h[senders[e]] * w_e,    w_e = (radial[e] W + b) * cutoff[e]
// Edges lie in CSR segments by receiver, segment r being offsets[r] .. offsets[r+1] (as in
// segment_sum). The value is that of
//   segment_sum(mul(gather_rows(h, senders), mul(linear(radial, W, b), cutoff)), offsets)
// term by term, but no edges x F block is ever formed: each edge's filter is made in an F-long
// scratch row when the edge is visited, in the forward pass and again in the adjoint (there
// only for grad h), since keeping it would cost edges x F values (hundreds of MB at a million
// edges).
//
// adjoint, with g = grad out[r], j = senders[e], z_e = radial[e] W + b, u = g * h[j]:
//   grad h[j]         += g * w_e                                (halo rows of h included)
//   grad radial[e]    += cutoff[e] (u W^T)
//   grad cutoff[e]    += u . z_e  = radial[e] . (u W^T) + b . u
// It differentiates with respect to its inputs only: weight and bias are borrowed constants, as
// for linear (forces need no parameter gradients). Offsets and senders are borrowed too; all
// must outlive the tape's backward().
//
// Shapes: h (n_rows x F), radial (E x K), cutoff (E x 1), weight (K x F), bias (1 x F),
// offsets (n_segments + 1), senders (E) -> out (n_segments x F). For h with halo rows, refresh
// them first with halo_refresh (ops_halo.h).
#pragma once

#include "models/mpnn/ops_tape.h"

namespace distspec::models::mpnn {

template <class T>
Var<T> cfconv(Tape& tape, const Var<T>& h, const Var<T>& radial, const Var<T>& cutoff, const Tensor<T>& weight,
              const Tensor<T>& bias, Span<const int> offsets, Span<const int> senders);

}  // namespace distspec::models::mpnn
