#include "models/pme/pme_accuracy.h"

#include <cmath>
#include <cstdio>

#include "distspec/error.h"
#include "models/ewald/ewald_accuracy.h"
#include "models/model_error.h"

namespace distspec::models::pme {
namespace {

constexpr double kTwoPi = 6.28318530717958647692;  // LAMMPS MY_2PI

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.8g", v);
  return text;
}

[[noreturn]] void refuse(const std::string& pointer, const std::string& message, const std::string& hint) {
  throw Error(model_error_id::system, pointer, "pme: " + message, hint);
}

// pppm.cpp's constructor: Deserno & Holm's coefficients of the ik-differentiation error, by order.
double acons(int order, int m) {
  static const double table[8][7] = {
      {0, 0, 0, 0, 0, 0, 0},
      {2.0 / 3.0, 0, 0, 0, 0, 0, 0},
      {1.0 / 50.0, 5.0 / 294.0, 0, 0, 0, 0, 0},
      {1.0 / 588.0, 7.0 / 1440.0, 21.0 / 3872.0, 0, 0, 0, 0},
      {1.0 / 4320.0, 3.0 / 1936.0, 7601.0 / 2271360.0, 143.0 / 28800.0, 0, 0, 0},
      {1.0 / 23232.0, 7601.0 / 13628160.0, 143.0 / 69120.0, 517231.0 / 106536960.0, 106640677.0 / 11737571328.0, 0,
       0},
      {691.0 / 68140800.0, 13.0 / 57600.0, 47021.0 / 35512320.0, 9694607.0 / 2095994880.0,
       733191589.0 / 59609088000.0, 326190917.0 / 11700633600.0, 0},
      {1.0 / 345600.0, 3617.0 / 35512320.0, 745739.0 / 838397952.0, 56399353.0 / 12773376000.0,
       25091609.0 / 1560084480.0, 1755948832039.0 / 36229939200000.0, 4887769399.0 / 37838389248.0}};
  return table[order][m];
}

// pppm.cpp's state while it chooses: g_ewald, the spacings and the system.
struct Pppm {
  double accuracy, natoms, q2, cutoff;
  Box box;
  int order;
  double g_ewald = 0.0;
  double h[3] = {0.0, 0.0, 0.0};
  int n[3] = {0, 0, 0};

  // estimate_ik_error()
  double ik_error(double spacing, double prd) const {
    double sum = 0.0;
    if (natoms == 0) return 0.0;
    for (int m = 0; m < order; m++) sum += acons(order, m) * std::pow(spacing * g_ewald, 2.0 * m);
    return q2 * std::pow(spacing * g_ewald, static_cast<double>(order)) *
           std::sqrt(g_ewald * prd * std::sqrt(kTwoPi) * sum / natoms) / (prd * prd);
  }
  // compute_df_kspace(), ik differentiation
  double df_kspace() const {
    const double lprx = ik_error(h[0], box.prd[0]);
    const double lpry = ik_error(h[1], box.prd[1]);
    const double lprz = ik_error(h[2], box.prd[2]);
    return std::sqrt(lprx * lprx + lpry * lpry + lprz * lprz) / std::sqrt(3.0);
  }
  // newton_raphson_f()
  double balance() const {
    const double df_rspace = 2.0 * q2 * std::exp(-g_ewald * g_ewald * cutoff * cutoff) /
                             std::sqrt(natoms * cutoff * box.prd[0] * box.prd[1] * box.prd[2]);
    return df_rspace - df_kspace();
  }
  // derivf()
  double balance_slope() {
    const double step = 0.000001;
    const double f1 = balance();
    const double old = g_ewald;
    g_ewald += step;
    const double f2 = balance();
    g_ewald = old;
    return (f2 - f1) / step;
  }
  // adjust_gewald()
  void adjust() {
    for (int i = 0; i < 10000; i++) {
      const double dx = balance() / balance_slope();
      g_ewald -= dx;
      if (std::fabs(balance()) < 0.00001) return;
    }
    refuse("/parameters/accuracy", "could not balance alpha between real and k-space (LAMMPS: \"Could not compute "
                                   "g_ewald\")",
           "give \"alpha\" under \"parameters\" (kspace_modify gewald)");
  }
  // final_accuracy(), without coul/long's table term (the real-space kernel evaluates erfc)
  double final_accuracy() const {
    const double atoms = natoms == 0 ? 1.0 : natoms;
    const double q2_over_sqrt = q2 / std::sqrt(atoms * cutoff * box.prd[0] * box.prd[1] * box.prd[2]);
    const double df_rspace = 2.0 * q2_over_sqrt * std::exp(-g_ewald * g_ewald * cutoff * cutoff);
    const double df_k = df_kspace();
    return std::sqrt(df_k * df_k + df_rspace * df_rspace);
  }
  // The ik-error loop of one axis.
  void grid_axis(int d) {
    const double prd = box.prd[d];
    double err = ik_error(h[d], prd);
    while (err > accuracy) {
      err = ik_error(h[d], prd);
      n[d]++;
      h[d] = prd / n[d];
    }
  }
};

}  // namespace

