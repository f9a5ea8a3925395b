// pair_style distspec/kk (`-k on -sf kk`, threaded Kokkos) agrees with the plain distspec style.
#include <gtest/gtest.h>

#include "lammps_session.h"
#include "reference_comparison.h"

namespace dt = distspec::testing;

namespace {

constexpr double kTolerance = 1e-10;

using dt::potential;

const std::string kCopper = R"(
units metal
lattice fcc 3.615
region box block 0 5 0 5 0 5
create_box 1 box
create_atoms 1 box
mass 1 63.546
displace_atoms all random 0.15 0.15 0.15 771 units box
)";

struct KokkosCase {
  const char* name;
  std::vector<std::string> args;
};

class KokkosVariant : public ::testing::TestWithParam<KokkosCase> {};

TEST_P(KokkosVariant, AgreesWithThePlainStyle)
{
  const std::string pair = "pair_style distspec\npair_coeff * * " + potential("cu_eam_u3.json") + " Cu";
  for (const char* newton : {"on", "off"}) {
    SCOPED_TRACE(std::string("newton ") + newton);
    const std::string setup = std::string("newton ") + newton + "\n" + kCopper;
    const dt::Observables plain = dt::evaluate(setup, pair);
    const dt::Observables kk = dt::evaluate(setup, pair, GetParam().args);
    const dt::Deviation d = dt::compare(kk, plain);
    EXPECT_LE(d.worst(), kTolerance) << dt::describe(d);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Kokkos, KokkosVariant,
    ::testing::Values(KokkosCase{"threads2", {"-k", "on", "t", "2", "-sf", "kk"}},
                      KokkosCase{"newton_on_neigh_half",
                                 {"-k", "on", "t", "2", "-sf", "kk", "-pk", "kokkos", "newton", "on", "neigh", "half"}}),
    [](const ::testing::TestParamInfo<KokkosCase>& info) { return std::string(info.param.name); });

}  // namespace
