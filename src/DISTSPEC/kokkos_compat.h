/* -*- c++ -*- ----------------------------------------------------------
   DISTSPEC: every KOKKOS-package API difference pair_style distspec/kk straddles, in one place
   (lammps_compat.h holds those of plain LAMMPS). Compiled only where LAMMPS has KOKKOS;
   LAMMPS_VERSION_NUMBER (e.g. 20210929) is derived from version.h by CMake.

   Breaks (DESIGN.md, "LAMMPS versions"):
   - 24 Mar 2022: a neighbour request is an object found with find_request() and flagged with
     set_kokkos_host() / set_kokkos_device(), no longer fields of neighbor->requests[].
   - early 2025 (4 Feb 2025 is the first release this project meets with it): the pair's Kokkos
     forward-comm callback gets one swap's send list (DAT::tdual_int_1d) instead of the 2-D list
     plus the swap index.
   - 10 Sep 2025: comm buffers are DAT::tdual_double_1d (were tdual_xfloat_1d), and the KOKKOS
     float types were renamed (X_FLOAT -> KK_FLOAT, t_f_array -> t_kkacc_1d_3). The style never
     names those: it reads atomKK's views through `auto` and keeps its own views in fp64.
------------------------------------------------------------------------- */

#ifndef LMP_DISTSPEC_KOKKOS_COMPAT_H
#define LMP_DISTSPEC_KOKKOS_COMPAT_H

#include "kokkos_type.h"
#include "neigh_request.h"
#include "neighbor.h"

#include <type_traits>

#ifndef LAMMPS_VERSION_NUMBER
#error "LAMMPS_VERSION_NUMBER must be defined by the build (see cmake/DistspecLAMMPS.cmake)"
#endif

namespace LAMMPS_NS {
namespace distspec_compat {

// The buffer CommKokkos hands a pair's Kokkos comm callbacks.
#if LAMMPS_VERSION_NUMBER >= 20250910
using KokkosCommBuffer = DAT::tdual_double_1d;
#else
using KokkosCommBuffer = DAT::tdual_xfloat_1d;
#endif

// KokkosBase::pack_forward_comm_kokkos' parameters, and the send list of the swap being packed
// as a 1-D view on DeviceType, for use in its body (the macros name the parameters so the two
// go together).
#if LAMMPS_VERSION_NUMBER >= 20250204
using KokkosSendList = DAT::tdual_int_1d;
#define DISTSPEC_PACK_FORWARD_COMM_KOKKOS_PARAMS                                                         \
  int n, LAMMPS_NS::distspec_compat::KokkosSendList k_sendlist,                                          \
      LAMMPS_NS::distspec_compat::KokkosCommBuffer &buf, int pbc_flag, int *pbc
#define DISTSPEC_SWAP_SENDLIST(DeviceType) (k_sendlist.template view<DeviceType>())
#else
using KokkosSendList = DAT::tdual_int_2d;
#define DISTSPEC_PACK_FORWARD_COMM_KOKKOS_PARAMS                                                         \
  int n, LAMMPS_NS::distspec_compat::KokkosSendList k_sendlist, int iswap,                               \
      LAMMPS_NS::distspec_compat::KokkosCommBuffer &buf, int pbc_flag, int *pbc
#define DISTSPEC_SWAP_SENDLIST(DeviceType) \
  (Kokkos::subview(k_sendlist.template view<DeviceType>(), iswap, Kokkos::ALL()))
#endif

// Marks the pair's (already made) neighbour request as one KOKKOS builds on DeviceType, as
// pair_eam_kokkos does: /kk/host lists on the host, /kk and /kk/device lists on LMPDeviceType.
template <class DeviceType, class PairT> inline void build_request_with_kokkos(Neighbor *neighbor, PairT *pair)
{
  constexpr bool on_host =
      std::is_same<DeviceType, LMPHostType>::value && !std::is_same<DeviceType, LMPDeviceType>::value;
  constexpr bool on_device = std::is_same<DeviceType, LMPDeviceType>::value;
#if LAMMPS_VERSION_NUMBER >= 20220324
  NeighRequest *request = neighbor->find_request(pair);
  request->set_kokkos_host(on_host);
  request->set_kokkos_device(on_device);
#else
  (void) pair;
  NeighRequest *request = neighbor->requests[neighbor->nrequest - 1];
  request->kokkos_host = on_host ? 1 : 0;
  request->kokkos_device = on_device ? 1 : 0;
#endif
}

}    // namespace distspec_compat
}    // namespace LAMMPS_NS

#endif
