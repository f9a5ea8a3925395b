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

}  // namespace distspec::test
