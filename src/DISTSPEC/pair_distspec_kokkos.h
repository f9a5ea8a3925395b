/* -*- c++ -*- ----------------------------------------------------------
   DISTSPEC: pair_style distspec/kk

   The KOKKOS variant of pair_style distspec for runs with `-k on -sf kk`. It keeps LAMMPS'
   atom data in atomKK's dual views and hands the model the host copies: the spec, the halo
   exchange and the output mapping are those of the plain style.
------------------------------------------------------------------------- */

#ifdef PAIR_CLASS
// clang-format off
PairStyle(distspec/kk,PairDistspecKokkos<LMPDeviceType>);
PairStyle(distspec/kk/device,PairDistspecKokkos<LMPDeviceType>);
PairStyle(distspec/kk/host,PairDistspecKokkos<LMPHostType>);
// clang-format on
#else

#ifndef LMP_PAIR_DISTSPEC_KOKKOS_H
#define LMP_PAIR_DISTSPEC_KOKKOS_H

#include "kokkos_base.h"
#include "kokkos_type.h"
#include "pair_distspec.h"

namespace LAMMPS_NS {

template <class DeviceType>
class PairDistspecKokkos : public PairDistspec, public KokkosBase {
 public:
  PairDistspecKokkos(class LAMMPS *);

  void init_style() override;
  void compute(int, int) override;
};

}    // namespace LAMMPS_NS

#endif
#endif
