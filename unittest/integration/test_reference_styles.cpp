// pair_style distspec against LAMMPS' own styles on the same deck: lj/cut for the LJ model,
// eam and eam/alloy for the EAM model. Every observable agrees to 1e-10 of its scale in fp64,
// on every processor grid of the current rank count, with newton on and off.
#include <gtest/gtest.h>

#include "lammps_session.h"
#include "reference_comparison.h"

namespace dt = distspec::testing;

namespace {

constexpr double kTolerance = 1e-10;

using dt::potential;

struct Deck {
  std::string name;
  std::string setup;      // after `processors` and `newton`
  std::string reference;  // LAMMPS' own pair style
  std::string distspec;   // the same model through distspec
};

const std::string kArgonSetup = R"(
units metal
boundary p p p
lattice fcc 5.26
region box block 0 4 0 4 0 4
create_box 1 box
create_atoms 1 box
mass 1 39.948
displace_atoms all random 0.3 0.3 0.3 4928459 units box
)";

Deck argon_lj()
{
  return {"lj_argon", kArgonSetup, "pair_style lj/cut 8.5\npair_coeff 1 1 0.0104 3.4",
          "pair_style distspec\npair_coeff * * " + potential("lj_argon.json") + " Ar"};
}

Deck argon_lj_triclinic()
{
  Deck d = argon_lj();
  d.name = "lj_argon_triclinic";
  d.setup = R"(
units metal
boundary p p p
lattice fcc 5.26
region box prism 0 4 0 4 0 4 1.2 0.6 -0.8
create_box 1 box
create_atoms 1 box
mass 1 39.948
displace_atoms all random 0.3 0.3 0.3 4928459 units box
)";
  return d;
}

// Atoms fill a third of a long box: on grids split along x, some ranks own no atom.
Deck argon_lj_vacuum()
{
  Deck d = argon_lj();
  d.name = "lj_argon_vacuum";
  d.setup = R"(
units metal
boundary p p p
lattice fcc 5.26
region box block 0 12 0 3 0 3
region slab block 0 4 0 3 0 3
create_box 1 box
create_atoms 1 region slab
mass 1 39.948
displace_atoms all random 0.3 0.3 0.3 4928459 units box
)";
  return d;
}

// Type 2 is handled by lj/cut alone; distspec sees type 1 only (NULL).
Deck argon_lj_hybrid_null()
{
  return {"lj_hybrid_null",
          kArgonSetup.substr(0, kArgonSetup.find("create_box")) + R"(create_box 2 box
create_atoms 1 box
mass * 39.948
set type 1 type/fraction 2 0.3 8812
displace_atoms all random 0.3 0.3 0.3 4928459 units box
)",
          "pair_style lj/cut 8.5\npair_coeff 1 1 0.0104 3.4\npair_coeff 1 2 0.0090 3.3\npair_coeff 2 2 0.0120 3.2",
          "pair_style hybrid/overlay lj/cut 8.5 distspec\npair_coeff 1 2 lj/cut 0.0090 3.3\n"
          "pair_coeff 2 2 lj/cut 0.0120 3.2\npair_coeff * * distspec " + potential("lj_argon.json") + " Ar NULL"};
}

const std::string kCopperSetup = R"(
units metal
boundary p p p
lattice fcc 3.615
region box block 0 5 0 5 0 5
create_box 2 box
create_atoms 1 box
mass 1 63.546
mass 2 58.693
displace_atoms all random 0.15 0.15 0.15 771 units box
)";

Deck copper_eam_funcfl()
{
  return {"eam_cu_u3", kCopperSetup, "pair_style eam\npair_coeff 1 1 " + potential("Cu_u3.eam") + "\npair_coeff 2 2 " + potential("Cu_u3.eam"),
          "pair_style distspec\npair_coeff * * " + potential("cu_eam_u3.json") + " Cu Cu"};
}

Deck cuni_eam_alloy()
{
  return {"eam_alloy_cuni", kCopperSetup + "set type 1 type/fraction 2 0.5 12393\n",
          "pair_style eam/alloy\npair_coeff * * " + potential("CuNi.eam.alloy") + " Cu Ni",
          "pair_style distspec\npair_coeff * * " + potential("cuni_eam_alloy.json") + " Cu Ni"};
}

// The spec declares forces owned-only, which a pair model satisfies (its kernels leave nothing
// on halo rows): the run then takes newton off's half list whatever newton_pair says.
Deck with_owned_only_forces(Deck d, const std::string &spec)
{
  d.name += "_owned_forces";
  d.distspec = "pair_style distspec spec " + potential("specs/" + spec) + d.distspec.substr(d.distspec.find('\n'));
  return d;
}

// The kernels on 2 threads per rank (distspec/util/threads.h).
Deck with_threads(Deck d)
{
  d.name += "_threads";
  d.distspec = "pair_style distspec threads 2" + d.distspec.substr(d.distspec.find('\n'));
  return d;
}

