// Lennard-Jones against independent references: the energy of a brute-force O(N^2) sum over
// periodic images (with LJ written out here, not taken from the kernel), forces and virial
// against finite differences of the energy, and LAMMPS' mixing rules written out by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "distspec/error.h"
#include "models/edge_kernel.h"
#include "models/lj/lj.h"
#include "models/model_file.h"
#include "model_test_util.h"

namespace distspec::test {
namespace {

using models::Json;

// lj_binary.json's pairs, restated: species 0 = Ar, 1 = Kr.
struct Pair {
  double epsilon, sigma, cutoff;
};
const Pair kBinary[2][2] = {{{0.0104, 3.4, 8.5}, {0.0118, 3.52, 8.8}}, {{0.0118, 3.52, 8.8}, {0.0140, 3.65, 9.0}}};

double lj(const Pair& p, double r) {
  const double s6 = std::pow(p.sigma / r, 6);
  return 4.0 * p.epsilon * (s6 * s6 - s6);
}

// Per-atom energies, pair_modify shift yes: sum over all images within each pair's cutoff.
std::vector<double> brute_force_energies(const Crystal& c) {
  std::vector<double> e(c.positions.size(), 0.0);
  for_each_image_pair(c, 2, [&](std::size_t i, std::size_t j, double rsq) {
    const Pair& p = kBinary[c.species[i]][c.species[j]];
    if (rsq < p.cutoff * p.cutoff) e[i] += 0.5 * (lj(p, std::sqrt(rsq)) - lj(p, p.cutoff));
  });
  return e;
}

Crystal binary_crystal(bool triclinic) {
  Crystal c = fcc(5.6, 3);
  if (triclinic) shear(c, 2.0, -1.5, 1.0);
  jiggle(c, 0.25, 11);
  randomize_species(c, 2, 5);
  return c;
}

class LJBinary : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    file_ = models::read_model_file(potentials("lj_binary.json"));
    model_ = models::make_model(file_);
    crystal_ = binary_crystal(GetParam());
  }
  const DistributionSpec& spec() const { return file_.spec.core; }

  models::ModelFile file_;
  std::unique_ptr<models::Model> model_;
  Crystal crystal_;
};

TEST_P(LJBinary, EnergyEqualsBruteForceSumOverImages) {
  const PeriodicGraph g(crystal_, file_.cutoff, 1.0);
  const ModelRun run = run_model(*model_, g, spec());
  const std::vector<double> ref = brute_force_energies(crystal_);
  double total = 0.0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    EXPECT_NEAR(run.out.energy_rows[i], ref[i], 1e-12) << "atom " << i;
    total += ref[i];
  }
  EXPECT_NEAR(run.out.energy, total, 1e-10);
  for (std::size_t row = g.n_owned(); row < g.n_rows(); ++row) EXPECT_EQ(run.out.energy_rows[row], 0.0);
}

TEST_P(LJBinary, ForcesEqualFiniteDifferences) {
  const PeriodicGraph g(crystal_, file_.cutoff, 1.0);
  const ModelRun run = run_model(*model_, g, spec());
  // Owned forces are complete, halo rows carry nothing, and the total force vanishes.
  expect_forces_match_fd(*model_, g, spec(), run.out, {0u, 17u, 64u, 107u}, 1e-5, 1e-8);
}

TEST_P(LJBinary, VirialEqualsStrainDerivative) {
  // Per-atom virial: owned rows add up to the global virial, halo rows are zero.
  expect_virial_is_strain_derivative(*model_, PeriodicGraph(crystal_, file_.cutoff, 1.0), spec(), 1e-7, 1e-12);
}

// LAMMPS' half lists (newton off and on) against the full list the brute-force tests check.
TEST_P(LJBinary, HalfListsGiveTheFullListsOutputs) {
  EXPECT_EQ(model_->info().half_list, models::EdgeList::half_newton_on);
  for (models::EdgeList list : {models::EdgeList::half_newton_off, models::EdgeList::half_newton_on}) {
    SCOPED_TRACE(models::edge_list_name(list));
    expect_half_list_matches_full(*model_, PeriodicGraph(crystal_, file_.cutoff, 1.0), spec(), list);
  }
}

TEST_P(LJBinary, ThreadsGiveTheOneThreadOutputs) {
  for (models::EdgeList list : {models::EdgeList::full, models::EdgeList::half_newton_off, models::EdgeList::half_newton_on}) {
    SCOPED_TRACE(models::edge_list_name(list));
    expect_threads_match_one_thread(*model_, PeriodicGraph(crystal_, file_.cutoff, 1.0), spec(), list);
  }
}

