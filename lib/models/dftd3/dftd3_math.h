// The terms of DFT-D3 (dftd3.h), written once for the CPU model (dftd3_cpu.cpp) and the CUDA
// model (dftd3_cuda.cu): the coordination-number count of a pair, the damped pair energy per
// unit C6, a row's C6 reference weights and a pair's C6 from them.
#pragma once

#include <cmath>

#include "models/dftd3/dftd3_reference.h"

#if defined(__CUDACC__)
#define DISTSPEC_D3_HD __host__ __device__
#else
#define DISTSPEC_D3_HD
#endif

namespace distspec::models::dftd3 {

inline constexpr double kCountingSteepness = 16.0;  // k1 of the coordination number
inline constexpr double kWeightWidth = 4.0;         // k3 of the C6 weights
// ln(1e-99): the sum of a pair's weights below which dftd3's program takes the nearest references.
inline constexpr double kLogFallbackSum = -227.95592420641051;

// The counting function c(r) = 1 / (1 + exp(-k1 (rcov / r - 1))) and dc/dr.
struct Count {
  double value, slope;
};
DISTSPEC_D3_HD inline Count count(double rcov, double r) {
  const double e = exp(-kCountingSteepness * (rcov / r - 1.0));
  const double c = 1.0 / (1.0 + e);
  return {c, -kCountingSteepness * rcov * e * c * c / (r * r)};
}

// The pair energy per unit C6, g(r) = e / C6 (C8 = q C6 and, for rational damping, R0 = r0 are
// fixed per pair of elements), and dg/dr.
struct PairTerm {
  double g, slope;
};
DISTSPEC_D3_HD inline PairTerm pair_term(const FunctionalParameters& p, double r0, double q, double r) {
  const double r2 = r * r, r6 = r2 * r2 * r2, r8 = r6 * r2;
  if (p.damping == Damping::bj || p.damping == Damping::bjm) {
    const double R2 = r0 * r0, R6 = R2 * R2 * R2, R8 = R6 * R2;
    const double d6 = 1.0 / (r6 + R6), d8 = 1.0 / (r8 + R8);
    const double g = -(p.s6 * d6 + p.s8 * q * d8);
    const double slope = p.s6 * 6.0 * r6 / r * d6 * d6 + p.s8 * q * 8.0 * r8 / r * d8 * d8;
    return {g, slope};
  }
  // Zero damping f_n = 1 / (1 + 6 t_n), t_n = x_n^-a_n; x_n = r / (rs_n r0) (+ beta r0 for zerom).
  PairTerm sum{0.0, 0.0};
  const double rs[2] = {p.rs6, p.rs8}, a[2] = {p.alpha, p.alpha + 2.0}, rn[2] = {r6, r8}, s[2] = {p.s6, p.s8 * q};
  const int n[2] = {6, 8};
  for (int k = 0; k < 2; ++k) {
    const double x = r / (rs[k] * r0) + p.beta * r0;
    const double t = pow(x, -a[k]);
    const double f = 1.0 / (1.0 + 6.0 * t);
    const double df = 6.0 * a[k] * t * f * f / (x * rs[k] * r0);  // d f / d r
    sum.g += -s[k] * f / rn[k];
    sum.slope += -s[k] * (df / rn[k] - n[k] * f / (rn[k] * r));
  }
  return sum;
}

// A row's normalised weights w_a(CN) and dw_a/dCN over its element's n references (reference
// coordination numbers ref_cn), the ln of their unnormalised sum and the nearest reference. The
// exponents are shifted by the smallest, which cancels in the normalised weights, so that no
// weight underflows however far CN lies from the references.
struct RowWeights {
  double log_sum;
  int nearest;  // the first reference of the least distance
};
DISTSPEC_D3_HD inline RowWeights row_weights(double cn, const double* ref_cn, int n, double* w, double* dw) {
  double d2[kMaxReferences], least = HUGE_VAL;
  int nearest = 0;
  for (int a = 0; a < n; ++a) {
    const double d = cn - ref_cn[a];
    d2[a] = d * d;
    if (d2[a] < least) {
      least = d2[a];
      nearest = a;
    }
  }
  double g[kMaxReferences], dg[kMaxReferences], sum = 0.0, dsum = 0.0;
  for (int a = 0; a < n; ++a) {
    g[a] = exp(-kWeightWidth * (d2[a] - least));
    dg[a] = -2.0 * kWeightWidth * (cn - ref_cn[a]) * g[a];
    sum += g[a];
    dsum += dg[a];
  }
  for (int a = 0; a < n; ++a) {
    w[a] = g[a] / sum;
    dw[a] = (dg[a] * sum - g[a] * dsum) / (sum * sum);
  }
  return {log(sum) - kWeightWidth * least, nearest};
}

// C6 = w_i^T C w_j and dC6/dCN_i = dw_i^T C w_j, C the pair's references (kMaxReferences
// columns per row, na x nb used).
DISTSPEC_D3_HD inline double weighted_c6(const double* c6, const double* wi, const double* dwi, const double* wj, int na,
                                         int nb, double& dc6) {
  double sum = 0.0;
  dc6 = 0.0;
  for (int a = 0; a < na; ++a) {
    const double* row = c6 + a * kMaxReferences;
    double cw = 0.0;
    for (int b = 0; b < nb; ++b) cw += row[b] * wj[b];
    sum += wi[a] * cw;
    dc6 += dwi[a] * cw;
  }
  return sum;
}

}  // namespace distspec::models::dftd3
