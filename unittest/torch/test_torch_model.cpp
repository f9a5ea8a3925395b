// The torch model kind on TorchScript graphs these tests write themselves (no Python): a
// two-layer network that calls both halo ops, run on one rank whose halo rows are periodic
// images. Forces and virial against finite differences of its energy, the energy of a crystal
// against that of its 2x2x2 supercell (which only agree when the halo ops refresh the halo),
// forces taken by the graph against forces taken in C++, the exchanges of a step, and each
// error a user can meet, with the file it names and what to do.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include <ATen/ATen.h>
#include <torch/library.h>
#include <torch/script.h>
#include <torch/version.h>

#include "distspec/error.h"
#include "distspec/spec/spec_json.h"
#include "distspec/util/sha256.h"
#include "model_test_util.h"
#include "recording_halo.h"
#include "remove_tree.h"
#include "models/model_error.h"
#include "models/model_file.h"
#include "models/torch/halo_ops.h"
#include "models/plan/spec_binding.h"
#include "torch_script.h"

namespace distspec::test {
namespace {

namespace fs = std::filesystem;
using models::Json;

constexpr int kWidth = 6;
constexpr double kCutoff = 4.5;
constexpr double kSkin = 1.0;

// The network's energy per row: an embedding refined by a scatter layer (messages summed into
// receivers, then halo_scatter_correct_static) and a refresh layer (halo_forward_static before
// the gather by sender), read out linearly, plus a repulsive pair term. fc is a smooth cutoff:
// zero at 4.5 Angstrom.
constexpr char kEnergies[] = R"JIT(
def energies(self, positions, species, edge_index, n_owned, send_index, recv_dest, recv_real, shift):
    sender = edge_index[0]
    receiver = edge_index[1]
    vec = positions.index_select(0, sender) - positions.index_select(0, receiver) + shift
    r = torch.sqrt((vec * vec).sum(-1))
    fc = 0.5 * (torch.cos(r * 0.6981317007977318) + 1.0)
    h = self.embedding.index_select(0, species)
    m1 = torch.tanh(h.index_select(0, sender) @ self.w1) * fc.unsqueeze(1)
    s1 = torch.zeros_like(h).index_add(0, receiver, m1)
    s1 = nvalchemi.halo_scatter_correct_static(s1, send_index, recv_dest, recv_real, n_owned, 1)
    h = h + torch.tanh(s1)
    rows = nvalchemi.halo_forward_static(h, send_index, recv_dest, recv_real, n_owned, 1)
    m2 = torch.tanh(rows.index_select(0, sender) @ self.w2) * (fc * torch.exp(-r)).unsqueeze(1)
    s2 = torch.zeros_like(h).index_add(0, receiver, m2)
    h = h + torch.tanh(s2)
    pair = torch.zeros_like(h[:, 0]).index_add(0, receiver, 0.1 * fc * torch.exp(-2.0 * (r - 2.5)))
    return (h @ self.readout).squeeze(1) + pair
)JIT";

// forward returns the atomic energies alone: forces are taken in C++.
constexpr char kForwardEnergies[] = R"JIT(
def forward(self, positions, species, edge_index, n_owned, send_index, recv_dest, recv_real):
    shift = torch.zeros([edge_index.size(1), 3], dtype=positions.dtype)
    return self.energies(positions, species, edge_index, n_owned, send_index, recv_dest, recv_real, shift)
)JIT";

// forward returns (atomic energies, forces), forces by TorchScript's own autograd.
constexpr char kForwardWithForces[] = R"JIT(
def forward(self, positions, species, edge_index, n_owned, send_index, recv_dest, recv_real):
    x = positions.detach().requires_grad_(True)
    shift = torch.zeros([edge_index.size(1), 3], dtype=positions.dtype)
    e = self.energies(x, species, edge_index, n_owned, send_index, recv_dest, recv_real, shift)
    n = int(n_owned.item())
    grads = torch.autograd.grad([e[:n].sum()], [x], allow_unused=True)
    g = grads[0]
    if g is None:
        g = torch.zeros_like(x)
    return e.detach(), -g
)JIT";

// forward returns (atomic energies, forces, atomic virials), as distspec-export writes them: the
// gradient with respect to a zero added to each edge vector gives each edge's -r (x) dE/dr,
// symmetrised, half on each end's row.
constexpr char kForwardWithVirials[] = R"JIT(
def forward(self, positions, species, edge_index, n_owned, send_index, recv_dest, recv_real):
    x = positions.detach().requires_grad_(True)
    shift = torch.zeros([edge_index.size(1), 3], dtype=positions.dtype).requires_grad_(True)
    e = self.energies(x, species, edge_index, n_owned, send_index, recv_dest, recv_real, shift)
    n = int(n_owned.item())
    grads = torch.autograd.grad([e[:n].sum()], [x, shift], allow_unused=True)
    gx = grads[0]
    if gx is None:
        gx = torch.zeros_like(x)
    ge = grads[1]
    if ge is None:
        ge = torch.zeros([edge_index.size(1), 3], dtype=positions.dtype)
    r = x.detach().index_select(0, edge_index[0]) - x.detach().index_select(0, edge_index[1])
    six = torch.stack([2.0 * r[:, 0] * ge[:, 0], 2.0 * r[:, 1] * ge[:, 1], 2.0 * r[:, 2] * ge[:, 2],
                       r[:, 0] * ge[:, 1] + r[:, 1] * ge[:, 0], r[:, 0] * ge[:, 2] + r[:, 2] * ge[:, 0],
                       r[:, 1] * ge[:, 2] + r[:, 2] * ge[:, 1]], 1) * -0.25
    w = torch.zeros([x.size(0), 6], dtype=x.dtype).index_add(0, edge_index[0], six).index_add(0, edge_index[1], six)
    return e.detach(), -gx, w
)JIT";