Box Box::of(const std::array<double, 9>& cell, bool declared_triclinic) {
  Box b;
  b.prd[0] = cell[0];
  b.prd[1] = cell[4];
  b.prd[2] = cell[8];
  b.xy = cell[3];
  b.xz = cell[6];
  b.yz = cell[7];
  b.declared_triclinic = declared_triclinic;
  return b;
}

bool factorable(int n) {
  static const int factors[3] = {2, 3, 5};
  while (n > 1) {
    int i = 0;
    for (; i < 3; i++)
      if (n % factors[i] == 0) {
        n /= factors[i];
        break;
      }
    if (i == 3) return false;
  }
  return true;
}

Choice pppm_choice(double accuracy, double natoms, double q2, double cutoff, const Box& box, int order,
                   double given_alpha, const std::array<int, 3>& given_mesh) {
  Pppm p{accuracy, natoms, q2, cutoff, box, order};
  const double* prd = box.prd;
  // set_grid_global(): the first g_ewald
  if (given_alpha > 0.0) {
    p.g_ewald = given_alpha;
  } else {
    if (q2 == 0.0)
      refuse("/parameters/accuracy",
             "the system has no charge (sum of q^2 over the model's atoms is 0), so \"accuracy\" cannot set alpha",
             "give \"alpha\" under \"parameters\" (LAMMPS: \"Must use kspace_modify gewald for uncharged system\")");
    p.g_ewald = accuracy * std::sqrt(natoms * cutoff * prd[0] * prd[1] * prd[2]) / (2.0 * q2);
    if (p.g_ewald >= 1.0)
      p.g_ewald = (1.35 - 0.15 * std::log(accuracy)) / cutoff;
    else
      p.g_ewald = std::sqrt(-std::log(p.g_ewald)) / cutoff;
  }
  // the grid, ik differentiation's estimate per axis
  if (given_mesh[0] > 0) {
    for (int d = 0; d < 3; ++d) p.n[d] = given_mesh[d];
  } else {
    for (int d = 0; d < 3; ++d) {
      p.h[d] = 1.0 / p.g_ewald;
      p.n[d] = static_cast<int>(prd[d] / p.h[d]) + 1;
    }
    for (int d = 0; d < 3; ++d) p.grid_axis(d);
    if (box.triclinic()) {
      // lamda2xT() of the densities, with |tilts|
      const double t0 = p.n[0] / prd[0], t1 = p.n[1] / prd[1], t2 = p.n[2] / prd[2];
      const double v0 = prd[0] * t0;
      const double v1 = std::fabs(box.xy) * t0 + prd[1] * t1;
      const double v2 = std::fabs(box.xz) * t0 + std::fabs(box.yz) * t1 + prd[2] * t2;
      p.n[0] = static_cast<int>(v0) + 1;
      p.n[1] = static_cast<int>(v1) + 1;
      p.n[2] = static_cast<int>(v2) + 1;
    }
  }
  for (int d = 0; d < 3; ++d)
    while (!factorable(p.n[d])) p.n[d]++;
  if (!box.triclinic()) {
    for (int d = 0; d < 3; ++d) p.h[d] = prd[d] / p.n[d];
  } else {
    // x2lamdaT() of the grid counts, with domain->h_inv
    const double hinv0 = 1.0 / prd[0], hinv1 = 1.0 / prd[1], hinv2 = 1.0 / prd[2];
    const double hinv3 = -box.yz / (prd[1] * prd[2]);
    const double hinv4 = (box.yz * box.xy - prd[1] * box.xz) / (prd[0] * prd[1] * prd[2]);
    const double hinv5 = -box.xy / (prd[0] * prd[1]);
    const double l0 = hinv0 * p.n[0];
    const double l1 = hinv5 * p.n[0] + hinv1 * p.n[1];
    const double l2 = hinv4 * p.n[0] + hinv3 * p.n[1] + hinv2 * p.n[2];
    p.h[0] = 1.0 / l0;
    p.h[1] = 1.0 / l1;
    p.h[2] = 1.0 / l2;
  }
  for (int d = 0; d < 3; ++d)
    if (p.n[d] >= kMaxMesh)
      refuse(given_mesh[0] > 0 ? "/parameters/mesh" : "/parameters/accuracy",
             "the mesh would need " + std::to_string(p.n[d]) + " points along " + "abc"[d] + " (at most " +
                 std::to_string(kMaxMesh - 1) + "; LAMMPS: \"PPPM grid is too large\")",
             "ask for a larger accuracy, or a larger cutoff (a smaller alpha)");
  if (given_alpha <= 0.0) p.adjust();
  return Choice{p.g_ewald, {p.n[0], p.n[1], p.n[2]}, p.final_accuracy()};
}

