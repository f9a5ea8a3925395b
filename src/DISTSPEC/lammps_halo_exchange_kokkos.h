/* -*- c++ -*- ----------------------------------------------------------
   DISTSPEC: the core's HaloExchange over LAMMPS ghost atoms, for rows that live in Kokkos
   memory on DeviceType (pair_style distspec/kk).

   Rows [owned | halo] are atoms [0, nlocal) and ghosts [nlocal, nlocal+nghost), as in
   LammpsHaloExchangeBase. Exchanges run through the pair style's comm callbacks, with the same
   kernels on both of LAMMPS' paths:
   - CommKokkos' device path (a pair whose execution_space is Device) calls the Kokkos
     callbacks, which pack and unpack the rows in place on DeviceType;
   - the classic path (host execution spaces; every reverse comm of a pair in 2021) calls the
     host callbacks with host buffers and send lists. Where DeviceType's memory is host memory
     the kernels run on the rows themselves; otherwise they run on DeviceType, and only the
     swap's buffer (and its send list) crosses PCIe, never the block. A swap with this rank
     itself packs nothing and copies its rows in place in the unpack (comm_brick_swaps.h).
   Rows in GPU memory on one rank skip LAMMPS' comm: every ghost is an image of an owned atom,
   and an index map (LammpsSelfImages) exchanges them on the model's stream, so that the host
   waits for nothing. On more ranks, Kokkos' stream is ordered after the model's by a CUDA event
   before the comm call, and the model's after Kokkos' by another after it, not by host fences.
------------------------------------------------------------------------- */

#ifndef LMP_DISTSPEC_LAMMPS_HALO_EXCHANGE_KOKKOS_H
#define LMP_DISTSPEC_LAMMPS_HALO_EXCHANGE_KOKKOS_H

#include "kokkos_type.h"

#include "lammps_halo_exchange_base.h"
#ifdef DISTSPEC_WITH_CUDA
#include "lammps_self_images.h"
#endif