// A module of the network with fixed random weights and the given forward.
// kEnergies with its envelope zero beyond the cutoff (fc masked there, as a graph blind to pairs
// past its cutoff has it): a model `edges skin` may hand the neighbour list's pairs as they are.
std::string masked_energies() {
  std::string e = kEnergies;
  const std::string fc = "fc = 0.5 * (torch.cos(r * 0.6981317007977318) + 1.0)";
  e.replace(e.find(fc), fc.size(), fc + " * (r < 4.5).to(r.dtype)");
  return e;
}

torch::jit::Module network(const std::string& forward, const std::vector<std::string>& namespaces = {"nvalchemi"},
                           const std::string& energies = kEnergies) {
  models::torch_kind::register_halo_ops();  // what the plugin does when it loads
  at::manual_seed(2024);
  torch::jit::Module m("ToyNetwork");
  const auto options = at::dtype(at::kDouble);
  m.register_attribute("embedding", c10::TensorType::get(), at::randn({2, kWidth}, options));
  m.register_attribute("w1", c10::TensorType::get(), at::randn({kWidth, kWidth}, options) * 0.5);
  m.register_attribute("w2", c10::TensorType::get(), at::randn({kWidth, kWidth}, options) * 0.5);
  m.register_attribute("readout", c10::TensorType::get(), at::randn({kWidth, 1}, options));
  const auto resolver = op_namespace_resolver(namespaces);
  m.define(energies, resolver);
  m.define(forward, resolver);
  return m;
}

// A folder of its own for each test's files.
fs::path scratch() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const fs::path dir = fs::path(::testing::TempDir()) / "distspec_torch_model" /
                       (std::string(info->test_suite_name()) + "." + info->name());
  distspec::testing::remove_tree(dir.string());
  fs::create_directories(dir);
  return dir;
}

Json parameters(const std::string& graph) {
  return {{"graph", graph}, {"format", "torchscript"}, {"precision", "fp64"}, {"message_passing_layers", 2},
          {"comm_width", kWidth}, {"contract", 1}};
}

// The model file of a graph, with nvalchemi's MPNN halo spec.
fs::path write_model_file(const fs::path& dir, const Json& params, const std::string& name = "toy.json") {
  const Json doc = {{"format", "distspec-model"}, {"format_version", 1}, {"architecture", "torch"},
                    {"units", "metal"}, {"cutoff", kCutoff}, {"elements", {"Cu", "Ni"}},
                    {"parameters", params}, {"spec", potentials("specs/mpnn_halo.json")}};
  std::ofstream(dir / name) << doc.dump(1);
  return dir / name;
}

// The model file of the TorchScript module `name`, saved in `dir` as `graph`, whose forward takes
// the contract's seven inputs and runs `body` (the plugin's op namespaces resolved).
fs::path scripted_model_file(const fs::path& dir, const std::string& name, const std::string& graph,
                             const std::string& body,
                             const std::vector<std::string>& namespaces = {"nvalchemi", "distspec"}) {
  torch::jit::Module m(name);
  m.define("def forward(self, positions, species, edge_index, n_owned, si, rd, rr):\n" + body,
           op_namespace_resolver(namespaces));
  m.save((dir / graph).string());
  return write_model_file(dir, parameters(graph));
}

models::ModelFile read(const fs::path& model_file) { return models::read_model_file(model_file.string()); }

std::unique_ptr<models::Model> saved_model(const std::string& forward = kForwardWithVirials) {
  const fs::path dir = scratch();
  network(forward).save((dir / "toy.pt").string());
  return models::make_model(read(write_model_file(dir, parameters("toy.pt"))));
}

DistributionSpec halo_spec() { return read_mlip_spec_file(potentials("specs/mpnn_halo.json")).core; }

// 32 atoms of fcc Cu/Ni (a = 3.6), jiggled.
Crystal test_crystal() {
  Crystal c = fcc(3.6, 2);
  jiggle(c, 0.15, 5);
  randomize_species(c, 2, 6);
  return c;
}

// The crystal repeated n times along each cell vector.
Crystal supercell(const Crystal& c, int n) {
  Crystal s;
  s.box.h = c.box.h;
  for (auto& row : s.box.h)
    for (double& v : row) v *= n;
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b)
      for (int k = 0; k < n; ++k)
        for (std::size_t i = 0; i < c.positions.size(); ++i) {
          const Vec3 shift = c.box.image_shift({a, b, k});
          s.positions.push_back({c.positions[i][0] + shift[0], c.positions[i][1] + shift[1],
                                 c.positions[i][2] + shift[2]});
          s.species.push_back(c.species[i]);
        }
  return s;
}

TEST(TorchModel, InfoComesFromTheModelFileAndTheGraph) {
  const auto model = saved_model();
  const models::ModelInfo& info = model->info();
  EXPECT_EQ(info.architecture, "torch");
  EXPECT_EQ(info.message_passing_layers, 2);
  EXPECT_EQ(info.halo_feature_reads, 1);
  EXPECT_EQ(info.comm_width, kWidth);
  EXPECT_TRUE(info.forces_on_halo_rows);
  EXPECT_TRUE(info.halo_scatter_corrections);
  EXPECT_EQ(qualnames(info.ops), (std::vector<std::string>{"nvalchemi::halo_forward_static",
                                                           "nvalchemi::halo_scatter_correct_static"}));
}

