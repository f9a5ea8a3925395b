// Exported PyTorch graphs under LAMMPS: the toy MPNN of make_fixtures.py (2 and 4 layers as
// AOTInductor packages, 2 layers as TorchScript) on 1, 2 and 4 ranks, each processor grid,
// newton on and off, the plain and (in KOKKOS builds) the /kk style, against the eager PyTorch
// model evaluated on the whole periodic system in one process (reference.py): energy, forces and
// per-atom energy by atom tag, and the virial, to 1e-10 relative in fp64. NativeTwin/*: the
// built-in mpnn and its PyTorch rewrite, each the other's reference, on the same deck. Sevennet/*:
// SevenNet-0 in fp32 against SevenNet's own calculator on one rank, and N ranks against one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <mpi.h>
#include <nlohmann/json.hpp>

#include "decks.h"
#include "lammps_session.h"
#include "reference_comparison.h"

namespace dt = distspec::testing;

namespace {

using Json = nlohmann::json;

constexpr double kTolerance = 1e-10;
// force->nktv2p of units metal (LAMMPS update.cpp): pressure = virial / volume * nktv2p.
constexpr double kMetalNktv2p = 1.6021765e6;

// The folder make_fixtures.py wrote (the ctest fixture torch.fixtures), unless the environment
// names another.
std::string fixtures_dir()
{
  const char* dir = std::getenv("DISTSPEC_TORCH_FIXTURES");
  return (dir && *dir) ? dir : DISTSPEC_TORCH_FIXTURES;
}

Json read_json(const std::string& path)
{
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path + " (run make_fixtures.py, the ctest fixture torch.fixtures)");
  return Json::parse(in);
}

// " Cu Ni": the element of each LAMMPS type of the fixtures' data file, for pair_coeff.
std::string elements_of(const Json& manifest)
{
  std::string words;
  for (const auto& e : manifest["elements"]) words += " " + e.get<std::string>();
  return words;
}

// What LAMMPS computes for one deck, per-atom arrays by atom tag.
struct Result {
  double energy = 0.0;
  std::vector<double> forces, energy_atom;
  std::vector<double> virial;  // energy units, xx yy zz xy xz yz
};

// The reference in the same shape (its atoms listed by tag, in any order).
Result reference_of(const Json& ref)
{
  const std::size_t n = ref["tags"].size();
  Result r;
  r.energy = ref["energy"].get<double>();
  r.forces.assign(3 * n, 0.0);
  r.energy_atom.assign(n, 0.0);
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t i = ref["tags"][k].get<std::size_t>() - 1;
    for (int c = 0; c < 3; ++c) r.forces[3 * i + c] = ref["forces"][k][c].get<double>();
    r.energy_atom[i] = ref["atomic_energies"][k].get<double>();
  }
  r.virial = ref["virial"].get<std::vector<double>>();
  return r;
}

Result run_lammps(const std::string& commands, const std::vector<std::string>& args)
{
  dt::LammpsSession lmp(args);
  lmp.run("plugin load " + dt::plugin_path() + "\n" + commands + R"(
compute pea all pe/atom
compute vir all pressure NULL virial
thermo_style custom step pe vol
run 0 post no
)");
  Result r;
  r.energy = lmp.thermo("pe");
  r.forces = lmp.gather("f", 3);
  r.energy_atom = lmp.gather("c_pea", 1);
  const double volume = lmp.thermo("vol");
  for (double p : lmp.compute_vector("vir", 6)) r.virial.push_back(p * volume / kMetalNktv2p);
  return r;
}

// Largest |got - ref| relative to the reference's largest magnitude.
double deviation(const std::vector<double>& got, const std::vector<double>& ref)
{
  if (got.size() != ref.size()) return INFINITY;
  double worst = 0.0, scale = 0.0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    worst = std::max(worst, std::isfinite(got[i]) ? std::abs(got[i] - ref[i]) : INFINITY);
    scale = std::max(scale, std::abs(ref[i]));
  }
  return worst / (scale > 0.0 ? scale : 1.0);
}

