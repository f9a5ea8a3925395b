// A reference outside LAMMPS: the model file of a deck's pair lines evaluated in one process on
// the periodic system unwrapped into explicit images (the expanded strategy: a ghost shell of L
// cutoffs, every layer computed on every image, no halo exchange). What it shares with the
// LAMMPS run is the model's kernels; what it does not share is everything a decomposition adds
// (ghost atoms, neighbour lists, the per-layer exchanges over LAMMPS comm, reverse sums).
#pragma once

#include <string>

#include "reference_comparison.h"

namespace distspec::testing {

// `pair` holds the pair lines ("pair_style distspec [halo X] [threads N] [spec FILE]" and
// "pair_coeff * * MODEL ELEMENTS..."); `system` a LAMMPS run's positions, types and box (by
// canonical order). Returns energy, forces, virial and per-atom energy in that order (no
// per-atom virial). Throws std::runtime_error for pair lines it cannot read.
Observables evaluate_on_periodic_images(const std::string& pair, const Observables& system);

}  // namespace distspec::testing
