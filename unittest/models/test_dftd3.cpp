// DFT-D3 against independent references: the energy of a brute-force sum over periodic images
// with the C6 interpolated pair by pair as Grimme's dftd3 program writes it (the ratio of the two
// double sums over reference pairs, not the model's per-atom weights), forces and virial against
// finite differences of the energy for every damping, and the parameter errors of model files.
// LAMMPS' own pair_style dispersion/d3 is the reference of the integration cases (dftd3_*.json).
#include <gtest/gtest.h>

#include <cmath>

#include "distspec/error.h"
#include "model_test_util.h"
#include "models/dftd3/dftd3.h"
#include "models/factory/model_factory.h"
#include "models/model_file.h"

namespace distspec::test {
namespace {

namespace d3 = models::dftd3;
using models::Json;

const std::vector<std::string> kElements = {"C", "O", "Cu"};

// The shipped model file with this test's elements, damping and cutoffs (9 A, CN 6 A).
models::ModelFile d3_file(const std::string& damping, const std::string& fallback = "none") {
  models::ModelFile file = models::read_model_file(potentials("dftd3_pbe_bj.json"));
  file.elements = kElements;
  file.cutoff = 9.0;
  file.parameters = Json{{"damping", damping}, {"functional", "pbe"}, {"cn_cutoff", 6.0}, {"c6_fallback", fallback}};
  return file;
}

// C, O and Cu at random on a jiggled fcc lattice: coordination numbers from the references'
// range (C, O) to far beyond it (Cu).
Crystal mixed_crystal(bool triclinic) {
  Crystal c = fcc(3.4, 2);
  if (triclinic) shear(c, 0.7, -0.5, 0.4);
  jiggle(c, 0.3, 29);
  randomize_species(c, 3, 3);
  return c;
}

// The two-body D3 energy per atom, from the reference tables and the functional's parameters
// as dftd3_reference.h gives them, every pair's C6 as sum_ab c6_ab L_ab / sum_ab L_ab with
// L_ab = exp(-4 [(CN_i - CN_a)^2 + (CN_j - CN_b)^2]), unshifted: for a crystal whose CN stay
// near the references, where those sums do not underflow (checked).
std::vector<double> brute_force_energies(const Crystal& c, const models::ModelFile& file, d3::Damping damping) {
  const auto p = *d3::find_functional("pbe", damping);
  const double cn_cut = file.parameters["cn_cutoff"].get<double>();
  std::vector<const d3::ReferenceElement*> el;
  for (const std::string& s : kElements) el.push_back(d3::find_element(s));
  const int images = 3;
  std::vector<double> cn(c.positions.size(), 0.0);
  for_each_image_pair(c, images, [&](std::size_t i, std::size_t j, double rsq) {
    if (rsq >= cn_cut * cn_cut) return;
    const double rcov = el[c.species[i]]->rcov + el[c.species[j]]->rcov;
    cn[i] += 1.0 / (1.0 + std::exp(-16.0 * (rcov / std::sqrt(rsq) - 1.0)));
  });
  std::vector<double> e(c.positions.size(), 0.0);
  const double c6_unit = d3::kHartree * std::pow(d3::kBohr, 6);
  for_each_image_pair(c, images, [&](std::size_t i, std::size_t j, double rsq) {
    if (rsq >= file.cutoff * file.cutoff) return;
    const d3::ReferenceElement &a = *el[c.species[i]], &b = *el[c.species[j]];
    const std::size_t pair = d3::pair_index(a.z, b.z);
    const double* block = d3::kC6 + d3::kC6Offsets[pair];
    double num = 0.0, den = 0.0;
    for (int x = 0; x < a.n_references; ++x)
      for (int y = 0; y < b.n_references; ++y) {
        const double c6_ref = a.z <= b.z ? block[x * b.n_references + y] : block[y * a.n_references + x];
        const double l = std::exp(-4.0 * (std::pow(cn[i] - a.cn[x], 2) + std::pow(cn[j] - b.cn[y], 2)));
        num += c6_unit * c6_ref * l;
        den += l;
      }
    ASSERT_GT(den, 1e-99);
    const double c6 = num / den, c8 = 3.0 * c6 * a.r4r2 * b.r4r2, r = std::sqrt(rsq);
    double pair_e;
    if (damping == d3::Damping::bj) {
      const double r0 = p.a1 * std::sqrt(c8 / c6) + p.a2;
      pair_e = -(p.s6 * c6 / (std::pow(r, 6) + std::pow(r0, 6)) + p.s8 * c8 / (std::pow(r, 8) + std::pow(r0, 8)));
    } else {
      const double r0ab = d3::kR0ab[pair];
      const double f6 = 1.0 / (1.0 + 6.0 * std::pow(r / (p.rs6 * r0ab), -p.alpha));
      const double f8 = 1.0 / (1.0 + 6.0 * std::pow(r / (p.rs8 * r0ab), -(p.alpha + 2.0)));
      pair_e = -(p.s6 * c6 * f6 / std::pow(r, 6) + p.s8 * c8 * f8 / std::pow(r, 8));
    }
    e[i] += 0.5 * pair_e;
  });
  return e;
}

class DFTD3Damping : public ::testing::TestWithParam<std::tuple<std::string, bool>> {
 protected:
  void SetUp() override {
    file_ = d3_file(std::get<0>(GetParam()));
    model_ = models::make_model(file_);
    crystal_ = mixed_crystal(std::get<1>(GetParam()));
  }
  const DistributionSpec& spec() const { return file_.spec.core; }

