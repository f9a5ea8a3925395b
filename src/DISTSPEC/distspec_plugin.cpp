/* ----------------------------------------------------------------------
   DISTSPEC: plugin entry point. `plugin load libdistspec.so` calls lammpsplugin_init(),
   which registers the package's styles with the LAMMPS instance that loads it.
------------------------------------------------------------------------- */

#include "lammpsplugin.h"
#include "lammps.h"
#include "version.h"

#include "pair_distspec.h"
#ifdef LMP_KOKKOS
#include "pair_distspec_kokkos.h"
#endif
#include "fix_distspec_end_of_run.h"
#include "lammps_compat.h"
#ifdef DISTSPEC_WITH_TORCH
#include "models/torch/halo_ops.h"
#endif

#include <cstdio>

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

Fix *end_of_run_fix_creator(LAMMPS *lmp, int narg, char **arg)
{
  return new FixDistspecEndOfRun(lmp, narg, arg);
}

// LAMMPS announces each style a plugin registers on a line of its own. The package announces
// itself once, naming all its styles; the rest register with the log closed, so a version
// mismatch (printed with the first) is not hidden but nothing is said four times.
class QuietLog {
 public:
  explicit QuietLog(LAMMPS *lmp) : lmp_(lmp), screen_(lmp->screen), logfile_(lmp->logfile)
  {
    lmp->screen = nullptr;
    lmp->logfile = nullptr;
  }
  ~QuietLog()
  {
    lmp_->screen = screen_;
    lmp_->logfile = logfile_;
  }
  QuietLog(const QuietLog &) = delete;
  QuietLog &operator=(const QuietLog &) = delete;

 private:
  LAMMPS *lmp_;
  FILE *screen_;
  FILE *logfile_;
};

#ifdef DISTSPEC_WITH_CUDA
#define DISTSPEC_DEVICES "CPU, CUDA"
#else
#define DISTSPEC_DEVICES "CPU"
#endif
#ifdef LMP_KOKKOS
#define DISTSPEC_STYLES "pair styles distspec, distspec/kk, distspec/kk/device, distspec/kk/host"
#else
#define DISTSPEC_STYLES "pair style distspec"
#endif

}    // namespace

extern "C" __attribute__((visibility("default"))) void lammpsplugin_init(void *lmp, void *handle, void *regfunc)
{
  auto register_plugin = reinterpret_cast<lammpsplugin_regfunc>(regfunc);
#ifdef DISTSPEC_WITH_TORCH
  // nvalchemi's halo ops (and their distspec:: twins) with torch's op registry, once per
  // process: exported graphs resolve them by name when a torch model is loaded.
  distspec::models::torch_kind::register_halo_ops();
#endif
  lammpsplugin_t plugin;
  plugin.version = LAMMPS_VERSION;
  plugin.style = "pair";
  plugin.name = "distspec";
  plugin.info = "DISTSPEC: spec-driven distributed ML potentials (" DISTSPEC_DEVICES "): " DISTSPEC_STYLES;
  plugin.author = "DISTSPEC developers";
  plugin.creator.v1 = reinterpret_cast<lammpsplugin_factory1 *>(&distspec_creator);
  plugin.handle = handle;
  (*register_plugin)(&plugin, lmp);

  const QuietLog quiet(static_cast<LAMMPS *>(lmp));
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

  // The end-of-run hook where LAMMPS calls no Pair::finish().
  if (!distspec_compat::kPairHasFinish) {
    plugin.style = "fix";
    plugin.name = FixDistspecEndOfRun::kStyle;
    plugin.info = "DISTSPEC: end-of-run hook of pair_style distspec (added by the style)";
    plugin.creator.v2 = reinterpret_cast<lammpsplugin_factory2 *>(&end_of_run_fix_creator);
    (*register_plugin)(&plugin, lmp);
  }
}
