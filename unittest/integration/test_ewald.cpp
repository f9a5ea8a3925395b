// The Ewald model (potentials/nacl_ewald.json and a random-charge variant) against LAMMPS' own
// pair_style coul/long + kspace_style ewald with the same splitting parameter (kspace_modify
// gewald), the same k-vectors (kspace_modify kmax/ewald) and the analytic erfc (pair_modify
// table 0): energy, forces, virial, per-atom energy and virial agree to kTolerance of their
// scale on every processor grid of 1, 2 and 4 ranks, newton on and off. The structure factor is
// summed over each rank's owned atoms and all-reduced by the spec's op adapter, so these runs
// exercise slice_owned, all_reduce_sum and owned_only forces. The model file's "accuracy"
// against kspace_style ewald ACC: the same g_ewald and kmax (as each logs them), with and without
// gewald / kmax/ewald given, after a box change between runs and during fix deform, and the same
// forces on every grid. Also: N ranks == 1 rank, the
// exact-erfc variant against LAMMPS to the polynomial's accuracy, NVE energy conservation, and
// the systems the model refuses (net charge, no charge attribute, open or tilted boxes, scaled
// Coulomb pairs of bonds), which stop every rank.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <mpi.h>
#include <random>
#include <utility>
#include <vector>

#include <unistd.h>

#include "lammps_session.h"
#include "reference_comparison.h"

namespace dt = distspec::testing;

