// EAM against independent references: density and energy against a direct evaluation of the
// potential files' raw tables summed over periodic images, forces and virial against finite
// differences of the energy, and the halo exchanges the spec's policy asks for.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "eam_reference.h"
#include "models/eam/eam.h"
#include "models/edge_kernel.h"
#include "models/json_fields.h"
#include "models/model_file.h"
#include "model_test_util.h"

namespace distspec::test {
namespace {

using models::eam::Funcfl;
using models::eam::Setfl;

// The file's functions for the model's species, evaluated from the raw tables.
struct RawEam {
  double dr = 0.0, drho = 0.0, cut = 0.0;
  std::vector<std::vector<double>> frho, rhor;  // per species
  std::vector<std::vector<std::vector<double>>> z2r;  // per species pair

  double F(int a, double rho) const { return raw_table(frho[a], drho, rho); }
  double rho(int b, double r) const { return raw_table(rhor[b], dr, r); }
  double phi(int a, int b, double r) const { return raw_table(z2r[a][b], dr, r) / r; }

  static RawEam funcfl(const Funcfl& f) {
    std::vector<double> z2(f.zr.size());
    for (std::size_t k = 0; k < z2.size(); ++k) z2[k] = 27.2 * 0.529 * f.zr[k] * f.zr[k];
    return {f.dr, f.drho, f.cut, {f.frho}, {f.rhor}, {{z2}}};
  }
  // Species 0 = Cu, 1 = Ni; the file lists Ni, Cu and pairs Ni-Ni, Cu-Ni, Cu-Cu.
  static RawEam cuni(const Setfl& f) {
    return {f.dr, f.drho, f.cut, {f.frho[1], f.frho[0]}, {f.rhor[1], f.rhor[0]},
            {{f.z2r[2], f.z2r[1]}, {f.z2r[1], f.z2r[0]}}};
  }

  // rho_i and e_i = F(rho_i) + 1/2 sum phi, brute force over images.
  void evaluate(const Crystal& c, std::vector<double>& rho_i, std::vector<double>& e_i) const {
    const std::size_t n = c.positions.size();
    rho_i.assign(n, 0.0);
    e_i.assign(n, 0.0);
    for_each_image_pair(c, 1, [&](std::size_t i, std::size_t j, double rsq) {
      if (rsq >= cut * cut) return;
      const double r = std::sqrt(rsq);
      rho_i[i] += rho(c.species[j], r);
      e_i[i] += 0.5 * phi(c.species[i], c.species[j], r);
    });
    for (std::size_t i = 0; i < n; ++i) e_i[i] += F(c.species[i], rho_i[i]);
  }
};

struct Case {
  const char* name;
  const char* model;
  bool alloy;
  bool triclinic;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class EamModel : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    file_ = models::read_model_file(potentials(GetParam().model));
    model_ = models::make_model(file_);
    crystal_ = fcc(3.615, 3);
    if (GetParam().triclinic) shear(crystal_, 1.5, -1.0, 0.7);
    jiggle(crystal_, 0.1, 3);
    if (GetParam().alloy) randomize_species(crystal_, 2, 9);
  }
  const DistributionSpec& spec() const { return file_.spec.core; }
  RawEam raw() const {
    const std::string path = file_.parameters_file;
    const std::string text = models::read_file_bytes(path);
    return GetParam().alloy ? RawEam::cuni(models::eam::parse_setfl(text, path))
                            : RawEam::funcfl(models::eam::parse_funcfl(text, path));
  }