struct Variant {
  Deck deck;
  bool newton;
};

void PrintTo(const Variant& v, std::ostream* os) { *os << v.deck.name << (v.newton ? " newton on" : " newton off"); }

class ReferenceStyles : public ::testing::TestWithParam<Variant> {};

TEST_P(ReferenceStyles, AgreeOnEveryGrid)
{
  const Variant& v = GetParam();
  for (const std::string& grid : dt::processor_grids()) {
    SCOPED_TRACE("processors " + grid + (v.newton ? ", newton on" : ", newton off"));
    const std::string head = "processors " + grid + "\nnewton " + (v.newton ? "on" : "off") + "\n";
    const dt::Observables ref = dt::evaluate(head + v.deck.setup, v.deck.reference);
    const dt::Observables got = dt::evaluate(head + v.deck.setup, v.deck.distspec);
    const dt::Deviation d = dt::compare(got, ref);
    EXPECT_LE(d.worst(), kTolerance) << dt::describe(d);
  }
}

// A multi-rank distspec run reproduces a 1-rank distspec run atom by atom (independent of the
// native style: this checks the halo machinery against itself across decompositions).
TEST_P(ReferenceStyles, NRanksEqualOneRank)
{
  const Variant& v = GetParam();
  if (dt::world_size() == 1) GTEST_SKIP() << "needs more than one rank";
  const std::string head = std::string("newton ") + (v.newton ? "on" : "off") + "\n";
  const dt::Observables one = dt::evaluate_on_one_rank(head + v.deck.setup, v.deck.distspec);
  for (const std::string& grid : dt::processor_grids()) {
    SCOPED_TRACE("processors " + grid);
    const dt::Observables many = dt::evaluate("processors " + grid + "\n" + head + v.deck.setup, v.deck.distspec);
    const dt::Deviation d = dt::compare(many, one);
    EXPECT_LE(d.worst(), kTolerance) << dt::describe(d);
  }
}

std::vector<Variant> variants()
{
  std::vector<Variant> out;
  for (const Deck& d : {argon_lj(), argon_lj_triclinic(), argon_lj_vacuum(), argon_lj_hybrid_null(),
                        copper_eam_funcfl(), cuni_eam_alloy(),
                        with_owned_only_forces(argon_lj_triclinic(), "lj_halo_owned_forces.json"),
                        with_owned_only_forces(cuni_eam_alloy(), "eam_halo_owned_forces.json"),
                        with_threads(argon_lj_triclinic()), with_threads(cuni_eam_alloy())})
    for (bool newton : {true, false}) out.push_back({d, newton});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Decks, ReferenceStyles, ::testing::ValuesIn(variants()),
                         [](const ::testing::TestParamInfo<Variant>& info) {
                           return info.param.deck.name + (info.param.newton ? "_newton_on" : "_newton_off");
                         });

}  // namespace

namespace {

// Energy conservation in NVE is no worse than the native style's on the same input.
TEST(NveDrift, NoWorseThanNativeStyles)
{
  for (const Deck& d : {argon_lj(), copper_eam_funcfl()}) {
    SCOPED_TRACE(d.name);
    const double native = dt::nve_drift_per_atom(d.setup, d.reference, 400, 0.002);
    const double ours = dt::nve_drift_per_atom(d.setup, d.distspec, 400, 0.002);
    // Same forces to 1e-10: the trajectories, and so the drifts, agree closely.
    EXPECT_LE(std::abs(ours), std::abs(native) * 1.05 + 1e-7) << "native " << native << " distspec " << ours;
  }
}

// pair_coeff sets the masses of the types it maps from the potential file, as pair_style eam and
// eam/alloy do: from a deck whose masses are all 1, both styles leave the same masses (the
// file's, not 1), and a `mass` command after pair_coeff still wins in both.
TEST(Masses, SetFromThePotentialFileAsNativeEamStyles)
{
  auto total_mass = [](const std::string &setup, const std::string &pair, const std::string &after) {
    dt::LammpsSession lmp;
    lmp.run("plugin load " + dt::plugin_path() + "\n" + setup + "\nmass * 1.0\n" + pair + "\n" + after +
            "compute m all property/atom mass\ncompute total all reduce sum c_m c_m\nrun 0 post no\n");
    return std::make_pair(lmp.compute_vector("total", 2)[0], lmp.natoms());
  };
  for (const Deck &d : {copper_eam_funcfl(), cuni_eam_alloy()}) {
    SCOPED_TRACE(d.name);
    const auto [native, n] = total_mass(d.setup, d.reference, "");
    const auto [ours, n_ours] = total_mass(d.setup, d.distspec, "");
    EXPECT_GT(native, 50.0 * n);    // the file's masses (Cu 63.5, Ni 58.7), not the deck's 1
    EXPECT_DOUBLE_EQ(ours, native);
    EXPECT_DOUBLE_EQ(total_mass(d.setup, d.distspec, "mass * 2.0\n").first, 2.0 * n_ours);
  }
}

}  // namespace
