#include "models/ewald/ewald_accuracy.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "distspec/error.h"
#include "models/ewald/ewald_math.h"
#include "models/json_fields.h"
#include "models/model_error.h"

namespace distspec::models::ewald {
namespace {

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.8g", v);
  return text;
}

std::array<double, 3> edge_lengths(const AtomGraph& graph) { return {graph.cell[0], graph.cell[4], graph.cell[8]}; }

}  // namespace

double two_charge_force_of(const std::string& units) {
  // update.cpp set_units(): qqr2e, qelectron and angstrom per units style.
  struct Constants {
    double qelectron, angstrom;
  };
  static const std::map<std::string, Constants> constants{
      {"lj", {1.0, 1.0}},           {"real", {1.0, 1.0}},           {"metal", {1.0, 1.0}},
      {"si", {1.6021765e-19, 1.0e-10}}, {"cgs", {4.8032044e-10, 1.0e-8}}, {"electron", {1.0, 1.88972612}},
      {"micro", {1.6021765e-7, 1.0e-4}}, {"nano", {1.0, 1.0e-1}}};
  const auto it = constants.find(units);
  if (it == constants.end())
    fail_value("/units", "no elementary charge is known for units '" + units + "'",
               "give \"alpha\" and \"kmax\" under \"parameters\" instead of \"accuracy\"");
  const Constants& c = it->second;
  // kspace.cpp two_charge(), in its order.
  return coulomb_constant_of(units) * (c.qelectron * c.qelectron) / (c.angstrom * c.angstrom);
}

double kspace_rms(int k, double prd, double natoms, double q2, double g_ewald) {
  if (natoms == 0.0) natoms = 1.0;  // as ewald.cpp: no division by zero
  return 2.0 * q2 * g_ewald / prd * std::sqrt(1.0 / (kPi * k * natoms)) *
         std::exp(-kPi * kPi * k * k / (g_ewald * g_ewald * prd * prd));
}

double g_ewald_for(double accuracy, double natoms, double cutoff, const std::array<double, 3>& lengths, double q2) {
  double g_ewald = accuracy * std::sqrt(natoms * cutoff * lengths[0] * lengths[1] * lengths[2]) / (2.0 * q2);
  if (g_ewald >= 1.0)
    g_ewald = (1.35 - 0.15 * std::log(accuracy)) / cutoff;
  else
    g_ewald = std::sqrt(-std::log(g_ewald)) / cutoff;
  return g_ewald;
}

std::array<int, 3> kmax_for(double accuracy, double g_ewald, double natoms, const std::array<double, 3>& lengths,
                            double q2) {
  std::array<int, 3> kmax{};
  for (int d = 0; d < 3; ++d) {
    int k = 1;
    while (kspace_rms(k, lengths[d], natoms, q2, g_ewald) > accuracy && k <= kMaxKmax) ++k;
    kmax[d] = k;
  }
  return kmax;
}

double estimated_accuracy(double g_ewald, const std::array<int, 3>& kmax, double natoms, double cutoff,
                          const std::array<double, 3>& lengths, double q2) {
  const double lprx = kspace_rms(kmax[0], lengths[0], natoms, q2, g_ewald);
  const double lpry = kspace_rms(kmax[1], lengths[1], natoms, q2, g_ewald);
  const double lprz = kspace_rms(kmax[2], lengths[2], natoms, q2, g_ewald);
  const double lpr = std::sqrt(lprx * lprx + lpry * lpry + lprz * lprz) / std::sqrt(3.0);
  const double q2_over_sqrt = q2 / std::sqrt(natoms * cutoff * lengths[0] * lengths[1] * lengths[2]);
  const double spr = 2.0 * q2_over_sqrt * std::exp(-g_ewald * g_ewald * cutoff * cutoff);
  return std::sqrt(lpr * lpr + spr * spr);
}