// Energy, forces, per-atom energy and virial of a run against its reference.
struct Deviations {
  double energy, forces, energy_atom, virial;
};

// Energy relative to the reference's; the others relative to the reference's largest magnitude,
// or, with `absolute_per_atom`, forces and per-atom energies as plain differences (eV/A, eV).
Deviations deviations(const Result& got, const Result& ref, bool absolute_per_atom = false)
{
  auto per_atom = [&](const std::vector<double>& g, const std::vector<double>& r) {
    if (!absolute_per_atom) return deviation(g, r);
    if (g.size() != r.size()) return double(INFINITY);
    double worst = 0.0;
    for (std::size_t i = 0; i < r.size(); ++i) worst = std::max(worst, std::isfinite(g[i]) ? std::abs(g[i] - r[i]) : INFINITY);
    return worst;
  };
  return {std::abs(got.energy - ref.energy) / std::abs(ref.energy), per_atom(got.forces, ref.forces),
          per_atom(got.energy_atom, ref.energy_atom), deviation(got.virial, ref.virial)};
}

void expect_within(const Deviations& d, const Deviations& tolerance)
{
  EXPECT_LE(d.energy, tolerance.energy) << "energy";
  EXPECT_LE(d.forces, tolerance.forces) << "forces";
  EXPECT_LE(d.energy_atom, tolerance.energy_atom) << "per-atom energy";
  EXPECT_LE(d.virial, tolerance.virial) << "virial";
}

// How the style runs: plain or /kk on host threads, with newton on or off (KOKKOS' package
// settings matched to it, as the kk_package variant of unittest/integration/cases runs them).
struct Variant {
  std::string name;
  std::vector<std::string> args;  // LAMMPS command-line arguments
  bool newton;
};

std::vector<Variant> variants()
{
  std::vector<Variant> list{{"plain, newton on", {}, true}, {"plain, newton off", {}, false}};
#ifdef DISTSPEC_LAMMPS_HAS_KOKKOS
  const std::vector<std::string> kk{"-k", "on", "t", "1", "-sf", "kk", "-pk", "kokkos"};
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.begin(), kk.begin(), kk.end());
    return more;
  };
  list.push_back({"kk, newton on", with({"newton", "on", "neigh", "half"}), true});
  list.push_back({"kk, newton off", with({"newton", "off", "neigh", "full"}), false});
#endif
  return list;
}

// A model of one of make_fixtures.py's sets: the toy MPNN (fixtures.json, ctest fixture
// torch_fixtures), nvalchemi's MACE (fixtures_mace.json, torch_mace_fixtures) or AIMNet2
// (fixtures_aimnet.json, torch_aimnet_fixtures).
struct Fixture {
  std::string manifest;
  std::string model;
};

void PrintTo(const Fixture& f, std::ostream* os) { *os << f.model; }

class TorchLammps : public ::testing::TestWithParam<Fixture> {
 protected:
  // The set's manifest, and the model's entry in it.
  Json manifest() const
  {
    Json m = read_json(fixtures_dir() + "/" + GetParam().manifest);
    if (!m["models"].contains(GetParam().model))
      throw std::runtime_error(GetParam().manifest + " has no model " + GetParam().model);
    return m;
  }
};