namespace {

// The model reproduces coul/long's polynomial erfc and ewald's sums term by term; what is left
// is summation order (measured: 1e-14 and below).
constexpr double kTolerance = 1e-10;
// The exact erfc against coul/long's polynomial (|error| < 1.5e-7 in erfc): measured 4.5e-7 of
// the force scale on the rock-salt deck.
constexpr double kExactErfcTolerance = 2e-6;

using dt::potential;

// Files of this run: unique per run (rank 0's pid), so concurrent test runs never share them.
std::string run_prefix()
{
  long run = static_cast<long>(getpid());
  MPI_Bcast(&run, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  return "/tmp/distspec_ewald_" + std::to_string(run) + "_" + std::to_string(dt::world_size()) + "_";
}

// Every rank sees the file rank 0 wrote.
std::string write_file(const std::string& name, const std::string& text)
{
  const std::string path = run_prefix() + name;
  if (dt::world_rank() == 0) std::ofstream(path) << text;
  MPI_Barrier(MPI_COMM_WORLD);
  return path;
}

// A model file like nacl_ewald.json with other parameters.
std::string ewald_model(const std::string& name, double cutoff, const std::string& parameters)
{
  return write_file(name + ".json", R"({"format": "distspec-model", "format_version": 1, "architecture": "ewald",
 "units": "metal", "cutoff": )" + std::to_string(cutoff) + R"(, "elements": ["Na", "Cl"],
 "parameters": )" + parameters + R"(, "spec": ")" + potential("specs/ewald_halo.json") + "\"}");
}

struct Deck {
  std::string name;
  std::string setup;      // after `processors` and `newton`
  std::string reference;  // coul/long + ewald
  std::string distspec;   // the same sums through distspec
};

// Rock salt, 4 x 4 x 4 conventional cells (512 ions, a 22.56 A cube), ions displaced at random.
const std::string kRockSalt = R"(
units metal
atom_style charge
boundary p p p
lattice custom 5.64 a1 1 0 0 a2 0 1 0 a3 0 0 1 basis 0 0 0 basis 0.5 0.5 0 basis 0.5 0 0.5 basis 0 0.5 0.5 &
  basis 0.5 0 0 basis 0 0.5 0 basis 0 0 0.5 basis 0.5 0.5 0.5
region box block 0 4 0 4 0 4
create_box 2 box
create_atoms 1 box basis 1 1 basis 2 1 basis 3 1 basis 4 1 basis 5 2 basis 6 2 basis 7 2 basis 8 2
mass 1 22.99
mass 2 35.45
set type 1 charge 1.0
set type 2 charge -1.0
displace_atoms all random 0.2 0.2 0.2 90231 units box
)";

std::string coul_long_ewald(double cutoff, double alpha, const std::string& kmax)
{
  return "pair_style coul/long " + std::to_string(cutoff) + "\npair_coeff * *\npair_modify table 0\n"
      "kspace_style ewald 1e-6\nkspace_modify gewald " + std::to_string(alpha) + " kmax/ewald " + kmax;
}

Deck rock_salt()
{
  return {"nacl", kRockSalt, coul_long_ewald(10.0, 0.3, "7 7 7"),
          "pair_style distspec\npair_coeff * * " + potential("nacl_ewald.json") + " Na Cl"};
}

// 210 atoms on a jiggled grid in a 20 x 17 x 13 A box, charges drawn from [-1, 1) for half of
// them and the same charges negated for the other half (neutral), atom_style full from a data file.
std::string random_charge_data()
{
  std::mt19937 rng(4711);
  std::uniform_real_distribution<double> u(-1.0, 1.0), jiggle(-0.3, 0.3);
  const int n[3] = {7, 6, 5};
  const double len[3] = {20.0, 17.0, 13.0};
  const int count = n[0] * n[1] * n[2];
  std::vector<double> q(count);
  for (int i = 0; i < count / 2; ++i) q[i] = u(rng);
  for (int i = count / 2; i < count; ++i) q[i] = -q[i - count / 2];
  std::string text = "random neutral charges\n\n" + std::to_string(count) + " atoms\n2 atom types\n\n";
  text += "0 20.0 xlo xhi\n0 17.0 ylo yhi\n0 13.0 zlo zhi\n\nMasses\n\n1 22.99\n2 35.45\n\nAtoms # full\n\n";
  int id = 0;
  char line[256];
  for (int a = 0; a < n[0]; ++a)
    for (int b = 0; b < n[1]; ++b)
      for (int c = 0; c < n[2]; ++c) {
        const double x = (a + 0.5) * len[0] / n[0] + jiggle(rng), y = (b + 0.5) * len[1] / n[1] + jiggle(rng),
                     z = (c + 0.5) * len[2] / n[2] + jiggle(rng);
        const double charge = q[id];
        ++id;
        std::snprintf(line, sizeof line, "%d %d %d %.17g %.17g %.17g %.17g\n", id, id, charge > 0 ? 1 : 2, charge, x,
                      y, z);
        text += line;
      }
  return text;
}

Deck random_charges()
{
  const std::string data = write_file("random_charges.data", random_charge_data());
  const std::string model =
      ewald_model("random_charges", 8.0, R"({"alpha": 0.32, "kmax": [5, 4, 3], "erfc": "lammps_polynomial"})");
  return {"random_charges_full", "units metal\natom_style full\nboundary p p p\nread_data " + data + "\n",
          coul_long_ewald(8.0, 0.32, "5 4 3"), "pair_style distspec\npair_coeff * * " + model + " Na Cl"};
}

struct Variant {
  Deck deck;
  bool newton;
};

void PrintTo(const Variant& v, std::ostream* os) { *os << v.deck.name << (v.newton ? " newton on" : " newton off"); }

class EwaldAgainstLammps : public ::testing::TestWithParam<Variant> {};

TEST_P(EwaldAgainstLammps, AgreeOnEveryGrid)
{
  const Variant& v = GetParam();
  for (const std::string& grid : dt::processor_grids()) {
    SCOPED_TRACE("processors " + grid + (v.newton ? ", newton on" : ", newton off"));
    const std::string head = "processors " + grid + "\nnewton " + (v.newton ? "on" : "off") + "\n";
    const dt::Observables ref = dt::evaluate(head + v.deck.setup, v.deck.reference);
    const dt::Observables got = dt::evaluate(head + v.deck.setup, v.deck.distspec);
    const dt::Deviation d = dt::compare(got, ref);
    if (dt::world_rank() == 0)
      std::printf("[   info   ] %s, %d rank(s), processors %s: %s\n", v.deck.name.c_str(), dt::world_size(),
                  grid.c_str(), dt::describe(d).c_str());
    EXPECT_LE(d.worst(), kTolerance) << dt::describe(d);
  }
}

TEST_P(EwaldAgainstLammps, NRanksEqualOneRank)
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

// The k-space sums and the real-space pairs on 2 threads per rank (distspec/util/threads.h):
// 512 ions, so each rank's k-space loops split too.
Deck rock_salt_threads()
{
  Deck d = rock_salt();
  d.name += "_threads";
  d.distspec = "pair_style distspec threads 2\npair_coeff * * " + potential("nacl_ewald.json") + " Na Cl";
  return d;
}

std::vector<Variant> variants()
{
  std::vector<Variant> out;
  for (const Deck& d : {rock_salt(), random_charges(), rock_salt_threads()})
    for (bool newton : {true, false}) out.push_back({d, newton});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Decks, EwaldAgainstLammps, ::testing::ValuesIn(variants()),
                         [](const ::testing::TestParamInfo<Variant>& info) {
                           return info.param.deck.name + (info.param.newton ? "_newton_on" : "_newton_off");
                         });

// The exact erfc differs from coul/long's polynomial by the polynomial's error only.
TEST(Ewald, ExactErfcAgreesWithLammpsToThePolynomialsAccuracy)
{
  const std::string model = ewald_model("exact", 10.0, R"({"alpha": 0.3, "kmax": [7, 7, 7]})");
  const Deck d = rock_salt();
  const dt::Observables ref = dt::evaluate(d.setup, d.reference);
  const dt::Observables got = dt::evaluate(d.setup, "pair_style distspec\npair_coeff * * " + model + " Na Cl");
  const dt::Deviation dev = dt::compare(got, ref);
  if (dt::world_rank() == 0) std::printf("[   info   ] exact erfc vs coul/long: %s\n", dt::describe(dev).c_str());
  EXPECT_LE(dev.worst(), kExactErfcTolerance) << dt::describe(dev);
  EXPECT_GT(dev.worst(), 0.0) << "the exact erfc should differ from the polynomial somewhere";
}

// Energy is conserved in NVE as well as with LAMMPS' own styles. Point charges alone collapse:
// both runs add the Born-Mayer repulsion of examples/ewald (buck) through hybrid/overlay.
TEST(Ewald, NveDriftNoWorseThanLammps)
{
  const std::string buck = "pair_coeff * * buck 1000.0 0.32 0.0\n";
  const std::string reference = "pair_style hybrid/overlay buck 6.0 coul/long 10.0\n" + buck +
      "pair_coeff * * coul/long\npair_modify table 0\nkspace_style ewald 1e-6\nkspace_modify gewald 0.3 kmax/ewald 7 7 7";
  const std::string ours_pair = "pair_style hybrid/overlay buck 6.0 distspec\n" + buck + "pair_coeff * * distspec " +
      potential("nacl_ewald.json") + " Na Cl";
  // LAMMPS 2021 defaults to neigh_modify delay 10: reneighbour whenever needed, as 2025 does.
  const std::string setup = kRockSalt + "neigh_modify delay 0 every 1 check yes\n";
  const double native = dt::nve_drift_per_atom(setup, reference, 200, 0.002);
  const double ours = dt::nve_drift_per_atom(setup, ours_pair, 200, 0.002);
  if (dt::world_rank() == 0) std::printf("[   info   ] NVE drift per atom: coul/long + ewald %.3g, distspec %.3g\n", native, ours);
  EXPECT_LE(std::abs(ours), std::abs(native) * 1.05 + 1e-7) << "native " << native << " distspec " << ours;
}

// --- "accuracy": kspace_style ewald ACC against the model file's "accuracy" ------------------
//
// LAMMPS chooses g_ewald and kmax from the accuracy (ewald.cpp init(), setup()); the model does
// the same from its file's "accuracy". Both print the choice in ewald.cpp's words: the lines must
// be the same, and so must energy, forces and virials, on every processor grid.

// ewald.cpp init()'s lines of a log, in order (one set per run).
std::vector<std::string> kspace_lines(const std::string& log_path)
{
  std::ifstream in(log_path);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);)
    for (const char* prefix : {"  G vector (1/distance) = ", "  estimated absolute RMS force accuracy = ",
                               "  estimated relative force accuracy = ", "  KSpace vectors: actual max1d max3d = ",
                               "                  kxmax kymax kzmax  = "})
      if (line.rfind(prefix, 0) == 0) out.push_back(line);
  return out;
}

