// The CUDA models against the CPU models, which the model tests check against independent
// references: every model of potentials/ on periodic systems, CPU and CUDA from the same model
// file, under the same spec and halo exchange (an IndexedHaloExchange of periodic images, which
// the CUDA models reach through DeviceStagingHaloExchange). fp64 must agree to 1e-10 (relative:
// the largest difference over the largest value) in energy, forces, virial and per-row energy
// and virial; fp32 agrees with fp64 to the tolerances stated at each test.
//
// Needs no LAMMPS. Without a CUDA device every test is skipped with "no CUDA device". Model
// files are read from $DISTSPEC_SOURCE_DIR/potentials (default: the source tree it was built
// from).
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <regex>
#include <string>

#include "distspec/dispatch/dispatcher.h"
#include "distspec/error.h"
#include "distspec/halo/device_indexed_halo_exchange.h"
#include "distspec/halo/device_staging.h"
#include "distspec/halo/indexed_halo_exchange.h"
#include "expanded_graph.h"
#include "gpu_present.h"
#include "models/cuda_runtime.h"
#include "models/factory/model_factory.h"
#include "models/model_file.h"
#include "mpnn_test_network.h"
#include "mpnn_widen.h"
#include "periodic_graph.h"
#include "skip_report.h"

namespace distspec::test {
namespace {

using models::AtomGraph;
using models::Json;
using models::Model;
using models::ModelFile;
using models::ModelOutputs;
using models::OutputRequest;

std::string source_dir() {
  if (const char* dir = std::getenv("DISTSPEC_SOURCE_DIR"); dir && *dir) return dir;
  return DISTSPEC_SOURCE_DIR;
}

std::string potential(const std::string& name) { return source_dir() + "/potentials/" + name; }

constexpr double kTol64 = 1e-10;

// ---------------------------------------------------------------------------------------------
// Running and comparing

struct Result {
  ModelOutputs out;
  ExchangeStats stats;
};

Result run(Model& model, const AtomGraph& graph, HaloExchange& halo, const DistributionSpec& spec, Device device,
        const OutputRequest& request = {true, true, true}, HaloStrategy strategy = HaloStrategy::per_layer) {
  models::register_builtin_ops();
  Dispatcher dispatch(spec, device, model.info().ops, 1, strategy);
  dispatch.attach(halo);
  Result r;
  model.compute(graph, dispatch, request, r.out);
  r.stats = dispatch.stats();
  return r;
}

Result run(Model& model, const PeriodicGraph& g, const DistributionSpec& spec, Device device,
        const OutputRequest& request = {true, true, true}, std::uint64_t generation = 0) {
  IndexedHaloExchange halo = g.halo_exchange();
  AtomGraph graph = g.graph();
  graph.topology_generation = generation;
  return run(model, graph, halo, spec, device, request);
}

double max_abs(const std::vector<double>& a) {
  double m = 0.0;
  for (double v : a) m = std::max(m, std::abs(v));
  return m;
}

// max |a - b| / max |b|; 0 for two empty or all-zero blocks.
double relative(const std::vector<double>& a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double d = 0.0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) d = std::max(d, std::abs(a[i] - b[i]));
  const double scale = max_abs(b);
  return d == 0.0 ? 0.0 : d / std::max(scale, 1e-300);
}

double relative(double a, double b) { return a == b ? 0.0 : std::abs(a - b) / std::max(std::abs(b), 1e-300); }

struct Differences {
  double energy = 0.0, forces = 0.0, virial = 0.0, energy_rows = 0.0, virial_rows = 0.0;
  double worst() const { return std::max({energy, forces, virial, energy_rows, virial_rows}); }
};

Differences compare(const ModelOutputs& gpu, const ModelOutputs& cpu) {
  Differences d;
  d.energy = relative(gpu.energy, cpu.energy);
  d.forces = relative(gpu.forces, cpu.forces);
  d.virial = relative(std::vector<double>(gpu.virial.begin(), gpu.virial.end()),
                      std::vector<double>(cpu.virial.begin(), cpu.virial.end()));
  d.energy_rows = relative(gpu.energy_rows, cpu.energy_rows);
  d.virial_rows = relative(gpu.virial_rows, cpu.virial_rows);
  return d;
}

void expect_agree(const ModelOutputs& gpu, const ModelOutputs& cpu, double tol, const std::string& what) {
  const Differences d = compare(gpu, cpu);
  std::printf("[   info   ] %s: relative |GPU - CPU|: E %.1e, F %.1e, W %.1e, e_i %.1e, W_i %.1e (E = %.6f, max|F| = %.3g)\n",
              what.c_str(), d.energy, d.forces, d.virial, d.energy_rows, d.virial_rows, cpu.energy, max_abs(cpu.forces));
  EXPECT_LE(d.energy, tol) << what;
  EXPECT_LE(d.forces, tol) << what;
  EXPECT_LE(d.virial, tol) << what;
  EXPECT_LE(d.energy_rows, tol) << what;
  EXPECT_LE(d.virial_rows, tol) << what;
}

// The message of the distspec::Error `f` throws, or "" when it throws none.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// ---------------------------------------------------------------------------------------------
// Systems: a jiggled fcc crystal near each model's lattice constant, with both elements of a
// binary model drawn at random.

struct Case {
  const char* name;
  const char* file;
  double lattice;
  int cells;
  double skin;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

Crystal crystal_for(const Case& c, const ModelFile& file, double jiggle_by = 0.12) {
  Crystal crystal = fcc(c.lattice, c.cells);
  shear(crystal, 0.4, -0.3, 0.2);  // a triclinic cell: halo images across tilted faces
  jiggle(crystal, jiggle_by, 17);
  if (file.elements.size() > 1) randomize_species(crystal, static_cast<int>(file.elements.size()), 23);
  return crystal;
}

const Case kCases[] = {
    {"lj_argon", "lj_argon.json", 5.26, 3, 1.0},
    {"lj_binary", "lj_binary.json", 5.4, 3, 1.0},
    {"eam_cu_u3", "cu_eam_u3.json", 3.615, 3, 1.0},
    {"eam_cuni_alloy", "cuni_eam_alloy.json", 3.58, 3, 1.0},
    {"mpnn_cu_L2", "cu_mpnn_L2.json", 3.615, 3, 1.0},
    {"mpnn_cuni_L4", "cuni_mpnn_L4.json", 3.58, 3, 1.0},
};

class GpuEqualsCpu : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    REQUIRE_CUDA();
    file_ = models::read_model_file(potential(GetParam().file));
    spec_ = file_.spec.core;
    cpu_ = models::make_model(file_);
    gpu_ = models::make_model(file_, Device::cuda);
  }
  ModelFile file_;
  DistributionSpec spec_;
  std::unique_ptr<Model> cpu_, gpu_;
};

