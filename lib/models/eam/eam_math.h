// pair_eam.cpp's arithmetic on its spline tables, written once for the CPU kernels (eam_tables.h,
// eam_cpu.cpp) and the CUDA kernels (eam_cuda.cu), so both evaluate the same expressions in the
// same order. A spline is rows of 7 coefficients, [0..2] of the derivative and [3..6] of the
// value, 1-based as in LAMMPS (row 0 unused): row m of a spline starts at rows + 7 m.
#pragma once

#include <cstddef>

#if defined(__CUDACC__)
#define DISTSPEC_EAM_HD __host__ __device__
#else
#define DISTSPEC_EAM_HD
#endif

namespace distspec::models::eam {

DISTSPEC_EAM_HD inline double spline_value(const double* c, double p) { return ((c[3] * p + c[4]) * p + c[5]) * p + c[6]; }

// Derivative with respect to r (or rho): the coefficients carry the 1/delta.
DISTSPEC_EAM_HD inline double spline_slope(const double* c, double p) { return (c[0] * p + c[1]) * p + c[2]; }

// pair_eam.cpp compute(): p = r rdr + 1, m = min(int(p), nr - 1), p = min(p - m, 1). Only the
// cast's argument is clamped, to [0, nr]: LAMMPS casts unclamped, which overflows for absurd r.
DISTSPEC_EAM_HD inline void r_knot(double r, double rdr, int nr, int& m, double& p) {
  p = r * rdr + 1.0;
  const double c = p < 0.0 ? 0.0 : (nr < p ? double(nr) : p);
  m = nr - 1 < static_cast<int>(c) ? nr - 1 : static_cast<int>(c);
  p -= m;
  p = 1.0 < p ? 1.0 : p;
}

// Lower-triangular pair order of pair_eam.cpp's type2z2r: (a, b) and (b, a) share a table.
DISTSPEC_EAM_HD inline std::size_t pair_index(int a, int b) {
  const auto hi = static_cast<std::size_t>(a > b ? a : b), lo = static_cast<std::size_t>(a > b ? b : a);
  return hi * (hi + 1) / 2 + lo;
}

// F(rho) of an atom whose embedding spline is `rows` (nrho + 1 rows), and F'(rho) in *fp. Beyond
// rhomax the table would be exceeded, so F continues linearly with the slope at rhomax to
// conserve energy (pair_eam.cpp compute()).
DISTSPEC_EAM_HD inline double embedding_energy(const double* rows, int nrho, double rdrho, double rhomax,
                                               double rho, double* fp) {
  double p = rho * rdrho + 1.0;
  const double c = p < 0.0 ? 0.0 : (nrho < p ? double(nrho) : p);
  const int m_clamped = nrho - 1 < static_cast<int>(c) ? nrho - 1 : static_cast<int>(c);
  const int m = m_clamped < 1 ? 1 : m_clamped;
  p -= m;
  p = 1.0 < p ? 1.0 : p;
  const double* row = rows + 7 * static_cast<std::size_t>(m);
  *fp = spline_slope(row, p);
  double f = spline_value(row, p);
  if (rho > rhomax) f += *fp * (rho - rhomax);
  return f;
}

// One pair at distance r, whose knot's fraction is p: the pair energy phi = z2r / r, and
// fpair = -psi'(r) / r with psi'(r) = F'_i rho_j'(r) + F'_j rho_i'(r) + phi'(r), where rhoip is
// the slope of the density i gives j and rhojp of the density j gives i (pair_eam.cpp compute()).
DISTSPEC_EAM_HD inline void pair_force(const double* z2r_row, double p, double r, double fp_i, double fp_j,
                                       double rhoip, double rhojp, double& phi, double& fpair) {
  const double z2p = spline_slope(z2r_row, p);
  const double z2 = spline_value(z2r_row, p);
  const double recip = 1.0 / r;
  phi = z2 * recip;
  const double phip = z2p * recip - phi * recip;
  const double psip = fp_i * rhojp + fp_j * rhoip + phip;
  fpair = -psip * recip;
}

}  // namespace distspec::models::eam
