/* ----------------------------------------------------------------------
   DISTSPEC: plugin entry point. `plugin load libdistspec.so` calls lammpsplugin_init(),
   which registers the package's styles with the LAMMPS instance that loads it.
------------------------------------------------------------------------- */

#include "lammpsplugin.h"
#include "version.h"

#include "pair_distspec.h"
#ifdef LMP_KOKKOS
#include "pair_distspec_kokkos.h"
#endif

using namespace LAMMPS_NS;

namespace {

Pair *distspec_creator(LAMMPS *lmp)
{
  return new PairDistspec(lmp);
}

#ifdef LMP_KOKKOS
template <class DeviceType> Pair *distspec_kokkos_creator(LAMMPS *lmp)
{
  return new PairDistspecKokkos<DeviceType>(lmp);
}
#endif

}    // namespace

extern "C" __attribute__((visibility("default"))) void lammpsplugin_init(void *lmp, void *handle, void *regfunc)
{
  auto register_plugin = reinterpret_cast<lammpsplugin_regfunc>(regfunc);
  lammpsplugin_t plugin;
  plugin.version = LAMMPS_VERSION;
  plugin.style = "pair";
  plugin.name = "distspec";
  plugin.info = "DISTSPEC: spec-driven distributed ML potentials (CPU)";
  plugin.author = "DISTSPEC developers";
  plugin.creator.v1 = reinterpret_cast<lammpsplugin_factory1 *>(&distspec_creator);
  plugin.handle = handle;
  (*register_plugin)(&plugin, lmp);

#ifdef LMP_KOKKOS
  plugin.info = "DISTSPEC: spec-driven distributed ML potentials (KOKKOS)";
  plugin.name = "distspec/kk";
  plugin.creator.v1 = reinterpret_cast<lammpsplugin_factory1 *>(&distspec_kokkos_creator<LMPDeviceType>);
  (*register_plugin)(&plugin, lmp);
  plugin.name = "distspec/kk/device";
  (*register_plugin)(&plugin, lmp);
  plugin.name = "distspec/kk/host";
  plugin.creator.v1 = reinterpret_cast<lammpsplugin_factory1 *>(&distspec_kokkos_creator<LMPHostType>);
  (*register_plugin)(&plugin, lmp);
#endif
}