std::string join_lines(const std::vector<std::string>& lines)
{
  std::string text;
  for (const std::string& l : lines) text += l + "\n";
  return text;
}

// The lines' values, shortened for the info line: "g_ewald 0.30821542, kmax 7 7 7".
std::string choice_of(const std::vector<std::string>& lines)
{
  std::string text;
  for (const std::string& l : lines) {
    const std::string value = l.substr(l.find("= ") + 2);
    if (l.find("G vector") != std::string::npos) text += (text.empty() ? "" : "; ") + std::string("g_ewald ") + value;
    if (l.find("kxmax") != std::string::npos) text += ", kmax " + value;
  }
  return text;
}

struct AccuracyDeck {
  std::string name;
  std::string setup;
  std::string reference;
  std::string distspec;
  std::size_t runs = 1;  // LAMMPS initialises (and both print their choice) once per run
};

std::string coul_long_ewald_accuracy(double cutoff, const std::string& accuracy, const std::string& modify = "")
{
  return "pair_style coul/long " + std::to_string(cutoff) + "\npair_coeff * *\npair_modify table 0\nkspace_style ewald " +
      accuracy + (modify.empty() ? "" : "\nkspace_modify " + modify);
}

std::vector<AccuracyDeck> accuracy_decks()
{
  const std::string ours = "pair_style distspec\npair_coeff * * ";
  const std::string data = write_file("random_charges_accuracy.data", random_charge_data());
  const std::string random_setup = "units metal\natom_style full\nboundary p p p\nread_data " + data + "\n";
  // A second run after the box grew: both choose afresh.
  const std::string second_run = "\nrun 0 post no\nchange_box all x scale 1.25 z scale 0.9 remap";
  return {
      {"nacl", kRockSalt, coul_long_ewald_accuracy(10.0, "1e-5"),
       ours + potential("nacl_ewald_accuracy.json") + " Na Cl"},
      {"random_charges_full", random_setup, coul_long_ewald_accuracy(8.0, "1e-5"),
       ours + ewald_model("random_accuracy", 8.0, R"({"accuracy": 1e-5, "erfc": "lammps_polynomial"})") + " Na Cl"},
      {"nacl_gewald_given", kRockSalt, coul_long_ewald_accuracy(10.0, "1e-4", "gewald 0.27"),
       ours + ewald_model("gewald", 10.0, R"({"accuracy": 1e-4, "alpha": 0.27, "erfc": "lammps_polynomial"})") + " Na Cl"},
      {"nacl_kmax_given", kRockSalt, coul_long_ewald_accuracy(10.0, "1e-5", "kmax/ewald 6 7 8"),
       ours + ewald_model("kmax", 10.0, R"({"accuracy": 1e-5, "kmax": [6, 7, 8], "erfc": "lammps_polynomial"})") + " Na Cl"},
      {"nacl_box_changed", kRockSalt, coul_long_ewald_accuracy(10.0, "1e-5") + second_run,
       ours + potential("nacl_ewald_accuracy.json") + " Na Cl" + second_run, 2},
  };
}