TEST_P(TorchLammps, EqualsTheEagerModelOnTheWholeSystem)
{
  const std::string dir = fixtures_dir();
  const Json manifest = this->manifest();
  const Json& entry = manifest["models"][GetParam().model];
  const Result ref = reference_of(read_json(dir + "/" + entry["reference"].get<std::string>()));
  const std::string elements = elements_of(manifest);

  for (const Variant& variant : variants())
    for (const std::string& grid : dt::processor_grids()) {
      SCOPED_TRACE(variant.name + ", processors " + grid);
      const Result got = run_lammps(std::string("units metal\natom_style atomic\nboundary p p p\nnewton ") +
                                        (variant.newton ? "on" : "off") + "\nprocessors " + grid + "\nread_data " + dir +
                                        "/" + manifest["data"].get<std::string>() +
                                        "\nneighbor 1.0 bin\npair_style distspec halo per_layer\npair_coeff * * " +
                                        dir + "/" + entry["model_file"].get<std::string>() + elements,
                                    variant.args);
      const Deviations d = deviations(got, ref);
      expect_within(d, {kTolerance, kTolerance, kTolerance, kTolerance});
      if (dt::world_rank() == 0)
        std::printf("[   info   ] %s %s, processors %s: energy %.1e, forces %.1e, per-atom energy %.1e, virial %.1e\n",
                    GetParam().model.c_str(), variant.name.c_str(), grid.c_str(), d.energy, d.forces, d.energy_atom,
                    d.virial);
    }
}

INSTANTIATE_TEST_SUITE_P(Toy, TorchLammps,
                         ::testing::Values(Fixture{"fixtures.json", "toy_mpnn_L2"}, Fixture{"fixtures.json", "toy_mpnn_L4"},
                                           Fixture{"fixtures.json", "toy_mpnn_L2_ts"}),
                         [](const auto& info) { return info.param.model; });
INSTANTIATE_TEST_SUITE_P(Mace, TorchLammps, ::testing::Values(Fixture{"fixtures_mace.json", "mace_L2"}),
                         [](const auto& info) { return info.param.model; });
// AIMNet2's charge equilibration sums over all atoms every pass (per_system_reduce, whose
// gradient is all-reduced across ranks).
INSTANTIATE_TEST_SUITE_P(Aimnet, TorchLammps, ::testing::Values(Fixture{"fixtures_aimnet.json", "aimnet_P3"}),
                         [](const auto& info) { return info.param.model; });

// A slab in a third of the box, split along x: on 2 ranks one rank owns no atom but holds periodic
// images, on 4 one rank holds no row at all. The graph runs on every rank (its halo ops are
// collectives), with zero edges, zero owned rows, zero rows.
TEST_P(TorchLammps, RanksWithoutAtomsEqualOneRank)
{
  if (dt::world_size() == 1) GTEST_SKIP() << "needs more than one rank";
  if (this->manifest()["elements"].size() != 2) GTEST_SKIP() << "the slab is a Cu/Ni crystal";
  const std::string dir = fixtures_dir();
  const Json manifest = this->manifest();
  const std::string setup = R"(
units metal
atom_style atomic
lattice fcc 3.565
region box block 0 12 0 3 0 3
region slab block 0 4 0 3 0 3
create_box 2 box
create_atoms 1 region slab
mass 1 63.546
mass 2 58.6934
set type 1 type/fraction 2 0.5 2026
displace_atoms all random 0.1 0.1 0.1 2027 units box
neighbor 1.0 bin
)";
  const std::string pair = "pair_style distspec\npair_coeff * * " + dir + "/" +
                           manifest["models"][GetParam().model]["model_file"].get<std::string>() +
                           elements_of(manifest);
  const dt::Observables one = dt::evaluate_on_one_rank(setup, pair);
  const dt::Deviation d = dt::compare(dt::evaluate("processors * 1 1\n" + setup, pair), one);
  EXPECT_LE(d.worst(), kTolerance) << dt::describe(d);
}

