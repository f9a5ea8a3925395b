#include "models/pme/pme_moduli.h"

#include <cmath>

#include "models/pme/pme_math.h"

namespace distspec::models::pme {

std::vector<double> bspline_moduli(int order, int k) {
  // M_p(1) .. M_p(p-1): the spline's values at the integers.
  AxisSpline at_integers;
  at_integers.set(0.0, 1, order);
  std::vector<double> out(static_cast<std::size_t>(k));
  for (int n = 0; n < k; ++n) {
    double re = 0.0, im = 0.0;
    for (int j = 0; j + 1 < order; ++j) {
      const double arg = 2.0 * kPi * n * j / k;
      re += at_integers.weight[j + 1] * std::cos(arg);
      im += at_integers.weight[j + 1] * std::sin(arg);
    }
    const double denominator = re * re + im * im;
    out[n] = denominator < 1e-7 ? 0.0 : 1.0 / denominator;
  }
  for (int n = 0; n < k; ++n)
    if (out[n] == 0.0) out[n] = 0.5 * (out[(n - 1 + k) % k] + out[(n + 1) % k]);
  return out;
}

std::vector<double> mesh_moduli(int order, const int* mesh) {
  std::vector<double> out;
  for (int d = 0; d < 3; ++d) {
    const std::vector<double> axis = bspline_moduli(order, mesh[d]);
    out.insert(out.end(), axis.begin(), axis.end());
  }
  return out;
}

}  // namespace distspec::models::pme
