// Shared by the model tests: running a model on a PeriodicGraph under a spec, and the
// finite-difference references its forces and virial are checked against.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "distspec/dispatch/dispatcher.h"
#include "distspec/error.h"
#include "distspec/spec/spec_json.h"
#include "models/model.h"
#include "models/factory/model_factory.h"
#include "periodic_graph.h"

namespace distspec::test {

inline std::string potentials(const std::string& name) { return std::string(DISTSPEC_POTENTIALS_DIR) + "/" + name; }

struct ModelRun {
  models::ModelOutputs out;
  ExchangeStats stats;
};

// One compute on one rank, the halo being the graph's periodic images.
inline ModelRun run_model(models::Model& model, const PeriodicGraph& g, const DistributionSpec& spec,
                     const models::OutputRequest& request = {true, true, true}) {
  models::register_builtin_ops();
  Dispatcher dispatch(spec, Device::cpu, model.info().ops, 1);
  IndexedHaloExchange halo = g.halo_exchange();
  dispatch.attach(halo);
  ModelRun run;
  model.compute(g.graph(), dispatch, request, run.out);
  run.stats = dispatch.stats();
  return run;
}

inline double energy_of(models::Model& model, const PeriodicGraph& g, const DistributionSpec& spec) {
  models::OutputRequest energy_only;
  energy_only.forces = false;
  return run_model(model, g, spec, energy_only).out.energy;
}

// -dE/dx of owned atom i, component k, by central differences (the atom and all its images move).
inline double fd_force(models::Model& model, PeriodicGraph g, const DistributionSpec& spec, std::size_t i, int k,
                       double h) {
  Vec3 d{};
  d[k] = h;
  g.displace(i, d);
  const double plus = energy_of(model, g, spec);
  d[k] = -2.0 * h;
  g.displace(i, d);
  const double minus = energy_of(model, g, spec);
  return -(plus - minus) / (2.0 * h);
}

// Forces of the given owned atoms equal central differences of the energy to `tol`; with
// `complete`, owned forces are whole (they sum to zero) and halo rows carry nothing.
inline void expect_forces_match_fd(models::Model& model, const PeriodicGraph& g, const DistributionSpec& spec,
                                   const models::ModelOutputs& out, std::initializer_list<std::size_t> atoms, double h,
                                   double tol, bool complete = true) {
  for (std::size_t i : atoms)
    for (int k = 0; k < 3; ++k)
      EXPECT_NEAR(out.forces[3 * i + k], fd_force(model, g, spec, i, k, h), tol) << "atom " << i << " component " << k;
  if (!complete) return;
  Vec3 sum{};
  for (std::size_t i = 0; i < g.n_owned(); ++i)
    for (int k = 0; k < 3; ++k) sum[k] += out.forces[3 * i + k];
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(sum[k], 0.0, 1e-12);
  for (std::size_t v = 3 * g.n_owned(); v < out.forces.size(); ++v) EXPECT_EQ(out.forces[v], 0.0);
}

// Per-row values of every row folded onto owned rows (what the host's reverse comm does).
inline std::vector<double> fold(const PeriodicGraph& g, std::vector<double> rows, int width) {
  IndexedHaloExchange halo = g.halo_exchange();
  halo.reverse(Rows<double>{rows.data(), g.n_rows(), width});
  rows.resize(g.n_owned() * width);
  return rows;
}

// The per-row virial shares of a run add up to its virial, and the per-row energies to its
// energy.
inline void expect_rows_add_up(const PeriodicGraph& g, const models::ModelOutputs& out) {
  const std::vector<double> rows = fold(g, out.virial_rows, 6);
  for (int c = 0; c < 6; ++c) {
    double sum = 0.0;
    for (std::size_t i = 0; i < g.n_owned(); ++i) sum += rows[6 * i + c];
    EXPECT_NEAR(sum, out.virial[c], 1e-10);
  }
  double energy = 0.0;
  for (std::size_t i = 0; i < g.n_rows(); ++i) energy += out.energy_rows[i];
  EXPECT_NEAR(energy, out.energy, 1e-10);
}

// A model's outputs over `list` (a half list of the same edges), halo rows folded onto their
// owners, equal its outputs over the full list: forces, energy, per-row energy and virial, and
// the virial, to `tol` relative to the largest value of each. Under half_newton_off halo rows
// must come back zero (nothing to fold).
inline void expect_half_list_matches_full(models::Model& model, PeriodicGraph g, const DistributionSpec& spec,
                                          models::EdgeList list, double tol = 1e-12, bool newton_on_ends = false) {
  const ModelRun full = run_model(model, g, spec);
  const std::size_t full_edges = g.n_edges();
  g.use_edge_list(list, newton_on_ends);
  // One rank holding every atom: newton on's list holds each pair of the full list's two once.
  if (list == models::EdgeList::half_newton_on) EXPECT_EQ(2 * g.n_edges(), full_edges);
  EXPECT_LT(g.n_edges(), full_edges);
  const ModelRun half = run_model(model, g, spec);
  auto compare = [&](const char* what, const std::vector<double>& a, std::vector<double> b, int width) {
    if (list == models::EdgeList::half_newton_off && !newton_on_ends)
      for (std::size_t k = g.n_owned() * width; k < b.size(); ++k) EXPECT_EQ(b[k], 0.0) << what << " halo value " << k;
    b = fold(g, b, width);
    double scale = 0.0;
    for (std::size_t k = 0; k < g.n_owned() * width; ++k) scale = std::max(scale, std::abs(a[k]));
    for (std::size_t k = 0; k < g.n_owned() * width; ++k)
      EXPECT_NEAR(b[k], a[k], tol * scale) << what << " " << k / width << " component " << k % width;
  };
  compare("force of atom", full.out.forces, half.out.forces, 3);
  compare("energy of atom", full.out.energy_rows, half.out.energy_rows, 1);
  compare("virial of atom", full.out.virial_rows, half.out.virial_rows, 6);
  EXPECT_NEAR(half.out.energy, full.out.energy, tol * std::abs(full.out.energy));
  for (int c = 0; c < 6; ++c) EXPECT_NEAR(half.out.virial[c], full.out.virial[c], tol * std::abs(full.out.virial[0]));
}

// Every output of `many` within `tolerance` (relative to each output's largest value) of `one`.
inline void expect_outputs_close(const models::ModelOutputs& one, const models::ModelOutputs& many, double tolerance) {
  auto close = [&](const char* what, const std::vector<double>& a, const std::vector<double>& b) {
    ASSERT_EQ(a.size(), b.size()) << what;
    double scale = 0.0;
    for (double v : a) scale = std::max(scale, std::abs(v));
    for (std::size_t k = 0; k < a.size(); ++k) EXPECT_NEAR(b[k], a[k], tolerance * scale) << what << " " << k;
  };
  close("forces", one.forces, many.forces);
  close("energy rows", one.energy_rows, many.energy_rows);
  close("virial rows", one.virial_rows, many.virial_rows);
  close("virial", {one.virial.begin(), one.virial.end()}, {many.virial.begin(), many.virial.end()});
  EXPECT_NEAR(many.energy, one.energy, tolerance * std::abs(one.energy));
}

// A model's outputs on 2 and 3 threads equal its outputs on one, to rounding (the threads' sums
// are added in another order), over `list`.
inline void expect_threads_match_one_thread(models::Model& model, PeriodicGraph g, const DistributionSpec& spec,
                                            models::EdgeList list, bool newton_on_ends = false,
                                            double tolerance = 1e-12) {
  g.use_edge_list(list, newton_on_ends);
  models::OutputRequest request{true, true, true};
  const ModelRun one = run_model(model, g, spec, request);
  for (int threads : {2, 3}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    request.threads = threads;
    expect_outputs_close(one.out, run_model(model, g, spec, request).out, tolerance);
  }
}

// The distspec::Error that `f` throws (a test failure when it throws none).
inline Error error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no distspec::Error thrown";
  return Error("", "", "");
}

