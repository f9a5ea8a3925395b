// The message-passing model under LAMMPS: N ranks reproduce 1 rank over several grids (empty
// ranks, subdomains thinner than the cutoff), the per-layer halo equals the expanded shell, and
// a spec that never refreshes the halo is refused.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <mpi.h>

#include "decks.h"
#include "lammps_session.h"
#include "reference_comparison.h"

namespace dt = distspec::testing;

namespace {

constexpr double kTolerance = 1e-10;

using dt::potential;

// 256 atoms in a 14.5 Å box: split 4 ways along x, each subdomain is thinner than the cutoff.
const std::string kCopper = R"(
units metal
lattice fcc 3.615
region box block 0 4 0 4 0 4
create_box 2 box
create_atoms 1 box
mass 1 63.546
mass 2 58.693
displace_atoms all random 0.2 0.2 0.2 6134 units box
)";

// Atoms fill a third of the box: ranks along x own nothing.
const std::string kCopperSlab = R"(
units metal
lattice fcc 3.615
region box block 0 12 0 4 0 4
region slab block 0 4 0 4 0 4
create_box 2 box
create_atoms 1 region slab
mass 1 63.546
mass 2 58.693
displace_atoms all random 0.2 0.2 0.2 6134 units box
)";

struct MpnnCase {
  std::string name;
  std::string setup;
  std::string model;
  std::string elements;
};

class Mpnn : public ::testing::TestWithParam<MpnnCase> {
 protected:
  std::string pair(const std::string& keywords = "") const
  {
    return "pair_style distspec " + keywords + "\npair_coeff * * " + potential(GetParam().model) + " " + GetParam().elements;
  }
};

TEST_P(Mpnn, NRanksEqualOneRank)
{
  if (dt::world_size() == 1) GTEST_SKIP() << "needs more than one rank";
  const dt::Observables one = dt::evaluate_on_one_rank(GetParam().setup, pair());
  for (const std::string& grid : dt::processor_grids())
    for (const char* newton : {"on", "off"}) {
      SCOPED_TRACE("processors " + grid + ", newton " + newton);
      const std::string head = "processors " + grid + "\nnewton " + newton + "\n";
      const dt::Deviation d = dt::compare(dt::evaluate(head + GetParam().setup, pair()), one);
      EXPECT_LE(d.worst(), kTolerance) << dt::describe(d);
    }
}

TEST_P(Mpnn, PerLayerEqualsExpanded)
{
  // The expanded shell of L cutoffs around a small box holds dozens of periodic images per atom;
  // the deeper models are compared in the unit tests, where that costs nothing.
  if (GetParam().model.find("_L2") == std::string::npos) GTEST_SKIP() << "expanded compared for 2-layer models here";
  for (const std::string& grid : dt::processor_grids()) {
    SCOPED_TRACE("processors " + grid);
    const std::string setup = "processors " + grid + "\n" + GetParam().setup;
    const dt::Observables per_layer = dt::evaluate(setup, pair("halo per_layer"));
    const dt::Observables expanded = dt::evaluate(setup, pair("halo expanded"));
    const dt::Deviation d = dt::compare(expanded, per_layer);
    EXPECT_LE(d.worst(), kTolerance) << dt::describe(d);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Models, Mpnn,
    ::testing::Values(MpnnCase{"cu_L2", kCopper, "cu_mpnn_L2.json", "Cu Cu"},
                      MpnnCase{"cu_L4_slab", kCopperSlab, "cu_mpnn_L4.json", "Cu Cu"},
                      MpnnCase{"cuni_L4", kCopper + "set type 1 type/fraction 2 0.4 5512\n", "cuni_mpnn_L4.json", "Cu Ni"},
                      MpnnCase{"cuni_L2", kCopper + "set type 1 type/fraction 2 0.4 5512\n", "cuni_mpnn_L2.json", "Cu Ni"}),
    [](const ::testing::TestParamInfo<MpnnCase>& info) { return info.param.name; });

// fp32 kernels (energy, forces and virial accumulated in fp64) track fp64. Bounds: 1e-6 relative
// energy, 1e-4 of the largest force / virial component: fp32 carries 7 digits, and per-edge
// rounding adds up over ~80 neighbours.
TEST(MpnnPrecision, Fp32TracksFp64)
{
  const std::string pair = "pair_coeff * * " + potential("cu_mpnn_L2.json") + " Cu Cu";
  const dt::Observables fp64 = dt::evaluate(kCopper, "pair_style distspec\n" + pair);
  const dt::Observables fp32 = dt::evaluate(kCopper, "pair_style distspec precision fp32\n" + pair);
  const dt::Deviation d = dt::compare(fp32, fp64);
  EXPECT_LT(d.pe, 1e-6) << dt::describe(d);
  EXPECT_LT(d.forces, 1e-4) << dt::describe(d);
  EXPECT_LT(d.virial, 1e-4) << dt::describe(d);
  EXPECT_GT(d.forces, 0.0) << "fp32 must actually run in fp32";
}

// gather_mode "local" never refreshes halo rows: a multi-layer model would read stale neighbour
// features. The style refuses to run rather than return wrong numbers.
TEST(MpnnSpec, LocalGatherIsReportedAsWrong)
{
  const std::string spec = "/tmp/distspec_local_gather_" + std::to_string(dt::world_size()) + ".json";
  if (dt::world_rank() == 0) {
    std::ofstream out(spec);
    out << R"({"version": 2, "core": {"policy": {"kind": "halo", "scatter_mode": "halo_correction", "gather_mode": "local"}}})";
  }
  MPI_Barrier(MPI_COMM_WORLD);
  dt::LammpsSession lmp;
  const std::string error = lmp.run_expecting_error("plugin load " + dt::plugin_path() + "\n" + kCopper +
                                                    "pair_style distspec spec " + spec + "\npair_coeff * * " +
                                                    potential("cu_mpnn_L2.json") + " Cu Cu\nrun 0");
  EXPECT_NE(error.find("gather_mode 'local' never refreshes halo rows"), std::string::npos) << error;
  EXPECT_NE(error.find("the results would be wrong"), std::string::npos) << error;
}

}  // namespace

namespace {

// Energy conservation over 10 000 NVE steps of 1 fs at 300 K. Bound: 1 meV/atom, a 25th of kT at
// 300 K, far below anything that would distort sampling, and above the integrator's own O(dt^2)
// wobble for copper phonons (periods near 150 fs).
TEST(MpnnNve, TenThousandStepsConserveEnergy)
{
  if (dt::world_size() != 2) GTEST_SKIP() << "run once, on 2 ranks";
  const std::string& setup = dt::decks::copper_108;
  const double drift = dt::nve_drift_per_atom(
      setup, "pair_style distspec\npair_coeff * * " + potential("cu_mpnn_L2.json") + " Cu", 10000, 0.001);
  EXPECT_LT(std::abs(drift), 1e-3) << "drift " << drift << " eV/atom";
}

}  // namespace