// Dynamic shapes: atoms move and migrate, the neighbour list is rebuilt every 5 steps, so row,
// halo and edge counts change from call to call. 50 NVE steps on N ranks end where they end on one.
TEST_P(TorchLammps, MdWithReneighbouringEqualsOneRank)
{
  if (dt::world_size() == 1) GTEST_SKIP() << "needs more than one rank";
  const std::string dir = fixtures_dir();
  const Json manifest = this->manifest();
  const std::string deck = "units metal\natom_style atomic\nread_data " + dir + "/" +
                           manifest["data"].get<std::string>() + "\nneighbor 1.0 bin\n" +
                           "neigh_modify every 5 delay 0 check no\npair_style distspec\npair_coeff * * " + dir + "/" +
                           manifest["models"][GetParam().model]["model_file"].get<std::string>() +
                           elements_of(manifest) + R"(
velocity all create 600.0 4928 loop geom
fix nve all nve
timestep 0.002
thermo_style custom step pe
run 50 post no
)";
  // Energy, positions and forces after the run (by tag) on `comm`'s ranks.
  auto md = [&](MPI_Comm comm) {
    dt::LammpsSession lmp({}, comm);
    lmp.run("plugin load " + dt::plugin_path() + "\n" + deck);
    return std::vector<std::vector<double>>{{lmp.thermo("pe")}, lmp.gather("x", 3), lmp.gather("f", 3)};
  };
  std::vector<std::vector<double>> one(3);
  if (dt::world_rank() == 0) one = md(MPI_COMM_SELF);
  for (std::vector<double>& v : one) {
    long n = static_cast<long>(v.size());
    MPI_Bcast(&n, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    v.resize(n);
    MPI_Bcast(v.data(), static_cast<int>(n), MPI_DOUBLE, 0, MPI_COMM_WORLD);
  }
  const std::vector<std::vector<double>> many = md(MPI_COMM_WORLD);
  // Round-off of a different summation order grows along the trajectory: 1e-9, not 1e-10.
  for (int k = 0; k < 3; ++k) EXPECT_LE(deviation(many[k], one[k]), 1e-9) << (k == 0 ? "pe" : k == 1 ? "x" : "f");
}

// The native backend and the torch backend check each other: the built-in mpnn of
// potentials/cu_mpnn_L2.json and its PyTorch rewrite (native_mpnn.py, make_fixtures.py --set
// twin, ctest fixture torch_twin_fixtures) on the same deck and ranks must agree.
class NativeTwinLammps : public TorchLammps {
 protected:
  // pair_style and pair_coeff lines for the native model file and for its exported twin.
  std::pair<std::string, std::string> pair_lines() const
  {
    const Json manifest = this->manifest();
    const Json& entry = manifest["models"][GetParam().model];
    const std::string elements = elements_of(manifest);
    return {"pair_style distspec\npair_coeff * * " + dt::source_dir() + "/" + entry["native"].get<std::string>() +
                elements,
            "pair_style distspec\npair_coeff * * " + fixtures_dir() + "/" + entry["model_file"].get<std::string>() +
                elements};
  }
};

// 256 Cu atoms, rattled 0.1 A.
const std::string kCuCrystal =
    dt::decks::copper_256 + "displace_atoms all random 0.1 0.1 0.1 2027 units box\nneighbor 1.0 bin\n";

// Energy, forces, virial and per-atom energy by atom, every variant and grid. Not the per-atom
// virial: the native model splits each edge's r (x) dE/dr between its two atoms, while contract 1
// carries no per-edge quantity, so a torch model's is r_i (x) f_i per row; both sum to the same
// virial, which is compared.
TEST_P(NativeTwinLammps, EqualsTheNativeModel)
{
  const auto [native, twin] = pair_lines();
  for (const Variant& variant : variants())
    for (const std::string& grid : dt::processor_grids()) {
      SCOPED_TRACE(variant.name + ", processors " + grid);
      const std::string setup = std::string("atom_style atomic\nboundary p p p\nnewton ") +
                                (variant.newton ? "on" : "off") + "\nprocessors " + grid + kCuCrystal;
      const dt::Deviation d = dt::compare(dt::evaluate(setup, twin, variant.args),
                                          dt::evaluate(setup, native, variant.args));
      const double worst = std::max({d.pe, d.forces, d.virial, d.energy_atom});
      EXPECT_LE(worst, kTolerance) << dt::describe(d);
      if (dt::world_rank() == 0)
        std::printf("[   info   ] %s vs native, %s, processors %s: pe %.1e, forces %.1e, virial %.1e, per-atom "
                    "energy %.1e\n", GetParam().model.c_str(), variant.name.c_str(), grid.c_str(), d.pe, d.forces,
                    d.virial, d.energy_atom);
    }
}

