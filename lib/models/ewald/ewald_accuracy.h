// "accuracy" of the Ewald model: g_ewald (alpha) and kmax from a relative RMS force accuracy by
// LAMMPS' own rule for kspace_style ewald (src/KSPACE/ewald.cpp init(), setup(), rms(); accuracy
// = relative x two_charge_force, src/kspace.cpp), with the same expressions in the same order so
// that the numbers are LAMMPS' to the last bit:
//
//   g_ewald = accuracy sqrt(natoms cutoff Lx Ly Lz) / (2 q2)
//   g_ewald = (1.35 - 0.15 ln(accuracy)) / cutoff  if that is >= 1,  sqrt(-ln g_ewald) / cutoff  else
//   rms(k, L) = 2 q2 g_ewald / L sqrt(1 / (pi k natoms)) exp(-pi^2 k^2 / (g_ewald^2 L^2))
//   k_d = the smallest k >= 1 with rms(k, L_d) <= accuracy, per box edge d
//
// natoms and q2 = C sum q^2 are global sums over the model's atoms, taken at the first step of a
// run (LAMMPS: init() of each run); g_ewald is derived then, kmax then and whenever the box
// changes (LAMMPS: setup()). A given "alpha" or "kmax" is kept, as kspace_modify gewald and
// kmax/ewald keep theirs.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "models/ewald/ewald.h"
#include "models/json_fields.h"
#include "models/model.h"

namespace distspec::models::ewald {

// LAMMPS' largest kmax/ewald here (parse_params): beyond it a derived kmax is refused.
inline constexpr int kMaxKmax = 200;

// LAMMPS kspace.cpp two_charge(): qqr2e qelectron^2 / angstrom^2 of a units style (update.cpp),
// the force between two unit charges 1 Angstrom apart; accuracy = relative x this.
double two_charge_force_of(const std::string& units);

// A k-space model's (Ewald's, PME's) "accuracy", the relative RMS force accuracy of kspace_style
// `style` ACC (LAMMPS: "ewald", "pppm"), and "alpha" (kspace_modify gewald), required without an
// accuracy, into p.accuracy, two_charge_force, accuracy_absolute, alpha and derive_alpha. Returns
// the accuracy member, or null. `or_accuracy` ends the hint of a missing value that an accuracy
// would derive.
template <class Params>
const Json* parse_accuracy_and_alpha(const Json& root, const std::string& units, const std::string& style,
                                     const std::string& or_accuracy, Params& p) {
  const Json* accuracy = find_member(root, "accuracy");
  if (accuracy) {
    p.accuracy = expect_finite(*accuracy, "/parameters/accuracy");
    if (p.accuracy <= 0.0)
      fail_value("/parameters/accuracy", "expected a relative accuracy > 0, found " + accuracy->dump(),
                 "the relative RMS force accuracy of kspace_style " + style +
                     " ACC, e.g. 1e-5 (LAMMPS: \"KSpace accuracy must be > 0\")");
    p.two_charge_force = two_charge_force_of(units);
    p.accuracy_absolute = p.accuracy * p.two_charge_force;  // kspace.cpp: accuracy_relative * two_charge_force
  }
  const Json* alpha = accuracy ? find_member(root, "alpha")
                               : &require_member(root, "alpha", "/parameters",
                                                 "the splitting parameter, LAMMPS' g_ewald (kspace_modify gewald);" +
                                                     or_accuracy);
  if (alpha)
    p.alpha = expect_positive(*alpha, "/parameters/alpha");
  else
    p.derive_alpha = true;
  return accuracy;
}

// ewald.cpp rms(): the RMS k-space force error of k reciprocal cells along an edge of length prd.
double kspace_rms(int k, double prd, double natoms, double q2, double g_ewald);
// ewald.cpp init(): g_ewald for an absolute accuracy (force units), real-space cutoff and box.
double g_ewald_for(double accuracy, double natoms, double cutoff, const std::array<double, 3>& lengths, double q2);
// ewald.cpp setup(): kx, ky, kz, each the smallest with rms <= accuracy; stops counting past
// kMaxKmax (the caller refuses a value above it).
std::array<int, 3> kmax_for(double accuracy, double g_ewald, double natoms, const std::array<double, 3>& lengths,
                            double q2);
// ewald.cpp init()'s "estimated absolute RMS force accuracy" without coul/long's table term
// (the model evaluates erfc directly, as coul/long does with pair_modify table 0).
double estimated_accuracy(double g_ewald, const std::array<int, 3>& kmax, double natoms, double cutoff,
                          const std::array<double, 3>& lengths, double q2);

// The derivation state of one model instance, shared by its CPU and CUDA variants.
class AccuracyRule {
 public:
  explicit AccuracyRule(const Params& params) : active_(params.accuracy > 0.0) {}

  bool active() const { return active_; }
  void begin_run() { run_pending_ = true; }

  // Before a step, after the cell was checked (check_cell()): on the first step of a run, sums
  // the model's atoms and their C q^2 over the owned rows of every rank (dispatch.all_reduce_sum,
  // the same numbers on every rank) and derives params.alpha unless the file gave it; whenever
  // the cell or alpha changed, params.kmax unless the file gave it. `charges` are the per-row
  // charges of model_charges(). Throws model.system for an uncharged system when alpha is to be
  // derived, and for a derived kmax above kMaxKmax. Nothing without "accuracy".
  void prepare(const AtomGraph& graph, const std::vector<double>& charges, Dispatcher& dispatch, Params& params);

  // LAMMPS' lines for what the last prepare() derived at the start of a run, once (the k-vector
  // count of the cell given); "" otherwise.
  std::string take_report(const Params& params, std::size_t n_kvectors);

 private:
  bool active_ = false;
  bool run_pending_ = true;
  bool report_pending_ = false;
  double natoms_ = 0.0, q2_ = 0.0;
  std::array<double, 3> run_lengths_{};   // the cell at the start of the run
  std::array<double, 3> kmax_lengths_{};  // the cell and alpha kmax was derived for
  double kmax_alpha_ = 0.0;
};

}  // namespace distspec::models::ewald
