// Exported PyTorch graphs under LAMMPS: the toy MPNN of make_fixtures.py (2 and 4 layers as
// AOTInductor packages, 2 layers as TorchScript) on 1, 2 and 4 ranks, each processor grid,
// newton on and off, the plain and (in KOKKOS builds) the /kk style, against the eager PyTorch
// model evaluated on the whole periodic system in one process (reference.py): energy, forces and
// per-atom energy by atom tag, and the virial, to 1e-10 relative in fp64.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <mpi.h>
#include <nlohmann/json.hpp>

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

// How the style runs: plain or /kk on host threads, with newton on or off (KOKKOS' package
// settings matched to it, as unittest/integration/test_kokkos.cpp runs them).
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
// torch_fixtures) or nvalchemi's MACE (fixtures_mace.json, torch_mace_fixtures).
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
      const double de = std::abs(got.energy - ref.energy) / std::abs(ref.energy);
      const double df = deviation(got.forces, ref.forces);
      const double dea = deviation(got.energy_atom, ref.energy_atom);
      const double dw = deviation(got.virial, ref.virial);
      EXPECT_LE(de, kTolerance) << "energy " << got.energy << " vs " << ref.energy;
      EXPECT_LE(df, kTolerance);
      EXPECT_LE(dea, kTolerance);
      EXPECT_LE(dw, kTolerance);
      if (dt::world_rank() == 0)
        std::printf("[   info   ] %s %s, processors %s: energy %.1e, forces %.1e, per-atom energy %.1e, virial %.1e\n",
                    GetParam().model.c_str(), variant.name.c_str(), grid.c_str(), de, df, dea, dw);
    }
}

INSTANTIATE_TEST_SUITE_P(Toy, TorchLammps,
                         ::testing::Values(Fixture{"fixtures.json", "toy_mpnn_L2"}, Fixture{"fixtures.json", "toy_mpnn_L4"},
                                           Fixture{"fixtures.json", "toy_mpnn_L2_ts"}),
                         [](const auto& info) { return info.param.model; });
INSTANTIATE_TEST_SUITE_P(Mace, TorchLammps, ::testing::Values(Fixture{"fixtures_mace.json", "mace_L2"}),
                         [](const auto& info) { return info.param.model; });

// A slab in a third of the box, split along x: on 2 ranks one rank owns no atom but holds periodic
// images, on 4 one rank holds no row at all. The graph runs on every rank (its halo ops are
// collectives), with zero edges, zero owned rows, zero rows.
TEST_P(TorchLammps, RanksWithoutAtomsEqualOneRank)
{
  if (dt::world_size() == 1) GTEST_SKIP() << "needs more than one rank";
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