// 50 NVE steps at 600 K, neighbour lists rebuilt every 5 steps (atoms migrate, shapes change):
// both backends end in the same place.
TEST_P(NativeTwinLammps, MdWithReneighbouringEqualsTheNativeModel)
{
  const auto [native, twin] = pair_lines();
  // Energy, positions and forces after the run, by tag.
  auto md = [&](const std::string& pair) {
    dt::LammpsSession lmp;
    lmp.run("plugin load " + dt::plugin_path() + "\natom_style atomic\n" + kCuCrystal +
            "neigh_modify every 5 delay 0 check no\n" + pair + R"(
velocity all create 600.0 4928 loop geom
fix nve all nve
timestep 0.002
thermo_style custom step pe
run 50 post no
)");
    return std::vector<std::vector<double>>{{lmp.thermo("pe")}, lmp.gather("x", 3), lmp.gather("f", 3)};
  };
  const std::vector<std::vector<double>> a = md(twin), b = md(native);
  for (int k = 0; k < 3; ++k) {
    const double d = deviation(a[k], b[k]);
    EXPECT_LE(d, kTolerance) << (k == 0 ? "pe" : k == 1 ? "x" : "f");
    if (dt::world_rank() == 0)
      std::printf("[   info   ] %s vs native after 50 steps on %d ranks: %s %.1e\n", GetParam().model.c_str(),
                  dt::world_size(), k == 0 ? "pe" : k == 1 ? "x" : "f", d);
  }
}

INSTANTIATE_TEST_SUITE_P(NativeTwin, NativeTwinLammps,
                         ::testing::Values(Fixture{"fixtures_twin.json", "native_mpnn_L2"},
                                           Fixture{"fixtures_twin.json", "native_mpnn_L2_ts"}),
                         [](const auto& info) { return info.param.model; });

// SevenNet-0 (make_fixtures.py --set sevennet, ctest fixture torch_sevennet_fixtures): one fp32 .pt2
// whose elements cover four small crystals, each a data file whose types are its own elements.
class SevennetLammps : public ::testing::TestWithParam<std::string> {
 protected:
  // Units, box and atoms of the structure, neighbour settings.
  std::string setup() const
  {
    return "units metal\natom_style atomic\nboundary p p p\nread_data " + fixtures_dir() + "/" +
           structure()["data"].get<std::string>() + "\nneighbor 1.0 bin\n";
  }
  // pair_style and pair_coeff lines: the model file, the structure's type elements.
  std::string pair() const
  {
    std::string elements;
    for (const auto& e : structure()["type_elements"]) elements += " " + e.get<std::string>();
    return "pair_style distspec\npair_coeff * * " + fixtures_dir() + "/" +
           manifest_["models"]["7net0"]["model_file"].get<std::string>() + elements + "\n";
  }
  const Json& structure() const { return manifest_["structures"][GetParam()]; }
  void SetUp() override { manifest_ = read_json(fixtures_dir() + "/fixtures_sevennet.json"); }

  Json manifest_;
};

// fp32 throughout (SevenNet-0's weights): the graph and SevenNet's calculator both sum in fp32, in
// different orders and from differently rounded edge vectors (positions cast after, not before,
// the periodic images are made), so energies agree to a few fp32 ulps of the total.
constexpr double kSevennetForce = 1e-5;      // eV/A, largest |f - f_ref| of any component
constexpr double kSevennetEnergy = 1e-6;     // relative, total energy
constexpr double kSevennetAtomEnergy = 1e-5; // eV, largest per-atom energy difference
constexpr double kSevennetVirial = 1e-5;     // relative to the largest virial component
// N ranks against one: the same fp32 graph on other rows, edges and summation orders.
constexpr double kSevennetRanks = 1e-5;

