// MACE's radial chain r -> weights[path, channel] (Bessel basis, cutoff envelope, radial MLP) as a
// table of cubic Hermite segments on a uniform grid of r in [0, r_max], evaluated by the CPU and
// CUDA convolution kernels (spline_convolution.h). The exporter tabulates the chain's values and
// exact derivatives at the knots (tools/distspec_export/mace_kernels/convolution.py).
//
// Table layout, [n_knots][2][width] in the input dtype: [k][0][c] the value of column c at
// r = k h, [k][1][c] its derivative d/dr; h = r_max / (n_knots - 1); a column is path * channels
// + channel, as e3nn's flattened tensor-product weights. The radius, the segment and the Hermite
// basis are computed in double; the columns are combined in the table's dtype.
#pragma once

#include <cstdint>

#include "models/mace/host_device.h"

namespace distspec::models::mace {

// Where r falls in the table, and the Hermite basis there: value = sum_q value_basis[q] * c_q and
// d value / dr = sum_q slope_basis[q] * c_q over c = (y_k, y'_k, y_k+1, y'_k+1).
struct SplinePoint {
  int64_t knot = 0;
  double value_basis[4] = {0.0, 0.0, 0.0, 0.0};
  double slope_basis[4] = {0.0, 0.0, 0.0, 0.0};
};

template <class T>
struct RadialSpline {
  const T* table = nullptr;
  int64_t n_knots = 0;  // >= 2
  int64_t width = 0;    // columns: paths * channels
  double r_max = 0.0;

  // False where the weights vanish: r >= r_max (the cutoff envelope is zero there) and r = 0 (no
  // direction; mace's own evaluation gives NaN).
  DISTSPEC_MACE_HD bool inside(double r) const { return r > 0.0 && r < r_max; }

  DISTSPEC_MACE_HD SplinePoint locate(double r) const {
    const double h = r_max / static_cast<double>(n_knots - 1);
    const double s = r / h;
    int64_t k = static_cast<int64_t>(s);
    if (k > n_knots - 2) k = n_knots - 2;
    const double t = s - static_cast<double>(k), t2 = t * t, t3 = t2 * t;
    SplinePoint p;
    p.knot = k;
    p.value_basis[0] = 2.0 * t3 - 3.0 * t2 + 1.0;
    p.value_basis[1] = h * (t3 - 2.0 * t2 + t);
    p.value_basis[2] = -2.0 * t3 + 3.0 * t2;
    p.value_basis[3] = h * (t3 - t2);
    p.slope_basis[0] = (6.0 * t2 - 6.0 * t) / h;
    p.slope_basis[1] = 3.0 * t2 - 4.0 * t + 1.0;
    p.slope_basis[2] = (6.0 * t - 6.0 * t2) / h;
    p.slope_basis[3] = 3.0 * t2 - 2.0 * t;
    return p;
  }

  // Column c's value (slope = false) or derivative d/dr (slope = true) at p.
  DISTSPEC_MACE_HD T evaluate(const SplinePoint& p, int64_t column, bool slope) const {
    const double* basis = slope ? p.slope_basis : p.value_basis;
    const T b[4] = {static_cast<T>(basis[0]), static_cast<T>(basis[1]), static_cast<T>(basis[2]),
                    static_cast<T>(basis[3])};
    return combine(b, p.knot, column);
  }

  // The same with the basis already in T, as the CUDA kernels keep it once per edge for all
  // their channel threads.
  DISTSPEC_MACE_HD T combine(const T basis[4], int64_t knot, int64_t column) const {
    const T* lo = table + knot * 2 * width + column;
    const T* hi = lo + 2 * width;
    return basis[0] * lo[0] + basis[1] * lo[width] + basis[2] * hi[0] + basis[3] * hi[width];
  }
};

}  // namespace distspec::models::mace
