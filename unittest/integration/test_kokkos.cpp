// pair_style distspec/kk (`-k on t 2 -sf kk`, threaded Kokkos) agrees with the plain distspec
// style: for LJ, EAM (funcfl and setfl) and the message-passing model, under each KOKKOS
// newton / neighbour-list setting, on every rank count the suite runs on; under hybrid/overlay
// with NULL types; along an MD trajectory that reneighbours and migrates atoms; and it refuses
// what it does not support with a message that says why.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <mpi.h>
#include <sstream>

#include "lammps_session.h"
#include "reference_comparison.h"

namespace dt = distspec::testing;

namespace {

constexpr double kTolerance = 1e-10;

using dt::potential;

// 256 atoms each: small enough that the sweep stays fast, and on 4 ranks every subdomain is
// thinner than the cutoff (several swaps per dimension, periodic self-images).
const std::string kArgon = R"(
units metal
lattice fcc 5.26
region box block 0 4 0 4 0 4
create_box 1 box
create_atoms 1 box
mass 1 39.948
displace_atoms all random 0.3 0.3 0.3 4928459 units box
)";

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

struct Deck {
  std::string name;
  std::string setup;
  std::string pair;  // plain style lines; `-sf kk` makes them distspec/kk
};

std::vector<Deck> decks()
{
  return {
      {"lj_argon", kArgon, "pair_style distspec\npair_coeff * * " + potential("lj_argon.json") + " Ar"},
      {"eam_cu_u3", kCopper, "pair_style distspec\npair_coeff * * " + potential("cu_eam_u3.json") + " Cu Cu"},
      {"eam_alloy_cuni", kCopper + "set type 1 type/fraction 2 0.5 12393\n",
       "pair_style distspec\npair_coeff * * " + potential("cuni_eam_alloy.json") + " Cu Ni"},
      {"mpnn_cu_L2", kCopper, "pair_style distspec\npair_coeff * * " + potential("cu_mpnn_L2.json") + " Cu Cu"},
  };
}

// How KOKKOS runs: threads, and its newton / neighbour-list package settings with the deck's
// `newton` to match.
struct KokkosSetting {
  std::string name;
  std::vector<std::string> args;
  bool newton;
};

const std::vector<std::string> kThreads = {"-k", "on", "t", "2", "-sf", "kk"};

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more)
{
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

std::vector<KokkosSetting> settings()
{
  return {
      {"threads2_newton_on", kThreads, true},
      {"threads2_newton_off", kThreads, false},
      // What recent KOKKOS requires with newton on: the style still asks for its own full list.
      {"neigh_half_newton_on", with(kThreads, {"-pk", "kokkos", "newton", "on", "neigh", "half"}), true},
      {"neigh_full_newton_off", with(kThreads, {"-pk", "kokkos", "newton", "off", "neigh", "full"}), false},
  };
}

void PrintTo(const Deck& d, std::ostream* os) { *os << d.name; }
void PrintTo(const KokkosSetting& k, std::ostream* os) { *os << k.name; }

std::string newton_line(bool on) { return std::string("newton ") + (on ? "on" : "off") + "\n"; }

class KokkosVariant : public ::testing::TestWithParam<std::tuple<Deck, KokkosSetting>> {};

TEST_P(KokkosVariant, AgreesWithThePlainStyle)
{
  const auto& [deck, kk] = GetParam();
  const std::string setup = newton_line(kk.newton) + deck.setup;
  const dt::Observables plain = dt::evaluate(setup, deck.pair);
  const dt::Observables kokkos = dt::evaluate(setup, deck.pair, kk.args);
  const dt::Deviation d = dt::compare(kokkos, plain);
  RecordProperty("deviation", dt::describe(d));
  EXPECT_LE(d.worst(), kTolerance) << dt::describe(d);
}

INSTANTIATE_TEST_SUITE_P(Kokkos, KokkosVariant, ::testing::Combine(::testing::ValuesIn(decks()), ::testing::ValuesIn(settings())),
                         [](const ::testing::TestParamInfo<KokkosVariant::ParamType>& info) {
                           return std::get<0>(info.param).name + "_" + std::get<1>(info.param).name;
                         });

// Type 2 is lj/cut's alone: distspec/kk sees a NULL type (species -1) that neither receives nor
// sends edges, through KOKKOS skip lists.
TEST(KokkosHybrid, OverlayWithNullTypes)
{
  const std::string setup = R"(
units metal
lattice fcc 5.26
region box block 0 4 0 4 0 4
create_box 2 box
create_atoms 1 box
mass * 39.948
set type 1 type/fraction 2 0.3 8812
displace_atoms all random 0.3 0.3 0.3 4928459 units box
)";
  const std::string pair = "pair_style hybrid/overlay lj/cut 8.5 distspec\npair_coeff 1 2 lj/cut 0.0090 3.3\n"
                           "pair_coeff 2 2 lj/cut 0.0120 3.2\npair_coeff * * distspec " + potential("lj_argon.json") +
                           " Ar NULL";
  for (const KokkosSetting& kk : settings()) {
    SCOPED_TRACE(kk.name);
    const std::string deck = newton_line(kk.newton) + setup;
    const dt::Deviation d = dt::compare(dt::evaluate(deck, pair, kk.args), dt::evaluate(deck, pair));
    EXPECT_LE(d.worst(), kTolerance) << dt::describe(d);
  }
}

