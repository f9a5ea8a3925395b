// Edge geometry from coordinates. Coordinates stay fp64 whatever the feature precision: the
// difference of two large coordinates is taken in fp64 and only the (short) edge vector is
// rounded, and the coordinate gradient (the forces) is accumulated in fp64.
#pragma once

#include "models/mpnn/ops_tape.h"

namespace distspec::models::mpnn {

// Edge e runs from row sender[e] to row receiver[e]; its vector is
//   v[e] = x[receiver[e]] - x[sender[e]]          x (n_rows x 3), v (n_edges x 3)
// adjoint: grad x[receiver[e]] += grad v[e], grad x[sender[e]] -= grad v[e]
// After backward, grad v holds dE/dv per edge, from which a virial follows (-sum v (x) dE/dv).
template <class T>
Var<T> edge_vectors(Tape& tape, const Var<double>& x, Span<const int> receiver, Span<const int> sender);

// Row lengths: r[i] = |v[i]|, v (n x cols) -> r (n x 1); rows must not be zero.
// adjoint: grad v[i] += grad r[i] v[i] / r[i]
template <class T>
Var<T> lengths(Tape& tape, const Var<T>& v);

}  // namespace distspec::models::mpnn
