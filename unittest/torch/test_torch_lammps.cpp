// Exported PyTorch graphs under LAMMPS, the checks that are not cases: SevenNet-0's NVE energy
// conservation on 2 ranks against 1, and model files a user gets wrong. The exported models'
// comparisons (the toy MPNN, MACE, AIMNet2 against their eager PyTorch evaluation, the built-in
// mpnn against its PyTorch twin, SevenNet-0 against SevenNet's calculator, N ranks against one)
// are data: unittest/torch/cases/*.json, run by unittest/integration/test_cases.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <mpi.h>
#include <nlohmann/json.hpp>

#include "lammps_session.h"

namespace dt = distspec::testing;

namespace {

using Json = nlohmann::json;

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
// only, and not in the version smoke set (the full suite runs it against one LAMMPS): the runs
// take 4 and 3 minutes of fp32 SevenNet-0 on a CPU core, and the model's arithmetic does not
// depend on the LAMMPS version.
class SevennetNve : public ::testing::TestWithParam<int> {};

TEST_P(SevennetNve, TwoRanksDriftNoMoreThanOneRank)
{
  if (dt::world_size() != 2) GTEST_SKIP() << "runs on 2 ranks";
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
  // The refusal of an accelerated graph is the plugin's answer where no library is given.
  unsetenv("DISTSPEC_OPENEQUIVARIANCE_LIBRARY");
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
      // A graph of an accelerator whose library this process lacks (make_fixtures.py's oeq_call.pt)
      // and a model file naming one that no library here provides.
      {"accelerator_library_missing", "toy_mpnn_L2_ts", {{"graph", dir + "/oeq_call.pt"}}, "",
       "calls op 'libtorch_tp_jit::jit_conv_forward' of OpenEquivariance, which this plugin cannot run: no "
       "OpenEquivariance library was given (DISTSPEC_OPENEQUIVARIANCE_LIBRARY is unset and the plugin was built "
       "without one); build its library against this plugin's torch (scripts/build_openequivariance.sh"},
      {"accelerator_without_registrations", "toy_mpnn_L2_ts", {{"accelerator", "cuequivariance"}}, "",
       "of cuEquivariance, which this plugin cannot run: this plugin cannot provide cuEquivariance's ops; "
       "cuEquivariance defines its torch ops in Python only"},
      {"accelerator_unknown", "toy_mpnn_L2_ts", {{"accelerator", "flashtp"}}, "",
       "/parameters/accelerator"},
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
