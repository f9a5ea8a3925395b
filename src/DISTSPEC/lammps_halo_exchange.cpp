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

#ifdef DISTSPEC_WITH_CUDA
#include "distspec/halo/device_row_packer.h"
#include "distspec/halo/device_staging.h"
#else
// A plugin without CUDA never sees device rows: set_device_rows() keeps them off.
namespace distspec {
class DeviceRowPacker {
 public:
  void pack(const double *, int, const int *, int, double *) {}
  void unpack(const double *, int, int, int, double *) {}
  void pack_range(const double *, int, int, int, double *) {}
  void unpack_add(const double *, const int *, int, int, double *) {}
  void zero(double *, std::size_t, std::size_t, int) {}
  double *widen(const float *, std::size_t) { return nullptr; }
  void narrow(float *, std::size_t) {}
  static void synchronize() {}
  static void copy(void *, const void *, std::size_t) {}
};
inline bool is_device_pointer(const void *) { return false; }
}    // namespace distspec
#endif

using namespace LAMMPS_NS;

LammpsHaloExchange::LammpsHaloExchange(LAMMPS *lmp, Pair *pair) : lmp_(lmp), pair_(pair) {}

LammpsHaloExchange::~LammpsHaloExchange() = default;

void LammpsHaloExchange::set_device_rows(bool on)
{
#ifdef DISTSPEC_WITH_CUDA
  device_rows_ = on;
  if (on && !packer_) packer_ = std::make_unique<distspec::DeviceRowPacker>();
#else
  (void) on;
#endif
}

void LammpsHaloExchange::wait_for_device()
{
  if (device_rows_) distspec::DeviceRowPacker::synchronize();
}

// A block of the model's (device or host memory) or of the style's own (host).
void LammpsHaloExchange::bind(double *data, int width)
{
  check_width(width);
  block_ = data;
  width_ = width;
  block_on_device_ = device_rows_ && distspec::is_device_pointer(data);
}

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
  bind(rows.data, rows.width);
  distspec_compat::forward_comm(lmp_->comm, pair_);
  block_ = nullptr;
}

void LammpsHaloExchange::reverse(distspec::Rows<double> rows)
{
  bind(rows.data, rows.width);
  distspec_compat::reverse_comm(lmp_->comm, pair_);
  block_ = nullptr;
  // Halo rows have been summed into their owners: they hold nothing of their own any more.
  if (block_on_device_)
    packer_->zero(rows.data, n_owned_, n_owned_ + n_halo_, rows.width);
  else
    std::fill(rows.row(n_owned_), rows.row(n_owned_ + n_halo_), 0.0);
}

// fp32 blocks are staged through fp64 so a halo row's partials, which may hop through several
// intermediate ghost copies, are summed in fp64 and rounded once: `exchange` runs on the widened
// block, on the GPU where the rows are.
template <class Exchange> void LammpsHaloExchange::widened(distspec::Rows<float> rows, Exchange exchange)
{
  if (device_rows_ && distspec::is_device_pointer(rows.data)) {
    exchange(distspec::Rows<double>{packer_->widen(rows.data, rows.size()), rows.rows, rows.width});
    packer_->narrow(rows.data, rows.size());
    return;
  }
  staging_.assign(rows.data, rows.data + rows.size());
  exchange(distspec::Rows<double>{staging_.data(), rows.rows, rows.width});
  std::transform(staging_.begin(), staging_.end(), rows.data, [](double v) { return static_cast<float>(v); });
}

void LammpsHaloExchange::forward(distspec::Rows<float> rows)
{
  widened(rows, [this](distspec::Rows<double> wide) { forward(wide); });
}

void LammpsHaloExchange::reverse(distspec::Rows<float> rows)
{
  widened(rows, [this](distspec::Rows<double> wide) { reverse(wide); });
}

void LammpsHaloExchange::all_reduce_sum(double *values, std::size_t n)
{
  // A CUDA model's partial sums in device memory go through the host: MPI need not be CUDA-aware.
  if (device_rows_ && distspec::is_device_pointer(values)) {
    std::vector<double> host(n);
    distspec::DeviceRowPacker::copy(host.data(), values, n * sizeof(double));
    MPI_Allreduce(MPI_IN_PLACE, host.data(), static_cast<int>(n), MPI_DOUBLE, MPI_SUM, lmp_->world);
    distspec::DeviceRowPacker::copy(values, host.data(), n * sizeof(double));
    return;
  }
  MPI_Allreduce(MPI_IN_PLACE, values, static_cast<int>(n), MPI_DOUBLE, MPI_SUM, lmp_->world);
}

/* ----------------------------------------------------------------------
   comm callbacks: forward copies owner rows into ghost rows, reverse sums ghost rows into
   the rows they were copied from (which may themselves be ghosts of an earlier swap).
------------------------------------------------------------------------- */

int LammpsHaloExchange::pack_forward(int n, const int *list, double *buf) const
{
  if (block_on_device_) {
    packer_->pack(block_, width_, list, n, buf);
    return n * width_;
  }
  int m = 0;
  for (int i = 0; i < n; ++i) {
    const double *row = block_ + static_cast<std::size_t>(list[i]) * width_;
    for (int c = 0; c < width_; ++c) buf[m++] = row[c];
  }
  return m;
}

void LammpsHaloExchange::unpack_forward(int n, int first, const double *buf)
{
  if (block_on_device_) return packer_->unpack(buf, n, first, width_, block_);
  std::copy(buf, buf + static_cast<std::size_t>(n) * width_, block_ + static_cast<std::size_t>(first) * width_);
}

int LammpsHaloExchange::pack_reverse(int n, int first, double *buf) const
{
  if (block_on_device_) {
    packer_->pack_range(block_, first, n, width_, buf);
    return n * width_;
  }
  const double *rows = block_ + static_cast<std::size_t>(first) * width_;
  std::copy(rows, rows + static_cast<std::size_t>(n) * width_, buf);
  return n * width_;
}

void LammpsHaloExchange::unpack_reverse(int n, const int *list, const double *buf)
{
  if (block_on_device_) return packer_->unpack_add(buf, list, n, width_, block_);
  int m = 0;
  for (int i = 0; i < n; ++i) {
    double *row = block_ + static_cast<std::size_t>(list[i]) * width_;
    for (int c = 0; c < width_; ++c) row[c] += buf[m++];
  }
}