class EwaldAccuracyAgainstLammps : public ::testing::TestWithParam<AccuracyDeck> {};

void PrintTo(const AccuracyDeck& d, std::ostream* os) { *os << d.name; }

TEST_P(EwaldAccuracyAgainstLammps, SameChoiceAndForcesOnEveryGrid)
{
  const AccuracyDeck& deck = GetParam();
  const std::string logs = run_prefix() + deck.name;
  for (const std::string& grid : dt::processor_grids()) {
    SCOPED_TRACE("processors " + grid);
    const std::string head = "processors " + grid + "\n";
    const dt::Observables ref = dt::evaluate("log " + logs + ".native.log\n" + head + deck.setup, deck.reference);
    const dt::Observables got = dt::evaluate("log " + logs + ".distspec.log\n" + head + deck.setup, deck.distspec);
    MPI_Barrier(MPI_COMM_WORLD);  // rank 0 has closed both logs
    // Only rank 0 writes a LAMMPS log: the choice is checked there (a failure on any rank fails the run).
    const std::vector<std::string> native = kspace_lines(logs + ".native.log");
    const std::vector<std::string> model = kspace_lines(logs + ".distspec.log");
    if (dt::world_rank() == 0) {
      EXPECT_EQ(native.size(), 5 * deck.runs) << join_lines(native);
      EXPECT_EQ(join_lines(model), join_lines(native));
    }
    const dt::Deviation d = dt::compare(got, ref);
    if (dt::world_rank() == 0)
      std::printf("[   info   ] accuracy %s, %d rank(s), processors %s: LAMMPS %s, distspec %s; %s\n", deck.name.c_str(),
                  dt::world_size(), grid.c_str(), choice_of(native).c_str(), choice_of(model).c_str(),
                  dt::describe(d).c_str());
    EXPECT_LE(d.worst(), kTolerance) << dt::describe(d);
  }
}

