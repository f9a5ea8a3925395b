/* -*- c++ -*- ----------------------------------------------------------
   DISTSPEC: every LAMMPS and KOKKOS-package version difference the package straddles, in one
   place: no other file tests a version. LAMMPS_VERSION_NUMBER (e.g. 20210929) is derived from
   version.h by CMake, DISTSPEC_LAMMPS_PAIR_FINISH from pair.h.

   Breaks (DESIGN.md, "LAMMPS versions"):
   - after 29 Sep 2021: Finish calls Pair::finish() at the end of a run.
   - 24 Mar 2022: neighbor->add_request() and request flags replace neighbor->request() and the
     fields of neighbor->requests[]; forward_comm / reverse_comm overloads replace
     forward_comm_pair / reverse_comm_pair; KOKKOS requests are flagged with set_kokkos_host() /
     set_kokkos_device().
   - early 2025 (4 Feb 2025 is the first release this project meets with it): the pair's Kokkos
     forward-comm callback gets one swap's send list (DAT::tdual_int_1d) instead of the 2-D list
     plus the swap index.
   - 10 Sep 2025: KOKKOS comm buffers are DAT::tdual_double_1d (were tdual_xfloat_1d), and the
     KOKKOS float types were renamed (X_FLOAT -> KK_FLOAT, t_f_array -> t_kkacc_1d_3). The style
     never names those: it reads atomKK's views through `auto` and keeps its own views in fp64.
   The KOKKOS part is compiled where LAMMPS has KOKKOS (LMP_KOKKOS).
------------------------------------------------------------------------- */

#ifndef LMP_DISTSPEC_LAMMPS_COMPAT_H
#define LMP_DISTSPEC_LAMMPS_COMPAT_H

#include "comm.h"
#include "error.h"
#include "neigh_request.h"
#include "neighbor.h"
#include "pair.h"

#include "models/plan/run_plan.h"

#ifdef LMP_KOKKOS
#include "kokkos_type.h"

#include <type_traits>
#endif

#ifndef LAMMPS_VERSION_NUMBER
#error "LAMMPS_VERSION_NUMBER must be defined by the build (see cmake/DistspecLAMMPS.cmake)"
#endif

namespace LAMMPS_NS {
namespace distspec_compat {

// The end of a run: LAMMPS' Finish calls Pair::finish() where Pair has it (newer than 29 Sep
// 2021; CMake reads pair.h and defines DISTSPEC_LAMMPS_PAIR_FINISH). Where it does not, the
// post_run() of an internal fix stands in (fix_distspec_end_of_run.h, always built, registered
// by the plugin only there).
#ifdef DISTSPEC_LAMMPS_PAIR_FINISH
inline constexpr bool kPairHasFinish = true;
#else
inline constexpr bool kPairHasFinish = false;
#endif

// A pair style with an end_of_run() that Pair::finish() calls where LAMMPS has it; where it does
// not, PairWithEndOfRun (pair_with_end_of_run.h) adds a fix whose post_run() calls it.
class PairFinish : public Pair {
 public:
  using Pair::Pair;

  // Collective: every rank calls it at the same point.
  virtual void end_of_run() = 0;
#ifdef DISTSPEC_LAMMPS_PAIR_FINISH
  void finish() override { end_of_run(); }
#endif
};

// The run plan's neighbour list (distspec::models::NeighborRequest): full, half as newton_pair
// says, or half with newton off's pairs whatever newton_pair says.
// 24 Mar 2022 replaced neighbor->request() + requests[i]->half/full/newton by add_request().
// `instance_me` is protected in Pair: the caller passes its own. With `ghost`, ghost atoms get
// neighbour lists too (list->gnum of them after the inum owned ones).
using distspec::models::NeighborRequest;
template <class PairT>
inline void request_neighbor_list(Neighbor *neighbor, PairT *pair, int instance_me, NeighborRequest kind,
                                  bool ghost)
{
#if LAMMPS_VERSION_NUMBER >= 20220324
  (void) instance_me;
  int flags = ghost ? NeighConst::REQ_GHOST : NeighConst::REQ_DEFAULT;
  if (kind == NeighborRequest::full) flags |= NeighConst::REQ_FULL;
  if (kind == NeighborRequest::half_newton_off) flags |= NeighConst::REQ_NEWTON_OFF;
  neighbor->add_request(pair, flags);
#else
  int irequest = neighbor->request(pair, instance_me);
  neighbor->requests[irequest]->half = kind == NeighborRequest::full ? 0 : 1;
  neighbor->requests[irequest]->full = kind == NeighborRequest::full ? 1 : 0;
  neighbor->requests[irequest]->newton = kind == NeighborRequest::half_newton_off ? 2 : 0;
  neighbor->requests[irequest]->ghost = ghost ? 1 : 0;
#endif
}

// 24 Mar 2022 renamed forward_comm_pair / reverse_comm_pair to overloads of forward_comm.
template <class PairT> inline void forward_comm(Comm *comm, PairT *pair)
{
#if LAMMPS_VERSION_NUMBER >= 20220324
  comm->forward_comm(pair);
#else
  comm->forward_comm_pair(pair);
#endif
}

template <class PairT> inline void reverse_comm(Comm *comm, PairT *pair)
{
#if LAMMPS_VERSION_NUMBER >= 20220324
  comm->reverse_comm(pair);
#else
  comm->reverse_comm_pair(pair);
#endif
}

/* ----------------------------------------------------------------------
   KOKKOS package
------------------------------------------------------------------------- */

#ifdef LMP_KOKKOS

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
#endif    // LMP_KOKKOS

}    // namespace distspec_compat
}    // namespace LAMMPS_NS

#endif
