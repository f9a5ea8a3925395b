// pair_style distspec/kk on a GPU (`-k on g 1 -sf kk`, a KOKKOS package built for CUDA): every
// per-step array stays in device memory, and the results equal
// - LAMMPS' own lj/cut/kk, eam/kk and eam/alloy/kk on the same deck, and
// - the plain distspec style on the CPU (no suffix, no GPU),
// to 1e-10 of each observable's scale, with newton on and off; the message-passing model (2 and
// 4 layers, whose feature exchanges run from device buffers) equals the CPU as well. On N ranks
// sharing the GPU the CPU reference is a 1-rank run.
//
// Skipped, visibly, where LAMMPS' KOKKOS is not built for CUDA or no GPU is visible.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "decks.h"
#include "lammps_session.h"
#include "reference_comparison.h"

#include "library.h"

namespace dt = distspec::testing;

namespace {

constexpr double kTolerance = 1e-10;

using dt::potential;

// Why distspec/kk cannot run on a GPU here, or "" when it can.
std::string gpu_kokkos_unavailable()
{
  if (!lammps_config_accelerator("KOKKOS", "api", "cuda")) return "this LAMMPS' KOKKOS package is not built for CUDA";
  static const std::string why = [] {
    dt::LammpsSession lmp({"-k", "on", "g", "1", "-sf", "kk"});
    return lmp.run_expecting_error("plugin load " + dt::plugin_path() + "\n" + dt::decks::argon_108 +
                                   "pair_style distspec\npair_coeff * * " + potential("lj_argon.json") +
                                   " Ar\nrun 0 post no");
  }();
  return why;
}

#define REQUIRE_GPU_KOKKOS()                                                   \
  do {                                                                         \
    const std::string why = gpu_kokkos_unavailable();                          \
    if (!why.empty()) GTEST_SKIP() << "distspec/kk cannot run on a GPU: " << why; \
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

struct Case {
  std::string name;
  std::string setup;
  std::string distspec;  // plain style lines; `-sf kk` makes them distspec/kk
  std::string native;    // LAMMPS' own style for the same model ("" for none); `-sf kk` makes it /kk
};

std::vector<Case> cases()
{
  const std::string argon = crystal(5.26, 0.3, "mass 1 39.948\n");
  const std::string copper = crystal(3.615, 0.15, "mass 1 63.546\n");
  const std::string cuni = crystal(3.615, 0.15, "mass 1 63.546\nmass 2 58.693\n", 2) + "set type 1 type/fraction 2 0.5 12393\n";
  return {
      {"lj_argon", argon, "pair_style distspec\npair_coeff * * " + potential("lj_argon.json") + " Ar",
       "pair_style lj/cut 8.5\npair_coeff 1 1 0.0104 3.4"},
      {"eam_cu_u3", copper, "pair_style distspec\npair_coeff * * " + potential("cu_eam_u3.json") + " Cu",
       "pair_style eam\npair_coeff 1 1 " + potential("Cu_u3.eam")},
      {"eam_alloy_cuni", cuni, "pair_style distspec\npair_coeff * * " + potential("cuni_eam_alloy.json") + " Cu Ni",
       "pair_style eam/alloy\npair_coeff * * " + potential("CuNi.eam.alloy") + " Cu Ni"},
      {"mpnn_cu_L2", copper, "pair_style distspec\npair_coeff * * " + potential("cu_mpnn_L2.json") + " Cu", ""},
      {"mpnn_cu_L4", copper, "pair_style distspec\npair_coeff * * " + potential("cu_mpnn_L4.json") + " Cu", ""},
  };
}

struct Newton {
  std::string name;
  bool on;
  std::vector<std::string> args;
};

std::vector<Newton> newton_settings()
{
  // With newton on, recent KOKKOS wants half lists: the style still asks for its own full list.
  return {{"newton_on", true, {"-k", "on", "g", "1", "-sf", "kk", "-pk", "kokkos", "newton", "on", "neigh", "half"}},
          {"newton_off", false, {"-k", "on", "g", "1", "-sf", "kk", "-pk", "kokkos", "newton", "off", "neigh", "full"}}};
}

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }
void PrintTo(const Newton& n, std::ostream* os) { *os << n.name; }

class KokkosGpu : public ::testing::TestWithParam<std::tuple<Case, Newton>> {};

TEST_P(KokkosGpu, EqualsNativeKokkosAndTheCpu)
{
  REQUIRE_GPU_KOKKOS();
  const auto& [c, newton] = GetParam();
  const std::string setup = std::string("newton ") + (newton.on ? "on" : "off") + "\n" + c.setup;
  const dt::Observables gpu = dt::evaluate(setup, c.distspec, newton.args);
  const dt::Observables cpu = dt::evaluate_on_one_rank(setup, c.distspec);
  const dt::Deviation vs_cpu = dt::compare(gpu, cpu);
  RecordProperty("vs_cpu", dt::describe(vs_cpu));
  EXPECT_LE(vs_cpu.worst(), kTolerance) << "distspec/kk on the GPU vs distspec on the CPU: " << dt::describe(vs_cpu);
  if (c.native.empty()) return;
  const dt::Observables native = dt::evaluate(setup, c.native, newton.args);
  const dt::Deviation vs_native = dt::compare(gpu, native);
  RecordProperty("vs_native", dt::describe(vs_native));
  EXPECT_LE(vs_native.worst(), kTolerance) << "distspec/kk vs LAMMPS' own /kk style: " << dt::describe(vs_native);
}

INSTANTIATE_TEST_SUITE_P(Gpu, KokkosGpu, ::testing::Combine(::testing::ValuesIn(cases()), ::testing::ValuesIn(newton_settings())),
                         [](const ::testing::TestParamInfo<KokkosGpu::ParamType>& info) {
                           return std::get<0>(info.param).name + "_" + std::get<1>(info.param).name;
                         });

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
  const Case eam = cases()[1];
  const std::vector<std::string> gpu = newton_settings()[0].args;
  const State distspec = final_state(eam.distspec, gpu);
  const State native = final_state(eam.native, gpu);
  const State native_cpu = final_state(eam.native, {});
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

// Overlapping atoms: the device reduction finds the non-finite forces and every rank stops.
TEST(KokkosGpuErrors, OverlappingAtomsStopTheRun)
{
  REQUIRE_GPU_KOKKOS();
  dt::LammpsSession lmp(newton_settings()[0].args);
  const std::string e = lmp.run_expecting_error(
      "plugin load " + dt::plugin_path() + "\n" + dt::decks::argon_108 + "create_atoms 1 single 0 0 0 units box\n" +
      "pair_style distspec\npair_coeff * * " + potential("lj_argon.json") + " Ar\nrun 0 post no");
  EXPECT_NE(e.find("returned non-finite energy or forces"), std::string::npos) << e;
}

}  // namespace
