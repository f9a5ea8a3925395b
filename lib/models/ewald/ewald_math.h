// The per-pair and per-k-vector terms of the Ewald sums (ewald.h), written once for the CPU
// kernels (ewald_cpu.cpp) and the CUDA kernels (ewald_cuda.cu), so both evaluate the same
// expressions in the same order.
#pragma once

#include <cmath>

#if defined(__CUDACC__)
#define DISTSPEC_EWALD_HD __host__ __device__
#else
#define DISTSPEC_EWALD_HD
#endif

namespace distspec::models::ewald {

inline constexpr double kPi = 3.14159265358979323846;
inline constexpr double kSqrtPi = 1.77245385090551602729;
inline constexpr double kTwoOverSqrtPi = 1.12837916709551257390;

// LAMMPS' erfc(x) ~ t (A1 + t (A2 + t (A3 + t (A4 + t A5)))) exp(-x^2), t = 1 / (1 + P x)
// (Abramowitz & Stegun 7.1.26), and its truncated 2 / sqrt(pi), as pair_coul_long.cpp writes
// them (ewald_const.h in LAMMPS 2025, #defines in 2021).
namespace lammps_polynomial {
inline constexpr double kEwaldF = 1.12837917;
inline constexpr double kEwaldP = 0.3275911;
inline constexpr double kA1 = 0.254829592;
inline constexpr double kA2 = -0.284496736;
inline constexpr double kA3 = 1.421413741;
inline constexpr double kA4 = -1.453152027;
inline constexpr double kA5 = 1.061405429;
}  // namespace lammps_polynomial

// One real-space pair at distance^2 rsq with qiqj = C q_i q_j: the pair energy
// C q_i q_j erfc(alpha r) / r and fpair = |F| / r, as pair_coul_long.cpp computes them with
// pair_modify table 0 (the polynomial erfc), or with the exact erfc and its exact derivative.
DISTSPEC_EWALD_HD inline void real_space_pair(double rsq, double qiqj, double alpha, bool polynomial, double& energy,
                                              double& fpair) {
  const double r = sqrt(rsq);
  const double grij = alpha * r;
  const double expm2 = exp(-grij * grij);
  double erfc_value, slope;
  if (polynomial) {
    namespace p = lammps_polynomial;
    const double t = 1.0 / (1.0 + p::kEwaldP * grij);
    erfc_value = t * (p::kA1 + t * (p::kA2 + t * (p::kA3 + t * (p::kA4 + t * p::kA5)))) * expm2;
    slope = p::kEwaldF;
  } else {
    erfc_value = erfc(grij);
    slope = kTwoOverSqrtPi;
  }
  const double prefactor = qiqj / r;
  energy = prefactor * erfc_value;
  fpair = prefactor * (erfc_value + slope * grij * expm2) / rsq;
}

// The Green weight of one k-vector, G(k) = 8 pi / V exp(-k^2 / 4 alpha^2) / k^2: twice LAMMPS'
// ug (ewald.cpp coeffs()), since the sum runs over half of k-space.
DISTSPEC_EWALD_HD inline double green(double ksq, double alpha, double volume) {
  return 8.0 * kPi / volume * exp(-0.25 * ksq / (alpha * alpha)) / ksq;
}

// |det| of a 3 x 3 cell, rows a b c.
DISTSPEC_EWALD_HD inline double cell_volume(const double* h) {
  const double d = h[0] * (h[4] * h[8] - h[5] * h[7]) - h[1] * (h[3] * h[8] - h[5] * h[6]) +
                   h[2] * (h[3] * h[7] - h[4] * h[6]);
  return d < 0.0 ? -d : d;
}

// What one atom at x draws from the global Green-weighted structure factor (re, im) of one
// k-vector k: the phase term p = cos(k.x) re + sin(k.x) im (its energy is q p / 2), the field
// k (sin(k.x) re - cos(k.x) im) (its force is q times it), and p times LAMMPS' virial factor
// vg(k) = delta_ab - 2 (1/k^2 + 1/(4 alpha^2)) k_a k_b, order xx yy zz xy xz yz.
struct ReciprocalRow {
  double phase = 0.0;
  double field[3] = {0.0, 0.0, 0.0};
  double virial[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};

  DISTSPEC_EWALD_HD void add(const double* x, const double* k, double re, double im, double alpha, bool with_virial) {
    const double kr = k[0] * x[0] + k[1] * x[1] + k[2] * x[2];
    add_phase(cos(kr), sin(kr), k, re, im, alpha, with_virial);
  }

  // The same with c = cos(k.x) and s = sin(k.x) given.
  DISTSPEC_EWALD_HD void add_phase(double c, double s, const double* k, double re, double im, double alpha,
                                   bool with_virial) {
    const double p = c * re + s * im;
    const double w = s * re - c * im;
    phase += p;
    field[0] += k[0] * w;
    field[1] += k[1] * w;
    field[2] += k[2] * w;
    if (!with_virial) return;
    const double ksq = k[0] * k[0] + k[1] * k[1] + k[2] * k[2];
    const double vterm = -2.0 * (1.0 / ksq + 0.25 / (alpha * alpha));
    virial[0] += p * (1.0 + vterm * k[0] * k[0]);
    virial[1] += p * (1.0 + vterm * k[1] * k[1]);
    virial[2] += p * (1.0 + vterm * k[2] * k[2]);
    virial[3] += p * vterm * k[0] * k[1];
    virial[4] += p * vterm * k[0] * k[2];
    virial[5] += p * vterm * k[1] * k[2];
  }
};

// The energy of one atom of charge q beyond its pairs: its k-space share q p / 2, its self
// energy -alpha q^2 / sqrt(pi) and its share -pi q Q / (2 alpha^2 V) of the neutralising
// background (LAMMPS ewald.cpp eatom), times C.
DISTSPEC_EWALD_HD inline double reciprocal_energy(double coulomb, double q, double phase, double alpha,
                                                  double total_charge, double volume) {
  return coulomb * (0.5 * q * phase - alpha * q * q / kSqrtPi - 0.5 * kPi * q * total_charge / (alpha * alpha * volume));
}

}  // namespace distspec::models::ewald
