/* ----------------------------------------------------------------------
   DISTSPEC: LAMMPS implementation of the core's halo exchange for Kokkos-resident rows.
------------------------------------------------------------------------- */

#include "lammps_halo_exchange_kokkos.h"

#include "atom_kokkos.h"
#include "atom_masks.h"
#include "comm.h"
#include "lammps.h"

#include "distspec/error.h"

#include <string>
#include <type_traits>

#ifdef DISTSPEC_WITH_CUDA
#include "distspec/halo/device_staging.h"
#endif
#if defined(DISTSPEC_WITH_CUDA) && defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#define DISTSPEC_KOKKOS_CUDA_EVENTS 1
#endif

using namespace LAMMPS_NS;

namespace {
// Whether a model handed over device memory; without CUDA kernels every model's values are host memory.
bool distspec_device_values(const void *values)
{
#ifdef DISTSPEC_WITH_CUDA
  return distspec::is_device_pointer(values);
#else
  (void) values;
  return false;
#endif
}

// Whether DeviceType's kernels run on a CUDA stream of Kokkos'.
template <class DeviceType> constexpr bool on_cuda()
{
#ifdef KOKKOS_ENABLE_CUDA
  return std::is_same<typename DeviceType::execution_space, Kokkos::Cuda>::value;
#else
  return false;
#endif
}

#ifdef DISTSPEC_KOKKOS_CUDA_EVENTS
void check_cuda(cudaError_t status, const char *what)
{
  if (status != cudaSuccess)
    throw distspec::Error("halo.device", "", std::string("distspec/kk halo exchange: ") + what + " failed: " +
                              cudaGetErrorString(status));
}

// `waiting` waits on the GPU for the work queued on `done` so far (event: created on first use).
void stream_waits_for(void *&event, cudaStream_t done, cudaStream_t waiting)
{
  if (done == waiting) return;
  if (!event) {
    cudaEvent_t created = nullptr;
    check_cuda(cudaEventCreateWithFlags(&created, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    event = created;
  }
  check_cuda(cudaEventRecord(static_cast<cudaEvent_t>(event), done), "cudaEventRecord");
  check_cuda(cudaStreamWaitEvent(waiting, static_cast<cudaEvent_t>(event), 0), "cudaStreamWaitEvent");
}
#endif
}    // namespace

/* ----------------------------------------------------------------------
   ordering with the model's stream
------------------------------------------------------------------------- */

template <class DeviceType> LammpsHaloExchangeKokkos<DeviceType>::~LammpsHaloExchangeKokkos()
{
#ifdef DISTSPEC_KOKKOS_CUDA_EVENTS
  for (void *event : events_)
    if (event) cudaEventDestroy(static_cast<cudaEvent_t>(event));
#endif
}

template <class DeviceType> void LammpsHaloExchangeKokkos<DeviceType>::set_stream(void *stream)
{
  stream_ = stream;
#ifdef DISTSPEC_WITH_CUDA
  images_.set_stream(stream);
#endif
}

template <class DeviceType> void LammpsHaloExchangeKokkos<DeviceType>::kokkos_after_model()
{
#ifdef DISTSPEC_KOKKOS_CUDA_EVENTS
  if constexpr (on_cuda<DeviceType>())
    stream_waits_for(events_[0], static_cast<cudaStream_t>(stream_), typename DeviceType::execution_space().cuda_stream());
#endif
}

template <class DeviceType> void LammpsHaloExchangeKokkos<DeviceType>::model_after_kokkos()
{
#ifdef DISTSPEC_KOKKOS_CUDA_EVENTS
  if constexpr (on_cuda<DeviceType>())
    stream_waits_for(events_[1], typename DeviceType::execution_space().cuda_stream(), static_cast<cudaStream_t>(stream_));
#endif
}

template <class DeviceType> void LammpsHaloExchangeKokkos<DeviceType>::wait_for_device()
{
#ifdef DISTSPEC_WITH_CUDA
  if (lmp_->comm->nprocs == 1 && images_.active(n_owned(), n_halo(), list_generation())) return;
#endif
  Kokkos::fence();
}

template <class DeviceType>
distspec::HaloExchange *LammpsHaloExchangeKokkos<DeviceType>::self_images(const void *block)
{
#ifdef DISTSPEC_WITH_CUDA
  if (kHostReadable || lmp_->comm->nprocs != 1 || !distspec_device_values(block)) return nullptr;
  // The ghosts' IDs on the host, once per build: the map is made from them.
  if (!images_.current(n_owned(), n_halo(), list_generation()))
    static_cast<AtomKokkos *>(lmp_->atom)->sync(Host, TAG_MASK);
  return images_.for_step(lmp_, n_owned(), n_halo(), list_generation());
#else
  (void) block;
  return nullptr;
#endif
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
  // The rows are complete before either comm path reads them: on CUDA, Kokkos' stream already
  // waits for the model's (kokkos_after_model).
  if constexpr (!on_cuda<DeviceType>()) DeviceType().fence();
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
  kokkos_after_model();
  convert("DistSpec::LammpsHaloExchangeKokkos::widen", n, rows.data, d_wide_.data());
  exchange(distspec::Rows<double>{d_wide_.data(), rows.rows, rows.width});
  convert("DistSpec::LammpsHaloExchangeKokkos::narrow", n, d_wide_.data(), rows.data);
  // The model reads the rows next.
  if constexpr (on_cuda<DeviceType>()) model_after_kokkos();
  else DeviceType().fence();
}

// One rank's index map on the model's stream; Kokkos' kernels that read the rows next (the
// style's write-back of folded outputs) wait for it.
template <class DeviceType>
template <class T, class Exchange>
void LammpsHaloExchangeKokkos<DeviceType>::by_images(const distspec::Rows<T> &rows, Exchange exchange)
{
  check_width(rows.width);
  exchange();
  kokkos_after_model();
}

template <class DeviceType> void LammpsHaloExchangeKokkos<DeviceType>::forward(distspec::Rows<double> rows)
{
  if (distspec::HaloExchange *images = self_images(rows.data)) return by_images(rows, [&] { images->forward(rows); });
  kokkos_after_model();
  LammpsHaloExchangeBase::forward(rows);
  model_after_kokkos();
}

template <class DeviceType> void LammpsHaloExchangeKokkos<DeviceType>::reverse(distspec::Rows<double> rows)
{
  if (distspec::HaloExchange *images = self_images(rows.data)) return by_images(rows, [&] { images->reverse(rows); });
  kokkos_after_model();
  LammpsHaloExchangeBase::reverse(rows);
  model_after_kokkos();
}

template <class DeviceType> void LammpsHaloExchangeKokkos<DeviceType>::forward(distspec::Rows<float> rows)
{
  if (distspec::HaloExchange *images = self_images(rows.data)) return by_images(rows, [&] { images->forward(rows); });
  widened(rows, [this](distspec::Rows<double> wide) { LammpsHaloExchangeBase::forward(wide); });
}

template <class DeviceType> void LammpsHaloExchangeKokkos<DeviceType>::reverse(distspec::Rows<float> rows)
{
  if (distspec::HaloExchange *images = self_images(rows.data)) return by_images(rows, [&] { images->reverse(rows); });
  widened(rows, [this](distspec::Rows<double> wide) { LammpsHaloExchangeBase::reverse(wide); });
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
  SelfSwap self;
  if (self_swaps().sends(list, self)) return n * width_;
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
  SelfSwap self;
  if (self_swaps().fills(first, n, self)) {
    if (kHostReadable) {
      copy_rows<LMPHostType>(n, first, h_block_, HostInts(self.list, n));
      LMPHostType().fence();
    } else {
      copy_rows<DeviceType>(n, first, d_block_, swap_list(self.list, n));
      DeviceType().fence();
    }
    return;
  }
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
  SelfSwap self;
  if (self_swaps().fills(first, n, self)) return n * width_;
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
  SelfSwap self;
  if (self_swaps().sends(list, self)) {
    if (kHostReadable) {
      add_rows_back<LMPHostType>(n, self.first, h_block_, HostInts(list, n));
      LMPHostType().fence();
    } else {
      add_rows_back<DeviceType>(n, self.first, d_block_, swap_list(list, n));
      DeviceType().fence();
    }
    return;
  }
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
