// Runs one deck twice, once with LAMMPS' own pair style and once with distspec, and compares
// energy, per-atom forces, virial, per-atom energy and per-atom virial atom by atom (by tag).
#pragma once

#include <array>
#include <string>
#include <vector>

namespace distspec::testing {

struct Observables {
  double pe = 0.0;
  std::vector<double> forces;        // natoms x 3, by atom ID
  std::vector<double> virial;        // pressure-tensor virial part: xx yy zz xy xz yz
  std::vector<double> energy_atom;   // natoms
  std::vector<double> virial_atom;   // natoms x 6
  // The system the observables belong to, for references evaluated outside LAMMPS.
  std::vector<double> positions;     // natoms x 3
  std::vector<double> types;         // natoms
  std::vector<double> ids;           // natoms: atom IDs
  std::array<double, 9> box{};       // xlo ylo zlo xhi yhi zhi xy xz yz
  double nktv2p = 1.0;               // pressure = virial / volume * nktv2p in the deck's units
};

// `setup` creates box and atoms (after units/atom_style/boundary lines in it), `pair` holds the
// pair_style / pair_coeff lines. Computes are added here; a `run 0` evaluates everything, or,
// where `observed` is given, those lines do (after the computes, so that they can dump c_pea and
// c_sa): the observables are what their last run left, which must have tallied per-atom energy
// and virial on its last step.
Observables evaluate(const std::string& setup, const std::string& pair, const std::vector<std::string>& args = {},
                     const std::string& observed = "");

// The same on a 1-rank LAMMPS that rank 0 runs on MPI_COMM_SELF, broadcast to every rank: the
// reference a multi-rank run must reproduce.
Observables evaluate_on_one_rank(const std::string& setup, const std::string& pair,
                                 const std::vector<std::string>& args = {}, const std::string& observed = "");

// Total energy per atom after `steps` NVE steps minus before, with the given pair lines.
double nve_drift_per_atom(const std::string& setup, const std::string& pair, int steps, double dt);

// Largest deviation of each observable from the reference, relative to the reference's scale
// (its largest magnitude), so that near-zero components do not dominate. A per-atom observable
// the reference leaves empty (one a reference outside LAMMPS does not define) is not compared.
// Each observable's deviation from the reference; NaN where the reference did not compute it.
struct Deviation {
  double pe, forces, virial, energy_atom, virial_atom, positions;
  // Non-finite values in the run or the reference, each named with its observable and atom
  // ("forces of atom ID 17 is nan in the reference"): a NaN would otherwise compare as nothing.
  std::vector<std::string> nonfinite;
  // Observables that are exactly zero in both the run and the reference (pe, forces, virial,
  // energy_atom, virial_atom): a comparison that could not fail.
  std::vector<std::string> both_zero;
  double worst() const;  // over the observables compared
};
// absolute_per_atom: forces and per-atom energies as plain differences, not relative to a scale.
Deviation compare(const Observables& got, const Observables& ref, bool absolute_per_atom = false);
std::string describe(const Deviation& d);  // the observables compared (NaN: left out)

// How far the per-atom virial's sum is from the global virial (compute stress/atom's sum is
// -volume x the pressure's virial part), relative to the global virial's largest component:
// every partition of the virial among atoms must sum to it. NaN where the run has no per-atom
// virial.
double virial_sum_rule(const Observables& o);

// The processor grids a test sweeps on the current number of ranks.
std::vector<std::string> processor_grids();

}  // namespace distspec::testing
