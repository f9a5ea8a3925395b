/* ----------------------------------------------------------------------
   DISTSPEC: pair_style distspec/kk.
------------------------------------------------------------------------- */

#include "pair_distspec_kokkos.h"

#include "atom_kokkos.h"
#include "atom_masks.h"
#include "error.h"
#include "kokkos.h"

using namespace LAMMPS_NS;

template <class DeviceType>
PairDistspecKokkos<DeviceType>::PairDistspecKokkos(LAMMPS *lmp) : PairDistspec(lmp)
{
  kokkosable = 1;
  atomKK = static_cast<AtomKokkos *>(atom);
  // The model reads host rows and the halo exchange runs LAMMPS' classic comm callbacks, so
  // the style's data live on the host side of the dual views.
  execution_space = Host;
  datamask_read = X_MASK | F_MASK | TYPE_MASK | Q_MASK | ENERGY_MASK | VIRIAL_MASK;
  datamask_modify = F_MASK | ENERGY_MASK | VIRIAL_MASK;
}

template <class DeviceType>
void PairDistspecKokkos<DeviceType>::init_style()
{
  // The style asks for its own full list whatever `-pk kokkos neigh` says, so `newton on neigh
  // half` (which recent KOKKOS requires) works too; the list is the host one the model reads.
  PairDistspec::init_style();
}

template <class DeviceType>
void PairDistspecKokkos<DeviceType>::compute(int eflag, int vflag)
{
  atomKK->sync(execution_space, datamask_read);
  PairDistspec::compute(eflag, vflag);
  atomKK->modified(execution_space, (eflag || vflag) ? datamask_modify : F_MASK);
}

namespace LAMMPS_NS {
template class PairDistspecKokkos<LMPDeviceType>;
#ifdef LMP_KOKKOS_GPU
template class PairDistspecKokkos<LMPHostType>;
#endif
}    // namespace LAMMPS_NS