// With a charged atom style the default shard_fields promote charges too (k_q into the charge
// rows); the LJ model ignores them.
TEST(KokkosFields, ChargesPromotedFromAChargedAtomStyle)
{
  const std::string setup = "atom_style charge\n" + kArgon + "set type 1 charge 0.25\n";
  const std::string pair = "pair_style distspec\npair_coeff * * " + potential("lj_argon.json") + " Ar";
  const dt::Deviation d = dt::compare(dt::evaluate(setup, pair, kThreads), dt::evaluate(setup, pair));
  EXPECT_LE(d.worst(), kTolerance) << dt::describe(d);
}

// The plugin registers the KOKKOS variant under LAMMPS' three names; /kk/host keeps everything
// on the host side of the dual views (on a host-only KOKKOS build, the same space as /kk).
TEST(KokkosStyles, HostVariantByName)
{
  const std::string setup = newton_line(true) + kCopper;
  const std::string plain = "pair_style distspec\npair_coeff * * " + potential("cu_eam_u3.json") + " Cu Cu";
  const std::string host = "pair_style distspec/kk/host\npair_coeff * * " + potential("cu_eam_u3.json") + " Cu Cu";
  const dt::Deviation d = dt::compare(dt::evaluate(setup, host, kThreads), dt::evaluate(setup, plain));
  EXPECT_LE(d.worst(), kTolerance) << dt::describe(d);
}

// The expanded halo under Kokkos: KOKKOS builds the ghost neighbour lists, ghosts are receivers.
TEST(KokkosHalo, ExpandedAgreesWithThePlainStyle)
{
  const std::string pair = "pair_style distspec halo expanded\npair_coeff * * " + potential("cu_mpnn_L2.json") + " Cu Cu";
  for (bool newton : {true, false}) {
    SCOPED_TRACE(newton_line(newton));
    const std::string setup = newton_line(newton) + kCopper;
    const dt::Deviation d = dt::compare(dt::evaluate(setup, pair, kThreads), dt::evaluate(setup, pair));
    EXPECT_LE(d.worst(), kTolerance) << dt::describe(d);
  }
}

// Writes `text` to a file every rank can read and returns its path.
std::string write_file(const std::string& name, const std::string& text)
{
  const std::string path = "/tmp/distspec_kokkos_" + std::to_string(dt::world_size()) + "_" + name;
  if (dt::world_rank() == 0) std::ofstream(path) << text;
  MPI_Barrier(MPI_COMM_WORLD);
  return path;
}

std::string replaced(std::string text, const std::string& from, const std::string& to)
{
  const auto at = text.find(from);
  if (at == std::string::npos) ADD_FAILURE() << "'" << from << "' is not in the model file";
  else text.replace(at, from.size(), to);
  return text;
}

