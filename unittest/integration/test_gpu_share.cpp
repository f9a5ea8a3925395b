// `device cuda` under LAMMPS on every rank count the job has, all ranks of a node sharing its
// GPUs (`gpu_share yes`): energy, per-atom forces, virial, per-atom energy and per-atom virial
// equal `device cpu` on the same ranks and a 1-rank CPU run, for every model family. Also: more
// ranks than GPUs without `gpu_share yes` stops every rank with the reason.
//
// Skipped, visibly, where `device cuda` cannot run (a plugin built without CUDA, no GPU).
// ctest runs these under the label `gpu` (np 1 and 2); on one GPU, np 2 is two ranks sharing it.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "lammps_session.h"
#include "reference_comparison.h"

namespace dt = distspec::testing;

namespace {

constexpr double kTolerance = 1e-10;

// Why `device cuda` cannot run here, or "" when it can.
std::string cuda_unavailable()
{
  static const std::string why = [] {
    dt::LammpsSession lmp;
    return lmp.run_expecting_error("plugin load " + dt::plugin_path() + R"(
units metal
region box block 0 6 0 6 0 6
create_box 1 box
create_atoms 1 single 1 1 1
mass 1 39.948
pair_style distspec device cuda gpu_share yes
pair_coeff * * )" + dt::potential("lj_argon.json") + " Ar\nrun 0 post no");
  }();
  return why;
}

#define REQUIRE_DEVICE_CUDA()                                             \
  do {                                                                    \
    const std::string why = cuda_unavailable();                           \
    if (!why.empty()) GTEST_SKIP() << "device cuda cannot run: " << why;  \
  } while (0)

// An off-lattice crystal of 4 x 4 x 4 fcc cells per rank along x, type 2 on every fifth atom.
std::string crystal(double lattice, double jiggle)
{
  const int cells_x = 4 * dt::world_size();
  return "units metal\nlattice fcc " + std::to_string(lattice) + "\nregion box block 0 " + std::to_string(cells_x) +
      " 0 4 0 4\ncreate_box 2 box\ncreate_atoms 1 box\nset group all type/fraction 2 0.2 4413\nmass * 50.0\n"
      "displace_atoms all random " + std::to_string(jiggle) + " " + std::to_string(jiggle) + " " + std::to_string(jiggle) +
      " 7751 units box\n";
}

struct Case {
  std::string name;
  std::string setup;
  std::string model;
  std::string elements;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class GpuShare : public ::testing::TestWithParam<Case> {
 protected:
  std::string pair(const std::string& keywords) const
  {
    return "pair_style distspec " + keywords + "\npair_coeff * * " + dt::potential(GetParam().model) + " " + GetParam().elements;
  }
};

TEST_P(GpuShare, CudaEqualsCpuOnTheseRanksAndOnOneRank)
{
  REQUIRE_DEVICE_CUDA();
  const dt::Observables cpu = dt::evaluate(GetParam().setup, pair("device cpu"));
  for (const char* newton : {"on", "off"}) {
    SCOPED_TRACE(std::string("newton ") + newton);
    const dt::Observables gpu =
        dt::evaluate(std::string("newton ") + newton + "\n" + GetParam().setup, pair("device cuda gpu_share yes"));
    const dt::Deviation d = dt::compare(gpu, cpu);
    EXPECT_LE(d.worst(), kTolerance) << "cuda vs cpu on " << dt::world_size() << " rank(s): " << dt::describe(d);
    if (dt::world_rank() == 0)
      std::printf("[   info   ] %s, %d rank(s), newton %s: cuda vs cpu %s\n", GetParam().name.c_str(), dt::world_size(),
                  newton, dt::describe(d).c_str());
    if (dt::world_size() > 1) {
      const dt::Deviation one = dt::compare(gpu, dt::evaluate_on_one_rank(GetParam().setup, pair("device cpu")));
      EXPECT_LE(one.worst(), kTolerance) << "cuda on " << dt::world_size() << " ranks vs cpu on 1: " << dt::describe(one);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Models, GpuShare,
    ::testing::Values(Case{"lj_binary", crystal(5.4, 0.1), "lj_binary.json", "Ar Kr"},
                      Case{"eam_cuni_alloy", crystal(3.58, 0.1), "cuni_eam_alloy.json", "Cu Ni"},
                      Case{"mpnn_cuni_L2", crystal(3.58, 0.1), "cuni_mpnn_L2.json", "Cu Ni"},
                      Case{"mpnn_cuni_L4", crystal(3.58, 0.1), "cuni_mpnn_L4.json", "Cu Ni"}),
    [](const auto& info) { return info.param.name; });

// fp32 feature rows cross the exchanges widened to fp64 on the GPU: the network in fp32 on the
// GPU tracks fp64 as closely as it does on the CPU (energy 1e-6 relative, forces and virial
// 1e-4 of their scale).
TEST(GpuShareFp32, Fp32OnTheGpuTracksFp64)
{
  REQUIRE_DEVICE_CUDA();
  const std::string setup = crystal(3.58, 0.1);
  auto pair = [](const std::string& keywords) {
    return "pair_style distspec " + keywords + "\npair_coeff * * " + dt::potential("cuni_mpnn_L4.json") + " Cu Ni";
  };
  const dt::Observables fp64 = dt::evaluate(setup, pair("device cpu precision fp64"));
  const dt::Observables gpu32 = dt::evaluate(setup, pair("device cuda gpu_share yes precision fp32"));
  const dt::Deviation d = dt::compare(gpu32, fp64);
  if (dt::world_rank() == 0)
    std::printf("[   info   ] mpnn_cuni_L4 fp32 on the GPU, %d rank(s), vs fp64: %s\n", dt::world_size(), dt::describe(d).c_str());
  EXPECT_LE(d.pe, 1e-6) << dt::describe(d);
  EXPECT_LE(d.forces, 1e-4) << dt::describe(d);
  EXPECT_LE(d.virial, 1e-4) << dt::describe(d);
}

// More ranks on the node than GPUs: every rank stops, naming the keyword that allows sharing.
TEST(GpuShareRefused, MoreRanksThanGpusWithoutGpuShare)
{
  REQUIRE_DEVICE_CUDA();
  dt::LammpsSession lmp;
  const std::string e = lmp.run_expecting_error("plugin load " + dt::plugin_path() + "\n" + crystal(5.4, 0.1) +
                                                "pair_style distspec device cuda\npair_coeff * * " +
                                                dt::potential("lj_binary.json") + " Ar Kr\nrun 0 post no");
  if (e.empty()) GTEST_SKIP() << "as many GPUs as ranks here: nothing to refuse";
  EXPECT_NE(e.find("add 'gpu_share yes'"), std::string::npos) << e;
}

}    // namespace