// One rank against SevenNet's own ASE calculator (SevenNetCalculator('7net-0'), whole periodic
// system, images as edge shifts).
TEST_P(SevennetLammps, OneRankEqualsSevenNetsCalculator)
{
  if (dt::world_size() != 1) GTEST_SKIP() << "one rank; N ranks are compared with one by NRanksEqualOneRank";
  const Result ref = reference_of(read_json(fixtures_dir() + "/" + structure()["reference"].get<std::string>()));
  const Result got = run_lammps(setup() + pair(), {});
  const Deviations d = deviations(got, ref, /*absolute_per_atom=*/true);
  expect_within(d, {kSevennetEnergy, kSevennetForce, kSevennetAtomEnergy, kSevennetVirial});
  std::printf("[   info   ] 7net0 on %s vs SevenNetCalculator: energy %.1e (relative), forces %.1e eV/A, per-atom "
              "energy %.1e eV, virial %.1e (relative)\n", GetParam().c_str(), d.energy, d.forces, d.energy_atom,
              d.virial);
}

// N ranks against one (rank 0 alone on MPI_COMM_SELF), every processor grid (on 4 ranks "4 1 1"
// cuts each box into slabs thinner than the cutoff, so halo rows come from several ranks and
// several images), newton on and off.
TEST_P(SevennetLammps, NRanksEqualOneRank)
{
  if (dt::world_size() == 1) GTEST_SKIP() << "needs more than one rank";
  const dt::Observables one = dt::evaluate_on_one_rank(setup(), pair());
  for (const bool newton : {true, false})
    for (const std::string& grid : dt::processor_grids()) {
      const std::string where = std::string("processors ") + grid + ", newton " + (newton ? "on" : "off");
      SCOPED_TRACE(where);
      const dt::Deviation d = dt::compare(
          dt::evaluate("processors " + grid + "\nnewton " + (newton ? "on" : "off") + "\n" + setup(), pair()), one);
      // Not the per-atom virial: a torch model's is r (x) f of each row, and which images are
      // rows depends on the grid; the virial, their sum, is compared.
      EXPECT_LE(std::max({d.pe, d.forces, d.virial, d.energy_atom}), kSevennetRanks) << dt::describe(d);
      if (dt::world_rank() == 0)
        std::printf("[   info   ] 7net0 on %s, %d ranks, %s: pe %.1e, forces %.1e, virial %.1e, per-atom energy "
                    "%.1e\n", GetParam().c_str(), dt::world_size(), where.c_str(), d.pe, d.forces, d.virial,
                    d.energy_atom);
    }
}

// SevenNet's own serial module (sevenn_get_model), which maps periodic images onto their owners
// by atom ID and exchanges nothing: on one rank it equals SevenNet's calculator as the exported
// graph does; on more ranks every rank stops at init and says what to run instead.
TEST_P(SevennetLammps, SerialModuleEqualsSevenNetsCalculatorOnOneRank)
{
  const std::string model = fixtures_dir() + "/" + manifest_["serial"]["model_file"].get<std::string>();
  std::string elements;
  for (const auto& e : structure()["type_elements"]) elements += " " + e.get<std::string>();
  const std::string pair = "pair_style distspec\npair_coeff * * " + model + elements + "\n";
  if (dt::world_size() > 1) {
    dt::LammpsSession lmp;
    const std::string error = lmp.run_expecting_error("plugin load " + dt::plugin_path() + "\n" + setup() + pair +
                                                      "run 0 post no");
    EXPECT_NE(error.find("is a serial model"), std::string::npos) << error;
    EXPECT_NE(error.find("run it on one rank, or export the model for many ranks"), std::string::npos) << error;
    return;
  }
  const Result ref = reference_of(read_json(fixtures_dir() + "/" + structure()["reference"].get<std::string>()));
  const Result got = run_lammps(setup() + pair, {});
  const Deviations d = deviations(got, ref, /*absolute_per_atom=*/true);
  expect_within(d, {kSevennetEnergy, kSevennetForce, kSevennetAtomEnergy, kSevennetVirial});
  std::printf("[   info   ] 7net0 serial module on %s vs SevenNetCalculator: energy %.1e (relative), forces %.1e "
              "eV/A, per-atom energy %.1e eV, virial %.1e (relative)\n", GetParam().c_str(), d.energy, d.forces,
              d.energy_atom, d.virial);
}