TEST_P(GpuEqualsCpu, EnergyForcesVirialAndPerRowOutputs) {
  const PeriodicGraph g(crystal_for(GetParam(), file_), file_.cutoff, GetParam().skin);
  const Result c = run(*cpu_, g, spec_, Device::cpu);
  const Result d = run(*gpu_, g, spec_, Device::cuda);
  std::printf("[   info   ] %s: %zu owned, %zu rows, %zu edges\n", GetParam().name, g.n_owned(), g.n_rows(), g.n_edges());
  expect_agree(d.out, c.out, kTol64, GetParam().name);
  // The same exchanges, in number and payload.
  EXPECT_EQ(d.stats.forward, c.stats.forward);
  EXPECT_EQ(d.stats.reverse, c.stats.reverse);
  EXPECT_EQ(d.stats.bytes, c.stats.bytes);
}

// Later steps: positions move, the topology stays (uploaded once), then it changes.
TEST_P(GpuEqualsCpu, StepsWithAndWithoutNewTopology) {
  PeriodicGraph g(crystal_for(GetParam(), file_), file_.cutoff, GetParam().skin);
  for (int step = 0; step < 3; ++step) {
    g.displace(static_cast<std::size_t>(5 * step + 1), Vec3{0.03, -0.02, 0.01 * step});
    const Result c = run(*cpu_, g, spec_, Device::cpu, {true, true, true}, 7);
    const Result d = run(*gpu_, g, spec_, Device::cuda, {true, true, true}, 7);
    expect_agree(d.out, c.out, kTol64, std::string(GetParam().name) + " step " + std::to_string(step));
  }
  Case bigger = GetParam();
  bigger.cells = 4;
  const PeriodicGraph h(crystal_for(bigger, file_), file_.cutoff, GetParam().skin);
  const Result c = run(*cpu_, h, spec_, Device::cpu, {true, true, true}, 8);
  const Result d = run(*gpu_, h, spec_, Device::cuda, {true, true, true}, 8);
  expect_agree(d.out, c.out, kTol64, std::string(GetParam().name) + " new topology");
}

