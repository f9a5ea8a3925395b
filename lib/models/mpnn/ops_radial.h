// Functions of an edge length r (one column per edge): radial bases that expand r into smooth
// features, and the cosine cutoff that takes them smoothly to zero at the cutoff.
#pragma once

#include "models/mpnn/ops_tape.h"

namespace distspec::models::mpnn {

struct RadialBasis {
  enum class Kind { gaussian, bessel };
  Kind kind = Kind::gaussian;
  int size = 1;  // number of basis functions (columns of the output)
  // gaussian: centres mu_k spaced evenly from start to stop (k = 0 .. size-1),
  //           phi_k(r) = exp(-(r - mu_k)^2 / (2 width^2))           (SchNet's expansion)
  double start = 0.0;
  double stop = 1.0;
  double width = 1.0;
  // bessel:   phi_k(r) = sqrt(2 / cutoff) sin(k pi r / cutoff) / r,  k = 1 .. size  (DimeNet)
  double cutoff = 1.0;
};

// r (n x 1), r > 0 for bessel -> phi (n x size).
template <class T>
Var<T> radial_basis(Tape& tape, const Var<T>& r, const RadialBasis& basis);

// A switch from 1 to 0 with zero slope at both ends (C1, so forces stay continuous):
//   f(r) = 1 for r <= inner;  (cos(pi (r - inner) / (outer - inner)) + 1) / 2 between;  0 for r >= outer.
// inner = 0 gives the usual cosine cutoff (Behler 2011).
struct CosineCutoff {
  double inner = 0.0;
  double outer = 1.0;
};

// r (n x 1) -> f (n x 1).
template <class T>
Var<T> cosine_cutoff(Tape& tape, const Var<T>& r, const CosineCutoff& cutoff);

}  // namespace distspec::models::mpnn