  models::ModelFile file_;
  std::unique_ptr<models::Model> model_;
  Crystal crystal_;
};

// The model's ops are bound by their handles: a density kernel that another library declared with
// the bare tables as its state is refused when the spec binds, naming the state the model passes.
TEST_P(EamModel, BindingRefusesADensityKernelOfAnotherState) {
  OpRegistry registry;
  models::register_builtin_ops(registry);
  EXPECT_NO_THROW(Dispatcher(spec(), Device::cpu, model_->info().ops, 1, HaloStrategy::per_layer, registry));
  const Op<models::eam::Tables> other_density{models::eam::kDensityOp.qualname};
  registry.add<Device::cpu>(other_density, [](Span<const TensorRef>, Span<const TensorRef>, const models::eam::Tables&) {});
  const Error e = test::error_of([&] { Dispatcher(spec(), Device::cpu, model_->info().ops, 1, HaloStrategy::per_layer, registry); });
  EXPECT_EQ(e.message(), "op 'distspec_eam::density' on cpu: the model calls it with state "
                         "distspec::models::EdgeOpState<distspec::models::eam::Tables>, but its loaded kernel takes "
                         "distspec::models::eam::Tables");
}

TEST_P(EamModel, DensityAndEnergyEqualTheFileFunctionsSummedOverImages) {
  const PeriodicGraph g(crystal_, file_.cutoff, 1.0);
  std::vector<double> rho_ref, e_ref;
  raw().evaluate(crystal_, rho_ref, e_ref);

  // The density op alone, on the model's tables.
  models::register_builtin_ops();
  const models::eam::Tables constants = models::eam::load_tables(file_);
  const models::EdgeOpState<models::eam::Tables> tables{&constants, {}};
  std::vector<double> rho(g.n_rows(), 0.0);
  const std::vector<TensorRef> args = models::edge_args(g.graph());
  const TensorRef out = TensorRef::of(rho.data(), rho.size());
  OpRegistry::global().run<Device::cpu>(models::eam::kDensityOp, args, Span<const TensorRef>(&out, 1), tables);
  // Two different interpolations of the same tables agree to ~1e-6 relative (CuNi's grid is
  // the coarser); any wrong function, factor or species would be off by far more.
  for (std::size_t i = 0; i < g.n_owned(); ++i) EXPECT_NEAR(rho[i], rho_ref[i], 1e-5 * rho_ref[i]) << "atom " << i;
  for (std::size_t row = g.n_owned(); row < g.n_rows(); ++row) EXPECT_EQ(rho[row], 0.0);

  const ModelRun run = run_model(*model_, g, spec());
  double total = 0.0;
  for (std::size_t i = 0; i < g.n_owned(); ++i) {
    EXPECT_NEAR(run.out.energy_rows[i], e_ref[i], 5e-5) << "atom " << i;
    total += e_ref[i];
  }
  EXPECT_NEAR(run.out.energy, total, 5e-5 * g.n_owned());
  for (std::size_t row = g.n_owned(); row < g.n_rows(); ++row) EXPECT_EQ(run.out.energy_rows[row], 0.0);
}

// Newton off's half list, which the CPU model asks for, against the full list.
TEST_P(EamModel, HalfListGivesTheFullListsOutputs) {
  EXPECT_EQ(model_->info().half_list, models::EdgeList::half_newton_off);
  expect_half_list_matches_full(*model_, PeriodicGraph(crystal_, file_.cutoff, 1.0), spec(),
                                models::EdgeList::half_newton_off);
  // Newton on: the forces over newton on's pairs only, halo shares folded.
  EXPECT_TRUE(model_->info().newton_on_forces);
  expect_half_list_matches_full(*model_, PeriodicGraph(crystal_, file_.cutoff, 1.0), spec(),
                                models::EdgeList::half_newton_off, 1e-12, true);
}

TEST_P(EamModel, ThreadsGiveTheOneThreadOutputs) {
  const PeriodicGraph g(crystal_, file_.cutoff, 1.0);
  expect_threads_match_one_thread(*model_, g, spec(), models::EdgeList::full);
  expect_threads_match_one_thread(*model_, g, spec(), models::EdgeList::half_newton_off);
  expect_threads_match_one_thread(*model_, g, spec(), models::EdgeList::half_newton_off, true);
}

// energy false (LAMMPS eflag 0): the forces of a step with energy, no energy.
TEST_P(EamModel, StepsWithoutEnergyGiveTheSameForces) {
  const PeriodicGraph g(crystal_, file_.cutoff, 1.0);
  const ModelRun with = run_model(*model_, g, spec(), {false, true, false});
  models::OutputRequest request;
  request.energy = false;
  const ModelRun without = run_model(*model_, g, spec(), request);
  EXPECT_EQ(without.out.energy, 0.0);
  EXPECT_EQ(without.out.forces, with.out.forces);
}

TEST_P(EamModel, ForcesEqualFiniteDifferences) {
  const PeriodicGraph g(crystal_, file_.cutoff, 1.0);
  const ModelRun run = run_model(*model_, g, spec());
  for (std::size_t i : {0u, 13u, 58u, 107u})
    for (int k = 0; k < 3; ++k)
      EXPECT_NEAR(run.out.forces[3 * i + k], fd_force(*model_, g, spec(), i, k, 1e-5), 2e-7)
          << "atom " << i << " component " << k;
  for (std::size_t v = 3 * g.n_owned(); v < run.out.forces.size(); ++v) EXPECT_EQ(run.out.forces[v], 0.0);
}

TEST_P(EamModel, VirialEqualsStrainDerivative) {
  expect_virial_is_strain_derivative(*model_, PeriodicGraph(crystal_, file_.cutoff, 1.0), spec(), 1e-6, 1e-10);
}

// The halo policy folds and refreshes rho (reverse + forward) and refreshes F' (forward);
// refresh_halo with scatter_mode local only refreshes F'. A full list makes owned rho exact
// either way, so both give the same numbers.
// One forward exchange a step (F'), as pair_eam under newton off: owned rows get every pair
// they are in from a full or newton-off list. Newton on's half list leaves parts of rho on halo
// rows, and the spec's policy folds them (a reverse, then a forward).
TEST_P(EamModel, ExchangesFollowTheSpecsPolicy) {
  PeriodicGraph g(crystal_, file_.cutoff, 1.0);
  const ModelRun halo = run_model(*model_, g, spec());
  EXPECT_EQ(halo.stats.forward, 1u);
  EXPECT_EQ(halo.stats.reverse, 0u);
  PeriodicGraph newton_on = g;
  newton_on.use_edge_list(models::EdgeList::half_newton_on);
  const ModelRun folded = run_model(*model_, newton_on, spec());
  EXPECT_EQ(folded.stats.forward, 2u);
  EXPECT_EQ(folded.stats.reverse, 1u);
  expect_half_list_matches_full(*model_, g, spec(), models::EdgeList::half_newton_on);
  DistributionSpec refresh = spec();
  refresh.policy = StoragePolicy("refresh_halo");
  const ModelRun local = run_model(*model_, g, refresh);
  EXPECT_EQ(local.stats.forward, 1u);
  EXPECT_EQ(local.stats.reverse, 0u);
  EXPECT_EQ(local.out.energy, halo.out.energy);
  EXPECT_EQ(local.out.forces, halo.out.forces);
}

INSTANTIATE_TEST_SUITE_P(Systems, EamModel,
                         ::testing::Values(Case{"CuFuncfl", "cu_eam_u3.json", false, false},
                                           Case{"CuFuncflTriclinic", "cu_eam_u3.json", false, true},
                                           Case{"CuNiSetfl", "cuni_eam_alloy.json", true, false},
                                           Case{"CuNiSetflTriclinic", "cuni_eam_alloy.json", true, true}),
                         [](const auto& info) { return std::string(info.param.name); });

// Perfect fcc crystals of 3 x 3 x 3 cells against LAMMPS 29 Sep 2021 itself (`lattice fcc a`,
// `create_atoms`, `pair_style eam` / `eam/alloy`, `run 0`, energies printed with %.17g).
// Foiles et al. (1986) fit Cu to E_coh = 3.54 eV; Onat and Durukanoglu (2014) Ni to 4.45 eV.
TEST(EamPerfectCrystal, EnergyEqualsLAMMPSAndForcesVanish) {
  struct Crystal {
    const char* model;
    int species;
    double a;
    double lammps_energy;
  };
  for (const Crystal& x : {Crystal{"cu_eam_u3.json", 0, 3.615, -382.32000024623056},
                           Crystal{"cuni_eam_alloy.json", 0, 3.615, -382.32009924707455},
                           Crystal{"cuni_eam_alloy.json", 1, 3.52, -480.59999973343116}}) {
    SCOPED_TRACE(std::string(x.model) + " species " + std::to_string(x.species));
    const models::ModelFile file = models::read_model_file(potentials(x.model));
    auto model = models::make_model(file);
    test::Crystal c = fcc(x.a, 3);
    c.species.assign(c.positions.size(), x.species);
    const PeriodicGraph g(c, file.cutoff, 1.0);
    const ModelRun run = run_model(*model, g, file.spec.core);
    EXPECT_NEAR(run.out.energy, x.lammps_energy, 1e-9);
    for (std::size_t v = 0; v < 3 * g.n_owned(); ++v) EXPECT_NEAR(run.out.forces[v], 0.0, 1e-10);
  }
}

// Two elements from two funcfl files on different grids: pair_eam.cpp's funcfl mixing, with
// densities that differ per element so F'_i rho_j' and F'_j rho_i' must not be swapped.
TEST(EamFuncflMixture, ForcesEqualFiniteDifferences) {
  const auto dir = std::filesystem::temp_directory_path() / ("distspec_eam_mix_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto write = [&](const std::string& name, const std::string& text) { std::ofstream(dir / name) << text; };
  auto table = [](int n, double d, auto f) {
    std::vector<double> v(n);
    for (int k = 0; k < n; ++k) v[k] = f(k * d);
    return v;
  };
  write("a.eam", funcfl_text(29, 63.5, 0.004, table(400, 0.004, [](double p) { return -3.0 * p + 1.2 * p * p; }), 0.01,
                             5.5, table(600, 0.01, [](double r) { return 2.0 * std::exp(-1.1 * r); }),
                             table(600, 0.01, [](double r) { return 0.9 * (1 + r) * std::exp(-1.5 * r); })));
  write("b.eam", funcfl_text(28, 58.7, 0.005, table(300, 0.005, [](double p) { return -2.0 * p + 0.8 * p * p; }), 0.013,
                             5.2, table(430, 0.013, [](double r) { return 1.5 * std::exp(-0.8 * r); }),
                             table(430, 0.013, [](double r) { return 1.2 * (1 + r) * std::exp(-1.7 * r); })));
  write("mix.json", R"({"format": "distspec-model", "format_version": 1, "architecture": "eam", "units": "metal",
    "cutoff": 5.5, "elements": ["A", "B"],
    "parameters": {"file_format": "funcfl", "files": {"A": "a.eam", "B": "b.eam"}},
    "spec": ")" + potentials("specs/eam_halo.json") + "\"}");
  const models::ModelFile file = models::read_model_file((dir / "mix.json").string());
  auto model = models::make_model(file);
  Crystal c = fcc(3.615, 3);
  jiggle(c, 0.15, 21);
  randomize_species(c, 2, 4);
  const PeriodicGraph g(c, file.cutoff, 1.0);
  const ModelRun run = run_model(*model, g, file.spec.core);
  for (std::size_t i : {1u, 40u, 99u})
    for (int k = 0; k < 3; ++k)
      EXPECT_NEAR(run.out.forces[3 * i + k], fd_force(*model, g, file.spec.core, i, k, 1e-5), 2e-7);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace distspec::test