TEST(TorchModel, ForcesAreMinusTheEnergyGradient) {
  const auto model = saved_model();
  const PeriodicGraph g(test_crystal(), kCutoff, kSkin);
  const auto run = run_model(*model, g, halo_spec());
  const std::vector<double> forces = fold(g, run.out.forces, 3);
  double worst = 0.0, largest = 0.0;
  for (std::size_t i : {0u, 5u, 17u, 30u})
    for (int k = 0; k < 3; ++k) {
      const double fd = fd_force(*model, g, halo_spec(), i, k, 1e-5);
      EXPECT_NEAR(forces[3 * i + k], fd, 1e-7) << "atom " << i << " component " << k;
      worst = std::max(worst, std::abs(forces[3 * i + k] - fd));
      largest = std::max(largest, std::abs(fd));
    }
  EXPECT_GT(largest, 1e-2) << "the test needs forces to test";
  std::printf("[   info   ] max |F - F_fd| = %.2e eV/A (max |F| = %.2f)\n", worst, largest);
}

TEST(TorchModel, VirialIsMinusTheStrainDerivative) {
  const auto model = saved_model();
  const PeriodicGraph g(test_crystal(), kCutoff, kSkin);
  const auto run = run_model(*model, g, halo_spec());
  const std::array<double, 6> fd = fd_virial(*model, g, halo_spec(), 1e-6);
  for (int c = 0; c < 6; ++c) EXPECT_NEAR(run.out.virial[c], fd[c], 1e-6) << "component " << c;
  expect_rows_add_up(g, run.out);
}

// Halo rows that were not refreshed would make atoms near the box faces differ from the same
// atoms inside a supercell, where their neighbours are owned rows.
TEST(TorchModel, EnergyIsExtensive) {
  const auto model = saved_model();
  const Crystal unit = test_crystal();
  const double e1 = energy_of(*model, PeriodicGraph(unit, kCutoff, kSkin), halo_spec());
  const double e8 = energy_of(*model, PeriodicGraph(supercell(unit, 2), kCutoff, kSkin), halo_spec());
  EXPECT_NEAR(e8 / 8.0, e1, 1e-12 * std::abs(e1));
  EXPECT_GT(std::abs(e1), 1e-3);
}

// The per-atom virial is built from edge vectors: an atom's is the same whichever of its periodic
// images are rows (the unit cell's atoms against the same atoms in a 2 x 2 x 2 supercell, where
// the neighbours across the unit cell's faces are owned rows, at other absolute positions), as it
// must be on every processor grid; and it sums to the virial. r (x) f of each row would differ.
TEST(TorchModel, PerAtomVirialIsTheSameWhicheverImagesAreRows) {
  const auto model = saved_model();
  const Crystal unit = test_crystal();
  const PeriodicGraph g(unit, kCutoff, kSkin);
  const auto small = run_model(*model, g, halo_spec());
  expect_rows_add_up(g, small.out);
  const PeriodicGraph big(supercell(unit, 2), kCutoff, kSkin);
  const auto large = run_model(*model, big, halo_spec());
  expect_rows_add_up(big, large.out);
  const std::vector<double> in_unit = fold(g, small.out.virial_rows, 6);
  const std::vector<double> in_supercell = fold(big, large.out.virial_rows, 6);
  double largest = 0.0, worst = 0.0;
  for (std::size_t i = 0; i < 6 * unit.positions.size(); ++i) {
    EXPECT_NEAR(in_unit[i], in_supercell[i], 1e-10) << "atom " << i / 6 << " component " << i % 6;
    largest = std::max(largest, std::abs(in_unit[i]));
    worst = std::max(worst, std::abs(in_unit[i] - in_supercell[i]));
  }
  EXPECT_GT(largest, 1e-2) << "the test needs a per-atom virial to test";
  std::printf("[   info   ] per-atom virial, unit cell vs supercell: max difference %.2e (max |W_i| = %.2f)\n", worst,
              largest);
}

// A graph that gives no per-atom virial (a module that takes no edge_shift, an older export) runs,
// global virial included, but a per-atom virial asked of it is refused, naming the model file:
// r (x) f of each row depends on the origin and on which images are rows.
TEST(TorchModelErrors, APerAtomVirialOfAGraphThatGivesNone) {
  const fs::path dir = scratch();
  network(kForwardWithForces).save((dir / "toy.pt").string());
  const fs::path file = write_model_file(dir, parameters("toy.pt"));
  const auto model = models::make_model(read(file));
  const PeriodicGraph g(test_crystal(), kCutoff, kSkin);
  const auto global = run_model(*model, g, halo_spec(), models::OutputRequest{true, true, false});
  const std::array<double, 6> fd = fd_virial(*model, g, halo_spec(), 1e-6);
  for (int c = 0; c < 6; ++c) EXPECT_NEAR(global.out.virial[c], fd[c], 1e-6) << "component " << c;
  const Error e = error_of([&] { run_model(*model, g, halo_spec(), models::OutputRequest{true, true, true}); });
  EXPECT_EQ(e.file(), file.string());
  EXPECT_EQ(std::string(e.id()), std::string(models::model_error_id::system));
  EXPECT_NE(e.message().find("a per-atom virial (compute stress/atom, centroid/stress/atom) was requested, but graph " +
                             (dir / "toy.pt").string()),
            std::string::npos)
      << e.message();
  EXPECT_NE(e.message().find("gives none: its energy function took no edge_shift"), std::string::npos) << e.message();
  EXPECT_NE(e.hint().find("export the model again with this distspec-export"), std::string::npos) << e.hint();
}