// What a host may leave out: per-row outputs, the virial, or everything but the energy.
TEST_P(GpuEqualsCpu, PartialRequests) {
  const PeriodicGraph g(crystal_for(GetParam(), file_), file_.cutoff, GetParam().skin);
  OutputRequest energy_only;
  energy_only.forces = false;
  for (const OutputRequest& request :
       {OutputRequest{false, true, false}, OutputRequest{false, false, true}, OutputRequest{true, false, false}, energy_only}) {
    const Result c = run(*cpu_, g, spec_, Device::cpu, request);
    const Result d = run(*gpu_, g, spec_, Device::cuda, request);
    expect_agree(d.out, c.out, kTol64, GetParam().name);
  }
}

// Hybrid / NULL types: rows of species -1 are invisible on both.
TEST_P(GpuEqualsCpu, RowsOfNoSpecies) {
  Crystal crystal = crystal_for(GetParam(), file_);
  for (std::size_t i = 2; i < crystal.species.size(); i += 7) crystal.species[i] = -1;
  const PeriodicGraph g(crystal, file_.cutoff, GetParam().skin);
  expect_agree(run(*gpu_, g, spec_, Device::cuda).out, run(*cpu_, g, spec_, Device::cpu).out, kTol64, GetParam().name);
}

// A rank with no atom makes the same exchanges (collectives) and gets zero.
TEST_P(GpuEqualsCpu, EmptySubdomain) {
  IndexedHaloExchange h1(0, {}), h2(0, {});
  const Result c = run(*cpu_, AtomGraph{}, h1, spec_, Device::cpu);
  const Result d = run(*gpu_, AtomGraph{}, h2, spec_, Device::cuda);
  EXPECT_EQ(d.out.energy, 0.0);
  EXPECT_EQ(d.stats.forward, c.stats.forward);
  EXPECT_EQ(d.stats.reverse, c.stats.reverse);
}

// A species past the model's elements: the same error as the CPU's.
TEST_P(GpuEqualsCpu, ASpeciesPastTheElementsIsTheSameError) {
  Crystal crystal = crystal_for(GetParam(), file_);
  crystal.species[4] = static_cast<int>(file_.elements.size());
  const PeriodicGraph g(crystal, file_.cutoff, GetParam().skin);
  const std::string cpu_error = error_of([&] { run(*cpu_, g, spec_, Device::cpu); });
  EXPECT_FALSE(cpu_error.empty());
  EXPECT_EQ(error_of([&] { run(*gpu_, g, spec_, Device::cuda); }), cpu_error);
}

INSTANTIATE_TEST_SUITE_P(Potentials, GpuEqualsCpu, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

// ---------------------------------------------------------------------------------------------
// Dispatch on the wrong device

TEST(GpuDispatch, ACudaModelUnderACpuDispatcherIsRefused) {
  REQUIRE_CUDA();
  const ModelFile file = models::read_model_file(potential("lj_argon.json"));
  auto gpu = models::make_model(file, Device::cuda);
  const PeriodicGraph g(fcc(5.26, 2), file.cutoff, 1.0);
  try {
    run(*gpu, g, file.spec.core, Device::cpu);
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("was made for cuda, but the dispatcher binds its ops for cpu"), std::string::npos)
        << e.what();
  }
}

TEST(GpuDispatch, CudaKernelsRefuseHostTensors) {
  REQUIRE_CUDA();
  const ModelFile file = models::read_model_file(potential("lj_argon.json"));
  auto cpu = models::make_model(file);
  const PeriodicGraph g(fcc(5.26, 2), file.cutoff, 1.0);
  try {
    run(*cpu, g, file.spec.core, Device::cuda);
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("positions (0) must be on the cuda, got cpu"), std::string::npos) << e.what();
  }
}

// ---------------------------------------------------------------------------------------------
// The message-passing network: generated test networks (every activation and basis), the
// expanded halo strategy, exchanges, precision and the wide (F = 128) kernels.

