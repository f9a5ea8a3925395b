/* -*- c++ -*- ----------------------------------------------------------
   DISTSPEC: every LAMMPS version difference the package straddles, in one place.
   LAMMPS_VERSION_NUMBER (e.g. 20210929) is derived from version.h by CMake.
------------------------------------------------------------------------- */

#ifndef LMP_DISTSPEC_LAMMPS_COMPAT_H
#define LMP_DISTSPEC_LAMMPS_COMPAT_H

#include "comm.h"
#include "error.h"
#include "neigh_request.h"
#include "neighbor.h"

#ifndef LAMMPS_VERSION_NUMBER
#error "LAMMPS_VERSION_NUMBER must be defined by the build (see cmake/DistspecLAMMPS.cmake)"
#endif

// The end of a run: LAMMPS' Finish calls Pair::finish() where Pair has it (newer than 29 Sep
// 2021; CMake reads pair.h and defines DISTSPEC_LAMMPS_PAIR_FINISH). Where it does not, the
// post_run() of an internal fix (fix_distspec_end_of_run.h) stands in.
#ifdef DISTSPEC_LAMMPS_PAIR_FINISH
#define DISTSPEC_PAIR_HAS_FINISH 1
#else
#define DISTSPEC_PAIR_HAS_FINISH 0
#endif

namespace LAMMPS_NS {
namespace distspec_compat {

// The neighbour lists the plain style asks for: full, half as newton_pair says, or half with
// newton off's pairs whatever newton_pair says (every rank lists each pair of its owned atoms).
enum class NeighborListKind { full, half, half_newton_off };

// 24 Mar 2022 replaced neighbor->request() + requests[i]->half/full/newton by add_request().
// `instance_me` is protected in Pair: the caller passes its own. With `ghost`, ghost atoms get
// neighbour lists too (list->gnum of them after the inum owned ones).
template <class PairT>
inline void request_neighbor_list(Neighbor *neighbor, PairT *pair, int instance_me, NeighborListKind kind, bool ghost)
{
#if LAMMPS_VERSION_NUMBER >= 20220324
  (void) instance_me;
  int flags = ghost ? NeighConst::REQ_GHOST : NeighConst::REQ_DEFAULT;
  if (kind == NeighborListKind::full) flags |= NeighConst::REQ_FULL;
  if (kind == NeighborListKind::half_newton_off) flags |= NeighConst::REQ_NEWTON_OFF;
  neighbor->add_request(pair, flags);
#else
  int irequest = neighbor->request(pair, instance_me);
  neighbor->requests[irequest]->half = kind == NeighborListKind::full ? 0 : 1;
  neighbor->requests[irequest]->full = kind == NeighborListKind::full ? 1 : 0;
  neighbor->requests[irequest]->newton = kind == NeighborListKind::half_newton_off ? 2 : 0;
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

}    // namespace distspec_compat
}    // namespace LAMMPS_NS

#endif