namespace LAMMPS_NS {

template <class DeviceType> class LammpsHaloExchangeKokkos final : public LammpsHaloExchangeBase {
 public:
  using Unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
  // The block in flight: the model's rows, width values each.
  using Block = Kokkos::View<double **, Kokkos::LayoutRight, DeviceType, Unmanaged>;
  using HostBlock = Kokkos::View<double **, Kokkos::LayoutRight, LMPHostType, Unmanaged>;
  // Host callbacks can touch the rows themselves (Serial, OpenMP, Threads, CUDA UVM).
  static constexpr bool kHostReadable =
      Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename DeviceType::memory_space>::accessible;

  using LammpsHaloExchangeBase::LammpsHaloExchangeBase;
  using LammpsHaloExchangeBase::forward;
  using LammpsHaloExchangeBase::reverse;

  ~LammpsHaloExchangeKokkos() override;

  // Rows in GPU memory (a CUDA execution space) are packed where they are, by the Kokkos callbacks.
  bool accepts_device_rows() const override { return !kHostReadable; }
  // Kokkos kernels and a CUDA model's kernels still queued on the rows; none where one rank's
  // index map exchanges them on the model's stream.
  void wait_for_device() override;
  // The model's stream (cudaStream_t), which the comm calls are ordered with.
  void set_stream(void *stream) override;

  // data points to DeviceType memory.
  void forward(distspec::Rows<double> rows) override;
  void reverse(distspec::Rows<double> rows) override;
  void forward(distspec::Rows<float> rows) override;
  void reverse(distspec::Rows<float> rows) override;
  void all_reduce_sum(double *values, std::size_t n) override;

  // The Kokkos comm callbacks (CommKokkos' device path): one swap's send list and the comm
  // buffer, both on DeviceType.
  template <class SendList, class Buffer> int pack_forward_kokkos(int n, const SendList &list, const Buffer &buf)
  {
    pack_rows<DeviceType>(n, d_block_, list, buf);
    return n * width_;
  }
  template <class Buffer> void unpack_forward_kokkos(int n, int first, const Buffer &buf)
  {
    unpack_rows<DeviceType>(n, first, d_block_, buf);
  }

  // The host comm callbacks (classic path).
  int pack_forward(int n, const int *list, double *buf) override;
  void unpack_forward(int n, int first, const double *buf) override;
  int pack_reverse(int n, int first, double *buf) override;
  void unpack_reverse(int n, const int *list, const double *buf) override;

  // The kernels of both paths; public because CUDA compiles no lambda in a non-public member.
  // Forward: buf[i] = rows[list[i]]; rows[first + i] = buf[i].
  template <class Space, class Rows, class List, class Buf>
  static void pack_rows(int n, const Rows &rows, const List &list, const Buf &buf);
  template <class Space, class Rows, class Buf> static void unpack_rows(int n, int first, const Rows &rows, const Buf &buf);
  // Reverse: buf[i] = rows[first + i]; rows[list[i]] += buf[i] (a swap's list holds an atom once).
  template <class Space, class Rows, class Buf> static void pack_rows_range(int n, int first, const Rows &rows, const Buf &buf);
  template <class Space, class Rows, class List, class Buf>
  static void unpack_add_rows(int n, const Rows &rows, const List &list, const Buf &buf);
  // A swap with this rank itself, in place (comm_brick_swaps.h): rows[first + i] = rows[list[i]];
  // rows[list[i]] += rows[first + i].
  template <class Space, class Rows, class List>
  static void copy_rows(int n, int first, const Rows &rows, const List &list);
  template <class Space, class Rows, class List>
  static void add_rows_back(int n, int first, const Rows &rows, const List &list);
  // fp32 blocks travel as fp64 so reverse sums accumulate in fp64 and round once.
  template <class From, class To> static void convert(const char *label, std::size_t n, const From *from, To *to);

 protected:
  void bind(const distspec::Rows<double> &rows) override;
  void unbind() override;
  void zero_halo_rows(const distspec::Rows<double> &rows) override;

 private:
  // fp32 blocks through fp64 (d_wide_): `exchange` runs on the widened block.
  template <class Exchange> void widened(distspec::Rows<float> rows, Exchange exchange);
  // Device scratch for one swap of the classic path: its buffer and send list, grown only.
  Kokkos::View<double *, DeviceType> swap_buffer(std::size_t n);
  Kokkos::View<int *, DeviceType> swap_list(const int *list, int n);

  int width_ = 0;
  Block d_block_;
  HostBlock h_block_;    // the same rows, where DeviceType's memory is host memory
  Kokkos::View<double *, DeviceType> d_swap_buffer_;
  Kokkos::View<int *, DeviceType> d_swap_list_;
  // fp32 blocks widened to fp64; grows only.
  Kokkos::View<double *, DeviceType> d_wide_;

  // One rank's exchange of GPU rows without LAMMPS' comm, or nullptr (host rows, more ranks);
  // by_images runs it.
  distspec::HaloExchange *self_images(const void *block);
  template <class T, class Exchange> void by_images(const distspec::Rows<T> &rows, Exchange exchange);
  // Kokkos' stream waits for the model's work queued so far (before a comm call), and the model's
  // stream for Kokkos' (after it): CUDA events, no host wait. Nothing off CUDA.
  void kokkos_after_model();
  void model_after_kokkos();
  void *stream_ = nullptr;         // cudaStream_t of the model's work
  void *events_[2] = {nullptr, nullptr};    // cudaEvent_t: the model's, Kokkos'
#ifdef DISTSPEC_WITH_CUDA
  LammpsSelfImages images_;
#endif
};

/* ----------------------------------------------------------------------
   kernels
------------------------------------------------------------------------- */

template <class DeviceType>
template <class Space, class Rows, class List, class Buf>
void LammpsHaloExchangeKokkos<DeviceType>::pack_rows(int n, const Rows &rows, const List &list, const Buf &buf)
{
  const int width = rows.extent(1);
  Kokkos::parallel_for(
      "DistSpec::LammpsHaloExchangeKokkos::pack_forward", Kokkos::RangePolicy<Space>(0, n), KOKKOS_LAMBDA(const int i) {
        const int j = list(i);
        for (int c = 0; c < width; ++c) buf(i * width + c) = rows(j, c);
      });
}

template <class DeviceType>
template <class Space, class Rows, class Buf>
void LammpsHaloExchangeKokkos<DeviceType>::unpack_rows(int n, int first, const Rows &rows, const Buf &buf)
{
  const int width = rows.extent(1);
  Kokkos::parallel_for(
      "DistSpec::LammpsHaloExchangeKokkos::unpack_forward", Kokkos::RangePolicy<Space>(0, n), KOKKOS_LAMBDA(const int i) {
        for (int c = 0; c < width; ++c) rows(first + i, c) = buf(i * width + c);
      });
}

template <class DeviceType>
template <class Space, class Rows, class Buf>
void LammpsHaloExchangeKokkos<DeviceType>::pack_rows_range(int n, int first, const Rows &rows, const Buf &buf)
{
  const int width = rows.extent(1);
  Kokkos::parallel_for(
      "DistSpec::LammpsHaloExchangeKokkos::pack_reverse", Kokkos::RangePolicy<Space>(0, n), KOKKOS_LAMBDA(const int i) {
        for (int c = 0; c < width; ++c) buf(i * width + c) = rows(first + i, c);
      });
}

template <class DeviceType>
template <class Space, class Rows, class List, class Buf>
void LammpsHaloExchangeKokkos<DeviceType>::unpack_add_rows(int n, const Rows &rows, const List &list, const Buf &buf)
{
  const int width = rows.extent(1);
  Kokkos::parallel_for(
      "DistSpec::LammpsHaloExchangeKokkos::unpack_reverse", Kokkos::RangePolicy<Space>(0, n), KOKKOS_LAMBDA(const int i) {
        const int j = list(i);
        for (int c = 0; c < width; ++c) rows(j, c) += buf(i * width + c);
      });
}

template <class DeviceType>
template <class Space, class Rows, class List>
void LammpsHaloExchangeKokkos<DeviceType>::copy_rows(int n, int first, const Rows &rows, const List &list)
{
  const int width = rows.extent(1);
  Kokkos::parallel_for(
      "DistSpec::LammpsHaloExchangeKokkos::copy_self_swap", Kokkos::RangePolicy<Space>(0, n), KOKKOS_LAMBDA(const int i) {
        const int j = list(i);
        for (int c = 0; c < width; ++c) rows(first + i, c) = rows(j, c);
      });
}

template <class DeviceType>
template <class Space, class Rows, class List>
void LammpsHaloExchangeKokkos<DeviceType>::add_rows_back(int n, int first, const Rows &rows, const List &list)
{
  const int width = rows.extent(1);
  Kokkos::parallel_for(
      "DistSpec::LammpsHaloExchangeKokkos::add_self_swap", Kokkos::RangePolicy<Space>(0, n), KOKKOS_LAMBDA(const int i) {
        const int j = list(i);
        for (int c = 0; c < width; ++c) rows(j, c) += rows(first + i, c);
      });
}

template <class DeviceType>
template <class From, class To>
void LammpsHaloExchangeKokkos<DeviceType>::convert(const char *label, std::size_t n, const From *from, To *to)
{
  Kokkos::parallel_for(
      label, Kokkos::RangePolicy<DeviceType>(0, n), KOKKOS_LAMBDA(const std::size_t k) { to[k] = static_cast<To>(from[k]); });
}

}    // namespace LAMMPS_NS

#endif
