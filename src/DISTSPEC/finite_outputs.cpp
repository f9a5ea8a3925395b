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

bool all_finite(double energy, const double *values, std::size_t n)
{
  bool ok = std::isfinite(energy);
  for (std::size_t k = 0; k < n; ++k) ok &= std::isfinite(values[k]);
  return ok;
}

struct ClosestPair {
  double r2 = std::numeric_limits<double>::infinity();
  double tags[2] = {0.0, 0.0};    // atom IDs, as doubles for one broadcast
};

// The closest receiver-sender pair of this rank's full neighbour list.
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

}    // namespace

void LAMMPS_NS::require_finite_outputs(LAMMPS *lmp, NeighList *list, double energy, const double *forces,
                                       std::size_t n_rows, const char *style, const std::string &model_path,
                                       double cutoff)
{
  require_finite_outputs(lmp, list, all_finite(energy, forces, 3 * n_rows), style, model_path, cutoff);
}

void LAMMPS_NS::require_finite_outputs(LAMMPS *lmp, NeighList *list, bool finite, const char *style,
                                       const std::string &model_path, double cutoff)
{
  int bad_rank = finite ? lmp->comm->nprocs : lmp->comm->me;
  MPI_Allreduce(MPI_IN_PLACE, &bad_rank, 1, MPI_INT, MPI_MIN, lmp->world);
  if (bad_rank == lmp->comm->nprocs) return;

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
                    tags[1], std::sqrt(global.r2), cutoff)
      : std::string("no atom has a neighbour within the cutoff");
  lmp->error->all(FLERR,
                  "pair_style {}: step {}: model {} returned non-finite energy or forces (first on MPI rank {}); {}. "
                  "Atoms closer than the model allows give this: remove overlapping atoms (delete_atoms overlap), "
                  "check the data file, or shorten the timestep",
                  style, lmp->update->ntimestep, model_path, bad_rank, pair);
}
