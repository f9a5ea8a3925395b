// The CUDA Ewald model against the CPU one (which the model and integration tests check against
// the Madelung energy, finite differences and LAMMPS' coul/long + ewald): rock salt with uneven
// charges, both erfc variants, alpha and kmax given (nacl_ewald.json) or derived from "accuracy"
// (nacl_ewald_accuracy.json: the CUDA model takes them from the host rule the CPU model uses),
// under the model's spec (the structure-factor adapter's
// slice_owned and all_reduce_sum run through DeviceStagingHaloExchange), then steps that move
// atoms and change the box. fp64: energy, forces, virial and per-row energy and virial agree to
// 1e-10 relative (largest difference over largest value).
//
// Needs no LAMMPS. Without a CUDA device every test is skipped with "no CUDA device".
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <tuple>

#include "distspec/dispatch/dispatcher.h"
#include "distspec/halo/indexed_halo_exchange.h"
#include "gpu_present.h"
#include "models/cuda_runtime.h"
#include "models/factory/model_factory.h"
#include "models/model_file.h"
#include "periodic_graph.h"

namespace distspec::test {
namespace {

constexpr double kTol64 = 1e-10;

std::string potential(const std::string& name) {
  const char* dir = std::getenv("DISTSPEC_SOURCE_DIR");
  return std::string(dir && *dir ? dir : DISTSPEC_SOURCE_DIR) + "/potentials/" + name;
}

// Rock salt, n^3 conventional cells, jiggled; Na +0.9, Cl -0.9, two pairs of ions +-0.25 more.
struct System {
  Crystal crystal;
  std::vector<double> charges;  // per atom
};

System rock_salt(double a, int n) {
  System s;
  s.crystal = fcc(a, n);
  const std::size_t n_na = s.crystal.positions.size();
  for (std::size_t i = 0; i < n_na; ++i) {
    const Vec3& x = s.crystal.positions[i];
    s.crystal.positions.push_back({x[0] + 0.5 * a, x[1], x[2]});
    s.crystal.species.push_back(1);
  }
  jiggle(s.crystal, 0.2, 31);
  for (int sp : s.crystal.species) s.charges.push_back(sp == 0 ? 0.9 : -0.9);
  s.charges[2] += 0.25;
  s.charges[n_na + 7] -= 0.25;
  return s;
}

// The graph, its per-row charges (halo rows carry their owner's) and its orthogonal cell.
struct Graph {
  PeriodicGraph periodic;
  std::vector<double> row_charges;

  Graph(const System& s, double cutoff) : periodic(s.crystal, cutoff, 1.0) {
    for (std::size_t r = 0; r < periodic.n_rows(); ++r) row_charges.push_back(s.charges[periodic.owner(r)]);
  }
  models::AtomGraph atoms(std::uint64_t generation) const {
    models::AtomGraph g = periodic.graph();
    g.charges = row_charges.data();
    g.has_cell = true;
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) g.cell[3 * r + c] = periodic.box().h[c][r];
    g.periodic = {true, true, true};
    g.topology_generation = generation;
    return g;
  }
};

models::ModelOutputs run(models::Model& model, const Graph& g, const DistributionSpec& spec, Device device,
                         std::uint64_t generation) {
  models::register_builtin_ops();
  Dispatcher dispatch(spec, device, model.info().ops, 1);
  IndexedHaloExchange halo = g.periodic.halo_exchange();
  dispatch.attach(halo);
  models::ModelOutputs out;
  model.compute(g.atoms(generation), dispatch, {true, true, true}, out);
  return out;
}

double relative(const std::vector<double>& a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double d = 0.0, scale = 0.0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    d = std::max(d, std::abs(a[i] - b[i]));
    scale = std::max(scale, std::abs(b[i]));
  }
  return d == 0.0 ? 0.0 : d / std::max(scale, 1e-300);
}

void expect_agree(const models::ModelOutputs& gpu, const models::ModelOutputs& cpu, const std::string& what) {
  const double e = std::abs(gpu.energy - cpu.energy) / std::abs(cpu.energy);
  const double f = relative(gpu.forces, cpu.forces);
  const double w = relative({gpu.virial.begin(), gpu.virial.end()}, {cpu.virial.begin(), cpu.virial.end()});
  const double ei = relative(gpu.energy_rows, cpu.energy_rows);
  const double wi = relative(gpu.virial_rows, cpu.virial_rows);
  std::printf("[   info   ] %s: relative |GPU - CPU|: E %.1e, F %.1e, W %.1e, e_i %.1e, W_i %.1e (E = %.6f)\n",
              what.c_str(), e, f, w, ei, wi, cpu.energy);
  for (double d : {e, f, w, ei, wi}) EXPECT_LE(d, kTol64) << what;
}

// (model file, erfc variant)
using Variant = std::tuple<std::string, std::string>;

std::string name_of(const Variant& v) { return std::get<0>(v) + " erfc " + std::get<1>(v); }

class EwaldGpuEqualsCpu : public ::testing::TestWithParam<Variant> {
 protected:
  void SetUp() override {
    REQUIRE_CUDA();
    file_ = models::read_model_file(potential(std::get<0>(GetParam())));
    file_.parameters["erfc"] = std::get<1>(GetParam());
    cpu_ = models::make_model(file_);
    gpu_ = models::make_model(file_, Device::cuda);
  }
  models::ModelFile file_;
  std::unique_ptr<models::Model> cpu_, gpu_;
};

TEST_P(EwaldGpuEqualsCpu, EnergyForcesVirialAndPerRowOutputs) {
  const Graph g(rock_salt(5.64, 3), file_.cutoff);
  expect_agree(run(*gpu_, g, file_.spec.core, Device::cuda, 1), run(*cpu_, g, file_.spec.core, Device::cpu, 1),
               name_of(GetParam()));
}

// Moves keep the topology (charges and positions are uploaded anyway); a new box changes the
// k-vectors (and, from "accuracy", kmax: x by 1.25 at the last step).
TEST_P(EwaldGpuEqualsCpu, StepsThatMoveAtomsAndTheBox) {
  Graph g(rock_salt(5.64, 3), file_.cutoff);
  for (int step = 0; step < 4; ++step) {
    g.periodic.displace(static_cast<std::size_t>(7 * step + 2), Vec3{0.05, -0.03, 0.02 * step});
    if (step >= 2) {
      Mat3 strain{};
      strain[0][0] = step == 2 ? 0.01 : 0.25;
      strain[2][2] = step == 2 ? -0.02 : 0.0;
      g.periodic.deform(strain);
    }
    expect_agree(run(*gpu_, g, file_.spec.core, Device::cuda, 5), run(*cpu_, g, file_.spec.core, Device::cpu, 5),
                 name_of(GetParam()) + " step " + std::to_string(step));
  }
}

INSTANTIATE_TEST_SUITE_P(ModelsAndErfc, EwaldGpuEqualsCpu,
                         ::testing::Combine(::testing::Values("nacl_ewald.json", "nacl_ewald_accuracy.json"),
                                            ::testing::Values("exact", "lammps_polynomial")),
                         [](const ::testing::TestParamInfo<Variant>& info) {
                           std::string name = std::get<0>(info.param) + "_" + std::get<1>(info.param);
                           for (char& c : name)
                             if (c == '.') c = '_';
                           return name;
                         });

}  // namespace
}  // namespace distspec::test