// energy false (LAMMPS eflag 0): the forces and virial of a step with energy, no energy.
TEST_P(LJBinary, StepsWithoutEnergyGiveTheSameForces) {
  const PeriodicGraph g(crystal_, file_.cutoff, 1.0);
  const ModelRun with = run_model(*model_, g, spec(), {false, true, false});
  models::OutputRequest request;
  request.energy = false;
  request.virial = true;
  const ModelRun without = run_model(*model_, g, spec(), request);
  EXPECT_NE(with.out.energy, 0.0);
  EXPECT_EQ(without.out.energy, 0.0);
  EXPECT_EQ(without.out.forces, with.out.forces);
  EXPECT_EQ(without.out.virial, with.out.virial);
}

// A step without energy gives the kernels an empty energy output, which they skip, even where
// the scratch rows kept their storage from the last step with energy.
TEST(PairOutputRefs, NoEnergyRowsGiveAnEmptyEnergyOutput) {
  models::OutputRequest request;
  request.energy = false;
  models::ModelOutputs out;
  out.reset(10, request);
  std::vector<double> energy_rows(10, 0.0);
  EXPECT_EQ(models::pair_output_refs(out, energy_rows, false)[0].rows, 10u);
  energy_rows.assign(0, 0.0);  // as the LJ model does on such a step: the capacity stays
  ASSERT_NE(energy_rows.data(), nullptr);
  EXPECT_EQ(models::pair_output_refs(out, energy_rows, false)[0].rows, 0u);
}

TEST_P(LJBinary, PlainOpAgreesWithVirialOp) {
  const PeriodicGraph g(crystal_, file_.cutoff, 1.0);
  const ModelRun with = run_model(*model_, g, spec(), {true, true, true});
  const ModelRun without = run_model(*model_, g, spec(), {false, false, false});
  EXPECT_EQ(without.out.energy, with.out.energy);
  EXPECT_EQ(without.out.forces, with.out.forces);
  EXPECT_TRUE(without.out.energy_rows.empty());
  EXPECT_TRUE(without.out.virial_rows.empty());
  for (double v : without.out.virial) EXPECT_EQ(v, 0.0);
}

// Hosts get an error naming the op and argument, not a wild read.
TEST_P(LJBinary, KernelChecksItsArguments) {
  models::register_builtin_ops();
  const models::lj::Params constants = models::lj::parse_params(file_.parameters, file_.elements, file_.cutoff);
  const models::EdgeOpState<models::lj::Params> params{&constants, {}};
  PeriodicGraph g(crystal_, file_.cutoff, 1.0);
  std::vector<double> energy(g.n_rows()), forces(3 * g.n_rows());
  const std::vector<TensorRef> outs{TensorRef::of(energy.data(), g.n_rows()), TensorRef::of(forces.data(), g.n_rows(), 3)};
  std::vector<int> species = g.species();
  species[5] = 2;
  models::AtomGraph graph = g.graph();
  graph.species = species.data();
  try {
    const std::vector<TensorRef> args = models::edge_args(graph);
    OpRegistry::global().run<Device::cpu>(models::lj::kEnergyForcesOp, args, outs, params);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.id(), "model.op_args");
    EXPECT_EQ(e.message(), "op 'nvalchemi::lj_energy_forces_batch': species 2 of row 5 is not one of the model's 2 elements");
  }
  try {
    OpRegistry::global().run<Device::cpu>(models::lj::kEnergyForcesOp, models::edge_args(g.graph()),
                                          Span<const TensorRef>(outs.data(), 1), params);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "op 'nvalchemi::lj_energy_forces_batch': expected 2 outputs, got 1");
  }
}

INSTANTIATE_TEST_SUITE_P(Boxes, LJBinary, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "triclinic" : "orthorhombic"; });

TEST(LJArgon, PerfectCrystalHasNoForcesAndTheLatticeSumEnergy) {
  const models::ModelFile file = models::read_model_file(potentials("lj_argon.json"));
  auto model = models::make_model(file);
  const double a = 5.26;
  const PeriodicGraph g(fcc(a, 3), file.cutoff, 0.5);
  const ModelRun run = run_model(*model, g, file.spec.core);
  for (std::size_t v = 0; v < 3 * g.n_owned(); ++v) EXPECT_NEAR(run.out.forces[v], 0.0, 1e-12);
  // Lattice sum over fcc neighbour shells of one atom: r^2 = (a^2 / 2) m, m = 1, 2, ...,
  // counted directly on the infinite lattice.
  const Pair ar{0.0104, 3.4, 8.5};
  double e = 0.0;
  const int n = 4;
  for (int i = -2 * n; i <= 2 * n; ++i)
    for (int j = -2 * n; j <= 2 * n; ++j)
      for (int k = -2 * n; k <= 2 * n; ++k) {
        if ((i + j + k) % 2 != 0 || (i == 0 && j == 0 && k == 0)) continue;  // fcc: half-integer sites
        const double r = 0.5 * a * std::sqrt(double(i * i + j * j + k * k));
        if (r < ar.cutoff) e += 0.5 * lj(ar, r);
      }
  EXPECT_NEAR(run.out.energy / g.n_owned(), e, 1e-12);
  // Isotropic crystal: equal diagonal virial, no shear.
  EXPECT_NEAR(run.out.virial[0], run.out.virial[1], 1e-10);
  EXPECT_NEAR(run.out.virial[0], run.out.virial[2], 1e-10);
  for (int c = 3; c < 6; ++c) EXPECT_NEAR(run.out.virial[c], 0.0, 1e-10);
}

