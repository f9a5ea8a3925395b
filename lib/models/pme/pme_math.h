// The terms of smooth PME (pme.h), written once for the CPU kernels (pme_cpu.cpp) and the CUDA
// kernels (pme_cuda.cu): cardinal B-spline weights and their derivatives, the mesh point of a
// position, and the Green function of one mesh wave vector.
#pragma once

#include <cmath>

#if defined(__CUDACC__)
#define DISTSPEC_PME_HD __host__ __device__
#else
#define DISTSPEC_PME_HD
#endif

namespace distspec::models::pme {

inline constexpr int kMaxOrderPoints = 7;  // pme.h kMaxOrder
inline constexpr double kPi = 3.14159265358979323846;
inline constexpr double kSqrtPi = 1.77245385090551602729;

// Along one axis: u = K s (s the fractional coordinate wrapped into [0, 1)), the atom touches
// mesh points floor(u) - j, j = 0 .. p-1, with weights M_p(w + j) and derivatives dM_p/du,
// w = u - floor(u). M_1 = 1 on [0, 1); M_p(x) = (x M_{p-1}(x) + (p - x) M_{p-1}(x - 1)) / (p - 1);
// M_p'(x) = M_{p-1}(x) - M_{p-1}(x - 1).
struct AxisSpline {
  int base = 0;  // floor(u), in [0, K)
  double weight[kMaxOrderPoints];
  double slope[kMaxOrderPoints];

  DISTSPEC_PME_HD void set(double s, int k, int order) {
    s -= floor(s);  // images of the cell: the same mesh point
    double u = s * k;
    base = static_cast<int>(floor(u));
    if (base >= k) base -= k;  // s just below 1 rounded up to K
    const double w = u - floor(u);
    double m[kMaxOrderPoints];
    m[0] = 1.0;
    for (int p = 2; p <= order; ++p) {
      if (p == order)  // the derivative of M_p from M_{p-1}
        for (int j = 0; j < p; ++j) slope[j] = (j < p - 1 ? m[j] : 0.0) - (j > 0 ? m[j - 1] : 0.0);
      const double inv = 1.0 / (p - 1);
      m[p - 1] = 0.0;
      for (int j = p - 1; j >= 0; --j) {
        const double x = w + j;
        m[j] = inv * (x * m[j] + (j > 0 ? (p - x) * m[j - 1] : 0.0));
      }
    }
    if (order == 1) slope[0] = 0.0;
    for (int j = 0; j < order; ++j) weight[j] = m[j];
  }

  // The mesh index of point j, wrapped into [0, K).
  DISTSPEC_PME_HD static int index(int base, int j, int k) {
    const int g = base - j;
    return g < 0 ? g + k : g;
  }
};

// The signed frequency of mesh index n of K points: n up to K / 2 positive, the rest negative.
DISTSPEC_PME_HD inline int signed_frequency(int n, int k) { return 2 * n <= k ? n : n - k; }

// m = m1 a* + m2 b* + m3 c*: the reciprocal vector of signed frequencies (m1, m2, m3). inv_t is
// cell_inv_t = (h^-1)^T, row-major: its row d is the reciprocal vector of lattice vector d
// (a_i . a*_d = delta_id), so that an atom's fractional coordinate along d is inv_t[d] . r.
DISTSPEC_PME_HD inline void reciprocal_vector(const double* inv_t, int m1, int m2, int m3, double* m) {
  for (int c = 0; c < 3; ++c) m[c] = m1 * inv_t[c] + m2 * inv_t[3 + c] + m3 * inv_t[6 + c];
}

// exp(-pi^2 m^2 / alpha^2) / (pi V m^2) and the virial factor 2 (1 + pi^2 m^2 / alpha^2) / m^2
// of reciprocal vector m (nonzero).
struct GreenTerm {
  double value = 0.0;
  double m[3] = {0.0, 0.0, 0.0};
  double virial_factor = 0.0;

  DISTSPEC_PME_HD void set(const double* m_in, double alpha, double volume) {
    for (int c = 0; c < 3; ++c) m[c] = m_in[c];
    const double msq = m[0] * m[0] + m[1] * m[1] + m[2] * m[2];
    const double b = kPi * kPi * msq / (alpha * alpha);
    value = exp(-b) / (kPi * volume * msq);
    virial_factor = 2.0 * (1.0 + b) / msq;
  }
};

// The Green function of mesh index (n1, n2, n3) of a K1 x K2 x K3 mesh times the B-spline moduli
// B = bsp1[n1] bsp2[n2] bsp3[n3], and its energy-weighted virial factors V_ab = delta_ab -
// 2 (1 + pi^2 m^2 / alpha^2) m_a m_b / m^2, order xx yy zz xy xz yz. Where an index is the
// Nyquist point of an even K, +K/2 and -K/2 are the same mesh index but, in a triclinic cell, not
// the same vector: both are averaged, so that the kernel stays Hermitian (G(n) = G(-n)) and the
// inverse real FFT is exact. The zero vector has no term.
DISTSPEC_PME_HD inline double green_at(const double* inv_t, const int* n, const int* k, double bsp, double alpha,
                                       double volume, double* virial) {
  int options[3][2], count[3];
  for (int d = 0; d < 3; ++d) {
    const int f = signed_frequency(n[d], k[d]);
    options[d][0] = f;
    count[d] = (2 * n[d] == k[d]) ? 2 : 1;
    options[d][1] = -f;
  }
  if (n[0] == 0 && n[1] == 0 && n[2] == 0) {
    if (virial)
      for (int v = 0; v < 6; ++v) virial[v] = 0.0;
    return 0.0;
  }
  double g = 0.0, vir[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
  int terms = 0;
  for (int a = 0; a < count[0]; ++a)
    for (int b = 0; b < count[1]; ++b)
      for (int c = 0; c < count[2]; ++c) {
        double m[3];
        reciprocal_vector(inv_t, options[0][a], options[1][b], options[2][c], m);
        GreenTerm t;
        t.set(m, alpha, volume);
        g += t.value;
        if (virial) {
          vir[0] += t.value * (1.0 - t.virial_factor * m[0] * m[0]);
          vir[1] += t.value * (1.0 - t.virial_factor * m[1] * m[1]);
          vir[2] += t.value * (1.0 - t.virial_factor * m[2] * m[2]);
          vir[3] -= t.value * t.virial_factor * m[0] * m[1];
          vir[4] -= t.value * t.virial_factor * m[0] * m[2];
          vir[5] -= t.value * t.virial_factor * m[1] * m[2];
        }
        ++terms;
      }
  const double scale = bsp / terms;
  if (virial)
    for (int v = 0; v < 6; ++v) virial[v] = vir[v] * scale;
  return g * scale;
}

// |det| of a 3 x 3 matrix, row-major.
DISTSPEC_PME_HD inline double abs_det(const double* h) {
  const double d = h[0] * (h[4] * h[8] - h[5] * h[7]) - h[1] * (h[3] * h[8] - h[5] * h[6]) +
                   h[2] * (h[3] * h[7] - h[4] * h[6]);
  return d < 0.0 ? -d : d;
}

}  // namespace distspec::models::pme
