/* ----------------------------------------------------------------------
   DISTSPEC: LAMMPS implementation of the core's halo exchange for Kokkos-resident rows.
------------------------------------------------------------------------- */

#include "lammps_halo_exchange_kokkos.h"

#include "lammps_compat.h"

#include "comm.h"
#include "lammps.h"
#include "pair.h"

#include "distspec/error.h"

#include <string>

#ifdef DISTSPEC_WITH_CUDA
#include "distspec/halo/device_staging.h"
#endif

using namespace LAMMPS_NS;

namespace {
// Whether a model handed over device memory; without CUDA kernels every model's values are host memory.
bool distspec_device_values(const double *values)
{
#ifdef DISTSPEC_WITH_CUDA
  return distspec::is_device_pointer(values);
#else
  (void) values;
  return false;
#endif
}
}    // namespace

template <class DeviceType> int LammpsHaloExchangeKokkos<DeviceType>::n_ranks() const
{
  return lmp_->comm->nprocs;
}

template <class DeviceType> void LammpsHaloExchangeKokkos<DeviceType>::check_width(int width) const
{
  if (width > max_width_)
    throw distspec::Error("halo.width", "", "a halo exchange of rows " + std::to_string(width) +
                                  " values wide exceeds the pair style's comm buffer width " +
                                  std::to_string(max_width_),
                          "the model's comm_width must cover its widest exchanged row");
}

/* ----------------------------------------------------------------------
   the block in flight
------------------------------------------------------------------------- */

template <class DeviceType> void LammpsHaloExchangeKokkos<DeviceType>::bind(const distspec::Rows<double> &rows)
{
  check_width(rows.width);
  width_ = rows.width;
  d_block_ = Block(rows.data, rows.rows, rows.width);
  if (kHostReadable) h_block_ = HostBlock(rows.data, rows.rows, rows.width);
  staged_ = false;
  // The rows are complete before either comm path reads them.
  DeviceType().fence();
}

// Rows the host callbacks may read and write; mirrored to the host once per exchange.
template <class DeviceType>
typename LammpsHaloExchangeKokkos<DeviceType>::HostBlock LammpsHaloExchangeKokkos<DeviceType>::host_rows()
{
  if (kHostReadable || staged_) return h_block_;
  const std::size_t n = d_block_.size();
  if (k_host_stage_.extent(0) < n) k_host_stage_ = Kokkos::DualView<double *, DeviceType>("DistSpec::LammpsHaloExchangeKokkos::host_stage", n);
  const Kokkos::pair<std::size_t, std::size_t> all(0, n);
  Kokkos::deep_copy(Kokkos::subview(k_host_stage_.template view<DeviceType>(), all),
                    Kokkos::View<double *, DeviceType, Unmanaged>(d_block_.data(), n));
  k_host_stage_.template modify<DeviceType>();
  k_host_stage_.template sync<LMPHostType>();
  h_block_ = HostBlock(k_host_stage_.h_view.data(), d_block_.extent(0), d_block_.extent(1));
  staged_ = true;
  return h_block_;
}

template <class DeviceType> void LammpsHaloExchangeKokkos<DeviceType>::host_rows_modified()
{
  if (staged_) k_host_stage_.template modify<LMPHostType>();
}

// Rows the host callbacks changed go back to DeviceType.
template <class DeviceType> void LammpsHaloExchangeKokkos<DeviceType>::unbind()
{
  if (staged_ && k_host_stage_.template need_sync<DeviceType>()) {
    k_host_stage_.template sync<DeviceType>();
    const std::size_t n = d_block_.size();
    Kokkos::deep_copy(Kokkos::View<double *, DeviceType, Unmanaged>(d_block_.data(), n),
                      Kokkos::subview(k_host_stage_.template view<DeviceType>(), Kokkos::pair<std::size_t, std::size_t>(0, n)));
  }
  d_block_ = Block();
  h_block_ = HostBlock();
  staged_ = false;
}

/* ----------------------------------------------------------------------
   the exchanges the core asks for
------------------------------------------------------------------------- */

template <class DeviceType> void LammpsHaloExchangeKokkos<DeviceType>::forward(distspec::Rows<double> rows)
{
  bind(rows);
  distspec_compat::forward_comm(lmp_->comm, pair_);
  unbind();
}

template <class DeviceType> void LammpsHaloExchangeKokkos<DeviceType>::reverse(distspec::Rows<double> rows)
{
  bind(rows);
  distspec_compat::reverse_comm(lmp_->comm, pair_);
  unbind();
  // Halo rows have been summed into their owners: they hold nothing of their own any more.
  Kokkos::deep_copy(Kokkos::subview(Block(rows.data, rows.rows, rows.width),
                                    Kokkos::pair<std::size_t, std::size_t>(n_owned_, n_owned_ + n_halo_), Kokkos::ALL()),
                    0.0);
}