// An fp32 network: its feature rows travel through the exchange widened to fp64 and back. Both
// styles run the same fp32 arithmetic; where a sum runs in another order (a fold over other
// swaps), they agree to fp32 rounding, not to fp64's.
TEST(KokkosHalo, Fp32FeatureRows)
{
  std::ifstream in(potential("cu_mpnn_L2.json"));
  std::stringstream text;
  text << in.rdbuf();
  std::string model = replaced(text.str(), "\"precision\": \"fp64\"", "\"precision\": \"fp32\"");
  model = replaced(model, "\"spec\": \"specs/", "\"spec\": \"" + dt::source_dir() + "/potentials/specs/");
  const std::string path = write_file("cu_mpnn_L2_fp32.json", model);
  const std::string pair = "pair_style distspec\npair_coeff * * " + path + " Cu Cu";
  for (bool newton : {true, false}) {
    SCOPED_TRACE(newton_line(newton));
    const std::string setup = newton_line(newton) + kCopper;
    const dt::Deviation d = dt::compare(dt::evaluate(setup, pair, kThreads), dt::evaluate(setup, pair));
    RecordProperty(newton ? "deviation_newton_on" : "deviation_newton_off", dt::describe(d));
    EXPECT_LE(d.worst(), 1e-5) << dt::describe(d);
  }
}

// 30 hot NVE steps with a thin skin: LAMMPS reneighbours (about every 6 steps) and migrates
// atoms between ranks, so the edge arrays are rebuilt mid-run and the views follow nlocal,
// nghost and nmax. Energy, forces and positions at the end match the plain style's along the
// same trajectory. EAM keeps it cheap; it exchanges features (F'(rho)) all the same.
TEST(KokkosTrajectory, ReneighbouringRunMatchesThePlainStyle)
{
  const std::string deck = kCopper + "neighbor 0.3 bin\nneigh_modify every 1 delay 0 check yes\n"
                                     "velocity all create 1500.0 4928459 loop geom\nfix nve all nve\ntimestep 0.002\n";
  const std::string pair = "pair_style distspec\npair_coeff * * " + potential("cu_eam_u3.json") + " Cu Cu";
  struct State {
    double pe;
    std::vector<double> forces, positions;  // by atom ID
  };
  auto final_state = [&](bool newton, const std::vector<std::string>& args) {
    dt::LammpsSession lmp(args);
    lmp.run("plugin load " + dt::plugin_path() + "\n" + newton_line(newton) + deck + pair +
            "\nthermo_style custom step pe\nrun 30 post no");
    return State{lmp.thermo("pe"), lmp.gather("f", 3), lmp.gather("x", 3)};
  };
  for (const KokkosSetting& kk : settings()) {
    if (kk.name.rfind("threads2_", 0) != 0) continue;  // one run per newton setting
    SCOPED_TRACE(kk.name);
    const State plain = final_state(kk.newton, {});
    const State kokkos = final_state(kk.newton, kk.args);
    EXPECT_LE(std::abs(kokkos.pe - plain.pe), kTolerance * std::abs(plain.pe));
    EXPECT_LE(dt::max_rel_diff(kokkos.forces, plain.forces, 1.0), kTolerance);
    EXPECT_LE(dt::max_rel_diff(kokkos.positions, plain.positions, 1.0), kTolerance);
  }
}

std::string kokkos_error_of(const std::string& pair_lines)
{
  dt::LammpsSession lmp(kThreads);
  return lmp.run_expecting_error("plugin load " + dt::plugin_path() + "\n" + kArgon + pair_lines + "\nrun 0 post no");
}

#define EXPECT_HAS(text, needle) EXPECT_NE((text).find(needle), std::string::npos) << (text)

// Under -sf kk the Kokkos execution space decides where the model runs: a host-only KOKKOS
// cannot honour `device cuda`.
TEST(KokkosErrors, DeviceCudaOnHostKokkos)
{
  const std::string e =
      kokkos_error_of("pair_style distspec device cuda\npair_coeff * * " + potential("lj_argon.json") + " Ar");
  EXPECT_HAS(e, "pair_style distspec/kk: device cuda, but this Kokkos execution space");
  EXPECT_HAS(e, "runs on the host");
}

// Overlapping atoms give non-finite forces: every rank stops, as with the plain style.
TEST(KokkosErrors, OverlappingAtomsStopTheRun)
{
  const std::string e = kokkos_error_of("create_atoms 1 single 1 1 1 units box\ncreate_atoms 1 single 1 1 1 units box\n"
                                        "pair_style distspec\npair_coeff * * " + potential("lj_argon.json") + " Ar");
  EXPECT_HAS(e, "pair_style distspec/kk: step 0: model");
  EXPECT_HAS(e, "returned non-finite energy or forces");
}

}  // namespace