TEST(TorchModel, ForcesOfTheGraphEqualForcesTakenInCpp) {
  const PeriodicGraph g(test_crystal(), kCutoff, kSkin);
  // No per-atom virial: neither graph gives one.
  const models::OutputRequest request{true, true, false};
  const auto in_graph = run_model(*saved_model(kForwardWithForces), g, halo_spec(), request);
  const auto in_cpp = run_model(*saved_model(kForwardEnergies), g, halo_spec(), request);
  EXPECT_NEAR(in_graph.out.energy, in_cpp.out.energy, 1e-12 * std::abs(in_cpp.out.energy));
  for (std::size_t i = 0; i < in_cpp.out.forces.size(); ++i)
    ASSERT_NEAR(in_graph.out.forces[i], in_cpp.out.forces[i], 1e-12) << "row " << i / 3;
}

// The owner of each halo row of `g`, for a RecordingHalo over it.
std::vector<std::size_t> halo_owners(const PeriodicGraph& g) {
  std::vector<std::size_t> owners;
  for (std::size_t h = g.n_owned(); h < g.n_rows(); ++h) owners.push_back(g.owner(h));
  return owners;
}

// A step of `model` on `g` (energy, forces and virial) on the cpu, its exchanges logged by a
// RecordingHalo; the dispatcher stays, for a step with another halo.
struct RecordedStep {
  RecordedStep(models::Model& model, const PeriodicGraph& g)
      : halo(g.n_owned(), halo_owners(g), 1), dispatch(cpu_dispatcher(model)) {
    dispatch.attach(halo);
    model.compute(g.graph(), dispatch, {true, true, true}, out);
  }
  static Dispatcher cpu_dispatcher(const models::Model& model) {
    models::register_builtin_ops();
    return Dispatcher(halo_spec(), Device::cpu, model.info().ops, 1);
  }

  RecordingHalo halo;
  Dispatcher dispatch;
  models::ModelOutputs out;
};

// The exchanges of a step, in the graph's order: forward pass, scatter-correct (reverse +
// forward) and refresh (forward); backward, their adjoints, reverse and reverse + forward. And
// what they carry: the forces on the unit cell's atoms equal those on the same atoms in a
// 2 x 2 x 2 supercell, where the neighbours across the unit cell's faces are owned rows, not
// halo rows the exchanges fill.
TEST(TorchModel, AStepExchangesWhatTheGraphSays) {
  const auto model = saved_model();
  const Crystal unit = test_crystal();
  const PeriodicGraph g(unit, kCutoff, kSkin);
  const RecordedStep step(*model, g);
  EXPECT_EQ(step.halo.log, (std::vector<std::string>{"reverse", "forward", "forward", "reverse", "reverse", "forward"}));

  const PeriodicGraph big(supercell(unit, 2), kCutoff, kSkin);
  const std::vector<double> in_unit = fold(g, step.out.forces, 3);
  const std::vector<double> in_supercell = fold(big, run_model(*model, big, halo_spec()).out.forces, 3);
  double largest = 0.0;
  for (std::size_t i = 0; i < 3 * unit.positions.size(); ++i) {
    EXPECT_NEAR(in_unit[i], in_supercell[i], 1e-10) << "atom " << i / 3 << " component " << i % 3;
    largest = std::max(largest, std::abs(in_unit[i]));
  }
  EXPECT_GT(largest, 1e-2) << "the test needs forces to test";
}

// A rank that owns no atom does not run the graph but joins each of its collectives, in the
// order a rank with atoms makes them (those the probe at load recorded).
TEST(TorchModel, ARankWithoutAtomsJoinsTheCollectives) {
  const auto model = saved_model();
  const PeriodicGraph g(test_crystal(), kCutoff, kSkin);
  RecordedStep with_atoms(*model, g);

  RecordingHalo empty(0, {}, 1);
  with_atoms.dispatch.attach(empty);
  // Into the outputs of the step with atoms: the step without any resets them.
  models::AtomGraph nothing;
  models::ModelOutputs& out = with_atoms.out;
  model->compute(nothing, with_atoms.dispatch, {true, true, true}, out);
  EXPECT_EQ(empty.log, with_atoms.halo.log);
  EXPECT_EQ(empty.log, (std::vector<std::string>{"reverse", "forward", "forward", "reverse", "reverse", "forward"}));
  EXPECT_EQ(out.energy, 0.0);
  EXPECT_TRUE(out.forces.empty());
}

// The network (masked: blind beyond its cutoff) under pair_style distspec's `edges` setting, in a
// folder `name` of the test's own.
std::unique_ptr<models::Model> model_with_edges(const std::string& edges, bool masked, const std::string& name) {
  const fs::path dir = scratch() / name;
  fs::create_directories(dir);
  network(kForwardWithVirials, {"nvalchemi"}, masked ? masked_energies() : std::string(kEnergies))
      .save((dir / "toy.pt").string());
  models::ModelFile file = read(write_model_file(dir, parameters("toy.pt")));
  file.edges = edges;
  return models::make_model(file);
}

// One compute on one rank, the graph naming its topology `generation` (0: none).
ModelRun run_at(models::Model& model, const PeriodicGraph& g, std::uint64_t generation) {
  models::register_builtin_ops();
  Dispatcher dispatch(halo_spec(), Device::cpu, model.info().ops, 1);
  IndexedHaloExchange halo = g.halo_exchange();
  dispatch.attach(halo);
  models::AtomGraph graph = g.graph();
  graph.topology_generation = generation;
  ModelRun run;
  model.compute(graph, dispatch, {true, true, true}, run.out);
  return run;
}