// The generated test networks of unittest/support/mpnn_test_network.h, whose weights are large
// enough that the network, not the baseline, shapes the energy.
using Net = MpnnTestNetwork;

ModelFile test_network(const Net& net) { return random_mpnn_model(net); }

DistributionSpec mpnn_spec() { return models::read_model_file(potential("cu_mpnn_L2.json")).spec.core; }

Crystal network_crystal(int n_species, int cells = 2) {
  Crystal c = fcc(3.6, cells);
  jiggle(c, 0.15, 11);
  randomize_species(c, n_species, 12);
  return c;
}

struct NetCase {
  const char* name;
  Net net;
};

void PrintTo(const NetCase& c, std::ostream* os) { *os << c.name; }

class GpuNetworks : public ::testing::TestWithParam<NetCase> {};

TEST_P(GpuNetworks, GpuEqualsCpu) {
  REQUIRE_CUDA();
  const Net& net = GetParam().net;
  const ModelFile file = test_network(net);
  auto cpu = models::make_model(file);
  auto gpu = models::make_model(file, Device::cuda);
  const PeriodicGraph g(network_crystal(net.species), file.cutoff, 0.5);
  const Result c = run(*cpu, g, mpnn_spec(), Device::cpu);
  const Result d = run(*gpu, g, mpnn_spec(), Device::cuda);
  expect_agree(d.out, c.out, kTol64, GetParam().name);
  EXPECT_EQ(d.stats.forward, c.stats.forward);
  EXPECT_EQ(d.stats.reverse, c.stats.reverse);
}

INSTANTIATE_TEST_SUITE_P(Networks, GpuNetworks,
                         ::testing::Values(NetCase{"silu_gaussian_L3", Net{3, 2, "silu", "gaussian"}},
                                           NetCase{"ssp_bessel_L2", Net{2, 2, "shifted_softplus", "bessel"}},
                                           NetCase{"one_species_L1", Net{1, 1, "shifted_softplus", "gaussian"}},
                                           NetCase{"silu_F40_L2", Net{2, 2, "silu", "gaussian", "fp64", 40}},
                                           NetCase{"ssp_F100_L2", Net{2, 2, "shifted_softplus", "bessel", "fp64", 100}}),
                         [](const auto& info) { return std::string(info.param.name); });

// A step makes L - 1 forward and L - 1 reverse exchanges on device rows, as on the CPU.
TEST(GpuMpnn, ExchangesOfAStep) {
  REQUIRE_CUDA();
  for (int layers = 1; layers <= 4; ++layers)
    for (const char* precision : {"fp64", "fp32"}) {
      Net net;
      net.layers = layers;
      net.precision = precision;
      auto gpu = models::make_model(test_network(net), Device::cuda);
      const PeriodicGraph g(network_crystal(2), 4.0, 0.5);
      const Result d = run(*gpu, g, mpnn_spec(), Device::cuda);
      EXPECT_EQ(d.stats.forward, static_cast<std::uint64_t>(layers - 1)) << layers << " layers, " << precision;
      EXPECT_EQ(d.stats.reverse, static_cast<std::uint64_t>(layers - 1)) << layers << " layers, " << precision;
    }
}

// The expanded strategy (every layer on halo rows too, no exchange) on the GPU against the
// CPU's expanded run, and against the GPU's per-layer run.
TEST(GpuMpnn, ExpandedStrategy) {
  REQUIRE_CUDA();
  const Net net;
  const ModelFile file = test_network(net);
  auto cpu = models::make_model(file);
  auto gpu = models::make_model(file, Device::cuda);
  const Crystal crystal = network_crystal(2);
  const ExpandedGraph expanded(crystal, file.cutoff, 0.5, net.layers);
  IndexedHaloExchange h1 = expanded.rows().halo_exchange(), h2 = expanded.rows().halo_exchange();
  const Result c = run(*cpu, expanded.graph(), h1, mpnn_spec(), Device::cpu, {true, true, true}, HaloStrategy::expanded);
  const Result d = run(*gpu, expanded.graph(), h2, mpnn_spec(), Device::cuda, {true, true, true}, HaloStrategy::expanded);
  EXPECT_EQ(d.stats.forward + d.stats.reverse, 0u);
  expect_agree(d.out, c.out, kTol64, "expanded");
  const PeriodicGraph per_layer(crystal, file.cutoff, 0.5);
  const Result p = run(*gpu, per_layer, mpnn_spec(), Device::cuda);
  EXPECT_LE(relative(p.out.energy, d.out.energy), kTol64);
}