// LAMMPS Pair::mix_energy / mix_distance, restated.
TEST(LJParams, UnlistedCrossPairsAreMixedAsLAMMPSDoes) {
  const Json pairs = Json::parse(R"([{"elements": ["A", "A"], "epsilon": 0.01, "sigma": 3.0, "cutoff": 7.0},
                                     {"elements": ["B", "B"], "epsilon": 0.04, "sigma": 4.0}])");
  const std::vector<std::string> elements{"A", "B"};
  auto params = [&](const char* mixing) {
    return models::lj::parse_params(Json{{"pairs", pairs}, {"mixing", mixing}}, elements, 9.0);
  };
  const auto geometric = params("geometric").pair(0, 1);
  EXPECT_DOUBLE_EQ(geometric.epsilon, 0.02);
  EXPECT_DOUBLE_EQ(geometric.sigma, std::sqrt(12.0));
  EXPECT_DOUBLE_EQ(geometric.cutoff, std::sqrt(63.0));  // B's cutoff defaults to the model's 9
  const auto arithmetic = params("arithmetic").pair(1, 0);
  EXPECT_DOUBLE_EQ(arithmetic.epsilon, 0.02);
  EXPECT_DOUBLE_EQ(arithmetic.sigma, 3.5);
  EXPECT_DOUBLE_EQ(arithmetic.cutoff, 8.0);
  const auto sixth = params("sixthpower").pair(0, 1);
  EXPECT_DOUBLE_EQ(sixth.epsilon, 2.0 * 0.02 * 27.0 * 64.0 / (729.0 + 4096.0));
  EXPECT_DOUBLE_EQ(sixth.sigma, std::pow(0.5 * (729.0 + 4096.0), 1.0 / 6.0));
  // The default is geometric; shift puts E(cutoff) in the offset.
  const auto defaults = models::lj::parse_params(Json{{"pairs", pairs}, {"shift", true}}, elements, 9.0);
  EXPECT_DOUBLE_EQ(defaults.pair(0, 1).sigma, std::sqrt(12.0));
  const double ratio = 3.0 / 7.0;
  EXPECT_DOUBLE_EQ(defaults.coeff(0, 0).offset, 4.0 * 0.01 * (std::pow(ratio, 12) - std::pow(ratio, 6)));
  EXPECT_EQ(params("geometric").coeff(0, 0).offset, 0.0);
}

void expect_param_error(const std::string& pairs_json, const std::string& pointer, const std::string& message) {
  try {
    models::lj::parse_params(Json{{"pairs", Json::parse(pairs_json)}}, {"A", "B"}, 8.0);
    ADD_FAILURE() << "no error for " << pairs_json;
  } catch (const Error& e) {
    EXPECT_EQ(e.pointer(), pointer);
    EXPECT_EQ(e.message(), message);
  }
}

TEST(LJParams, ErrorsPointAtTheBadValue) {
  const std::string aa = R"({"elements": ["A", "A"], "epsilon": 0.01, "sigma": 3.0})";
  const std::string bb = R"({"elements": ["B", "B"], "epsilon": 0.01, "sigma": 3.0})";
  expect_param_error("[" + aa + "]", "/parameters/pairs", "no pair B B is given");
  expect_param_error("[" + aa + "," + bb + "," + aa + "]", "/parameters/pairs/2", "pair A A is given twice");
  expect_param_error(R"([{"elements": ["A", "C"], "epsilon": 0.01, "sigma": 3.0}])", "/parameters/pairs/0/elements/1",
                     "element 'C' is not one of the model's elements");
  expect_param_error(R"([{"elements": ["A", "A"], "epsilon": 0.01, "sigma": 3.0, "cutoff": 9.5}])",
                     "/parameters/pairs/0/cutoff", "pair cutoff 9.5 exceeds the model cutoff 8.0");
  expect_param_error(R"([{"elements": ["A", "A"], "epsilon": 0.01, "sigma": -3.0}])", "/parameters/pairs/0/sigma",
                     "expected a positive number, found -3.0");
  expect_param_error(R"([{"elements": ["A"], "epsilon": 0.01, "sigma": 3.0}])", "/parameters/pairs/0/elements",
                     "expected two element names, found 1");
  expect_param_error(R"([{"elements": ["A", "A"], "epsilon": 0.01, "sigma": 3.0, "rc": 2}])",
                     "/parameters/pairs/0/rc", "unknown key 'rc'");
}

}  // namespace
}  // namespace distspec::test