void SystemRule::prepare(const AtomGraph& graph, const std::vector<double>& charges, Dispatcher& dispatch,
                         Params& params) {
  if (!run_pending_) return;
  // kspace.cpp qsum_qsq(): each rank sums its own atoms, an all-reduce sums the ranks.
  double sums[3] = {0.0, 0.0, 0.0};
  for (std::size_t i = 0; i < graph.n_owned; ++i) {
    if (graph.species && graph.species[i] < 0) continue;  // not this model's atom
    sums[0] += 1.0;
    sums[1] += charges[i];
    sums[2] += charges[i] * charges[i];
  }
  dispatch.all_reduce_sum(sums, 3);
  natoms_ = sums[0];
  qsum_ = sums[1];
  q2_ = sums[2] * params.coulomb_constant;
  run_pending_ = false;
  if (params.accuracy <= 0.0) return;
  const Box box = Box::of(graph.cell, graph.triclinic);
  const std::array<int, 3> given_mesh = params.derive_mesh ? std::array<int, 3>{} : params.mesh;
  const double given_alpha = params.derive_alpha ? 0.0 : params.alpha;
  const Choice choice = pppm_choice(params.accuracy_absolute, natoms_, q2_, params.cutoff, box, params.order,
                                    given_alpha, given_mesh);
  if (!params.derive_mesh && choice.estimated_accuracy > params.accuracy_absolute) {
    // A mesh the file gives that cannot reach the accuracy it also gives: say which would.
    const Choice derived =
        pppm_choice(params.accuracy_absolute, natoms_, q2_, params.cutoff, box, params.order, given_alpha, {});
    refuse("/parameters/mesh",
           "mesh " + std::to_string(choice.mesh[0]) + " " + std::to_string(choice.mesh[1]) + " " +
               std::to_string(choice.mesh[2]) + " is too coarse for accuracy " + number(params.accuracy) +
               ": its estimated relative force accuracy is " +
               number(choice.estimated_accuracy / params.two_charge_force),
           "give a finer mesh (LAMMPS' rule chooses " + std::to_string(derived.mesh[0]) + " " +
               std::to_string(derived.mesh[1]) + " " + std::to_string(derived.mesh[2]) +
               " at order " + std::to_string(params.order) + "), a higher \"order\", or leave \"mesh\" out");
  }
  params.alpha = choice.alpha;
  params.mesh = choice.mesh;
  params.real_space.alpha = choice.alpha;
  estimate_ = choice.estimated_accuracy;
  report_pending_ = true;
}

std::string SystemRule::take_report(const Params& params) {
  std::string text;
  if (std::fabs(qsum_) > ewald::kNeutralityTolerance && !charge_reported_) {
    // kspace.cpp qsum_qsq()'s warning; the background term keeps the energy of a charged
    // system defined, as LAMMPS' does.
    text += "DISTSPEC: pme: system is not charge neutral, net charge = " + number(qsum_) +
            ": a neutralising background is added, as LAMMPS' kspace styles add it\n";
    charge_reported_ = true;
  }
  if (!report_pending_) return text;
  report_pending_ = false;
  text += "DISTSPEC: pme: accuracy " + number(params.accuracy) + " (absolute " + number(params.accuracy_absolute) +
          ") for " + number(natoms_) + " atoms: " + (params.derive_alpha ? "alpha" : "") +
          (params.derive_alpha && params.derive_mesh ? " and " : "") + (params.derive_mesh ? "mesh" : "") +
          (params.derive_alpha || params.derive_mesh ? " derived" : "alpha and mesh given") + "\n";
  // pppm.cpp init()'s lines.
  text += "  G vector (1/distance) = " + number(params.alpha) + "\n";
  text += "  grid = " + std::to_string(params.mesh[0]) + " " + std::to_string(params.mesh[1]) + " " +
          std::to_string(params.mesh[2]) + "\n";
  text += "  stencil order = " + std::to_string(params.order) + "\n";
  text += "  estimated absolute RMS force accuracy = " + number(estimate_) + "\n";
  text += "  estimated relative force accuracy = " + number(estimate_ / params.two_charge_force) + "\n";
  return text;
}

}  // namespace distspec::models::pme