// Pairs of the graph's neighbour list closer than the cutoff.
std::size_t pairs_within(const PeriodicGraph& g, double cutoff) {
  const models::AtomGraph graph = g.graph();
  const std::vector<double>& x = g.positions();
  std::size_t n = 0;
  for (std::size_t r = 0; r < graph.n_receivers; ++r)
    for (int e = graph.offsets[r]; e < graph.offsets[r + 1]; ++e) {
      const int i = graph.receivers[r], j = graph.senders[e];
      double rsq = 0.0;
      for (int d = 0; d < 3; ++d) rsq += (x[3 * j + d] - x[3 * i + d]) * (x[3 * j + d] - x[3 * i + d]);
      n += rsq < cutoff * cutoff;
    }
  return n;
}

// The edge set made at a neighbour-list build is kept for the steps that follow it. After every
// atom moved by up to half the skin (no reneighbouring: the same rows and list, some pairs now
// across the cutoff), forces and energy equal a fresh build's of the moved crystal by a model
// that never saw the first (`edges cutoff`: the kept pairs filtered again; `edges skin`: the
// kept pairs as they are, for a graph blind beyond its cutoff). A reneighbouring (a new
// generation, other rows) refreshes the set.
TEST(TorchModel, AnEdgeSetKeptBetweenBuildsGivesTheForcesOfAFreshBuild) {
  Crystal moved = test_crystal();
  PeriodicGraph kept(moved, kCutoff, kSkin);
  const std::size_t within_before = pairs_within(kept, kCutoff);
  std::mt19937 random(17);
  std::uniform_real_distribution<double> step(-0.25, 0.25);  // |d| < 0.44 < skin / 2
  for (std::size_t i = 0; i < moved.positions.size(); ++i) {
    const Vec3 d{step(random), step(random), step(random)};
    kept.displace(i, d);
    for (int k = 0; k < 3; ++k) moved.positions[i][k] += d[k];
  }
  ASSERT_NE(pairs_within(kept, kCutoff), within_before) << "the moves must carry pairs across the cutoff";
  const PeriodicGraph fresh(moved, kCutoff, kSkin);
  const auto reference = model_with_edges("cutoff", true, "reference");
  const ModelRun expected = run_at(*reference, fresh, 0);
  const std::vector<double> expected_forces = fold(fresh, expected.out.forces, 3);

  for (const char* edges : {"cutoff", "skin"}) {
    SCOPED_TRACE(std::string("edges ") + edges);
    const auto model = model_with_edges(edges, true, edges);
    const PeriodicGraph built(test_crystal(), kCutoff, kSkin);
    run_at(*model, built, 1);                      // the build
    const ModelRun step = run_at(*model, kept, 1);  // the same topology, atoms moved
    EXPECT_NEAR(step.out.energy, expected.out.energy, 1e-10 * std::abs(expected.out.energy));
    const std::vector<double> forces = fold(kept, step.out.forces, 3);
    ASSERT_EQ(forces.size(), expected_forces.size());
    double largest = 0.0;
    for (std::size_t k = 0; k < forces.size(); ++k) {
      EXPECT_NEAR(forces[k], expected_forces[k], 1e-10) << "atom " << k / 3 << " component " << k % 3;
      largest = std::max(largest, std::abs(forces[k]));
    }
    EXPECT_GT(largest, 1e-2) << "the test needs forces to test";
    // A reneighbouring: the fresh build's rows and list under a new generation.
    const ModelRun rebuilt = run_at(*model, fresh, 2);
    EXPECT_NEAR(rebuilt.out.energy, expected.out.energy, 1e-10 * std::abs(expected.out.energy));
    const std::vector<double> rebuilt_forces = fold(fresh, rebuilt.out.forces, 3);
    for (std::size_t k = 0; k < forces.size(); ++k) EXPECT_NEAR(rebuilt_forces[k], expected_forces[k], 1e-10);
  }
}

// `edges skin` on a graph that reads pairs beyond its cutoff (the network's cosine envelope rises
// again past 4.5 Angstrom) is refused when the model file is read, saying why and what to do.
TEST(TorchModelErrors, EdgesSkinForAGraphThatSeesBeyondItsCutoff) {
  const Error e = error_of([] { model_with_edges("skin", false, "unmasked"); });
  EXPECT_EQ(e.message().find("edges skin: graph "), 0u) << e.message();
  EXPECT_NE(e.message().find("is not blind to pairs beyond its cutoff 4.5"), std::string::npos) << e.message();
  EXPECT_NE(e.hint().find("use edges cutoff (the default)"), std::string::npos) << e.hint();
  EXPECT_NE(e.file().find("toy.json"), std::string::npos) << e.file();
  // The same graph under `edges cutoff` loads.
  EXPECT_NO_THROW(model_with_edges("cutoff", false, "unmasked"));
}

// Edges beyond the cutoff (the neighbour list's skin) never reach the graph: a skin changes
// nothing.
TEST(TorchModel, TheSkinChangesNothing) {
  const auto model = saved_model();
  const double e_thin = energy_of(*model, PeriodicGraph(test_crystal(), kCutoff, 0.01), halo_spec());
  const double e_thick = energy_of(*model, PeriodicGraph(test_crystal(), kCutoff, 2.0), halo_spec());
  EXPECT_NEAR(e_thin, e_thick, 1e-12 * std::abs(e_thin));
}

// ---- errors ------------------------------------------------------------------------------------