// fp32 features (fp64 coordinates, forces, energy and virial) against fp64, on the GPU, to the
// CPU model test's tolerances; and GPU fp32 against CPU fp32, which sum in other orders.
TEST(GpuMpnn, Fp32AgreesWithFp64) {
  REQUIRE_CUDA();
  for (const char* name : {"cu_mpnn_L2.json", "cuni_mpnn_L4.json"}) {
    ModelFile f64 = models::read_model_file(potential(name));
    ModelFile f32 = f64;
    f32.precision = "fp32";
    auto g64 = models::make_model(f64, Device::cuda);
    auto g32 = models::make_model(f32, Device::cuda);
    auto c32 = models::make_model(f32);
    Case system{name, name, 3.6, 3, 1.0};
    const PeriodicGraph g(crystal_for(system, f64), f64.cutoff, 1.0);
    const Result r64 = run(*g64, g, f64.spec.core, Device::cuda);
    const Result r32 = run(*g32, g, f64.spec.core, Device::cuda);
    const Result cpu32 = run(*c32, g, f64.spec.core, Device::cpu);
    const double de = std::abs(r32.out.energy - r64.out.energy) / g.n_owned();
    double df = 0.0, dw = 0.0;
    for (std::size_t k = 0; k < r64.out.forces.size(); ++k) df = std::max(df, std::abs(r32.out.forces[k] - r64.out.forces[k]));
    for (int c = 0; c < 6; ++c) dw = std::max(dw, std::abs(r32.out.virial[c] - r64.out.virial[c]));
    const double fmax = max_abs(r64.out.forces), wmax = max_abs({r64.out.virial.begin(), r64.out.virial.end()});
    std::printf("[   info   ] %s GPU fp32 - fp64: |dE|/N = %.2e eV, max |dF| = %.2e eV/A (max |F| = %.2f), max |dW| = %.2e eV (max |W| = %.2f)\n",
                name, de, df, fmax, dw, wmax);
    EXPECT_LT(de, 1e-5);              // eV per atom
    EXPECT_LT(df, 1e-4 * fmax);       // of the largest force
    EXPECT_LT(dw, 1e-4 * wmax);       // of the largest virial component
    const Differences d = compare(r32.out, cpu32.out);
    std::printf("[   info   ] %s GPU fp32 - CPU fp32 (relative): E %.1e, F %.1e, W %.1e\n", name, d.energy, d.forces, d.virial);
    EXPECT_LT(d.energy, 1e-6);
    EXPECT_LT(d.forces, 1e-4);
    EXPECT_LT(d.virial, 1e-4);
  }
}

// F = 128 (the wide kernels): the potential widened to twice its features computes the same
// energy and forces as the potential itself.
TEST(GpuMpnn, WideNetworkEqualsNarrow) {
  REQUIRE_CUDA();
  const ModelFile narrow = models::read_model_file(potential("cu_mpnn_L2.json"));
  ModelFile wide = narrow;
  wide.parameters = widen_mpnn_parameters(narrow.parameters, 2);
  auto gpu_narrow = models::make_model(narrow, Device::cuda);
  auto gpu_wide = models::make_model(wide, Device::cuda);
  auto cpu_wide = models::make_model(wide);
  EXPECT_EQ(gpu_wide->info().comm_width, 128);
  const PeriodicGraph g(crystal_for(Case{"cu", "", 3.615, 3, 1.0}, narrow), narrow.cutoff, 1.0);
  const Result a = run(*gpu_narrow, g, narrow.spec.core, Device::cuda);
  const Result b = run(*gpu_wide, g, narrow.spec.core, Device::cuda);
  const Result c = run(*cpu_wide, g, narrow.spec.core, Device::cpu);
  expect_agree(b.out, a.out, kTol64, "F=128 widened vs F=64 (GPU)");
  expect_agree(b.out, c.out, kTol64, "F=128 GPU vs CPU");
}

// ---------------------------------------------------------------------------------------------
// The staging decorator alone

