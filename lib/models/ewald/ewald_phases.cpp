#include "models/ewald/ewald_phases.h"

#include <algorithm>
#include <cmath>

#include "models/ewald/ewald_math.h"

namespace distspec::models::ewald {

bool PhaseTable::build(const double* cell, const double* k, std::size_t n_k) {
  if (cell[1] != 0.0 || cell[2] != 0.0 || cell[3] != 0.0 || cell[5] != 0.0 || cell[6] != 0.0 || cell[7] != 0.0)
    return false;
  for (int d = 0; d < 3; ++d) {
    unit_[d] = 2.0 * kPi / cell[4 * d];
    max_[d] = 0;
  }
  index_.resize(3 * n_k);
  for (std::size_t m = 0; m < n_k; ++m)
    for (int d = 0; d < 3; ++d) {
      const double n = std::round(k[3 * m + d] / unit_[d]);
      // The model builds k as unit * n: anything further off is not on the reciprocal lattice.
      if (std::abs(k[3 * m + d] - n * unit_[d]) > 1e-12 * std::abs(k[3 * m + d]) + 1e-300 || std::abs(n) > 1e6)
        return false;
      index_[3 * m + d] = static_cast<int>(n);
      max_[d] = std::max(max_[d], static_cast<int>(std::abs(n)));
    }
  for (int d = 0; d < 3; ++d) {
    cos_[d].resize(max_[d] + 1);
    sin_[d].resize(max_[d] + 1);
  }
  return true;
}

void PhaseTable::set_atom(const double* x) {
  for (int d = 0; d < 3; ++d) {
    const double theta = unit_[d] * x[d];
    for (int n = 0; n <= max_[d]; ++n) {
      cos_[d][n] = std::cos(n * theta);
      sin_[d][n] = std::sin(n * theta);
    }
  }
}

}  // namespace distspec::models::ewald
