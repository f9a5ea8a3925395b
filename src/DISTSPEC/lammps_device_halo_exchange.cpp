/* ----------------------------------------------------------------------
   DISTSPEC: the LAMMPS halo exchange of a CUDA model's rows.
------------------------------------------------------------------------- */

#include "lammps_device_halo_exchange.h"

#include "distspec/halo/device_staging.h"

#include <vector>

using namespace LAMMPS_NS;

distspec::HaloExchange *LammpsDeviceHaloExchange::self_images(const void *block)
{
  if (!distspec::is_device_pointer(block)) return nullptr;
  return images_.for_step(lmp_, n_owned(), n_halo(), list_generation());
}

void LammpsDeviceHaloExchange::forward(distspec::Rows<double> rows)
{
  if (distspec::HaloExchange *images = self_images(rows.data)) return check_width(rows.width), images->forward(rows);
  LammpsHaloExchange::forward(rows);
}

void LammpsDeviceHaloExchange::reverse(distspec::Rows<double> rows)
{
  if (distspec::HaloExchange *images = self_images(rows.data)) return check_width(rows.width), images->reverse(rows);
  LammpsHaloExchange::reverse(rows);
}

// LAMMPS' comm reads the rows on the host, after the kernels that wrote them; the index map's
// kernels run on the model's stream, behind them, so they need no wait.
void LammpsDeviceHaloExchange::wait_for_device()
{
  if (images_.active(n_owned(), n_halo(), list_generation())) return;
  packer_.synchronize();
}

void LammpsDeviceHaloExchange::set_stream(void *stream)
{
  packer_.set_stream(stream);
  images_.set_stream(stream);
}

void LammpsDeviceHaloExchange::bind(const distspec::Rows<double> &rows)
{
  LammpsHaloExchange::bind(rows);
  block_on_device_ = distspec::is_device_pointer(rows.data);
  // LAMMPS' send lists hold until it reneighbours: uploaded once per build.
  packer_.keep_lists_for(list_generation());
}

void LammpsDeviceHaloExchange::zero_halo_rows(const distspec::Rows<double> &rows)
{
  if (!distspec::is_device_pointer(rows.data)) return LammpsHaloExchange::zero_halo_rows(rows);
  packer_.zero(rows.data, n_owned(), n_owned() + n_halo(), rows.width);
}

// fp32 device blocks are widened to fp64 on the GPU (see LammpsHaloExchange::forward).
void LammpsDeviceHaloExchange::forward(distspec::Rows<float> rows)
{
  if (!distspec::is_device_pointer(rows.data)) return LammpsHaloExchange::forward(rows);
  if (distspec::HaloExchange *images = self_images(rows.data)) return check_width(rows.width), images->forward(rows);
  LammpsHaloExchange::forward(distspec::Rows<double>{packer_.widen(rows.data, rows.size()), rows.rows, rows.width});
  packer_.narrow(rows.data, rows.size());
}

void LammpsDeviceHaloExchange::reverse(distspec::Rows<float> rows)
{
  if (!distspec::is_device_pointer(rows.data)) return LammpsHaloExchange::reverse(rows);
  if (distspec::HaloExchange *images = self_images(rows.data)) return check_width(rows.width), images->reverse(rows);
  LammpsHaloExchange::reverse(distspec::Rows<double>{packer_.widen(rows.data, rows.size()), rows.rows, rows.width});
  packer_.narrow(rows.data, rows.size());
}

// A CUDA model's partial sums in device memory go through the host: MPI need not be CUDA-aware.
void LammpsDeviceHaloExchange::all_reduce_sum(double *values, std::size_t n)
{
  if (!distspec::is_device_pointer(values)) return all_reduce_host(values, n);
  std::vector<double> host(n);
  packer_.copy(host.data(), values, n * sizeof(double));
  all_reduce_host(host.data(), n);
  packer_.copy(values, host.data(), n * sizeof(double));
}

/* ---------------------------------------------------------------------- */

// A swap with this rank itself (an undivided axis) stays on the device: its pack sends nothing,
// and its unpack copies the rows in place, with only the send list going up
// (comm_brick_swaps.h). Other swaps pack on the GPU and cross PCIe through LAMMPS' buffers.
int LammpsDeviceHaloExchange::pack_forward(int n, const int *list, double *buf)
{
  if (!block_on_device_) return LammpsHaloExchange::pack_forward(n, list, buf);
  SelfSwap self;
  if (!self_swaps().sends(list, self)) packer_.pack(block_, width_, list, n, buf);
  return n * width_;
}

void LammpsDeviceHaloExchange::unpack_forward(int n, int first, const double *buf)
{
  if (!block_on_device_) return LammpsHaloExchange::unpack_forward(n, first, buf);
  SelfSwap self;
  if (self_swaps().fills(first, n, self)) packer_.copy_rows(block_, width_, self.list, n, first);
  else packer_.unpack(buf, n, first, width_, block_);
}

int LammpsDeviceHaloExchange::pack_reverse(int n, int first, double *buf)
{
  if (!block_on_device_) return LammpsHaloExchange::pack_reverse(n, first, buf);
  SelfSwap self;
  if (!self_swaps().fills(first, n, self)) packer_.pack_range(block_, first, n, width_, buf);
  return n * width_;
}

void LammpsDeviceHaloExchange::unpack_reverse(int n, const int *list, const double *buf)
{
  if (!block_on_device_) return LammpsHaloExchange::unpack_reverse(n, list, buf);
  SelfSwap self;
  if (self_swaps().sends(list, self)) packer_.add_rows_back(block_, width_, list, n, self.first);
  else packer_.unpack_add(buf, list, n, width_, block_);
}
