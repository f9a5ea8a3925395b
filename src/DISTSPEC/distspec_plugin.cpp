/* ----------------------------------------------------------------------
   DISTSPEC: plugin entry point. `plugin load libdistspec.so` calls lammpsplugin_init(),
   which registers the package's styles with the LAMMPS instance that loads it.
------------------------------------------------------------------------- */

#include "lammpsplugin.h"
#include "version.h"

#include "pair_distspec.h"

using namespace LAMMPS_NS;

namespace {

Pair *distspec_creator(LAMMPS *lmp)
{
  return new PairDistspec(lmp);
}

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
}
