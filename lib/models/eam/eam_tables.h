// EAM tables: readers for LAMMPS' DYNAMO potential files (funcfl *.eam, setfl *.eam.alloy,
// Finnis-Sinclair *.eam.fs) and the interpolation tables pair_eam.cpp builds from them
// (file2array, array2spline) and reads in compute(). Every step mirrors pair_eam.cpp,
// pair_eam_alloy.cpp and pair_eam_fs.cpp of LAMMPS 29 Sep 2021, so energies and forces agree with
// `pair_style eam`, `eam/alloy` and `eam/fs` to rounding.
#pragma once

#include <algorithm>
#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "models/eam/eam_math.h"

namespace distspec::models::eam {

// One element's DYNAMO funcfl file. Tables hold the file's values in order: frho[k] = F(k drho),
// zr[k] = Z(k dr) (effective charge, sqrt(Hartree Bohr)), rhor[k] = rho(k dr).
struct Funcfl {
  std::string header;  // the first line (DATE, UNITS, CITATION, comment)
  std::string units;   // the word after "UNITS:" in the header, or empty
  int atomic_number = 0;
  double mass = 0.0;
  int nrho = 0;
  double drho = 0.0;
  int nr = 0;
  double dr = 0.0;
  double cut = 0.0;
  std::vector<double> frho, zr, rhor;
  bool trailing_values = false;  // values after the last table (LAMMPS ignores them)
};

// A DYNAMO setfl file: several elements on one grid. z2r holds r phi(r) for element pairs
// i >= j at index i (i + 1) / 2 + j (Tables::pair_index), the order the file lists them in.
// In a Finnis-Sinclair file (eam/fs) the density an atom contributes depends on the element of
// the atom it lands on: element i's block lists rho_ij for every j, and rhor[i * n + j] holds it;
// a plain setfl file has one rho_i per element (rhor[i]).
struct Setfl {
  bool finnis_sinclair = false;
  std::string header;
  std::string units;
  std::vector<std::string> elements;
  std::vector<int> atomic_numbers;
  std::vector<double> masses;
  int nrho = 0;
  double drho = 0.0;
  int nr = 0;
  double dr = 0.0;
  double cut = 0.0;
  std::vector<std::vector<double>> frho, rhor, z2r;
  bool trailing_values = false;  // values after the last table (LAMMPS ignores them)
};

// Parse file text as LAMMPS' PotentialFileReader does (values may wrap across lines, '#'
// starts a comment, extra values on a table's last line are ignored). `file` names the file in
// errors (distspec::Error, id model.table, message with the line number).
Funcfl parse_funcfl(std::string_view text, const std::string& file);
Setfl parse_setfl(std::string_view text, const std::string& file);
Setfl parse_fs(std::string_view text, const std::string& file);

// pair_eam.cpp interpolate(): per grid interval m, 7 cubic coefficients, [0..2] of the
// derivative and [3..6] of the value. Rows are 1-based as in LAMMPS (row 0 unused) so the
// evaluation code below reads like pair_eam.cpp's compute(); the rows are contiguous, as the
// arithmetic of eam_math.h reads them.
using Spline = std::vector<std::array<double, 7>>;
Spline interpolate(const std::vector<double>& values, double delta);

// Where r (or rho) falls on a grid: interval m (1-based) and the fraction p within it.
struct Knot {
  int m = 1;
  double p = 0.0;
};

inline double spline_value(const Spline& s, Knot k) { return spline_value(s[static_cast<std::size_t>(k.m)].data(), k.p); }
inline double spline_slope(const Spline& s, Knot k) { return spline_slope(s[static_cast<std::size_t>(k.m)].data(), k.p); }

// The tables pair_eam.cpp's compute() reads, indexed by the model's species (elements order).
struct Tables {
  int n_species = 0;
  int nrho = 0;
  int nr = 0;
  double drho = 0.0;
  double dr = 0.0;
  double rdrho = 0.0;  // 1 / drho: LAMMPS multiplies, and so must we to round alike
  double rdr = 0.0;    // 1 / dr
  double rhomax = 0.0;
  double cutoff = 0.0;
  std::vector<double> masses;  // of species a, from the file (pair_eam sets the types' masses from them)
  std::vector<Spline> frho;  // F of species a
  std::vector<Spline> rhor;  // densities, picked by density_table(from, at)
  std::vector<int> rhor_of;  // n_species^2: pair_eam.cpp's type2rhor, [from * n_species + at]
  std::vector<Spline> z2r;   // r phi(r) of the pair (a, b), at pair_index(a, b)

  // The density an atom of species `from` contributes at an atom of species `at`: pair_eam.cpp's
  // rhor_spline[type2rhor[from][at]] (one table per `from`, except in eam/fs files).
  const Spline& density_table(int from, int at) const {
    return rhor[static_cast<std::size_t>(rhor_of[static_cast<std::size_t>(from * n_species + at)])];
  }

  static std::size_t pair_index(int a, int b) { return eam::pair_index(a, b); }

  Knot r_knot(double r) const {
    Knot k;
    eam::r_knot(r, rdr, nr, k.m, k.p);
    return k;
  }

  // The same for 0 <= r < cutoff, where p is finite and small: pair_eam.cpp's arithmetic as it
  // is, without the clamp (the pair kernels' hot path; their rsq < cutsq test rejects NaN).
  Knot r_knot_within_cutoff(double r) const {
    double p = r * rdr + 1.0;
    const int m = std::min(static_cast<int>(p), nr - 1);
    p -= m;
    return {m, std::min(p, 1.0)};
  }

  // F(rho) of species a, and F'(rho) in *fp (eam_math.h).
  double embedding(int a, double rho, double* fp) const {
    return embedding_energy(frho[static_cast<std::size_t>(a)].front().data(), nrho, rdrho, rhomax, rho, fp);
  }
};

// pair_eam.cpp file2array() for funcfl files, species k from files[k]: every file's F, rho and
// Z resampled onto one grid (the coarsest spacings, the longest ranges) by 4-point Lagrange
// interpolation, and r phi = 27.2 * 0.529 * Z_a Z_b (Hartree -> eV, Bohr -> Angstrom).
Tables tables_from_funcfl(const std::vector<Funcfl>& files);

// pair_eam_alloy.cpp and pair_eam_fs.cpp file2array(): the file's tables as they are, picked
// for the model's elements (each must be in the file: distspec::Error naming both lists
// otherwise).
Tables tables_from_setfl(const Setfl& file, const std::vector<std::string>& elements, const std::string& path);

}  // namespace distspec::models::eam
