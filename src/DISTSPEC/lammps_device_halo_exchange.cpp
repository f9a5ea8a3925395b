/* ----------------------------------------------------------------------
   DISTSPEC: the LAMMPS halo exchange of a CUDA model's rows.
------------------------------------------------------------------------- */

#include "lammps_device_halo_exchange.h"

#include "distspec/halo/device_staging.h"

#include "atom.h"
#include "comm.h"
#include "lammps.h"
#include "neighbor.h"

#include <utility>
#include <vector>

using namespace LAMMPS_NS;

distspec::HaloExchange *LammpsDeviceHaloExchange::self_images(const void *block)
{
  if (!distspec::is_device_pointer(block) || lmp_->comm->nprocs != 1) return nullptr;
  Atom *atom = lmp_->atom;
  if (atom->nlocal != static_cast<int>(n_owned()) || atom->nghost != static_cast<int>(n_halo())) return nullptr;
  if (images_current()) return images_.get();
  images_.reset();
  images_generation_ = list_generation();
  images_owned_ = n_owned();
  images_halo_ = n_halo();
  if (!atom->tag_enable || atom->map_style == Atom::MAP_NONE) return nullptr;
  std::vector<std::size_t> owner(n_halo());
  for (std::size_t h = 0; h < n_halo(); ++h) {
    const int i = atom->map(atom->tag[n_owned() + h]);
    if (i < 0 || i >= atom->nlocal) return nullptr;
    owner[h] = static_cast<std::size_t>(i);
  }
  images_ = std::make_unique<distspec::DeviceIndexedHaloExchange>(n_owned(), std::move(owner));
  return images_.get();
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

// Ghosts, their IDs and the map change only when LAMMPS rebuilds its lists.
bool LammpsDeviceHaloExchange::images_current() const
{
  return list_generation() == images_generation_ && n_owned() == images_owned_ &&
      n_halo() == images_halo_;
}

// LAMMPS' comm reads the rows on the host, after the kernels that wrote them; the index map's
// kernels run in the same queue as the graph's (the device's default stream, which a LAMMPS
// process leaves current), so they need no wait.
void LammpsDeviceHaloExchange::wait_for_device()
{
  if (images_ && images_current()) return;
  distspec::DeviceRowPacker::synchronize();
}

void LammpsDeviceHaloExchange::bind(const distspec::Rows<double> &rows)
{
  LammpsHaloExchange::bind(rows);
  block_on_device_ = distspec::is_device_pointer(rows.data);
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
  distspec::DeviceRowPacker::copy(host.data(), values, n * sizeof(double));
  all_reduce_host(host.data(), n);
  distspec::DeviceRowPacker::copy(values, host.data(), n * sizeof(double));
}

/* ---------------------------------------------------------------------- */

// A swap with this rank itself (an undivided axis) stays on the device: its rows are copied in
// place, and only its send list goes up (comm_brick_swaps.h). Other swaps pack on the GPU and
// cross PCIe through LAMMPS' buffers.
int LammpsDeviceHaloExchange::pack_forward(int n, const int *list, double *buf)
{
  if (!block_on_device_) return LammpsHaloExchange::pack_forward(n, list, buf);
  SelfSwap self;
  if (self_swaps_.sending(list, self)) {
    packer_.copy_rows(block_, width_, list, n, self.first);
    skip_unpack_ = true;
  } else {
    packer_.pack(block_, width_, list, n, buf);
  }
  return n * width_;
}

void LammpsDeviceHaloExchange::unpack_forward(int n, int first, const double *buf)
{
  if (!block_on_device_) return LammpsHaloExchange::unpack_forward(n, first, buf);
  if (std::exchange(skip_unpack_, false)) return;
  packer_.unpack(buf, n, first, width_, block_);
}

int LammpsDeviceHaloExchange::pack_reverse(int n, int first, double *buf)
{
  if (!block_on_device_) return LammpsHaloExchange::pack_reverse(n, first, buf);
  SelfSwap self;
  if (self_swaps_.receiving(first, n, self)) {
    packer_.add_rows_back(block_, width_, self.list, n, first);
    skip_unpack_ = true;
  } else {
    packer_.pack_range(block_, first, n, width_, buf);
  }
  return n * width_;
}

void LammpsDeviceHaloExchange::unpack_reverse(int n, const int *list, const double *buf)
{
  if (!block_on_device_) return LammpsHaloExchange::unpack_reverse(n, list, buf);
  if (std::exchange(skip_unpack_, false)) return;
  packer_.unpack_add(buf, list, n, width_, block_);
}
