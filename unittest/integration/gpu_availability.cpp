#include "gpu_availability.h"

#include "lammps_session.h"
#include "library.h"

namespace distspec::testing {
namespace {

// One argon atom in a box: the smallest run that initialises the style on its device.
std::string probe(const std::vector<std::string>& args, const std::string& keywords)
{
  LammpsSession lmp(args);
  return lmp.run_expecting_error("plugin load " + plugin_path() +
                                 "\nunits metal\nregion box block 0 6 0 6 0 6\ncreate_box 1 box\n"
                                 "create_atoms 1 single 1 1 1\nmass 1 39.948\npair_style distspec" + keywords +
                                 "\npair_coeff * * " + potential("lj_argon.json") + " Ar\nrun 0 post no");
}

}  // namespace

const std::string& device_cuda_unavailable()
{
  static const std::string why = [] {
    const std::string error = probe({}, " device cuda gpu_share yes");
    return error.empty() ? error : "device cuda cannot run: " + error;
  }();
  return why;
}

const std::string& gpu_kokkos_unavailable()
{
  static const std::string why = [] {
    if (!lammps_config_accelerator("KOKKOS", "api", "cuda"))
      return std::string("this LAMMPS' KOKKOS package is not built for CUDA");
    const std::string error = probe({"-k", "on", "g", "1", "-sf", "kk"}, "");
    return error.empty() ? error : "distspec/kk cannot run on a GPU: " + error;
  }();
  return why;
}

}  // namespace distspec::testing