INSTANTIATE_TEST_SUITE_P(Sevennet, SevennetLammps,
                         ::testing::Values("si_diamond", "cu_fcc", "nacl_triclinic", "basrtio3"),
                         [](const auto& info) { return info.param; });

// NVE with SevenNet-0 (fp32): the total energy every 100 steps of `steps` steps on a rattled
// silicon crystal of 8 atoms (one diamond cell, 160 to 270 halo rows of periodic images) at
// 600 K, 1 fs, on the ranks of `comm`.
std::vector<double> sevennet_nve_energies(const std::string& model, int steps, MPI_Comm comm)
{
  dt::LammpsSession lmp({}, comm);
  lmp.run("plugin load " + dt::plugin_path() +
          "\nunits metal\natom_style atomic\nboundary p p p\nlattice diamond 5.431\n"
          "region box block 0 1 0 1 0 1\ncreate_box 1 box\ncreate_atoms 1 box\nmass 1 28.0855\n"
          "displace_atoms all random 0.05 0.05 0.05 2026 units box\n"
          "pair_style distspec\npair_coeff * * " + model + " Si\nneighbor 0.3 bin\nneigh_modify every 1 delay 0\n"
          "velocity all create 600.0 4928459 loop geom\nfix nve all nve\ntimestep 0.001\n"
          "thermo_style custom step etotal\nthermo 100\nrun 0 post no");
  std::vector<double> energies{lmp.thermo("etotal")};
  for (int done = 0; done < steps; done += 100) {
    lmp.run("run 100 pre no post no");
    energies.push_back(lmp.thermo("etotal"));
  }
  return energies;
}

// Largest |E(t) - E(0)| per atom.
double drift_per_atom(const std::vector<double>& energies, int atoms)
{
  double worst = 0.0;
  for (double e : energies) worst = std::max(worst, std::abs(e - energies.front()));
  return worst / atoms;
}

// 2 000 NVE steps on 2 ranks (subdomains 2.7 A thick, half the cutoff) conserve energy no worse
// than the same run on one rank: the per-layer halo adds no error that accumulates. Two ranks
// and one LAMMPS only: the runs take 4 and 3 minutes of fp32 SevenNet-0 on a CPU core, and the
// model's arithmetic does not depend on the LAMMPS version.
class SevennetNve : public ::testing::TestWithParam<int> {};

TEST_P(SevennetNve, TwoRanksDriftNoMoreThanOneRank)
{
  if (dt::world_size() != 2) GTEST_SKIP() << "runs on 2 ranks";
  if (DISTSPEC_LAMMPS_VERSION_NUMBER != 20250204) GTEST_SKIP() << "runs against LAMMPS 4 Feb 2025 only";
  const Json manifest = read_json(fixtures_dir() + "/fixtures_sevennet.json");
  const std::string model = fixtures_dir() + "/" + manifest["models"]["7net0"]["model_file"].get<std::string>();
  const int steps = GetParam(), atoms = 8;
  std::vector<double> one(steps / 100 + 1);
  if (dt::world_rank() == 0) one = sevennet_nve_energies(model, steps, MPI_COMM_SELF);
  MPI_Bcast(one.data(), static_cast<int>(one.size()), MPI_DOUBLE, 0, MPI_COMM_WORLD);
  const std::vector<double> two = sevennet_nve_energies(model, steps, MPI_COMM_WORLD);
  const double d1 = drift_per_atom(one, atoms), d2 = drift_per_atom(two, atoms);
  // The same trajectory for the first steps (N ranks equal one to 1e-5); fp32 forces decorrelate
  // it later, so the bound allows a quarter more and a floor of 2e-6 eV per atom.
  EXPECT_NEAR(two[1], one[1], 1e-5 * std::abs(one[1]));
  EXPECT_LE(d2, 1.25 * d1 + 2e-6) << "1 rank: " << d1 << " eV/atom, 2 ranks: " << d2 << " eV/atom";
  EXPECT_LT(d1, 1e-3) << "SevenNet-0 does not conserve energy on one rank";
  if (dt::world_rank() == 0)
    std::printf("[   info   ] 7net0 NVE, 8 Si atoms, %d steps of 1 fs: largest |E(t) - E(0)| per atom %.2e eV on 1 "
                "rank, %.2e eV on 2 ranks\n", steps, d1, d2);
}

