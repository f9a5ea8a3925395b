/* -*- c++ -*- ----------------------------------------------------------
   DISTSPEC: stop on non-finite model outputs instead of integrating them.
   Atoms closer than a model allows (overlapping atoms from create_atoms or a data file, or atoms
   driven together by too large a timestep) give inf or NaN energies and forces; LAMMPS would
   carry them into positions and fail much later, far from the cause. Every step each rank
   checks its rows, the ranks agree with one all-reduce, and on failure every rank stops with
   the closest pair of atoms (by atom ID) in the run, the usual cause.
------------------------------------------------------------------------- */

#ifndef LMP_DISTSPEC_FINITE_OUTPUTS_H
#define LMP_DISTSPEC_FINITE_OUTPUTS_H

#include <cstddef>
#include <string>

namespace LAMMPS_NS {

class LAMMPS;
class NeighList;

// `forces` holds `n_rows` x 3 values; `energy` is this rank's energy. Collective: call on every
// rank. Returns when all are finite everywhere; otherwise every rank calls error->all naming
// the model file, the step and the closest pair of atoms found in `list` (a full list; nullptr
// where its host arrays are not filled, as for KOKKOS lists: then no pair is named).
void require_finite_outputs(LAMMPS *lmp, NeighList *list, double energy, const double *forces, std::size_t n_rows,
                            const char *style, const std::string &model_path, double cutoff);
// The same, where the caller has checked its own rows (distspec/kk reduces device-resident
// forces on the device): `finite` says whether this rank's energy and forces are all finite.
void require_finite_outputs(LAMMPS *lmp, NeighList *list, bool finite, const char *style, const std::string &model_path,
                            double cutoff);

}    // namespace LAMMPS_NS

#endif
