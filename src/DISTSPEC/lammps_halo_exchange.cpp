/* ----------------------------------------------------------------------
   DISTSPEC: the LAMMPS halo exchange of host rows.
------------------------------------------------------------------------- */

#include "lammps_halo_exchange.h"

#include <algorithm>

using namespace LAMMPS_NS;

void LammpsHaloExchange::bind(const distspec::Rows<double> &rows)
{
  check_width(rows.width);
  block_ = rows.data;
  width_ = rows.width;
}

void LammpsHaloExchange::zero_halo_rows(const distspec::Rows<double> &rows)
{
  std::fill(rows.row(n_owned()), rows.row(n_owned() + n_halo()), 0.0);
}

// fp32 blocks are staged through fp64 so a halo row's partials, which may hop through several
// intermediate ghost copies, are summed in fp64 and rounded once.
void LammpsHaloExchange::widened(distspec::Rows<float> rows, bool reverse)
{
  staging_.assign(rows.data, rows.data + rows.size());
  const distspec::Rows<double> wide{staging_.data(), rows.rows, rows.width};
  if (reverse) LammpsHaloExchangeBase::reverse(wide);
  else LammpsHaloExchangeBase::forward(wide);
  std::transform(staging_.begin(), staging_.end(), rows.data, [](double v) { return static_cast<float>(v); });
}

void LammpsHaloExchange::forward(distspec::Rows<float> rows)
{
  widened(rows, false);
}

void LammpsHaloExchange::reverse(distspec::Rows<float> rows)
{
  widened(rows, true);
}

void LammpsHaloExchange::all_reduce_sum(double *values, std::size_t n)
{
  all_reduce_host(values, n);
}

/* ----------------------------------------------------------------------
   comm callbacks: forward copies owner rows into ghost rows, reverse sums ghost rows into
   the rows they were copied from (which may themselves be ghosts of an earlier swap). A swap
   with this rank itself copies in place, without the buffer (comm_brick_swaps.h).
------------------------------------------------------------------------- */

int LammpsHaloExchange::pack_forward(int n, const int *list, double *buf)
{
  SelfSwap self;
  if (self_swaps().sends(list, self)) return n * width_;
  const std::size_t w = width_;
  int m = 0;
  for (int i = 0; i < n; ++i) {
    const double *row = block_ + static_cast<std::size_t>(list[i]) * w;
    for (int c = 0; c < width_; ++c) buf[m++] = row[c];
  }
  return m;
}

void LammpsHaloExchange::unpack_forward(int n, int first, const double *buf)
{
  const std::size_t w = width_;
  SelfSwap self;
  if (self_swaps().fills(first, n, self)) {
    for (int i = 0; i < n; ++i)
      std::copy_n(block_ + self.list[i] * w, w, block_ + (first + static_cast<std::size_t>(i)) * w);
    return;
  }
  std::copy(buf, buf + static_cast<std::size_t>(n) * w, block_ + static_cast<std::size_t>(first) * w);
}

int LammpsHaloExchange::pack_reverse(int n, int first, double *buf)
{
  SelfSwap self;
  if (self_swaps().fills(first, n, self)) return n * width_;
  const std::size_t w = width_;
  const double *rows = block_ + static_cast<std::size_t>(first) * w;
  std::copy(rows, rows + static_cast<std::size_t>(n) * w, buf);
  return n * width_;
}

void LammpsHaloExchange::unpack_reverse(int n, const int *list, const double *buf)
{
  const std::size_t w = width_;
  SelfSwap self;
  if (self_swaps().sends(list, self)) {
    for (int i = 0; i < n; ++i) {
      const double *from = block_ + (self.first + static_cast<std::size_t>(i)) * w;
      double *to = block_ + list[i] * w;
      for (std::size_t c = 0; c < w; ++c) to[c] += from[c];
    }
    return;
  }
  int m = 0;
  for (int i = 0; i < n; ++i) {
    double *row = block_ + static_cast<std::size_t>(list[i]) * w;
    for (int c = 0; c < width_; ++c) row[c] += buf[m++];
  }
}
