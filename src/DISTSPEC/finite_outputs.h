/* -*- c++ -*- ----------------------------------------------------------
   DISTSPEC: stop on non-finite model outputs instead of integrating them.
   Atoms closer than a model allows (overlapping atoms from create_atoms or a data file, or atoms
   driven together by too large a timestep) give inf or NaN energies and forces; LAMMPS would
   carry them into positions and fail much later, far from the cause. Every step each rank
   checks its rows and the ranks agree; on failure every rank stops with the step, the model and
   the closest pair of atoms (by atom ID) in the run, the usual cause.
------------------------------------------------------------------------- */

#ifndef LMP_DISTSPEC_FINITE_OUTPUTS_H
#define LMP_DISTSPEC_FINITE_OUTPUTS_H

#include <mpi.h>

#include <cstddef>
#include <string>

namespace LAMMPS_NS {

class LAMMPS;
class NeighList;

// What a failure names: the style, its model file and the model's cutoff.
struct FiniteCheckSubject {
  const char *style;
  std::string model_path;
  double cutoff;
};

// The check of one pair style instance. The ranks agree at once on the steps where LAMMPS itself
// gathers over ranks anyway (it reads the energy or virial: thermo output, a pressure every step
// under a barostat, every minimizer step). On the steps between, where LAMMPS may have no
// collective of its own, the agreement is started without waiting (MPI_Iallreduce) and completed
// at the next step or at the end of the run: every rank still stops together, one step late,
// naming the step whose outputs were not finite. So that nothing non-finite reaches the
// positions in that step, a rank whose forces were not finite zeroes them (check() says when).
class FiniteOutputCheck {
 public:
  FiniteOutputCheck() = default;
  FiniteOutputCheck(const FiniteOutputCheck &) = delete;
  FiniteOutputCheck &operator=(const FiniteOutputCheck &) = delete;
  // Completes an agreement still pending (every rank destroys its style together), silently.
  ~FiniteOutputCheck();

  // One step: `finite` is this rank's verdict on its energy and forces; `now` asks for the
  // agreement at once (the step's eflag or vflag). Collective: every rank calls it every step.
  // Stops every rank (error->all) on a failure of this step (now) or of the last (pending);
  // returns true where the caller must zero its non-finite forces (a failure whose agreement
  // is pending).
  bool check(LAMMPS *lmp, NeighList *list, bool finite, bool now, const FiniteCheckSubject &subject);
  // Completes a pending agreement (the end of a run), stopping every rank on a failure.
  void settle(LAMMPS *lmp, NeighList *list, const FiniteCheckSubject &subject);

 private:
  MPI_Request request_ = MPI_REQUEST_NULL;
  int local_bad_rank_ = 0;    // MPI_Iallreduce's buffers: they live until it completes
  int bad_rank_ = 0;
  long long step_ = 0;    // the step of the pending agreement
};

// Whether every one of n values is finite.
bool all_finite(const double *values, std::size_t n);
// Replaces every non-finite value of n by 0.
void zero_non_finite(double *values, std::size_t n);

}    // namespace LAMMPS_NS

#endif
