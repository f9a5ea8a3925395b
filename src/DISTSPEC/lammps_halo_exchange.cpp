/* ----------------------------------------------------------------------
   DISTSPEC: LAMMPS implementation of the core's halo exchange.
------------------------------------------------------------------------- */

#include "lammps_halo_exchange.h"

#include "lammps_compat.h"

#include "comm.h"
#include "lammps.h"
#include "pair.h"

#include "distspec/error.h"

#include <algorithm>
#include <string>

using namespace LAMMPS_NS;

int LammpsHaloExchange::n_ranks() const
{
  return lmp_->comm->nprocs;
}

void LammpsHaloExchange::check_width(int width) const
{
  if (width > max_width_)
    throw distspec::Error("halo.width", "", "a halo exchange of rows " + std::to_string(width) +
                                  " values wide exceeds the pair style's comm buffer width " +
                                  std::to_string(max_width_),
                          "the model's comm_width must cover its widest exchanged row");
}

/* ---------------------------------------------------------------------- */

void LammpsHaloExchange::forward(distspec::Rows<double> rows)
{
  check_width(rows.width);
  block_ = rows.data;
  width_ = rows.width;
  distspec_compat::forward_comm(lmp_->comm, pair_);
  block_ = nullptr;
}

void LammpsHaloExchange::reverse(distspec::Rows<double> rows)
{
  check_width(rows.width);
  block_ = rows.data;
  width_ = rows.width;
  distspec_compat::reverse_comm(lmp_->comm, pair_);
  block_ = nullptr;
  // Halo rows have been summed into their owners: they hold nothing of their own any more.
  std::fill(rows.row(n_owned_), rows.row(n_owned_ + n_halo_), 0.0);
}

// fp32 blocks are staged through fp64 so a halo row's partials, which may hop through several
// intermediate ghost copies, are summed in fp64 and rounded once.
void LammpsHaloExchange::forward(distspec::Rows<float> rows)
{
  staging_.assign(rows.data, rows.data + rows.size());
  forward(distspec::Rows<double>{staging_.data(), rows.rows, rows.width});
  std::copy(staging_.begin(), staging_.end(), rows.data);
}

void LammpsHaloExchange::reverse(distspec::Rows<float> rows)
{
  staging_.assign(rows.data, rows.data + rows.size());
  reverse(distspec::Rows<double>{staging_.data(), rows.rows, rows.width});
  std::transform(staging_.begin(), staging_.end(), rows.data, [](double v) { return static_cast<float>(v); });
}

void LammpsHaloExchange::all_reduce_sum(double *values, std::size_t n)
{
  MPI_Allreduce(MPI_IN_PLACE, values, static_cast<int>(n), MPI_DOUBLE, MPI_SUM, lmp_->world);
}

/* ----------------------------------------------------------------------
   comm callbacks: forward copies owner rows into ghost rows, reverse sums ghost rows into
   the rows they were copied from (which may themselves be ghosts of an earlier swap).
------------------------------------------------------------------------- */

int LammpsHaloExchange::pack_forward(int n, const int *list, double *buf) const
{
  int m = 0;
  for (int i = 0; i < n; ++i) {
    const double *row = block_ + static_cast<std::size_t>(list[i]) * width_;
    for (int c = 0; c < width_; ++c) buf[m++] = row[c];
  }
  return m;
}

void LammpsHaloExchange::unpack_forward(int n, int first, const double *buf)
{
  std::copy(buf, buf + static_cast<std::size_t>(n) * width_, block_ + static_cast<std::size_t>(first) * width_);
}

int LammpsHaloExchange::pack_reverse(int n, int first, double *buf) const
{
  const double *rows = block_ + static_cast<std::size_t>(first) * width_;
  std::copy(rows, rows + static_cast<std::size_t>(n) * width_, buf);
  return n * width_;
}

void LammpsHaloExchange::unpack_reverse(int n, const int *list, const double *buf)
{
  int m = 0;
  for (int i = 0; i < n; ++i) {
    double *row = block_ + static_cast<std::size_t>(list[i]) * width_;
    for (int c = 0; c < width_; ++c) row[c] += buf[m++];
  }
}