TEST(TorchModelErrors, AModelFileWithoutAGraph) {
  const fs::path dir = scratch();
  Json params = parameters("toy.pt");
  params.erase("graph");
  const fs::path file = write_model_file(dir, params);
  const Error e = error_of([&] { models::make_model(read(file)); });
  EXPECT_EQ(e.file(), file.string());
  EXPECT_EQ(e.pointer(), "/parameters/graph");
  EXPECT_EQ(e.message(), "the model file names no graph");
  EXPECT_NE(e.hint().find("tools/distspec-export"), std::string::npos) << e.hint();
}

TEST(TorchModelErrors, AMissingGraphFile) {
  const fs::path dir = scratch();
  const fs::path file = write_model_file(dir, parameters("gone.pt"));
  const Error e = error_of([&] { models::make_model(read(file)); });
  EXPECT_EQ(e.file(), file.string());
  EXPECT_EQ(e.id(), "model.io");
  EXPECT_EQ(e.message(), "graph file " + (dir / "gone.pt").string() + " does not exist or is not a file");
}

TEST(TorchModelErrors, APackageOfAnotherTorch) {
  const fs::path dir = scratch();
  std::ofstream(dir / "toy.pt2") << "not a package";
  Json params = parameters("toy.pt2");
  params["format"] = "aoti";
  params["torch_version"] = "2.9.1";
  const fs::path file = write_model_file(dir, params);
  const Error e = error_of([&] { models::make_model(read(file)); });
  EXPECT_EQ(e.pointer(), "/parameters/torch_version");
  EXPECT_EQ(e.message(), "graph " + (dir / "toy.pt2").string() + " was compiled by torch 2.9.1, this plugin links "
                         "torch " TORCH_VERSION ", and an AOTInductor package runs only with the torch that compiled it");
  EXPECT_EQ(e.hint(), "export the model again with torch " TORCH_VERSION
                      " (the Python environment this DISTSPEC was built with), or as TorchScript (.pt)");
  // Its version right but its bytes not a package: the loader's own complaint, with the advice.
  params["torch_version"] = TORCH_VERSION;
  const Error broken = error_of([&] { models::make_model(read(write_model_file(dir, params))); });
  EXPECT_EQ(broken.pointer(), "/parameters/graph");
  EXPECT_EQ(broken.message().find("graph " + (dir / "toy.pt2").string() + " is not an AOTInductor package"), 0u)
      << broken.message();
}

TEST(TorchModelErrors, AGraphWhoseInputsAreNotTheContract) {
  const fs::path dir = scratch();
  torch::jit::Module m("Wrong");
  m.define("def forward(self, positions, species):\n    return positions.sum(1)\n");
  m.save((dir / "toy.pt").string());
  const Error e = error_of([&] { models::make_model(read(write_model_file(dir, parameters("toy.pt")))); });
  EXPECT_EQ(e.message(), "graph " + (dir / "toy.pt").string() +
                             " has forward(2 inputs) -> Tensor; calling convention 1 passes 7 (positions [N,3], species "
                             "[N] int64, edge_index [2,E] int64, n_owned [] int64, send_index [0] int64, recv_dest "
                             "[n_halo] int64, recv_real [n_halo] bool) and expects (atomic_energies [N], forces [N,3][, "
                             "atomic_virials [N,6]]) or atomic_energies alone");
}

TEST(TorchModelErrors, AGraphWhoseOutputsAreNotTheContract) {
  const fs::path dir = scratch();
  // Reported when the model is loaded: a probe call on a small graph checks the outputs.
  const fs::path file = scripted_model_file(dir, "Wrong", "toy.pt", "    return positions * 2.0\n");
  const Error e = error_of([&] { models::make_model(read(file)); });
  EXPECT_EQ(e.file(), file.string());
  EXPECT_EQ(e.message(), "graph " + (dir / "toy.pt").string() +
                             " returned atomic_energies Double [5, 3] on cpu and forces (none) for N = "
                             "5 rows (expected float64); calling convention 1 expects (atomic_energies [N], forces "
                             "[N,3][, atomic_virials [N,6]]) in fp64");
}

// A graph exported in fp64 whose model file claims fp32: its first call fails, at load.
TEST(TorchModelErrors, AGraphThatRejectsItsInputs) {
  const fs::path dir = scratch();
  network(kForwardEnergies).save((dir / "toy.pt").string());
  Json params = parameters("toy.pt");
  params["precision"] = "fp32";
  const fs::path file = write_model_file(dir, params);
  const Error e = error_of([&] { models::make_model(read(file)); });
  EXPECT_EQ(e.file(), file.string());
  EXPECT_EQ(e.message().find("graph " + (dir / "toy.pt").string() + " failed: "), 0u) << e.message();
  EXPECT_EQ(e.hint().find("check that the model file's precision and device match the graph"), 0u) << e.hint();
}

// A check the graph makes (distspec-export keeps a model's torch._assert_async as a raise)
// reports the graph's own words, not the header of TorchScript's interpreter above them.
TEST(TorchModelErrors, ACheckTheGraphRaises) {
  const fs::path dir = scratch();
  const fs::path file = scripted_model_file(dir, "Checked", "checked.pt",
                                            "    assert positions.size(0) <= 3, 'an atom has more neighbours than the "
                                            "graph takes'\n"
                                            "    return (positions * positions).sum(1)\n");
  const Error e = error_of([&] { models::make_model(read(file)); });
  EXPECT_EQ(e.file(), file.string());
  const std::string failed = "graph " + (dir / "checked.pt").string() + " failed: ";
  EXPECT_EQ(e.message().find(failed), 0u) << e.message();
  EXPECT_EQ(e.message().find("an atom has more neighbours than the graph takes"),
            e.message().size() - std::string("an atom has more neighbours than the graph takes").size())
      << e.message();
}

