// Charged periodic systems for the tests of the long-range models (Ewald, PME): rock salt, its
// charges, a periodic graph that carries per-row charges and the cell, and one model call on it.
#pragma once

#include <vector>

#include "model_test_util.h"

namespace distspec::test {

inline constexpr double kCoulombMetal = 14.399645;  // LAMMPS qqr2e, metal units
inline constexpr double kMadelungRockSalt = 1.747564594633182;

// Rock salt: an fcc lattice of Na (+q) and one of Cl (-q) shifted by a/2.
inline Crystal rock_salt(double a, int n) {
  Crystal c = fcc(a, n);
  const std::size_t n_na = c.positions.size();
  for (std::size_t i = 0; i < n_na; ++i) {
    c.positions.push_back({c.positions[i][0] + 0.5 * a, c.positions[i][1], c.positions[i][2]});
    c.species.push_back(1);
  }
  return c;
}

// Charges per owned atom: Na +q, Cl -q.
inline std::vector<double> rock_salt_charges(const Crystal& c, double q) {
  std::vector<double> out;
  for (int s : c.species) out.push_back(s == 0 ? q : -q);
  return out;
}

// A graph with the crystal's cell and per-row charges (each halo row its owner's).
struct ChargedGraph {
  PeriodicGraph graph;
  std::vector<double> row_charges;

  ChargedGraph(const Crystal& c, const std::vector<double>& charges, double cutoff) : graph(c, cutoff, 1.0) {
    for (std::size_t r = 0; r < graph.n_rows(); ++r) row_charges.push_back(charges[graph.owner(r)]);
  }
  models::AtomGraph atoms() const {
    models::AtomGraph g = graph.graph();
    g.charges = row_charges.data();
    g.has_cell = true;
    const Mat3& h = graph.box().h;  // columns are the cell vectors
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) g.cell[3 * r + c] = h[c][r];
    g.periodic = {true, true, true};
    return g;
  }
};

// One compute() on one rank, on `atoms` where given (else g.atoms()).
inline models::ModelOutputs compute(models::Model& model, const ChargedGraph& g, const DistributionSpec& spec,
                                    const models::AtomGraph* atoms = nullptr,
                                    models::OutputRequest request = {true, true, true}) {
  models::register_builtin_ops();
  Dispatcher dispatch(spec, Device::cpu, model.info().ops, 1);
  IndexedHaloExchange halo = g.graph.halo_exchange();
  dispatch.attach(halo);
  models::ModelOutputs out;
  model.compute(atoms ? *atoms : g.atoms(), dispatch, request, out);
  return out;
}

inline double energy(models::Model& model, const ChargedGraph& g, const DistributionSpec& spec) {
  models::OutputRequest energy_only;
  energy_only.forces = false;
  return compute(model, g, spec, nullptr, energy_only).energy;
}

// W_ab = -dE/d eps_ab under x -> (I + eps) x with the cell, by central differences: component v
// in LAMMPS' order xx yy zz xy xz yz.
inline double fd_strain_virial(models::Model& model, const ChargedGraph& g, const DistributionSpec& spec, int v,
                               double h = 1e-5) {
  constexpr int ab[6][2] = {{0, 0}, {1, 1}, {2, 2}, {0, 1}, {0, 2}, {1, 2}};
  double e[2];
  for (int s = 0; s < 2; ++s) {
    ChargedGraph strained = g;
    Mat3 eps{};
    eps[ab[v][0]][ab[v][1]] = s == 0 ? h : -h;
    strained.graph.deform(eps);
    e[s] = energy(model, strained, spec);
  }
  return -(e[0] - e[1]) / (2 * h);
}

// The forces on atoms 0, 3, 17 and 40 against -dE/dx by central differences (each atom moves with
// its images).
inline void expect_forces_are_energy_derivatives(models::Model& model, const ChargedGraph& g,
                                                 const DistributionSpec& spec, const models::ModelOutputs& out) {
  const double h = 1e-5;
  for (std::size_t i : {0u, 3u, 17u, 40u})
    for (int k = 0; k < 3; ++k) {
      ChargedGraph plus = g, minus = g;
      Vec3 d{};
      d[k] = h;
      plus.graph.displace(i, d);
      d[k] = -h;
      minus.graph.displace(i, d);
      const double fd = -(energy(model, plus, spec) - energy(model, minus, spec)) / (2 * h);
      EXPECT_NEAR(out.forces[3 * i + k], fd, 2e-6 * (1.0 + std::abs(fd))) << "atom " << i << " component " << k;
    }
}

// A charge sum's outputs: the per-row virials and energies of the owned rows sum to the global
// ones, and every force lands on an owned row (the spec may declare forces owned-only).
inline void expect_owned_rows_complete(const models::ModelOutputs& out, const ChargedGraph& g) {
  for (int v = 0; v < 6; ++v) {
    double sum = 0.0;
    for (std::size_t i = 0; i < g.graph.n_owned(); ++i) sum += out.virial_rows[6 * i + v];
    EXPECT_NEAR(sum, out.virial[v], 1e-10 * (1.0 + std::abs(out.virial[v])));
  }
  double sum = 0.0;
  for (std::size_t i = 0; i < g.graph.n_owned(); ++i) sum += out.energy_rows[i];
  EXPECT_NEAR(sum, out.energy, 1e-10 * std::abs(out.energy));
  for (std::size_t r = g.graph.n_owned(); r < g.graph.n_rows(); ++r)
    for (int k = 0; k < 3; ++k) EXPECT_EQ(out.forces[3 * r + k], 0.0);
}

// The model of `file` on 2 and 3 threads gives its one-thread outputs, to rounding, on 216
// jiggled rock-salt ions: each thread gets more than the 64 atoms below which the k-space loops
// stay on fewer threads.
inline void expect_charged_threads_match_one_thread(const models::ModelFile& file) {
  Crystal c = rock_salt(5.64, 3);
  jiggle(c, 0.2, 9);
  auto model = models::make_model(file);
  const ChargedGraph g(c, rock_salt_charges(c, 1.0), file.cutoff);
  const models::ModelOutputs one = compute(*model, g, file.spec.core);
  for (int threads : {2, 3}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    models::OutputRequest request{true, true, true};
    request.threads = threads;
    expect_outputs_close(one, compute(*model, g, file.spec.core, nullptr, request), 1e-12);
  }
}

}  // namespace distspec::test