void AccuracyRule::prepare(const AtomGraph& graph, const std::vector<double>& charges, Dispatcher& dispatch,
                           Params& params) {
  if (!active_) return;
  const std::array<double, 3> lengths = edge_lengths(graph);
  if (run_pending_) {
    // kspace.cpp qsum_qsq(): each rank sums its own atoms, an all-reduce sums the ranks.
    double sums[2] = {0.0, 0.0};
    for (std::size_t i = 0; i < graph.n_owned; ++i) {
      if (graph.species && graph.species[i] < 0) continue;  // not this model's atom
      sums[0] += 1.0;
      sums[1] += charges[i] * charges[i];
    }
    dispatch.all_reduce_sum(sums, 2);
    natoms_ = sums[0];
    q2_ = sums[1] * params.coulomb_constant;
    if (params.derive_alpha) {
      if (q2_ == 0.0)
        throw Error(model_error_id::system, "/parameters/accuracy",
                    "ewald: the system has no charge (sum of q^2 over the model's atoms is 0), so \"accuracy\" cannot "
                    "set alpha",
                    "give \"alpha\" under \"parameters\" (LAMMPS: kspace_modify gewald; \"Must use 'kspace_modify "
                    "gewald' for uncharged system\")");
      params.alpha = g_ewald_for(params.accuracy_absolute, natoms_, params.cutoff, lengths, q2_);
    }
    run_lengths_ = lengths;
    run_pending_ = false;
    report_pending_ = true;
    kmax_alpha_ = 0.0;  // kmax afresh, as LAMMPS' init() calls setup()
  }
  if (params.derive_kmax && (lengths != kmax_lengths_ || params.alpha != kmax_alpha_)) {
    const std::array<int, 3> kmax = kmax_for(params.accuracy_absolute, params.alpha, natoms_, lengths, q2_);
    for (int d = 0; d < 3; ++d)
      if (kmax[d] > kMaxKmax)
        throw Error(model_error_id::system, "/parameters/accuracy",
                    "ewald: accuracy " + number(params.accuracy) + " needs more than " + std::to_string(kMaxKmax) +
                        " reciprocal cells along " + "xyz"[d] + " (box edge " + number(lengths[d]) + ", alpha " +
                        number(params.alpha) + ")",
                    "ask for a larger accuracy, a larger cutoff (a smaller alpha), or give \"kmax\"");
    params.kmax = kmax;
    kmax_lengths_ = lengths;
    kmax_alpha_ = params.alpha;
  }
}

std::string AccuracyRule::take_report(const Params& params, std::size_t n_kvectors) {
  if (!report_pending_) return "";
  report_pending_ = false;
  const std::array<int, 3>& k = params.kmax;
  const int kmax = std::max({k[0], k[1], k[2]});
  const double estimate = estimated_accuracy(params.alpha, k, natoms_, params.cutoff, run_lengths_, q2_);
  std::string text = "DISTSPEC: ewald: accuracy " + number(params.accuracy) + " (absolute " +
                     number(params.accuracy_absolute) + ") for " + number(natoms_) + " atoms: " +
                     (params.derive_alpha ? "alpha" : "") + (params.derive_alpha && params.derive_kmax ? " and " : "") +
                     (params.derive_kmax ? "kmax" : "") +
                     (params.derive_alpha || params.derive_kmax ? " derived" : "alpha and kmax given") + "\n";
  // ewald.cpp init()'s lines.
  text += "  G vector (1/distance) = " + number(params.alpha) + "\n";
  text += "  estimated absolute RMS force accuracy = " + number(estimate) + "\n";
  text += "  estimated relative force accuracy = " + number(estimate / params.two_charge_force) + "\n";
  text += "  KSpace vectors: actual max1d max3d = " + std::to_string(n_kvectors) + " " + std::to_string(kmax) + " " +
          std::to_string(4 * kmax * kmax * kmax + 6 * kmax * kmax + 3 * kmax) + "\n";
  text += "                  kxmax kymax kzmax  = " + std::to_string(k[0]) + " " + std::to_string(k[1]) + " " +
          std::to_string(k[2]) + "\n";
  return text;
}

}  // namespace distspec::models::ewald