// The routing a graph hands an op is checked; the op's own message comes through TorchScript's
// interpreter as the op raised it, with the model file.
TEST(TorchModelErrors, AnOpsOwnErrorNamesTheModelFile) {
  models::torch_kind::register_halo_ops();
  const fs::path dir = scratch();
  const fs::path file =
      scripted_model_file(dir, "Misrouted", "toy.pt",
                          "    return nvalchemi.halo_forward_static(positions, si, rd, rr, n_owned + 1, 1).sum(1)\n");
  const Error e = error_of([&] { models::make_model(read(file)); });
  EXPECT_EQ(std::string(e.what()), file.string() + ": nvalchemi::halo_forward_static: n_owned is 4, but this "
                                   "step's rows are n_owned + n_halo = 3 + 2; pass the graph's n_owned input through");
}

TEST(TorchModelErrors, AnOpNoKernelProvides) {
  const fs::path dir = scratch();
  fs::path file;
  {
    // An op that exists while the graph is written, and is gone when it is loaded.
    torch::Library lib(torch::Library::FRAGMENT, "distspec_test", std::nullopt, __FILE__, __LINE__);
    lib.def("mystery(Tensor x) -> Tensor", [](const at::Tensor& x) { return x.clone(); });
    file = scripted_model_file(dir, "Mystery", "toy.pt", "    return distspec_test.mystery(positions).sum(1)\n",
                               {"distspec_test"});
  }
  const Error e = error_of([&] { models::make_model(read(file)); });
  EXPECT_EQ(e.file(), file.string());
  EXPECT_EQ(e.message(), "graph " + (dir / "toy.pt").string() + " calls op 'distspec_test::mystery', which no loaded "
                         "kernel provides");
  EXPECT_EQ(e.hint().find("the ops this plugin provides are distspec::halo_forward_static, "), 0u) << e.hint();
}

TEST(TorchModelErrors, PrecisionAndDeviceTheGraphWasNotMadeFor) {
  const fs::path dir = scratch();
  network(kForwardEnergies).save((dir / "toy.pt").string());
  const fs::path file = write_model_file(dir, parameters("toy.pt"));
  models::ModelFile fp32 = read(file);
  fp32.precision = "fp32";
  const Error e = error_of([&] { models::make_model(fp32); });
  EXPECT_EQ(e.pointer(), "/parameters/precision");
  EXPECT_EQ(e.message(), "the graph was exported in fp64, but precision fp32 was requested");
}

// distspec-export's TorchScript takes its devices from the positions, so one file runs on
// either device; a graph whose trace fixed the cpu (an older export) is refused for cuda when
// it loads, not in the first step.
TEST(TorchModelErrors, AGraphFixedToTheCpuAskedForCuda) {
  const fs::path dir = scratch();
  const fs::path file =
      scripted_model_file(dir, "FixedToTheCpu", "fixed.pt",
                          "    zero = torch.zeros([1], dtype=positions.dtype, device=torch.device('cpu'))\n"
                          "    return (positions * positions).sum(1) + zero\n");
  EXPECT_NO_THROW(models::make_model(read(file), Device::cpu));
  const Error cuda = error_of([&] { models::make_model(read(file), Device::cuda); });
  EXPECT_EQ(cuda.id(), "model.device");
  EXPECT_EQ(cuda.pointer(), "/parameters/graph");
  EXPECT_EQ(cuda.message(), "graph " + (dir / "fixed.pt").string() + " fixes its tensors to cpu, this run asks for cuda");
  EXPECT_EQ(cuda.hint(), "run with 'device cpu', or export the model again with this distspec-export: its TorchScript "
                         "runs on every device");
}

// The binding rules see the graph's ops: a spec that adapts an op it never calls was written for
// another model.
TEST(TorchModelErrors, ASpecWrittenForAnotherModel) {
  const auto model = saved_model();
  models::ModelFile file;
  file.path = "toy.json";
  file.spec_source = "lj.json";
  file.spec = read_mlip_spec_file(potentials("specs/lj_halo.json"));
  const Error e = error_of([&] { models::check_adapted_ops(file.spec, model->info(), {"toy.json", "lj.json"}); });
  EXPECT_EQ(e.file(), "lj.json");
  EXPECT_NE(e.message().find("which model toy.json (torch) never calls (it calls: nvalchemi::halo_forward_static, "
                             "nvalchemi::halo_scatter_correct_static)"),
            std::string::npos)
      << e.message();
}

// ---- the model file against what its graph was exported with (graph_provenance.h) ----------

// What distspec-export writes into a graph (its distspec.json metadata) for the network of these
// tests, exported with the model file write_model_file() writes.
Json exported_metadata() {
  return {{"contract", 1},     {"precision", "fp64"}, {"elements", {"Cu", "Ni"}},       {"cutoff", kCutoff},
          {"units", "metal"},  {"message_passing_layers", 2},                         {"comm_width", kWidth}};
}

// The network saved with that metadata as an extra file, as the exporter saves a .pt, and the
// model file of it with `edits` applied (JSON pointers and their new values).
fs::path exported(const fs::path& dir, const std::vector<std::pair<std::string, Json>>& edits = {},
                  bool with_metadata = true) {
  // Saved once per folder: a module's archive holds a serialization id of its own each time.
  if (!fs::exists(dir / "toy.pt")) {
    torch::jit::ExtraFilesMap extra;
    if (with_metadata) extra["distspec.json"] = exported_metadata().dump();
    network(kForwardEnergies).save((dir / "toy.pt").string(), extra);
  }
  Json doc = Json::parse(models::read_file_bytes(write_model_file(dir, parameters("toy.pt")).string()));
  for (const auto& [pointer, value] : edits) doc[Json::json_pointer(pointer)] = value;
  std::ofstream(dir / "toy.json") << doc.dump(1);
  return dir / "toy.json";
}

