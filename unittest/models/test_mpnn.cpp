// The message-passing model: forces and virial against finite differences of its energy, fp32
// against fp64, the exchanges a step makes under the halo preset (and an energy-only step),
// a steady-state step's allocations, the per-layer and expanded halo strategies against each
// other, and the generated TEST models of potentials/ as a physical system (lattice constant,
// perturbation size, a short MD run that stays solid).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <new>
#include <random>
#include <tuple>

#include "distspec/spec/spec_json.h"
#include "expanded_graph.h"
#include "model_test_util.h"
#include "mpnn_test_network.h"
#include "recording_halo.h"
#include "distspec/util/threads.h"
#include "models/mpnn/mpnn.h"

// Blocks of 1 MiB or more handed out by the global operator new, which this test binary
// replaces to count them (the array and nothrow forms forward to it): how a test sees that a
// steady-state step takes its large blocks from the model's workspace.
namespace {
std::atomic<int> g_large_allocations{0};
}  // namespace

void* operator new(std::size_t n) {
  if (n >= (std::size_t(1) << 20)) ++g_large_allocations;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace distspec::test {
namespace {

using models::Json;
using models::Model;
using models::ModelFile;
using models::ModelOutputs;

// ---------------------------------------------------------------------------------------------
// A small test network (unittest/support/mpnn_test_network.h) whose weights are large enough that
// it, not the Morse baseline, shapes the energy surface: derivative checks then test the
// network's adjoints.

using Net = MpnnTestNetwork;
const int kFeatures = MpnnTestNetwork{}.features;

// Named model.json in its errors, as a user's file would be.
ModelFile test_model(const Net& net) {
  ModelFile file = random_mpnn_model(net);
  file.path = "model.json";
  return file;
}

std::unique_ptr<Model> make(const ModelFile& file) { return models::make_model(file); }

// 32 atoms of fcc (a = 3.6) jiggled by up to 0.15 Angstrom, species drawn from both elements.
Crystal test_crystal(int n_species = 2) {
  Crystal c = fcc(3.6, 2);
  jiggle(c, 0.15, 11);
  randomize_species(c, n_species, 12);
  return c;
}

constexpr double kSkin = 0.5;

DistributionSpec halo_spec() { return read_mlip_spec_file(potentials("specs/mpnn_halo.json")).core; }

DistributionSpec spec_with_gather_mode(const std::string& mode) {
  DistributionSpec spec = halo_spec();
  spec.policy = StoragePolicy("halo", std::string(kHaloCorrection), mode);
  return spec;
}

double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double m = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}

double max_abs(const std::vector<double>& a) {
  double m = 0.0;
  for (double v : a) m = std::max(m, std::abs(v));
  return m;
}

// ---------------------------------------------------------------------------------------------
// Derivatives

struct DerivativeCase {
  const char* name;
  Net net;
};

void PrintTo(const DerivativeCase& c, std::ostream* os) { *os << c.name; }

// The case's network on its test crystal under the halo spec, and one run of it.
class MpnnDerivatives : public ::testing::TestWithParam<DerivativeCase> {
 protected:
  MpnnDerivatives()
      : model(make(test_model(GetParam().net))),
        g(test_crystal(GetParam().net.species), GetParam().net.cutoff, kSkin),
        spec(halo_spec()),
        run(run_model(*model, g, spec)) {}

  std::unique_ptr<Model> model;
  const PeriodicGraph g;
  const DistributionSpec spec;
  const ModelRun run;
};

TEST_P(MpnnDerivatives, ForcesAreMinusTheEnergyGradient) {
  const std::vector<double> forces = fold(g, run.out.forces, 3);
  double worst = 0.0;
  for (std::size_t i : {0u, 7u, 19u, 31u})
    for (int k = 0; k < 3; ++k) {
      const double fd = fd_force(*model, g, spec, i, k, 1e-5);
      EXPECT_NEAR(forces[3 * i + k], fd, 1e-6) << "atom " << i << " component " << k;
      worst = std::max(worst, std::abs(forces[3 * i + k] - fd));
    }
  std::printf("[   info   ] %s: max |F - F_fd| = %.2e eV/A (max |F| = %.2f)\n", GetParam().name, worst,
              max_abs(forces));
}

TEST_P(MpnnDerivatives, VirialIsMinusTheStrainDerivative) {
  const std::array<double, 6> fd = fd_virial(*model, g, spec, 1e-6);
  double worst = 0.0;
  for (int c = 0; c < 6; ++c) {
    EXPECT_NEAR(run.out.virial[c], fd[c], 1e-5) << "component " << c;
    worst = std::max(worst, std::abs(run.out.virial[c] - fd[c]));
  }
  std::printf("[   info   ] %s: max |W - W_fd| = %.2e eV (|W_xx| = %.2f)\n", GetParam().name, worst,
              std::abs(run.out.virial[0]));

  expect_rows_add_up(g, run.out);
}

INSTANTIATE_TEST_SUITE_P(Networks, MpnnDerivatives,
                         ::testing::Values(DerivativeCase{"silu_gaussian_L3", Net{3, 2, "silu", "gaussian"}},
                                           DerivativeCase{"ssp_bessel_L2", Net{2, 2, "shifted_softplus", "bessel"}},
                                           DerivativeCase{"one_species_L1", Net{1, 1, "shifted_softplus", "gaussian"}}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(Mpnn, ProductionModelForcesMatchFiniteDifferences) {
  auto model = make(models::read_model_file(potentials("cuni_mpnn_L4.json")));
  const PeriodicGraph g(test_crystal(), 5.0, kSkin);
  const DistributionSpec spec = halo_spec();
  const std::vector<double> forces = fold(g, run_model(*model, g, spec).out.forces, 3);
  for (std::size_t i : {3u, 22u})
    for (int k = 0; k < 3; ++k) EXPECT_NEAR(forces[3 * i + k], fd_force(*model, g, spec, i, k, 1e-5), 1e-6);
}

// ---------------------------------------------------------------------------------------------
// Precision

TEST(Mpnn, Fp32AgreesWithFp64) {
  Net net;
  auto m64 = make(test_model(net));
  net.precision = "fp32";
  auto m32 = make(test_model(net));
  const PeriodicGraph g(test_crystal(), net.cutoff, kSkin);
  const auto r64 = run_model(*m64, g, halo_spec());
  const auto r32 = run_model(*m32, g, halo_spec());
  const double de = std::abs(r32.out.energy - r64.out.energy) / g.n_owned();
  const double df = max_abs_diff(fold(g, r32.out.forces, 3), fold(g, r64.out.forces, 3));
  double dw = 0.0;
  for (int c = 0; c < 6; ++c) dw = std::max(dw, std::abs(r32.out.virial[c] - r64.out.virial[c]));
  std::printf("[   info   ] fp32 - fp64: |dE|/N = %.2e eV, max |dF| = %.2e eV/A (max |F| = %.2f), max |dW| = %.2e eV\n",
              de, df, max_abs(r64.out.forces), dw);
  EXPECT_LT(de, 1e-5);
  EXPECT_LT(df, 1e-4 * max_abs(r64.out.forces));
  EXPECT_LT(dw, 1e-4 * std::abs(r64.out.virial[0]));
  EXPECT_EQ(r32.stats.forward, r64.stats.forward);

  // runtime.precision of the model file overrides the parameters' precision.
  ModelFile file = test_model(Net{});
  file.precision = "fp32";
  EXPECT_EQ(run_model(*make(file), g, halo_spec()).out.energy, r32.out.energy);
}

// ---------------------------------------------------------------------------------------------
// Exchanges

// The model's run on one rank, with `halo` (a RecordingHalo of that rank: ranks 1) logging what
// is asked of it.
ModelOutputs run_counted(Model& model, const models::AtomGraph& graph, const DistributionSpec& spec,
                         RecordingHalo& halo) {
  Dispatcher dispatch(spec, Device::cpu, model.info().ops, 1);
  dispatch.attach(halo);
  ModelOutputs out;
  model.compute(graph, dispatch, {true, true, true}, out);
  return out;
}

// The expanded strategy on `crystal`: every layer computed on its halo rows, no exchange at all.
// Its forces are folded onto the crystal's atoms.
struct ExpandedRun {
  ModelOutputs out;
  std::vector<double> forces;
};
ExpandedRun run_expanded(Model& model, const Crystal& crystal, const Net& net) {
  const ExpandedGraph expanded(crystal, net.cutoff, kSkin, net.layers);
  Dispatcher dispatch(halo_spec(), Device::cpu, model.info().ops, 1, HaloStrategy::expanded);
  IndexedHaloExchange halo = expanded.rows().halo_exchange();
  dispatch.attach(halo);
  ExpandedRun run;
  model.compute(expanded.graph(), dispatch, {true, true, false}, run.out);
  EXPECT_EQ(dispatch.stats().forward + dispatch.stats().reverse, 0u);
  run.forces = fold(expanded.rows(), run.out.forces, 3);
  return run;
}

// The exchanges of a step, counted, and what they carry: per layer count, the step's energy
// and forces equal the expanded strategy's, which needs no exchange, so an exchange of the
// wrong rows, of stale features or in the wrong direction cannot pass by its count alone.
TEST(Mpnn, AStepMakesLMinusOneForwardAndLMinusOneReverseExchanges) {
  for (int layers = 1; layers <= 4; ++layers)
    for (const char* precision : {"fp64", "fp32"}) {
      Net net;
      net.layers = layers;
      net.precision = precision;
      auto model = make(test_model(net));
      EXPECT_EQ(model->info().message_passing_layers, layers);
      EXPECT_EQ(model->info().comm_width, kFeatures);
      EXPECT_EQ(model->info().halo_feature_reads, layers - 1);
      const Crystal crystal = test_crystal();
      const PeriodicGraph g(crystal, net.cutoff, kSkin);
      RecordingHalo halo(g.halo_exchange(), 1);
      const ModelOutputs per_layer = run_counted(*model, g.graph(), halo_spec(), halo);
      EXPECT_EQ(halo.count("forward"), layers - 1) << layers << " layers, " << precision;
      EXPECT_EQ(halo.count("reverse"), layers - 1) << layers << " layers, " << precision;
      EXPECT_EQ(halo.count("all_reduce"), 0);

      const ExpandedRun expanded = run_expanded(*model, crystal, net);
      const double tol = std::string(precision) == "fp64" ? 1e-10 : 1e-4;
      EXPECT_LT(std::abs(per_layer.energy - expanded.out.energy), tol * std::max(1.0, std::abs(per_layer.energy)))
          << layers << " layers, " << precision;
      EXPECT_LT(max_abs_diff(fold(g, per_layer.forces, 3), expanded.forces), tol * std::max(1.0, max_abs(per_layer.forces)))
          << layers << " layers, " << precision;
    }
}

// A rank whose subdomain holds no atom still makes every exchange the others make (they are
// collectives): which exchanges run depends on the layer count, never on the data.
TEST(Mpnn, AnEmptySubdomainTakesPartInEveryExchange) {
  auto model = make(test_model(Net{}));
  RecordingHalo halo(IndexedHaloExchange(0, {}), 1);
  const ModelOutputs out = run_counted(*model, models::AtomGraph{}, halo_spec(), halo);
  EXPECT_EQ(out.energy, 0.0);
  EXPECT_EQ(halo.count("forward"), 2);
  EXPECT_EQ(halo.count("reverse"), 2);
}

TEST(Mpnn, AnEnergyOnlyStepMakesNoReversePass) {
  auto model = make(test_model(Net{}));
  const PeriodicGraph g(test_crystal(), 4.0, kSkin);
  const auto full = run_model(*model, g, halo_spec());
  models::OutputRequest energy_only;
  energy_only.energy_rows = true;
  energy_only.forces = false;
  const auto run = run_model(*model, g, halo_spec(), energy_only);
  EXPECT_EQ(run.out.energy, full.out.energy);
  EXPECT_EQ(run.out.energy_rows, full.out.energy_rows);
  EXPECT_EQ(max_abs(run.out.forces), 0.0);
  EXPECT_EQ(run.stats.forward, 2u);
  EXPECT_EQ(run.stats.reverse, 0u);
}

TEST(Mpnn, ASteadyStateStepAllocatesNoLargeBlock) {
  // The production model (64 features) on 864 atoms: h_l is ~1.7 MB, the radial basis ~5 MB.
  auto model = make(models::read_model_file(potentials("cu_mpnn_L2.json")));
  Crystal c = fcc(3.615, 6);
  jiggle(c, 0.05, 3);
  PeriodicGraph g(c, 5.0, kSkin);
  Dispatcher dispatch(halo_spec(), Device::cpu, model->info().ops, 1);
  IndexedHaloExchange halo = g.halo_exchange();
  dispatch.attach(halo);
  ModelOutputs out;
  const int start = g_large_allocations;
  model->compute(g.graph(), dispatch, {true, true, true}, out);
  const int first = g_large_allocations - start;
  g.displace(5, {0.01, -0.02, 0.0});  // as between two MD steps: atoms move, edges stay
  const int before = g_large_allocations;
  model->compute(g.graph(), dispatch, {true, true, true}, out);
  std::printf("[   info   ] blocks of 1 MiB or more: %d in a first step, %d in the next\n", first,
              g_large_allocations - before);
  EXPECT_GT(first, 5);
  EXPECT_EQ(g_large_allocations - before, 0);
}

TEST(Mpnn, ThreadsMatchOneThread) {
  // The production model on 2 916 atoms: enough edges (about 1.2e5) and rows (about 8 000, with
  // the halo) that every op's loops, over edges and over rows, split over the threads.
  for (const char* precision : {"fp64", "fp32"}) {
    SCOPED_TRACE(precision);
    models::ModelFile file = models::read_model_file(potentials("cu_mpnn_L2.json"));
    file.precision = precision;
    auto model = make(file);
    Crystal c = fcc(3.615, 9);
    jiggle(c, 0.05, 5);
    const PeriodicGraph g(c, file.cutoff, kSkin);
    ASSERT_GT(g.n_rows(), 2 * kMinItemsPerThread);
    expect_threads_match_one_thread(*model, g, halo_spec(), models::EdgeList::full, false,
                                    std::string(precision) == "fp64" ? 1e-12 : 1e-5);
  }
}

TEST(Mpnn, LocalGatherModeReadsStaleHaloRowsAndGetsAnotherEnergy) {
  // With gather_mode "local" nothing refreshes h_l (l >= 2) on halo rows: a neighbour that is a
  // periodic image keeps its layer-1 features, so the energy differs from halo_read, which a
  // host can detect (e.g. by comparing against one rank, or the expanded strategy).
  auto model = make(test_model(Net{}));
  const PeriodicGraph g(test_crystal(), 4.0, kSkin);
  RecordingHalo halo(g.halo_exchange(), 1);
  const double local = run_counted(*model, g.graph(), spec_with_gather_mode("local"), halo).energy;
  EXPECT_EQ(halo.count("forward") + halo.count("reverse"), 0);
  const double halo_read = run_counted(*model, g.graph(), halo_spec(), halo).energy;
  std::printf("[   info   ] E(halo_read) = %.6f eV, E(local) = %.6f eV\n", halo_read, local);
  EXPECT_GT(std::abs(local - halo_read), 1e-3 * std::abs(halo_read));
}

// ---------------------------------------------------------------------------------------------
// Halo strategies

TEST(Mpnn, PerLayerEqualsExpanded) {
  for (const char* precision : {"fp64", "fp32"}) {
    Net net;
    net.precision = precision;
    auto model = make(test_model(net));
    const Crystal crystal = test_crystal();
    const PeriodicGraph per_layer(crystal, net.cutoff, kSkin);
    const ExpandedGraph expanded(crystal, net.cutoff, kSkin, net.layers);

    const auto a = run_model(*model, per_layer, halo_spec());
    Dispatcher dispatch(halo_spec(), Device::cpu, model->info().ops, 1, HaloStrategy::expanded);
    IndexedHaloExchange halo = expanded.rows().halo_exchange();
    dispatch.attach(halo);
    ModelOutputs b;
    model->compute(expanded.graph(), dispatch, {true, true, false}, b);
    EXPECT_EQ(dispatch.stats().forward + dispatch.stats().reverse, 0u);

    const double de = std::abs(a.out.energy - b.energy);
    const double df = max_abs_diff(fold(per_layer, a.out.forces, 3), fold(expanded.rows(), b.forces, 3));
    double dw = 0.0;
    for (int c = 0; c < 6; ++c) dw = std::max(dw, std::abs(a.out.virial[c] - b.virial[c]));
    const std::vector<double> ea(a.out.energy_rows.begin(), a.out.energy_rows.begin() + crystal.positions.size());
    const std::vector<double> eb(b.energy_rows.begin(), b.energy_rows.begin() + crystal.positions.size());
    std::printf(
        "[   info   ] %s per-layer (%zu rows, %zu edges) vs expanded (%zu rows, %zu edges): |dE| = %.1e, max |dF| = "
        "%.1e, max |dW| = %.1e\n",
        precision, per_layer.n_rows(), per_layer.n_edges(), expanded.rows().n_rows(), expanded.n_edges(), de, df, dw);
    // fp64 to 1e-10; fp32 sums the same terms in other orders, so to its own rounding.
    const double tol = std::string(precision) == "fp64" ? 1e-10 : 1e-4;
    EXPECT_LT(de, tol * std::max(1.0, std::abs(a.out.energy)));
    EXPECT_LT(df, tol * std::max(1.0, max_abs(a.out.forces)));
    EXPECT_LT(dw, tol * std::max(1.0, std::abs(a.out.virial[0])));
    EXPECT_LT(max_abs_diff(ea, eb), tol * 10);
  }
}

// ---------------------------------------------------------------------------------------------
// Rows the model does not own (hybrid / NULL types)

TEST(Mpnn, RowsOfOtherSpeciesAreInvisible) {
  auto model = make(test_model(Net{}));
  Crystal all = test_crystal();
  Crystal some = all, marked = all;
  some.positions.clear();
  some.species.clear();
  for (std::size_t i = 0; i < all.positions.size(); ++i) {
    if (i % 5 == 2) {
      marked.species[i] = -1;
      continue;
    }
    some.positions.push_back(all.positions[i]);
    some.species.push_back(all.species[i]);
  }
  const auto a = run_model(*model, PeriodicGraph(marked, 4.0, kSkin), halo_spec());
  const auto b = run_model(*model, PeriodicGraph(some, 4.0, kSkin), halo_spec());
  EXPECT_NEAR(a.out.energy, b.out.energy, 1e-10);
  EXPECT_EQ(a.out.forces[3 * 2], 0.0);
  EXPECT_EQ(a.out.energy_rows[2], 0.0);
}

TEST(Mpnn, ASpeciesPastTheModelsElementsIsAnError) {
  auto model = make(test_model(Net{}));
  Crystal c = test_crystal();
  c.species[4] = 2;
  try {
    run_model(*model, PeriodicGraph(c, 4.0, kSkin), halo_spec());
    FAIL() << "species 2 of a two-element model was accepted";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "mpnn: species 2 of row 4 is not one of the model's 2 elements");
  }
}

// ---------------------------------------------------------------------------------------------
// Parameter errors name the value

void expect_error(const std::function<void(Json&)>& edit, const std::string& what) {
  ModelFile file = test_model(Net{});
  edit(file.parameters);
  try {
    make(file);
    FAIL() << "accepted: " << what;
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), what);
  }
}

TEST(Mpnn, ParameterErrorsNameTheValue) {
  expect_error(
      [](Json& p) {
        for (int l = 0; l < 6; ++l) p["layers"].push_back(p["layers"][0]);
      },
      "model.json: /parameters/layers: expected 1 to 8 interaction layers, found 9");
  expect_error([](Json& p) { p["embedding"]["Ni"].erase(0); },
               "model.json: /parameters/embedding/Ni: expected 8 numbers, found 7");
  expect_error(
      [](Json& p) { p["layers"][1]["update"][1]["weight"].erase(0); },
      "model.json: /parameters/layers/1/update/1/weight: expected 6 rows (the outputs of the layer before), found 5");
  expect_error(
      [](Json& p) { p["baseline"]["pairs"].erase(1); },
      "model.json: /parameters/baseline/pairs: no Morse pair Cu Ni is given; list every pair of elements once");
  expect_error([](Json& p) { p["precision"] = "fp16"; },
               "model.json: /parameters/precision: unknown value 'fp16'; expected one of fp64, fp32");
}

// ---------------------------------------------------------------------------------------------
// The generated TEST models as a physical system

TEST(MpnnModelFiles, DescribeThemselves) {
  for (const auto& [name, layers, n_elements] :
       {std::tuple{"cu_mpnn_L2.json", 2, 1}, std::tuple{"cu_mpnn_L4.json", 4, 1}, std::tuple{"cuni_mpnn_L2.json", 2, 2},
        std::tuple{"cuni_mpnn_L4.json", 4, 2}}) {
    const ModelFile file = models::read_model_file(potentials(name));
    EXPECT_NE(file.description.find("TEST model with generated (not trained) parameters"), std::string::npos) << name;
    EXPECT_EQ(file.units, "metal");
    EXPECT_EQ(file.cutoff, 5.0);
    EXPECT_EQ(file.spec.core.policy.kind, "halo");
    auto model = make(file);
    EXPECT_EQ(model->info().architecture, "mpnn");
    EXPECT_EQ(model->info().message_passing_layers, layers) << name;
    EXPECT_EQ(model->info().comm_width, 64);
    EXPECT_EQ(static_cast<int>(model->info().elements.size()), n_elements);
  }
}

double energy_per_atom(Model& model, double a) {
  const PeriodicGraph g(fcc(a, 2), 5.0, kSkin);
  return energy_of(model, g, halo_spec()) / g.n_owned();
}

TEST(MpnnModelFiles, FccCopperHasItsMinimumNearTheExperimentalLatticeConstant) {
  for (const char* name : {"cu_mpnn_L2.json", "cu_mpnn_L4.json"}) {
    auto model = make(models::read_model_file(potentials(name)));
    double best_a = 0.0, best_e = 1e300;
    for (double a = 3.50; a <= 3.75; a += 0.01) {
      const double e = energy_per_atom(*model, a);
      if (e < best_e) best_e = e, best_a = a;
    }
    std::printf("[   info   ] %s: fcc minimum at a = %.3f A, E = %.4f eV/atom\n", name, best_a, best_e);
    EXPECT_NEAR(best_a, 3.615, 0.05) << name;
  }
}

// The network moves forces on a thermal-like crystal by a fraction of the baseline's.
TEST(MpnnModelFiles, NetworkIsASmallPerturbationOfTheBaseline) {
  for (const char* name : {"cu_mpnn_L2.json", "cu_mpnn_L4.json", "cuni_mpnn_L2.json", "cuni_mpnn_L4.json"}) {
    ModelFile file = models::read_model_file(potentials(name));
    auto full = make(file);
    for (Json& w : file.parameters["readout"][1]["weight"]) w[0] = 0.0;
    auto baseline = make(file);
    Crystal c = fcc(3.615, 2);
    jiggle(c, 0.1, 5);
    randomize_species(c, static_cast<int>(file.elements.size()), 6);
    const PeriodicGraph g(c, 5.0, kSkin);
    const std::vector<double> f = fold(g, run_model(*full, g, halo_spec()).out.forces, 3);
    const std::vector<double> f0 = fold(g, run_model(*baseline, g, halo_spec()).out.forces, 3);
    double d2 = 0.0, b2 = 0.0;
    for (std::size_t k = 0; k < f.size(); ++k) d2 += (f[k] - f0[k]) * (f[k] - f0[k]), b2 += f0[k] * f0[k];
    const double ratio = std::sqrt(d2 / b2);
    std::printf("[   info   ] %s: rms(F - F_baseline) / rms(F_baseline) = %.3f\n", name, ratio);
    EXPECT_GT(ratio, 0.003) << name;  // the network does act
    EXPECT_LT(ratio, 0.1) << name;
  }
}

// Velocity Verlet in metal units (LAMMPS' force->ftm2v and mvv2e), 32 atoms.
struct Md {
  static constexpr double kFtm2v = 1.0 / 1.0364269e-4;
  static constexpr double kMvv2e = 1.0364269e-4;
  static constexpr double kBoltzmann = 8.617343e-5;
  static constexpr double kMassCu = 63.546;
};

TEST(MpnnModelFiles, CopperStaysASolidAt1000K) {
  auto model = make(models::read_model_file(potentials("cu_mpnn_L4.json")));
  Crystal c = fcc(3.615, 2);
  const std::size_t n = c.positions.size();
  const std::vector<Vec3> sites = c.positions;
  std::mt19937 rng(3);
  // Twice the target temperature: equipartition gives half of it to the potential energy.
  std::normal_distribution<double> normal(0.0, std::sqrt(Md::kBoltzmann * 2000.0 / (Md::kMassCu * Md::kMvv2e)));
  std::vector<Vec3> v(n);
  Vec3 mean{};
  for (Vec3& vi : v)
    for (int k = 0; k < 3; ++k) vi[k] = normal(rng), mean[k] += vi[k] / n;
  for (Vec3& vi : v)
    for (int k = 0; k < 3; ++k) vi[k] -= mean[k];

  const double dt = 0.002;  // ps
  auto forces = [&] {
    const PeriodicGraph g(c, 5.0, kSkin);
    const auto run = run_model(*model, g, halo_spec(), {});
    return std::pair{fold(g, run.out.forces, 3), run.out.energy};
  };
  auto kinetic = [&] {
    double k = 0.0;
    for (const Vec3& vi : v) k += 0.5 * Md::kMassCu * Md::kMvv2e * (vi[0] * vi[0] + vi[1] * vi[1] + vi[2] * vi[2]);
    return k;
  };
  auto [f, potential] = forces();
  const double e0 = potential + kinetic();
  double temperature_sum = 0.0, max_drift = 0.0;
  const int steps = 250;
  for (int s = 0; s < steps; ++s) {
    for (std::size_t i = 0; i < n; ++i)
      for (int k = 0; k < 3; ++k) {
        v[i][k] += 0.5 * dt * Md::kFtm2v * f[3 * i + k] / Md::kMassCu;
        c.positions[i][k] += dt * v[i][k];
      }
    std::tie(f, potential) = forces();
    for (std::size_t i = 0; i < n; ++i)
      for (int k = 0; k < 3; ++k) v[i][k] += 0.5 * dt * Md::kFtm2v * f[3 * i + k] / Md::kMassCu;
    temperature_sum += 2.0 * kinetic() / (3.0 * (n - 1) * Md::kBoltzmann);
    max_drift = std::max(max_drift, std::abs(potential + kinetic() - e0) / n);
  }
  double msd = 0.0;
  for (std::size_t i = 0; i < n; ++i)
    for (int k = 0; k < 3; ++k) msd += (c.positions[i][k] - sites[i][k]) * (c.positions[i][k] - sites[i][k]) / n;
  const double temperature = temperature_sum / steps;
  std::printf("[   info   ] NVE %d steps of 2 fs: <T> = %.0f K, max |E - E0|/N = %.1e eV, rms displacement = %.3f A\n",
              steps, temperature, max_drift, std::sqrt(msd));
  EXPECT_GT(temperature, 600.0);
  EXPECT_LT(temperature, 1400.0);
  EXPECT_LT(max_drift, 2e-3);
  // Lindemann: a solid's rms displacement stays well below ~0.1 of the neighbour distance (2.56 A).
  EXPECT_LT(std::sqrt(msd), 0.3);
}

}  // namespace
}  // namespace distspec::test
