/* ----------------------------------------------------------------------
   DISTSPEC: LAMMPS implementation of the core's halo exchange for Kokkos-resident rows.
------------------------------------------------------------------------- */

#include "lammps_halo_exchange_kokkos.h"

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

/* ----------------------------------------------------------------------
   the block in flight
------------------------------------------------------------------------- */

template <class DeviceType> void LammpsHaloExchangeKokkos<DeviceType>::bind(const distspec::Rows<double> &rows)
{
  check_width(rows.width);
  width_ = rows.width;
  d_block_ = Block(rows.data, rows.rows, rows.width);
  if (kHostReadable) h_block_ = HostBlock(rows.data, rows.rows, rows.width);
  // The rows are complete before either comm path reads them.
  DeviceType().fence();
}

template <class DeviceType> void LammpsHaloExchangeKokkos<DeviceType>::unbind()
{
  d_block_ = Block();
  h_block_ = HostBlock();
}

template <class DeviceType>
Kokkos::View<double *, DeviceType> LammpsHaloExchangeKokkos<DeviceType>::swap_buffer(std::size_t n)
{
  if (d_swap_buffer_.extent(0) < n)
    d_swap_buffer_ = Kokkos::View<double *, DeviceType>(
        Kokkos::ViewAllocateWithoutInitializing("DistSpec::LammpsHaloExchangeKokkos::swap_buffer"), n + n / 8);
  return Kokkos::subview(d_swap_buffer_, Kokkos::pair<std::size_t, std::size_t>(0, n));
}

template <class DeviceType>
Kokkos::View<int *, DeviceType> LammpsHaloExchangeKokkos<DeviceType>::swap_list(const int *list, int n)
{
  const std::size_t count = n;
  if (d_swap_list_.extent(0) < count)
    d_swap_list_ = Kokkos::View<int *, DeviceType>(
        Kokkos::ViewAllocateWithoutInitializing("DistSpec::LammpsHaloExchangeKokkos::swap_list"), count + count / 8);
  auto to = Kokkos::subview(d_swap_list_, Kokkos::pair<std::size_t, std::size_t>(0, count));
  Kokkos::deep_copy(to, Kokkos::View<const int *, LMPHostType, Unmanaged>(list, count));
  return to;
}

/* ----------------------------------------------------------------------
   the exchanges the core asks for
------------------------------------------------------------------------- */

template <class DeviceType>
void LammpsHaloExchangeKokkos<DeviceType>::zero_halo_rows(const distspec::Rows<double> &rows)
{
  Kokkos::deep_copy(Kokkos::subview(Block(rows.data, rows.rows, rows.width),
                                    Kokkos::pair<std::size_t, std::size_t>(n_owned(), n_owned() + n_halo()), Kokkos::ALL()),
                    0.0);
}

template <class DeviceType>
template <class Exchange>
void LammpsHaloExchangeKokkos<DeviceType>::widened(distspec::Rows<float> rows, Exchange exchange)
{
  const std::size_t n = rows.size();
  if (d_wide_.extent(0) < n)
    d_wide_ = Kokkos::View<double *, DeviceType>(Kokkos::ViewAllocateWithoutInitializing("DistSpec::LammpsHaloExchangeKokkos::wide"), n);
  convert("DistSpec::LammpsHaloExchangeKokkos::widen", n, rows.data, d_wide_.data());
  exchange(distspec::Rows<double>{d_wide_.data(), rows.rows, rows.width});
  convert("DistSpec::LammpsHaloExchangeKokkos::narrow", n, d_wide_.data(), rows.data);
  // The model reads the rows next.
  DeviceType().fence();
}

template <class DeviceType> void LammpsHaloExchangeKokkos<DeviceType>::forward(distspec::Rows<float> rows)
{
  widened(rows, [this](distspec::Rows<double> wide) { forward(wide); });
}

template <class DeviceType> void LammpsHaloExchangeKokkos<DeviceType>::reverse(distspec::Rows<float> rows)
{
  widened(rows, [this](distspec::Rows<double> wide) { reverse(wide); });
}

// The values are a model's per-rank partial sums: host memory, or, from a CUDA model, device
// memory, which goes through the host (MPI need not be CUDA-aware).
template <class DeviceType> void LammpsHaloExchangeKokkos<DeviceType>::all_reduce_sum(double *values, std::size_t n)
{
  if (!kHostReadable && distspec_device_values(values)) {
    using Values = Kokkos::View<double *, DeviceType, Unmanaged>;
    auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), Values(values, n));
    all_reduce_host(host.data(), n);
    Kokkos::deep_copy(Values(values, n), host);
    return;
  }
  all_reduce_host(values, n);
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
  const std::size_t size = std::size_t(n) * width_;
  if (kHostReadable) {
    pack_rows<LMPHostType>(n, h_block_, HostInts(list, n), HostDoubles(buf, size));
    LMPHostType().fence();
  } else {
    auto d_buf = swap_buffer(size);
    pack_rows<DeviceType>(n, d_block_, swap_list(list, n), d_buf);
    Kokkos::deep_copy(HostDoubles(buf, size), d_buf);
  }
  return n * width_;
}

template <class DeviceType> void LammpsHaloExchangeKokkos<DeviceType>::unpack_forward(int n, int first, const double *buf)
{
  const std::size_t size = std::size_t(n) * width_;
  if (kHostReadable) {
    unpack_rows<LMPHostType>(n, first, h_block_, HostConstDoubles(buf, size));
    LMPHostType().fence();
  } else {
    auto d_buf = swap_buffer(size);
    Kokkos::deep_copy(d_buf, HostConstDoubles(buf, size));
    unpack_rows<DeviceType>(n, first, d_block_, d_buf);
    DeviceType().fence();
  }
}

template <class DeviceType> int LammpsHaloExchangeKokkos<DeviceType>::pack_reverse(int n, int first, double *buf)
{
  const std::size_t size = std::size_t(n) * width_;
  if (kHostReadable) {
    pack_rows_range<LMPHostType>(n, first, h_block_, HostDoubles(buf, size));
    LMPHostType().fence();
  } else {
    auto d_buf = swap_buffer(size);
    pack_rows_range<DeviceType>(n, first, d_block_, d_buf);
    Kokkos::deep_copy(HostDoubles(buf, size), d_buf);
  }
  return n * width_;
}

template <class DeviceType> void LammpsHaloExchangeKokkos<DeviceType>::unpack_reverse(int n, const int *list, const double *buf)
{
  const std::size_t size = std::size_t(n) * width_;
  if (kHostReadable) {
    unpack_add_rows<LMPHostType>(n, h_block_, HostInts(list, n), HostConstDoubles(buf, size));
    LMPHostType().fence();
  } else {
    auto d_list = swap_list(list, n);
    auto d_buf = swap_buffer(size);
    Kokkos::deep_copy(d_buf, HostConstDoubles(buf, size));
    unpack_add_rows<DeviceType>(n, d_block_, d_list, d_buf);
    DeviceType().fence();
  }
}

namespace LAMMPS_NS {
template class LammpsHaloExchangeKokkos<LMPDeviceType>;
#ifdef LMP_KOKKOS_GPU
template class LammpsHaloExchangeKokkos<LMPHostType>;
#endif
}    // namespace LAMMPS_NS
