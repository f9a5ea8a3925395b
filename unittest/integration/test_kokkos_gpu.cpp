// pair_style distspec/kk on a GPU (`-k on g 1 -sf kk`, a KOKKOS package built for CUDA) along a
// trajectory that reneighbours, against LAMMPS' own eam/kk with a bound from eam/kk's own spread.
// The models' single evaluations against LAMMPS' /kk styles and the CPU are cases
// (cases/kk_gpu_*.json).
//
// Skipped, visibly, where LAMMPS' KOKKOS is not built for CUDA or no GPU is visible.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "gpu_availability.h"
#include "lammps_session.h"
#include "reference_comparison.h"


namespace dt = distspec::testing;

namespace {

constexpr double kTolerance = 1e-10;

using dt::potential;

#define REQUIRE_GPU_KOKKOS()                                                   \
  do {                                                                         \
    const std::string& why = dt::gpu_kokkos_unavailable();                     \
    if (!why.empty()) GTEST_SKIP() << why;                                     \
  } while (0)

// Off-lattice, so that forces and virial are not zero by symmetry; 4 x 4 x 4 cells per rank
// along x, so that every rank owns atoms.
std::string crystal(double lattice, double jiggle, const std::string& masses, int types = 1)
{
  const int cells_x = 4 * dt::world_size();
  return "units metal\nlattice fcc " + std::to_string(lattice) + "\nregion box block 0 " + std::to_string(cells_x) +
      " 0 4 0 4\ncreate_box " + std::to_string(types) + " box\ncreate_atoms 1 box\n" + masses +
      "displace_atoms all random " + std::to_string(jiggle) + " " + std::to_string(jiggle) + " " +
      std::to_string(jiggle) + " 7751 units box\n";
}

// pair_style eam's lines for the copper crystal (LAMMPS' own style, /kk under -sf kk), and the
// same model through distspec.
const std::string kEamNative = "pair_style eam\npair_coeff 1 1 " + potential("Cu_u3.eam");
const std::string kEamDistspec = "pair_style distspec\npair_coeff * * " + potential("cu_eam_u3.json") + " Cu";

// With newton on, recent KOKKOS wants half lists: the style still asks for its own full list.
const std::vector<std::string> kGpuNewtonOn = {"-k", "on", "g", "1", "-sf", "kk", "-pk", "kokkos", "newton", "on", "neigh", "half"};

// 30 hot NVE steps with a thin skin: reneighbouring mid-run rebuilds the device edge arrays and
// reruns the device index checks. Trajectories of different summation orders part by round-off
// that grows along the run, so the bound is what separates LAMMPS' own eam/kk from its eam on
// the CPU over the same steps (times 10, and at least 1e-10): a step with stale edges or rows
// would part the trajectories by far more.
TEST(KokkosGpuTrajectory, ReneighbouringRunTracksEamKokkos)
{
  REQUIRE_GPU_KOKKOS();
  const std::string deck = crystal(3.615, 0.15, "mass 1 63.546\n") +
      "neighbor 0.3 bin\nneigh_modify every 1 delay 0 check yes\nvelocity all create 1500.0 4928459 loop geom\n"
      "fix nve all nve\ntimestep 0.002\nthermo_style custom step pe\n";
  struct State {
    double pe;
    std::vector<double> x;
  };
  auto final_state = [&](const std::string& pair, const std::vector<std::string>& args) {
    dt::LammpsSession lmp(args);
    // pair_style eam sets the mass from its potential file (63.55): the deck's value again.
    lmp.run("plugin load " + dt::plugin_path() + "\n" + deck + pair + "\nmass 1 63.546\nrun 30 post no");
    return State{lmp.thermo("pe"), lmp.gather("x", 3)};
  };
  const std::vector<std::string>& gpu = kGpuNewtonOn;
  const State distspec = final_state(kEamDistspec, gpu);
  const State native = final_state(kEamNative, gpu);
  const State native_cpu = final_state(kEamNative, {});
  const double spread = dt::max_rel_diff(native.x, native_cpu.x, 1.0);
  const double bound = std::max(1e-10, 10.0 * spread);
  const double got = dt::max_rel_diff(distspec.x, native.x, 1.0);
  RecordProperty("positions_vs_eam_kk", std::to_string(got));
  RecordProperty("eam_kk_vs_eam_cpu", std::to_string(spread));
  if (dt::world_rank() == 0)
    std::printf("trajectory after 30 steps: distspec/kk vs eam/kk %.3g, eam/kk vs eam %.3g (positions, A)\n", got, spread);
  EXPECT_LE(got, bound) << "eam/kk and eam on the CPU part by " << spread;
  EXPECT_LE(std::abs(distspec.pe - native.pe), std::max(kTolerance, 10.0 * std::abs(native.pe - native_cpu.pe) / std::abs(native.pe)) *
                                                   std::abs(native.pe));
}

}  // namespace
