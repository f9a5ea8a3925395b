// e3nn's real spherical harmonics to l = 3 as MACE evaluates them on edge vectors
// (o3.SphericalHarmonics(normalize=True, normalization="component"), e3nn 0.4.4), with their
// gradient, written once for the CPU kernels and the CUDA kernels of lib/models/mace.
//
// Layout: Y[l*l + m] for l = 0..3, m = 0..2l (16 values), e3nn's order: Y_1 = sqrt(3) (x, y, z)
// of the unit vector, no axis permutation. "component" normalisation: |Y_l|^2 = 2l + 1.
#pragma once

#include <cmath>

#include "models/mace/host_device.h"

namespace distspec::models::mace {

inline constexpr int kMaxShL = 3;
inline constexpr int kShDim = (kMaxShL + 1) * (kMaxShL + 1);

// A value and its gradient with respect to the three coordinates: the harmonics are written once
// (sh_polynomials) and differentiated by evaluating them on these.
struct Dual3 {
  double v, d[3];
};
DISTSPEC_MACE_HD inline Dual3 operator+(Dual3 a, Dual3 b) {
  return {a.v + b.v, {a.d[0] + b.d[0], a.d[1] + b.d[1], a.d[2] + b.d[2]}};
}
DISTSPEC_MACE_HD inline Dual3 operator-(Dual3 a, Dual3 b) {
  return {a.v - b.v, {a.d[0] - b.d[0], a.d[1] - b.d[1], a.d[2] - b.d[2]}};
}
DISTSPEC_MACE_HD inline Dual3 operator*(Dual3 a, Dual3 b) {
  return {a.v * b.v,
          {a.d[0] * b.v + a.v * b.d[0], a.d[1] * b.v + a.v * b.d[1], a.d[2] * b.v + a.v * b.d[2]}};
}
DISTSPEC_MACE_HD inline Dual3 operator*(double s, Dual3 a) { return {s * a.v, {s * a.d[0], s * a.d[1], s * a.d[2]}}; }

DISTSPEC_MACE_HD inline double constant_of(double, double c) { return c; }
DISTSPEC_MACE_HD inline Dual3 constant_of(Dual3, double c) { return {c, {0.0, 0.0, 0.0}}; }

// e3nn's _spherical_harmonics(3, x, y, z) (o3/_spherical_harmonics.py), term for term, before
// the component normalisation.
template <class S>
DISTSPEC_MACE_HD inline void sh_polynomials(S x, S y, S z, S* sh) {
  const double sqrt3 = 1.7320508075688772, sqrt5 = 2.23606797749979;
  const double sqrt5_6 = 0.9128709291752769, sqrt3_8 = 0.6123724356957945;
  sh[0] = constant_of(x, 1.0);
  sh[1] = x;
  sh[2] = y;
  sh[3] = z;
  const S y2 = y * y, x2z2 = x * x + z * z;
  sh[4] = sqrt3 * (x * z);
  sh[5] = sqrt3 * (x * y);
  sh[6] = y2 - 0.5 * x2z2;
  sh[7] = sqrt3 * (y * z);
  sh[8] = (sqrt3 / 2.0) * (z * z - x * x);
  const S four_y2 = 4.0 * y2 - x2z2;
  sh[9] = sqrt5_6 * (sh[4] * z + sh[8] * x);
  sh[10] = sqrt5 * (sh[4] * y);
  sh[11] = sqrt3_8 * (four_y2 * x);
  sh[12] = 0.5 * (y * (2.0 * y2 - 3.0 * x2z2));
  sh[13] = sqrt3_8 * (z * four_y2);
  sh[14] = sqrt5 * (sh[8] * y);
  sh[15] = sqrt5_6 * (sh[8] * z - sh[4] * x);
}

DISTSPEC_MACE_HD inline double component_normalisation(int index) {
  // sqrt(2l + 1) for the l of Y[index]
  return index == 0 ? 1.0 : index < 4 ? 1.7320508075688772 : index < 9 ? 2.23606797749979 : 2.6457513110645907;
}

// Y(v / |v|) for a unit vector u = v / |v|.
DISTSPEC_MACE_HD inline void spherical_harmonics(const double u[3], double Y[kShDim]) {
  sh_polynomials(u[0], u[1], u[2], Y);
  for (int i = 0; i < kShDim; ++i) Y[i] *= component_normalisation(i);
}

// Y(v / |v|) and dY/dv, for u = v / |v| and r = |v|: the gradient on the sphere, (I - u u^T) / r
// times the polynomials' gradient, as torch.nn.functional.normalize's chain gives it.
DISTSPEC_MACE_HD inline void spherical_harmonics_with_gradient(const double u[3], double r, double Y[kShDim],
                                                              double dY_dv[kShDim][3]) {
  Dual3 sh[kShDim];
  sh_polynomials(Dual3{u[0], {1.0, 0.0, 0.0}}, Dual3{u[1], {0.0, 1.0, 0.0}}, Dual3{u[2], {0.0, 0.0, 1.0}}, sh);
  const double inv_r = 1.0 / r;
  for (int i = 0; i < kShDim; ++i) {
    const double n = component_normalisation(i);
    Y[i] = n * sh[i].v;
    const double radial = u[0] * sh[i].d[0] + u[1] * sh[i].d[1] + u[2] * sh[i].d[2];
    for (int a = 0; a < 3; ++a) dY_dv[i][a] = n * inv_r * (sh[i].d[a] - radial * u[a]);
  }
}

}  // namespace distspec::models::mace