TEST(TorchModelErrors, AModelFileEditedAfterTheExport) {
  struct Edit {
    std::string pointer;
    Json value;
    std::string in_file, in_graph;
  };
  for (const Edit& edit : {Edit{"/cutoff", 4.0, "cutoff 4.0", "cutoff 4.5"},
                           Edit{"/elements", {"Ni", "Cu"}, R"(elements ["Ni","Cu"])", R"(elements ["Cu","Ni"])"},
                           Edit{"/units", "real", R"(units "real")", R"(units "metal")"},
                           Edit{"/parameters/precision", "fp32", R"(precision "fp32")", R"(precision "fp64")"},
                           Edit{"/parameters/message_passing_layers", 3, "message_passing_layers 3",
                                "message_passing_layers 2"},
                           Edit{"/parameters/comm_width", 1, "comm_width 1", "comm_width " + std::to_string(kWidth)}}) {
    const fs::path dir = scratch();
    const fs::path file = exported(dir, {{edit.pointer, edit.value}});
    const Error e = error_of([&] { models::make_model(read(file)); });
    EXPECT_EQ(e.file(), file.string()) << edit.pointer;
    EXPECT_EQ(e.pointer(), edit.pointer);
    EXPECT_EQ(e.message(), "the model file says " + edit.in_file + ", but its graph " + (dir / "toy.pt").string() +
                               " was exported with " + edit.in_graph);
    const std::string key = edit.pointer.substr(edit.pointer.rfind('/') + 1);
    EXPECT_NE(e.hint().find("restore \"" + key + "\": "), std::string::npos) << e.hint();
    EXPECT_NE(e.hint().find("or export the model again with the " + key + " wanted"), std::string::npos) << e.hint();
  }
}

TEST(TorchModelErrors, AGraphOrSpecThatIsNotTheOneExported) {
  const fs::path dir = scratch();
  const fs::path unedited = exported(dir);
  const std::string graph_digest = sha256_file_hex((dir / "toy.pt").string());
  const std::string spec_digest = read(unedited).spec_sha256;
  const std::string other = sha256_hex("another export");
  // Both recorded and both right: it loads, and warns of nothing.
  const auto model = models::make_model(
      read(exported(dir, {{"/parameters/graph_sha256", graph_digest}, {"/parameters/spec_sha256", spec_digest}})));
  EXPECT_TRUE(model->info().warnings.empty());

  const Error graph = error_of([&] {
    models::make_model(read(exported(dir, {{"/parameters/graph_sha256", other}, {"/parameters/spec_sha256", spec_digest}})));
  });
  EXPECT_EQ(graph.pointer(), "/parameters/graph_sha256");
  EXPECT_EQ(graph.message(), "graph " + (dir / "toy.pt").string() + " has SHA-256 " + graph_digest +
                                 ", the model file records " + other +
                                 ": it is not the graph this model file was exported with");
  const Error spec = error_of([&] {
    models::make_model(read(exported(dir, {{"/parameters/graph_sha256", graph_digest}, {"/parameters/spec_sha256", other}})));
  });
  EXPECT_EQ(spec.pointer(), "/parameters/spec_sha256");
  EXPECT_EQ(spec.message(), "the spec " + potentials("specs/mpnn_halo.json") + " has SHA-256 " + spec_digest +
                                " (of its canonical JSON), the model file records " + other +
                                ": it is not the spec the graph was exported with");
  const Error malformed = error_of([&] { models::make_model(read(exported(dir, {{"/parameters/graph_sha256", "abc"}}))); });
  EXPECT_EQ(malformed.pointer(), "/parameters/graph_sha256");
  EXPECT_EQ(malformed.message(), "expected a SHA-256 digest, 64 lowercase hex digits, found 'abc'");
  // `pair_style distspec spec FILE` replaces the spec on purpose: its digest is not the file's.
  EXPECT_NO_THROW(models::make_model(models::read_model_file(
      exported(dir, {{"/parameters/graph_sha256", graph_digest}, {"/parameters/spec_sha256", other}}).string(),
      potentials("specs/mpnn_halo.json"))));
}

// A model file written before the digests, or a graph without metadata: it runs, and the host is
// told what was not checked (bind_model hands the model's warnings to the run plan).
TEST(TorchModel, AnOlderExportRunsWithAWarning) {
  const fs::path dir = scratch();
  const models::ModelFile file = read(exported(dir));
  const auto model = models::make_model(file);
  ASSERT_EQ(model->info().warnings.size(), 1u);
  EXPECT_NE(model->info().warnings[0].find("records no parameters.graph_sha256, spec_sha256"), std::string::npos)
      << model->info().warnings[0];
  models::HostFacts host;
  host.units = "metal";
  EXPECT_EQ(models::bind_model(file, model->info(), host).warnings, model->info().warnings);

  const auto bare = models::make_model(read(exported(scratch(), {}, false)));
  ASSERT_EQ(bare->info().warnings.size(), 2u);
  EXPECT_NE(bare->info().warnings[1].find("carries no distspec.json metadata"), std::string::npos)
      << bare->info().warnings[1];
}

}  // namespace
}  // namespace distspec::test