INSTANTIATE_TEST_SUITE_P(Sevennet, SevennetNve, ::testing::Values(2000),
                         [](const auto& info) { return std::to_string(info.param) + "_steps"; });

// What a user can get wrong, each reported by every rank at pair_coeff with the model file's
// name and what to do: model files written from the L2 fixtures' with one thing changed.
struct BadInput {
  std::string name;
  std::string model;       // the fixture whose model file is changed
  Json parameters;         // merged into its "parameters" (null deletes a key)
  std::string style_words; // on the pair_style line
  std::string message;     // what the error must say
};

TEST(TorchLammpsErrors, BadInputStopsEveryRankWithItsMessage)
{
  const std::string dir = fixtures_dir();
  const std::string scratch = "/tmp/distspec_torch_bad_input_" + std::to_string(dt::world_size());
  const Json manifest = read_json(dir + "/fixtures.json");
  const std::vector<BadInput> cases{
      {"no_graph", "toy_mpnn_L2", {{"graph", nullptr}}, "", "/parameters/graph: the model file names no graph; a torch "
       "model runs a graph exported by tools/distspec-export"},
      {"missing_graph", "toy_mpnn_L2_ts", {{"graph", "gone.pt"}}, "", "gone.pt does not exist or is not a file"},
      {"other_torch", "toy_mpnn_L2", {{"torch_version", "2.9.1"}}, "",
       "was compiled by torch 2.9.1, this plugin links torch "},
      {"other_contract", "toy_mpnn_L2_ts", {{"contract", 2}}, "",
       "/parameters/contract: the graph uses calling convention 2, this build runs convention 1"},
      {"precision", "toy_mpnn_L2_ts", Json::object(), "precision fp32",
       "/parameters/precision: the graph was exported in fp64, but precision fp32 was requested; an exported graph "
       "runs in the precision it was exported in"},
      // A TorchScript file called a package of the right torch (the one the .pt2 fixture names).
      {"not_a_package", "toy_mpnn_L2_ts",
       {{"format", "aoti"},
        {"torch_version",
         read_json(dir + "/" + manifest["models"]["toy_mpnn_L2"]["model_file"].get<std::string>())["parameters"]
                  ["torch_version"]}},
       "", "is not an AOTInductor package"},
  };
  for (const BadInput& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string file = scratch + "/" + c.name + ".json";
    if (dt::world_rank() == 0) {
      Json model = read_json(dir + "/" + manifest["models"][c.model]["model_file"].get<std::string>());
      Json& params = model["parameters"];
      params["graph"] = dir + "/" + params["graph"].get<std::string>();
      params.merge_patch(c.parameters);
      model["spec"] = dir + "/" + model["spec"].get<std::string>();
      std::system(("mkdir -p " + scratch).c_str());
      std::ofstream(file) << model.dump(1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    dt::LammpsSession lmp;
    const std::string error = lmp.run_expecting_error(
        "plugin load " + dt::plugin_path() + "\nunits metal\natom_style atomic\nread_data " + dir + "/" +
        manifest["data"].get<std::string>() + "\npair_style distspec " + c.style_words + "\npair_coeff * * " + file +
        " Cu Ni");
    EXPECT_NE(error.find(file), std::string::npos) << error;
    EXPECT_NE(error.find(c.message), std::string::npos) << error;
  }
}

}  // namespace
