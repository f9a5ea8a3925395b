/* ----------------------------------------------------------------------
   DISTSPEC: the non-finite output check and its closest-pair report.
------------------------------------------------------------------------- */

#include "finite_outputs.h"

#include "atom.h"
#include "comm.h"
#include "error.h"
#include "lammps.h"
#include "neigh_list.h"
#include "update.h"
#include "utils.h"

#include <cmath>
#include <limits>
#include <mpi.h>

using namespace LAMMPS_NS;

namespace {

struct ClosestPair {
  double r2 = std::numeric_limits<double>::infinity();
  double tags[2] = {0.0, 0.0};    // atom IDs, as doubles for one broadcast
};

// The closest receiver-sender pair of this rank's neighbour list.
ClosestPair closest_pair(const Atom *atom, const NeighList *list)
{
  ClosestPair best;
  double **x = atom->x;
  for (int ii = 0; ii < list->inum; ++ii) {
    const int i = list->ilist[ii];
    const int *jlist = list->firstneigh[i];
    for (int jj = 0; jj < list->numneigh[i]; ++jj) {
      const int j = jlist[jj] & NEIGHMASK;
      const double dx = x[i][0] - x[j][0], dy = x[i][1] - x[j][1], dz = x[i][2] - x[j][2];
      const double r2 = dx * dx + dy * dy + dz * dz;
      if (r2 < best.r2) best = {r2, {double(atom->tag[i]), double(atom->tag[j])}};
    }
  }
  return best;
}

// Every rank stops: the step and rank of the failure, and the closest pair over all ranks now.
[[noreturn]] void stop_every_rank(LAMMPS *lmp, NeighList *list, long long step, int bad_rank,
                                  const FiniteCheckSubject &subject)
{
  // The closest pair over all ranks: MINLOC on (r², rank), then that rank's atom IDs.
  const ClosestPair mine = list ? closest_pair(lmp->atom, list) : ClosestPair{};
  struct {
    double r2;
    int rank;
  } local{mine.r2, lmp->comm->me}, global{};
  MPI_Allreduce(&local, &global, 1, MPI_DOUBLE_INT, MPI_MINLOC, lmp->world);
  double tags[2] = {mine.tags[0], mine.tags[1]};
  MPI_Bcast(tags, 2, MPI_DOUBLE, global.rank, lmp->world);

  const std::string pair = !list ? std::string("the closest pair is not searched for with this style")
      : std::isfinite(global.r2)
      ? fmt::format("the closest atoms are IDs {:.0f} and {:.0f} at distance {:.6g} (model cutoff {:g})", tags[0],
                    tags[1], std::sqrt(global.r2), subject.cutoff)
      : std::string("no atom has a neighbour within the cutoff");
  const std::string when = step == lmp->update->ntimestep
      ? std::string()
      : fmt::format(" (agreed at step {}; those forces were zeroed, not integrated)", lmp->update->ntimestep);
  lmp->error->all(FLERR,
                  fmt::format("pair_style {}: step {}: model {} returned non-finite energy or forces (first on MPI "
                              "rank {}); {}{}. Atoms closer than the model allows give this: remove overlapping atoms "
                              "(delete_atoms overlap), check the data file, or shorten the timestep",
                              subject.style, step, subject.model_path, bad_rank, pair, when));
}

}    // namespace

// v * 0 is 0 (or -0) for every finite v and NaN for inf and NaN; eight independent sums keep the
// pass at memory speed (one sum would wait on each add), a third faster than testing each value.
bool LAMMPS_NS::all_finite(const double *values, std::size_t n)
{
  constexpr std::size_t kLanes = 8;
  double lanes[kLanes] = {};
  std::size_t k = 0;
  for (; k + kLanes <= n; k += kLanes)
    for (std::size_t c = 0; c < kLanes; ++c) lanes[c] += values[k + c] * 0.0;
  double sum = 0.0;
  for (; k < n; ++k) sum += values[k] * 0.0;
  for (const double lane : lanes) sum += lane;
  return sum == 0.0;
}

void LAMMPS_NS::zero_non_finite(double *values, std::size_t n)
{
  for (std::size_t k = 0; k < n; ++k)
    if (!std::isfinite(values[k])) values[k] = 0.0;
}

FiniteOutputCheck::~FiniteOutputCheck()
{
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (request_ != MPI_REQUEST_NULL && !finalized) MPI_Wait(&request_, MPI_STATUS_IGNORE);
}

void FiniteOutputCheck::settle(LAMMPS *lmp, NeighList *list, const FiniteCheckSubject &subject)
{
  if (request_ == MPI_REQUEST_NULL) return;
  MPI_Wait(&request_, MPI_STATUS_IGNORE);
  if (bad_rank_ != lmp->comm->nprocs) stop_every_rank(lmp, list, step_, bad_rank_, subject);
}

bool FiniteOutputCheck::check(LAMMPS *lmp, NeighList *list, bool finite, bool now, const FiniteCheckSubject &subject)
{
  settle(lmp, list, subject);
  const int nprocs = lmp->comm->nprocs;
  local_bad_rank_ = finite ? nprocs : lmp->comm->me;
  step_ = lmp->update->ntimestep;
  if (now) {
    MPI_Allreduce(&local_bad_rank_, &bad_rank_, 1, MPI_INT, MPI_MIN, lmp->world);
    if (bad_rank_ != nprocs) stop_every_rank(lmp, list, step_, bad_rank_, subject);
    return false;
  }
  MPI_Iallreduce(&local_bad_rank_, &bad_rank_, 1, MPI_INT, MPI_MIN, lmp->world, &request_);
  return !finite;
}