template <class DeviceType> void LammpsHaloExchangeKokkos<DeviceType>::forward(distspec::Rows<float> rows)
{
  const std::size_t n = rows.size();
  if (d_wide_.extent(0) < n)
    d_wide_ = Kokkos::View<double *, DeviceType>(Kokkos::ViewAllocateWithoutInitializing("DistSpec::LammpsHaloExchangeKokkos::wide"), n);
  convert("DistSpec::LammpsHaloExchangeKokkos::widen", n, rows.data, d_wide_.data());
  forward(distspec::Rows<double>{d_wide_.data(), rows.rows, rows.width});
  convert("DistSpec::LammpsHaloExchangeKokkos::narrow", n, d_wide_.data(), rows.data);
  // The model reads the rows next.
  DeviceType().fence();
}

template <class DeviceType> void LammpsHaloExchangeKokkos<DeviceType>::reverse(distspec::Rows<float> rows)
{
  const std::size_t n = rows.size();
  if (d_wide_.extent(0) < n)
    d_wide_ = Kokkos::View<double *, DeviceType>(Kokkos::ViewAllocateWithoutInitializing("DistSpec::LammpsHaloExchangeKokkos::wide"), n);
  convert("DistSpec::LammpsHaloExchangeKokkos::widen", n, rows.data, d_wide_.data());
  reverse(distspec::Rows<double>{d_wide_.data(), rows.rows, rows.width});
  convert("DistSpec::LammpsHaloExchangeKokkos::narrow", n, d_wide_.data(), rows.data);
  DeviceType().fence();
}

// The values are a model's per-rank partial sums: host memory, or, from a CUDA model, device
// memory, which goes through the host (MPI need not be CUDA-aware).
template <class DeviceType> void LammpsHaloExchangeKokkos<DeviceType>::all_reduce_sum(double *values, std::size_t n)
{
  if (!kHostReadable && distspec_device_values(values)) {
    using Values = Kokkos::View<double *, DeviceType, Unmanaged>;
    auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), Values(values, n));
    MPI_Allreduce(MPI_IN_PLACE, host.data(), static_cast<int>(n), MPI_DOUBLE, MPI_SUM, lmp_->world);
    Kokkos::deep_copy(Values(values, n), host);
    return;
  }
  MPI_Allreduce(MPI_IN_PLACE, values, static_cast<int>(n), MPI_DOUBLE, MPI_SUM, lmp_->world);
}

/* ----------------------------------------------------------------------
   host comm callbacks: the kernels run on the host, then fence: LAMMPS sends or reads next
------------------------------------------------------------------------- */

namespace {
using HostInts = Kokkos::View<const int *, LMPHostType, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
using HostDoubles = Kokkos::View<double *, LMPHostType, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
using HostConstDoubles = Kokkos::View<const double *, LMPHostType, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
}    // namespace

template <class DeviceType> int LammpsHaloExchangeKokkos<DeviceType>::pack_forward(int n, const int *list, double *buf)
{
  pack_rows<LMPHostType>(n, host_rows(), HostInts(list, n), HostDoubles(buf, std::size_t(n) * width_));
  LMPHostType().fence();
  return n * width_;
}

template <class DeviceType> void LammpsHaloExchangeKokkos<DeviceType>::unpack_forward(int n, int first, const double *buf)
{
  unpack_rows<LMPHostType>(n, first, host_rows(), HostConstDoubles(buf, std::size_t(n) * width_));
  LMPHostType().fence();
  host_rows_modified();
}

template <class DeviceType> int LammpsHaloExchangeKokkos<DeviceType>::pack_reverse(int n, int first, double *buf)
{
  pack_rows_range<LMPHostType>(n, first, host_rows(), HostDoubles(buf, std::size_t(n) * width_));
  LMPHostType().fence();
  return n * width_;
}

template <class DeviceType> void LammpsHaloExchangeKokkos<DeviceType>::unpack_reverse(int n, const int *list, const double *buf)
{
  unpack_add_rows<LMPHostType>(n, host_rows(), HostInts(list, n), HostConstDoubles(buf, std::size_t(n) * width_));
  LMPHostType().fence();
  host_rows_modified();
}

namespace LAMMPS_NS {
template class LammpsHaloExchangeKokkos<LMPDeviceType>;
#ifdef LMP_KOKKOS_GPU
template class LammpsHaloExchangeKokkos<LMPHostType>;
#endif
}    // namespace LAMMPS_NS