  models::ModelFile file_;
  std::unique_ptr<models::Model> model_;
  Crystal crystal_;
};

TEST_P(DFTD3Damping, ForcesEqualFiniteDifferences) {
  const PeriodicGraph g(crystal_, file_.cutoff, 1.0);
  const ModelRun run = run_model(*model_, g, spec());
  // Two forward exchanges: CN, then dE/dCN. The coordination numbers' steep counting function
  // (exp(-16 (rcov / r - 1))) leaves central differences of step 1e-5 a few 1e-9 off.
  EXPECT_EQ(run.stats.forward, 2u);
  double largest = 0.0;
  for (double f : run.out.forces) largest = std::max(largest, std::abs(f));
  ASSERT_GT(largest, 1e-3);
  expect_forces_match_fd(*model_, g, spec(), run.out, {0u, 5u, 13u, 31u}, 1e-5, 2e-8);
}

TEST_P(DFTD3Damping, VirialEqualsStrainDerivative) {
  const PeriodicGraph g(crystal_, file_.cutoff, 1.0);
  const ModelRun run = run_model(*model_, g, spec());
  const std::array<double, 6> ref = fd_virial(*model_, g, spec(), 1e-6);
  for (int c = 0; c < 6; ++c) EXPECT_NEAR(run.out.virial[c], ref[c], 1e-7 * std::max(1.0, std::abs(ref[c]))) << c;
  expect_rows_add_up(g, run.out);
}

TEST_P(DFTD3Damping, ThreadsGiveTheOneThreadOutputs) {
  expect_threads_match_one_thread(*model_, PeriodicGraph(crystal_, file_.cutoff, 1.0), spec(), models::EdgeList::full);
}

INSTANTIATE_TEST_SUITE_P(Dampings, DFTD3Damping,
                         ::testing::Combine(::testing::Values("bj", "zero", "bjm", "zerom"), ::testing::Bool()),
                         [](const auto& info) {
                           return std::get<0>(info.param) + (std::get<1>(info.param) ? "_triclinic" : "_orthogonal");
                         });

TEST(DFTD3, EnergyEqualsBruteForceSumOverImages) {
  for (const char* damping : {"bj", "zero"}) {
    SCOPED_TRACE(damping);
    const models::ModelFile file = d3_file(damping);
    const auto model = models::make_model(file);
    // C and O only, 3.3 A apart: CN of about 1 to 3. (A box edge of 9.2 A, not the cutoff's 9:
    // an atom and its own image exactly a cutoff apart would be in or out by rounding.)
    Crystal c = fcc(4.6, 2);
    shear(c, 0.7, -0.5, 0.4);
    jiggle(c, 0.3, 17);
    randomize_species(c, 2, 5);
    const PeriodicGraph g(c, file.cutoff, 1.0);
    const ModelRun run = run_model(*model, g, file.spec.core);
    const std::vector<double> ref =
        brute_force_energies(c, file, std::string(damping) == "bj" ? d3::Damping::bj : d3::Damping::zero);
    double total = 0.0;
    for (std::size_t i = 0; i < ref.size(); ++i) {
      EXPECT_NEAR(run.out.energy_rows[i], ref[i], 1e-12 * std::abs(ref[i]) + 1e-14) << "atom " << i;
      total += ref[i];
    }
    EXPECT_NEAR(run.out.energy, total, 1e-12 * std::abs(total));
  }
}

// Copper's CN of about 12 lies far beyond its references (0 and 0.96): pairs of two copper atoms
// take the highest reference's C6 under either convention, pairs with the spread weights of
// oxygen differ (nearest_reference takes one reference pair, the model normalises all).
TEST(DFTD3, NearestReferenceFallbackChangesOnlyPairsWithSpreadWeights) {
  Crystal copper = fcc(3.615, 2);
  jiggle(copper, 0.05, 3);
  for (int& s : copper.species) s = 2;
  Crystal oxidised = copper;
  oxidised.species[0] = oxidised.species[9] = 1;
  for (const Crystal* c : {&copper, &oxidised}) {
    const PeriodicGraph g(*c, 9.0, 1.0);
    const models::ModelFile normalised = d3_file("bj"), nearest = d3_file("bj", "nearest_reference");
    const auto m1 = models::make_model(normalised), m2 = models::make_model(nearest);
    const double e1 = run_model(*m1, g, normalised.spec.core).out.energy;
    const double e2 = run_model(*m2, g, nearest.spec.core).out.energy;
    if (c == &copper) EXPECT_NEAR(e1, e2, 1e-12 * std::abs(e1));
    else EXPECT_GT(std::abs(e1 - e2), 1e-6 * std::abs(e1));
  }
}

TEST(DFTD3Reference, TablesHoldEveryElementAndTheFunctionalsAsPublished) {
  EXPECT_EQ(d3::find_element("H")->z, 1);
  EXPECT_EQ(d3::find_element("Lr")->z, 103);
  EXPECT_EQ(d3::find_element("Xx"), nullptr);
  // Grimme, Ehrlich, Goerigk (2011), table 2: PBE a1 0.4289, s8 0.7875, a2 4.4407 Bohr.
  const auto pbe = *d3::find_functional("PBE", d3::Damping::bj);
  EXPECT_EQ(pbe.a1, 0.4289);
  EXPECT_EQ(pbe.s8, 0.7875);
  EXPECT_NEAR(pbe.a2, 4.4407 * d3::kBohr, 1e-12);
  // LAMMPS' spelling "b3-lyp" and s-dftd3's alias "b3lyp5" both name B3LYP.
  EXPECT_EQ(d3::find_functional("b3-lyp", d3::Damping::zero)->rs6, 1.261);
  EXPECT_EQ(d3::find_functional("b3lyp5", d3::Damping::bj)->a1, 0.3981);
  EXPECT_FALSE(d3::find_functional("r2scan", d3::Damping::zero));
  EXPECT_TRUE(d3::find_functional("r2scan", d3::Damping::bj));
  // H-H: reference C6 3.0267 Hartree Bohr^6 at CN 0.9118 on both atoms; r0ab 2.1823 A.
  EXPECT_EQ(d3::kC6[d3::kC6Offsets[d3::pair_index(1, 1)]], 3.0267);
  EXPECT_EQ(d3::kR0ab[d3::pair_index(1, 1)], 2.1823);
  EXPECT_EQ(d3::pair_index(103, 103) + 1, static_cast<std::size_t>(103 * 104 / 2));
}

void expect_d3_error(const Json& parameters, const std::string& pointer, const std::string& message,
                     const std::vector<std::string>& elements = kElements, double cutoff = 9.0,
                     const std::string& units = "metal") {
  models::ModelFile file = d3_file("bj");
  file.parameters = parameters;
  file.elements = elements;
  file.cutoff = cutoff;
  file.units = units;
  const Error e = error_of([&] { models::make_model(file); });
  EXPECT_EQ(e.pointer(), pointer) << e.what();
  EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  EXPECT_EQ(e.file(), file.path);
}

TEST(DFTD3Params, ErrorsPointAtTheBadValue) {
  const Json bj = {{"damping", "bj"}, {"functional", "pbe"}};
  expect_d3_error({{"damping", "bj"}, {"functional", "pbe2"}}, "/parameters/functional",
                  "no D3(bj) parameters for functional 'pbe2'");
  expect_d3_error({{"damping", "zero"}, {"functional", "r2scan"}}, "/parameters/functional",
                  "no D3(zero) parameters for functional 'r2scan'");
  expect_d3_error({{"damping", "becke"}, {"functional", "pbe"}}, "/parameters/damping", "becke");
  expect_d3_error({{"functional", "pbe"}}, "/parameters/damping", "damping");
  expect_d3_error(bj, "/elements/1", "element 'Xx' has no DFT-D3 reference data", {"C", "Xx"});
  expect_d3_error({{"damping", "bj"}, {"functional", "pbe"}, {"cn_cutoff", 10.0}}, "/parameters/cn_cutoff",
                  "the coordination-number cutoff 10.0 exceeds the model cutoff 9.0");
  expect_d3_error(bj, "/units", "DFT-D3 runs in metal units, the model file says real", kElements, 9.0, "real");
  expect_d3_error({{"damping", "bj"}, {"functional", "pbe"}, {"rs6", 1.0}}, "/parameters/rs6",
                  "'rs6' is not a parameter of bj damping");
  expect_d3_error({{"damping", "bj"}, {"a1", 0.4}, {"a2", 4.0}}, "/parameters/s8",
                  "D3(bj) without a functional needs 's8'");
  expect_d3_error({{"damping", "bj"}, {"functional", "pbe"}, {"c6_fallback", "nearest"}}, "/parameters/c6_fallback",
                  "nearest");
  expect_d3_error({{"damping", "bj"}, {"functional", "pbe"}, {"s9", 1.0}}, "/parameters/s9", "unknown key 's9'");
  // Every parameter given, no functional: runs.
  models::ModelFile file = d3_file("bj");
  file.parameters = {{"damping", "bj"}, {"s8", 0.7875}, {"a1", 0.4289}, {"a2", 2.35}};
  EXPECT_NO_THROW(models::make_model(file));
}

}  // namespace
}  // namespace distspec::test