// Virial W_ab = sum_i x_ia f_ib = -dE/d eps_ab under x -> (I + eps) x, in LAMMPS' order
// xx yy zz xy xz yz.
inline std::array<double, 6> fd_virial(models::Model& model, const PeriodicGraph& g, const DistributionSpec& spec,
                                       double h) {
  constexpr int ab[6][2] = {{0, 0}, {1, 1}, {2, 2}, {0, 1}, {0, 2}, {1, 2}};
  std::array<double, 6> w{};
  for (int c = 0; c < 6; ++c) {
    double e[2];
    for (int s = 0; s < 2; ++s) {
      PeriodicGraph strained = g;
      Mat3 eps{};
      eps[ab[c][0]][ab[c][1]] = s == 0 ? h : -h;
      strained.deform(eps);
      e[s] = energy_of(model, strained, spec);
    }
    w[c] = -(e[0] - e[1]) / (2.0 * h);
  }
  return w;
}

// A run's virial equals the strain derivative of the energy (fd_virial, step 1e-6) to `tolerance`
// relative to max(1, |W|); its owned rows' per-atom virials add up to it to `sum_tolerance`, and
// its halo rows hold none.
inline void expect_virial_is_strain_derivative(models::Model& model, const PeriodicGraph& g,
                                               const DistributionSpec& spec, double tolerance, double sum_tolerance) {
  const ModelRun run = run_model(model, g, spec);
  const std::array<double, 6> ref = fd_virial(model, g, spec, 1e-6);
  for (int c = 0; c < 6; ++c) EXPECT_NEAR(run.out.virial[c], ref[c], tolerance * std::max(1.0, std::abs(ref[c]))) << c;
  for (int c = 0; c < 6; ++c) {
    double sum = 0.0;
    for (std::size_t i = 0; i < g.n_owned(); ++i) sum += run.out.virial_rows[6 * i + c];
    EXPECT_NEAR(sum, run.out.virial[c], sum_tolerance);
  }
  for (std::size_t v = 6 * g.n_owned(); v < run.out.virial_rows.size(); ++v) EXPECT_EQ(run.out.virial_rows[v], 0.0);
}

}  // namespace distspec::test
