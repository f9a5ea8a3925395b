// The Euler exponential spline moduli of smooth PME (Essmann et al. 1995, eq. 4.4), per mesh
// axis: |b(n)|^2 = 1 / |sum_{k=0}^{p-2} M_p(k+1) exp(2 pi i n k / K)|^2. For odd orders the sum
// vanishes at the Nyquist point of an even K; there, as GROMACS does, the modulus is the mean of
// its neighbours'.
#pragma once

#include <vector>

namespace distspec::models::pme {

std::vector<double> bspline_moduli(int order, int k);

// bsp1 bsp2 bsp3 of a mesh, flattened: K1 values, then K2, then K3.
std::vector<double> mesh_moduli(int order, const int* mesh);

}  // namespace distspec::models::pme
