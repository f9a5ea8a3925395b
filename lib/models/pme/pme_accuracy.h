// "accuracy" of the PME model: the splitting parameter (g_ewald) and the mesh from a relative RMS
// force accuracy by LAMMPS' own rule for kspace_style pppm (src/KSPACE/pppm.cpp init(),
// set_grid_global(), adjust_gewald(), final_accuracy(); accuracy = relative x two_charge_force,
// src/kspace.cpp), with the same expressions in the same order so that the numbers are LAMMPS':
//
//   g_ewald = accuracy sqrt(natoms cutoff xprd yprd zprd) / (2 q2), then
//             (1.35 - 0.15 ln(accuracy)) / cutoff if that is >= 1, sqrt(-ln g_ewald) / cutoff else
//   per axis: n = int(prd g_ewald) + 1, raised one at a time while the ik-differentiation error
//             estimate q2 (h g)^p sqrt(g prd sqrt(2 pi) sum_m a_pm (h g)^2m / natoms) / prd^2 of
//             the previous spacing h exceeds the accuracy (Deserno & Holm's a_pm, pppm.cpp acons)
//   triclinic: the grid densities (n / prd) through the transposed cell with |tilts|, +1
//   each n raised to the next product of 2, 3 and 5
//   g_ewald then moved by Newton-Raphson until the real-space estimate 2 q2 exp(-g^2 rc^2) /
//             sqrt(natoms rc V_box) equals the k-space one (|difference| < 1e-5)
//
// The same rule sizes this model's mesh (K1 K2 K3 along a, b, c), whose B-spline interpolation
// has errors of the same order as pppm's at the same grid and order: the tests hold it to
// kspace_style ewald at tight accuracy, and to pppm at the same accuracy. A given "alpha" or
// "mesh" is kept, as kspace_modify gewald and mesh keep theirs (a given mesh is raised to a
// product of 2, 3 and 5 too). natoms and q2 = C sum q^2 are global sums over the model's atoms,
// taken at the first step of each run (LAMMPS: init()).
#pragma once

#include <array>
#include <string>
#include <vector>

#include "models/model.h"
#include "models/pme/pme.h"

namespace distspec::models::pme {

// The box as LAMMPS' domain holds it: xprd yprd zprd and the tilts (h[0..5]: xprd yprd zprd yz
// xz xy), from a cell of rows a = (xprd, 0, 0), b = (xy, yprd, 0), c = (xz, yz, zprd).
struct Box {
  double prd[3] = {0.0, 0.0, 0.0};
  double yz = 0.0, xz = 0.0, xy = 0.0;
  bool triclinic() const { return declared_triclinic || yz != 0.0 || xz != 0.0 || xy != 0.0; }
  bool declared_triclinic = false;  // LAMMPS domain->triclinic (AtomGraph::triclinic)
  static Box of(const std::array<double, 9>& cell, bool declared_triclinic);
};

// What LAMMPS' pppm would choose for one system.
struct Choice {
  double alpha = 0.0;
  std::array<int, 3> mesh{};
  double estimated_accuracy = 0.0;  // absolute, force units (pppm.cpp final_accuracy(), no table term)
};

// pppm.cpp's rule: alpha (unless given, > 0) and the mesh (unless given, all > 0) for an absolute
// accuracy, natoms atoms of q2 = C sum q^2, real-space cutoff `cutoff`, B-spline `order`. Throws
// model.system where LAMMPS stops ("Must use kspace_modify gewald for uncharged system", "Could
// not compute g_ewald", "PPPM grid is too large").
Choice pppm_choice(double accuracy, double natoms, double q2, double cutoff, const Box& box, int order,
                   double given_alpha, const std::array<int, 3>& given_mesh);

// pppm.cpp factorable(): n a product of 2, 3 and 5 only.
bool factorable(int n);

// The derivation state of one model instance, shared by its CPU and CUDA variants.
class SystemRule {
 public:
  // Before a step: on the first step of a run, sums the model's atoms, their charges and C q^2
  // over the owned rows of every rank (dispatch.all_reduce_sum, the same numbers on every rank),
  // and, with "accuracy", derives what the file leaves out (params.alpha, params.mesh). Throws
  // model.system for an uncharged system when alpha is to be derived, and for a given mesh
  // coarser than the accuracy asks (/parameters/mesh). `charges` are the per-row charges.
  void prepare(const AtomGraph& graph, const std::vector<double>& charges, Dispatcher& dispatch, Params& params);

  void begin_run() { run_pending_ = true; }
  double natoms() const { return natoms_; }

  // LAMMPS pppm's lines for what the last run start derived, once; "" otherwise.
  std::string take_report(const Params& params);

 private:
  bool run_pending_ = true;
  bool report_pending_ = false;
  bool charge_reported_ = false;  // the net-charge warning, once per model
  double natoms_ = 0.0, q2_ = 0.0, qsum_ = 0.0;
  double estimate_ = 0.0;
};

}  // namespace distspec::models::pme