TEST(DeviceStaging, ForwardAndReverseOnDeviceRowsEqualTheHostExchange) {
  REQUIRE_CUDA();
  const PeriodicGraph g(fcc(3.6, 2), 4.0, 0.5);
  IndexedHaloExchange host = g.halo_exchange();
  DeviceStagingHaloExchange staging(&host);
  EXPECT_TRUE(staging.accepts_device_rows());
  const std::size_t n = g.n_rows();
  const int width = 3;
  std::vector<double> values(n * width);
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (double& v : values) v = u(rng);
  double* device = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&device), values.size() * sizeof(double)), cudaSuccess);
  for (bool reverse : {false, true}) {
    std::vector<double> expected = values, got(values.size());
    ASSERT_EQ(cudaMemcpy(device, values.data(), values.size() * sizeof(double), cudaMemcpyHostToDevice), cudaSuccess);
    if (reverse) {
      host.reverse(Rows<double>{expected.data(), n, width});
      staging.reverse(Rows<double>{device, n, width});
    } else {
      host.forward(Rows<double>{expected.data(), n, width});
      staging.forward(Rows<double>{device, n, width});
    }
    ASSERT_EQ(cudaMemcpy(got.data(), device, got.size() * sizeof(double), cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(got, expected) << (reverse ? "reverse" : "forward");
  }
  // Host rows pass straight through.
  std::vector<double> expected = values, got = values;
  host.forward(Rows<double>{expected.data(), n, width});
  staging.forward(Rows<double>{got.data(), n, width});
  EXPECT_EQ(got, expected);
  cudaFree(device);
}

// The single-process exchange on the device gives the host exchange's bits, and a model run
// through it the same outputs as through staging.
template <class T>
void expect_device_indexed_equals_host() {
  const PeriodicGraph g(fcc(3.6, 2), 4.0, 0.5);
  IndexedHaloExchange host = g.halo_exchange();
  std::vector<std::size_t> owners;
  for (std::size_t r = g.n_owned(); r < g.n_rows(); ++r) owners.push_back(g.owner(r));
  DeviceIndexedHaloExchange exchange(g.n_owned(), owners);
  const std::size_t n = g.n_rows();
  const int width = 5;
  std::vector<T> values(n * width);
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (T& v : values) v = static_cast<T>(u(rng));
  T* device = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&device), values.size() * sizeof(T)), cudaSuccess);
  for (bool reverse : {false, true}) {
    std::vector<T> expected = values, got(values.size());
    ASSERT_EQ(cudaMemcpy(device, values.data(), values.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
    if (reverse) {
      host.reverse(Rows<T>{expected.data(), n, width});
      exchange.reverse(Rows<T>{device, n, width});
    } else {
      host.forward(Rows<T>{expected.data(), n, width});
      exchange.forward(Rows<T>{device, n, width});
    }
    ASSERT_EQ(cudaMemcpy(got.data(), device, got.size() * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(got, expected) << (reverse ? "reverse" : "forward");
  }
  cudaFree(device);
}

TEST(DeviceIndexedHalo, EqualsTheHostExchangeBitForBit) {
  REQUIRE_CUDA();
  expect_device_indexed_equals_host<double>();
  expect_device_indexed_equals_host<float>();
}

TEST(DeviceIndexedHalo, AModelRunsThroughItAsThroughStaging) {
  REQUIRE_CUDA();
  for (const char* name : {"cuni_mpnn_L4.json", "cuni_eam_alloy.json"}) {
    const ModelFile file = models::read_model_file(potential(name));
    auto gpu = models::make_model(file, Device::cuda);
    const PeriodicGraph g(crystal_for(Case{name, name, 3.58, 3, 1.0}, file), file.cutoff, 1.0);
    std::vector<std::size_t> owners;
    for (std::size_t r = g.n_owned(); r < g.n_rows(); ++r) owners.push_back(g.owner(r));
    DeviceIndexedHaloExchange device_exchange(g.n_owned(), owners);
    IndexedHaloExchange host = g.halo_exchange();
    const Result a = run(*gpu, g.graph(), host, file.spec.core, Device::cuda);
    const Result b = run(*gpu, g.graph(), device_exchange, file.spec.core, Device::cuda);
    expect_agree(b.out, a.out, 1e-14, std::string(name) + " device exchange vs staging");
    EXPECT_EQ(b.stats.forward, a.stats.forward);
    EXPECT_EQ(b.stats.reverse, a.stats.reverse);
  }
}

// ---------------------------------------------------------------------------------------------
// A graph whose arrays live in device memory, as pair_style distspec/kk hands over its Kokkos
// views under a CUDA execution space: the same results as from host memory, exchanges on device
// rows (DeviceIndexedHaloExchange stands in for LAMMPS' KOKKOS comm), the same index checks.

// Device copies of a host graph's arrays; the AtomGraph it returns points at them.
class DeviceResidentGraph {
 public:
  explicit DeviceResidentGraph(const AtomGraph& host) : graph_(host) {
    graph_.positions = copy(host.positions, 3 * host.n_rows());
    graph_.species = copy(host.species, host.n_rows());
    graph_.charges = copy(host.charges, host.charges ? host.n_rows() : 0);
    graph_.receivers = copy(host.receivers, host.n_receivers);
    graph_.offsets = copy(host.offsets, host.n_receivers + 1);
    graph_.senders = copy(host.senders, host.n_receivers ? static_cast<std::size_t>(host.offsets[host.n_receivers]) : 0);
  }
  ~DeviceResidentGraph() {
    for (void* p : allocations_) cudaFree(p);
  }
  DeviceResidentGraph(const DeviceResidentGraph&) = delete;
  DeviceResidentGraph& operator=(const DeviceResidentGraph&) = delete;

  const AtomGraph& graph() const { return graph_; }

 private:
  template <class T>
  const T* copy(const T* host, std::size_t n) {
    if (!host) return nullptr;
    void* device = nullptr;
    EXPECT_EQ(cudaMalloc(&device, std::max<std::size_t>(n, 1) * sizeof(T)), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(device, host, n * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
    allocations_.push_back(device);
    return static_cast<const T*>(device);
  }

  AtomGraph graph_;
  std::vector<void*> allocations_;
};

DeviceIndexedHaloExchange device_exchange_of(const PeriodicGraph& g) {
  std::vector<std::size_t> owners;
  for (std::size_t r = g.n_owned(); r < g.n_rows(); ++r) owners.push_back(g.owner(r));
  return DeviceIndexedHaloExchange(g.n_owned(), owners);
}

TEST_P(GpuEqualsCpu, DeviceResidentGraphEqualsCpu) {
  PeriodicGraph g(crystal_for(GetParam(), file_), file_.cutoff, GetParam().skin);
  for (int step = 0; step < 2; ++step) {
    // Step 1 moves atoms under the same topology generation: positions go device to device.
    if (step) g.displace(3, Vec3{0.02, 0.01, -0.03});
    AtomGraph host = g.graph();
    host.topology_generation = 11;
    const DeviceResidentGraph device(host);
    IndexedHaloExchange cpu_halo = g.halo_exchange();
    DeviceIndexedHaloExchange gpu_halo = device_exchange_of(g);
    const Result c = run(*cpu_, host, cpu_halo, spec_, Device::cpu);
    const Result d = run(*gpu_, device.graph(), gpu_halo, spec_, Device::cuda);
    expect_agree(d.out, c.out, kTol64, std::string(GetParam().name) + " device-resident graph, step " + std::to_string(step));
    EXPECT_EQ(d.stats.forward, c.stats.forward);
    EXPECT_EQ(d.stats.reverse, c.stats.reverse);
  }
}

// The message with its row number masked: the device-side checks name one failing row, not
// necessarily the lowest (here the atom's own row or one of its periodic images).
std::string row_masked(const std::string& message) {
  return std::regex_replace(message, std::regex("of row [0-9]+"), "of row N");
}

TEST_P(GpuEqualsCpu, DeviceResidentGraphIsCheckedLikeAHostGraph) {
  Crystal crystal = crystal_for(GetParam(), file_);
  crystal.species[4] = static_cast<int>(file_.elements.size());
  const PeriodicGraph g(crystal, file_.cutoff, GetParam().skin);
  const DeviceResidentGraph device(g.graph());
  const std::string cpu_error = error_of([&] { run(*cpu_, g, spec_, Device::cpu); });
  EXPECT_FALSE(cpu_error.empty());
  const std::string device_error = error_of([&] {
    DeviceIndexedHaloExchange halo = device_exchange_of(g);
    run(*gpu_, device.graph(), halo, spec_, Device::cuda);
  });
  EXPECT_EQ(row_masked(device_error), row_masked(cpu_error));
}

// A host that keeps its rows in GPU memory asks for device rows (OutputRequest::rows_on_device):
// forces, per-row energy and virial stay there (ModelOutputs::device), the row vectors stay
// empty, and the rows equal the CPU's.
TEST_P(GpuEqualsCpu, DeviceRowsEqualCpu) {
  const PeriodicGraph g(crystal_for(GetParam(), file_), file_.cutoff, GetParam().skin);
  AtomGraph host = g.graph();
  host.topology_generation = 5;
  const DeviceResidentGraph device(host);
  IndexedHaloExchange cpu_halo = g.halo_exchange();
  DeviceIndexedHaloExchange gpu_halo = device_exchange_of(g);
  OutputRequest request{true, true, true};
  const Result c = run(*cpu_, host, cpu_halo, spec_, Device::cpu, request);
  request.rows_on_device = true;
  Result d = run(*gpu_, device.graph(), gpu_halo, spec_, Device::cuda, request);
  ASSERT_TRUE(d.out.rows_on_device());
  EXPECT_TRUE(d.out.forces.empty() && d.out.energy_rows.empty() && d.out.virial_rows.empty());
  ASSERT_NE(d.out.device.energy_rows, nullptr);
  ASSERT_NE(d.out.device.virial_rows, nullptr);
  const std::size_t n = g.n_rows();
  auto download = [](const double* rows, std::size_t count) {
    std::vector<double> host_rows(count);
    EXPECT_EQ(cudaMemcpy(host_rows.data(), rows, count * sizeof(double), cudaMemcpyDeviceToHost), cudaSuccess);
    return host_rows;
  };
  d.out.forces = download(d.out.device.forces, 3 * n);
  d.out.energy_rows = download(d.out.device.energy_rows, n);
  d.out.virial_rows = download(d.out.device.virial_rows, 6 * n);
  expect_agree(d.out, c.out, kTol64, std::string(GetParam().name) + " device rows");
}

// The device-side index checks of a device-resident graph name the same faults as the host-side
// checks of the same graph in host memory.
TEST_P(GpuEqualsCpu, DeviceResidentEdgeFaultsAreTheHostChecksErrors) {
  const PeriodicGraph g(crystal_for(GetParam(), file_), file_.cutoff, GetParam().skin);
  const AtomGraph good = g.graph();
  const std::vector<int> senders(good.senders, good.senders + good.offsets[good.n_receivers]);
  const std::vector<int> receivers(good.receivers, good.receivers + good.n_receivers);
  struct Fault {
    const char* what;
    std::vector<int> senders, receivers;
    const char* message;
  };
  std::vector<Fault> faults{{"sender past the rows", senders, receivers, "is not a row"},
                            {"receiver listed twice", senders, receivers, "is listed twice"}};
  faults[0].senders[senders.size() / 2] = static_cast<int>(good.n_rows());
  faults[1].receivers[1] = faults[1].receivers[0];
  for (const Fault& f : faults) {
    AtomGraph bad = good;
    bad.senders = f.senders.data();
    bad.receivers = f.receivers.data();
    const std::string host_error = error_of([&] {
      IndexedHaloExchange halo = g.halo_exchange();
      run(*gpu_, bad, halo, spec_, Device::cuda);
    });
    EXPECT_NE(host_error.find(f.message), std::string::npos) << f.what << ": " << host_error;
    const DeviceResidentGraph device(bad);
    EXPECT_EQ(error_of([&] {
                DeviceIndexedHaloExchange halo = device_exchange_of(g);
                run(*gpu_, device.graph(), halo, spec_, Device::cuda);
              }),
              host_error)
        << f.what;
  }
}

}  // namespace
}  // namespace distspec::test

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (::testing::GTEST_FLAG(list_tests)) return RUN_ALL_TESTS();  // test discovery: the list alone
  // Each skip with its reason, for scripts/test_summary.py.
  ::testing::UnitTest::GetInstance()->listeners().Append(new distspec::testing::SkipReport(
      [](const std::string& mine) { return std::vector<std::string>{mine}; }, true));
  if (const std::string why = distspec::testing::no_cuda_device(); why.empty())
    std::printf("[   info   ] CUDA device: %s\n", distspec::models::cuda::device_description().c_str());
  else
    std::printf("[   info   ] %s: every test is skipped\n", why.c_str());
  return RUN_ALL_TESTS();
}
