/* ----------------------------------------------------------------------
   DISTSPEC: what the LAMMPS halo exchanges share.
------------------------------------------------------------------------- */

#include "lammps_halo_exchange_base.h"

#include "lammps_compat.h"

#include "comm.h"
#include "lammps.h"
#include "pair.h"

#include "distspec/error.h"

#include <mpi.h>
#include <string>

using namespace LAMMPS_NS;

int LammpsHaloExchangeBase::n_ranks() const
{
  return lmp_->comm->nprocs;
}

void LammpsHaloExchangeBase::check_width(int width) const
{
  if (width > max_width_)
    throw distspec::Error("halo.width", "", "a halo exchange of rows " + std::to_string(width) +
                                  " values wide exceeds the pair style's comm buffer width " +
                                  std::to_string(max_width_),
                          "the model's comm_width must cover its widest exchanged row");
}

void LammpsHaloExchangeBase::forward(distspec::Rows<double> rows)
{
  bind(rows);
  distspec_compat::forward_comm(lmp_->comm, pair_);
  unbind();
}

void LammpsHaloExchangeBase::reverse(distspec::Rows<double> rows)
{
  bind(rows);
  distspec_compat::reverse_comm(lmp_->comm, pair_);
  unbind();
  zero_halo_rows(rows);
}

CommBrickSwaps LammpsHaloExchangeBase::self_swaps() const
{
  return CommBrickSwaps(lmp_->comm);
}

void LammpsHaloExchangeBase::all_reduce_host(double *values, std::size_t n) const
{
  MPI_Allreduce(MPI_IN_PLACE, values, static_cast<int>(n), MPI_DOUBLE, MPI_SUM, lmp_->world);
}