INSTANTIATE_TEST_SUITE_P(Decks, EwaldAccuracyAgainstLammps, ::testing::ValuesIn(accuracy_decks()),
                         [](const ::testing::TestParamInfo<AccuracyDeck>& info) { return info.param.name; });

// Within a run kmax follows the box (fix deform calls ewald's setup() every step; the model sees
// the new cell): 30 NVE steps while x stretches by 30 % end with the same state as LAMMPS'.
TEST(EwaldAccuracy, KmaxFollowsTheBoxWithinARun)
{
  const std::string run = "\nvelocity all create 300.0 4928459 loop geom\nfix nve all nve\n"
                          "fix stretch all deform 1 x scale 1.3 remap x\ntimestep 0.001\n"
                          "thermo_style custom step pe press lx\nrun 30 post no";
  auto final_state = [&](const std::string& pair) {
    dt::LammpsSession lmp;
    lmp.run("plugin load " + dt::plugin_path() + "\n" + kRockSalt + "neigh_modify delay 0 every 1 check yes\n" + pair +
            run);
    return std::make_pair(lmp.thermo("pe"), lmp.gather("f", 3));
  };
  const auto ref = final_state(coul_long_ewald_accuracy(10.0, "1e-5"));
  const auto got = final_state("pair_style distspec\npair_coeff * * " + potential("nacl_ewald_accuracy.json") + " Na Cl");
  double scale = 0.0, worst = 0.0;
  for (std::size_t i = 0; i < ref.second.size(); ++i) {
    scale = std::max(scale, std::abs(ref.second[i]));
    worst = std::max(worst, std::abs(got.second[i] - ref.second[i]));
  }
  if (dt::world_rank() == 0)
    std::printf("[   info   ] fix deform x 1.3 over 30 steps, %d rank(s): pe %.12g vs %.12g, max force deviation %.3g "
                "of %.3g\n", dt::world_size(), got.first, ref.first, worst, scale);
  EXPECT_NEAR(got.first, ref.first, 1e-9 * std::abs(ref.first));
  EXPECT_LE(worst, 1e-8 * scale);
}

