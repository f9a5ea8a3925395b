// cos(k.x) and sin(k.x) of every k-vector for one atom, as products of per-axis phases
// exp(i n_d 2 pi x_d / L_d) (LAMMPS ewald.cpp eik_dot_r): 6 (n_max + 1) sin/cos per atom instead
// of 2 per k-vector. This needs k-vectors on the reciprocal lattice of an orthogonal cell, as
// the Ewald model's are; build() says whether they are, and kernels evaluate others directly.
#pragma once

#include <array>
#include <cstddef>
#include <vector>

namespace distspec::models::ewald {

class PhaseTable {
 public:
  // The integer indices n of each k = 2 pi (n_x / L_x, n_y / L_y, n_z / L_z); false (and the
  // table unusable) when the cell is tilted or a k-vector is not such a vector.
  bool build(const double* cell, const double* k, std::size_t n_k);
  // The per-axis phases of an atom at x.
  void set_atom(const double* x);
  // cos and sin of k_m . x for the atom of the last set_atom().
  void phase(std::size_t m, double& c, double& s) const {
    const int* n = &index_[3 * m];
    double re = 1.0, im = 0.0;
    for (int d = 0; d < 3; ++d) {
      const int a = n[d] < 0 ? -n[d] : n[d];
      const double cd = cos_[d][a], sd = n[d] < 0 ? -sin_[d][a] : sin_[d][a];
      const double r = re * cd - im * sd;
      im = re * sd + im * cd;
      re = r;
    }
    c = re;
    s = im;
  }

 private:
  std::vector<int> index_;       // n_k x 3
  std::array<double, 3> unit_{};  // 2 pi / L_d
  std::array<int, 3> max_{};      // largest |n_d|
  std::array<std::vector<double>, 3> cos_, sin_;  // [d][|n|]
};

}  // namespace distspec::models::ewald