std::string error_of(const std::string& setup, const std::string& pair = rock_salt().distspec)
{
  dt::LammpsSession lmp;
  return lmp.run_expecting_error("plugin load " + dt::plugin_path() + "\n" + setup + pair + "\nrun 0 post no");
}

#define EXPECT_HAS(text, needle) EXPECT_NE((text).find(needle), std::string::npos) << (text)

TEST(EwaldErrors, NetCharge)
{
  const std::string e = error_of(kRockSalt + "set atom 1 charge 1.5\n");
  EXPECT_HAS(e, "pair_style distspec: ewald: the system is not charge neutral: net charge 0.5 (sum of q over the "
                "model's atoms, allowed |sum q| <= 1e-05)");
}

TEST(EwaldErrors, AtomStyleWithoutCharges)
{
  std::string setup = kRockSalt;
  setup.replace(setup.find("atom_style charge"), 17, "atom_style atomic");
  setup = setup.substr(0, setup.find("set type 1 charge"));
  const std::string e = error_of(setup);
  EXPECT_HAS(e, "but atom style 'atomic' has no charge; use an atom style with charges (charge, full)");
}

TEST(EwaldErrors, NonPeriodicBoundary)
{
  std::string setup = kRockSalt;
  setup.replace(setup.find("boundary p p p"), 14, "boundary p p f");
  const std::string e = error_of(setup);
  EXPECT_HAS(e, "(ewald) sums over periodic images and needs a box periodic in x, y and z, this run has boundary pp pp ff");
}

// special_bonds leave bonded pairs out of the neighbour list, but k-space would still count them.
TEST(EwaldErrors, ScaledCoulombPairsOfBonds)
{
  const std::string data = write_file("bonded.data", random_charge_data());
  const std::string model =
      ewald_model("bonded", 8.0, R"({"alpha": 0.32, "kmax": [5, 4, 3], "erfc": "lammps_polynomial"})");
  const std::string e = error_of("units metal\natom_style full\nboundary p p p\nread_data " + data +
                                     " extra/bond/types 1 extra/bond/per/atom 1 extra/special/per/atom 1\n"
                                     "bond_style harmonic\nbond_coeff 1 10.0 3.0\ncreate_bonds single/bond 1 1 2\n",
                                 "pair_style distspec\npair_coeff * * " + model + " Na Cl");
  EXPECT_HAS(e, "reads charges, and this system has bonds with special_bonds coul 0 0 0; excluded or scaled Coulomb "
                "pairs are not supported by this style");
}

// LAMMPS: "Must use 'kspace_modify gewald' for uncharged system"; the model names its file.
TEST(EwaldErrors, AccuracyOnAnUnchargedSystem)
{
  std::string setup = kRockSalt;
  setup.replace(setup.find("set type 1 charge 1.0"), 21, "set type 1 charge 0.0");
  setup.replace(setup.find("set type 2 charge -1.0"), 22, "set type 2 charge 0.0");
  const std::string model = potential("nacl_ewald_accuracy.json");
  const std::string e = error_of(setup, "pair_style distspec\npair_coeff * * " + model + " Na Cl");
  EXPECT_HAS(e, "pair_style distspec: " + model + ": /parameters/accuracy: ewald: the system has no charge (sum of q^2 "
                "over the model's atoms is 0), so \"accuracy\" cannot set alpha; give \"alpha\" under \"parameters\"");
}

TEST(EwaldErrors, TriclinicBox)
{
  std::string setup = kRockSalt;
  const std::string block = "region box block 0 4 0 4 0 4";
  setup.replace(setup.find(block), block.size(), "region box prism 0 4 0 4 0 4 0.5 0 0");
  const std::string e = error_of(setup);
  EXPECT_HAS(e, "ewald: the box is triclinic (tilts xy 2.82, xz 0, yz 0); this Ewald model supports orthogonal boxes only");
}

}  // namespace
