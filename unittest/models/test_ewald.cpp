// The Ewald model against independent references: the Madelung energy of rock salt, forces and
// virial against finite differences of the energy, the k-vector set against LAMMPS' count, the
// spec's structure-factor adapter (a rank's owned rows summed, then all-reduced), and the
// errors of a system the model cannot run (net charge, no cell, a tilted or open box, no charges).
#include <gtest/gtest.h>

#include <cmath>

#include "distspec/error.h"
#include "distspec/spec/spec_json.h"
#include "models/ewald/ewald.h"
#include "models/ewald/ewald_kspace.h"
#include "models/ewald/ewald_phases.h"
#include "models/model_file.h"
#include "models/model_factory.h"
#include "model_test_util.h"

namespace distspec::test {
namespace {

using models::Json;

constexpr double kCoulombMetal = 14.399645;  // LAMMPS qqr2e, metal units
constexpr double kMadelungRockSalt = 1.747564594633182;

// Rock salt: an fcc lattice of Na (+q) and one of Cl (-q) shifted by a/2.
Crystal rock_salt(double a, int n) {
  Crystal c = fcc(a, n);
  const std::size_t n_na = c.positions.size();
  for (std::size_t i = 0; i < n_na; ++i) {
    c.positions.push_back({c.positions[i][0] + 0.5 * a, c.positions[i][1], c.positions[i][2]});
    c.species.push_back(1);
  }
  return c;
}

// Charges per owned atom: Na +q, Cl -q.
std::vector<double> rock_salt_charges(const Crystal& c, double q) {
  std::vector<double> out;
  for (int s : c.species) out.push_back(s == 0 ? q : -q);
  return out;
}

models::ModelFile ewald_file(double alpha, std::array<int, 3> kmax, double cutoff, const std::string& erfc = "exact") {
  models::ModelFile f = models::read_model_file(potentials("nacl_ewald.json"));
  f.cutoff = cutoff;
  f.parameters = Json{{"alpha", alpha}, {"kmax", {kmax[0], kmax[1], kmax[2]}}, {"erfc", erfc}};
  return f;
}

// A graph with the crystal's cell and per-row charges (each halo row its owner's).
struct ChargedGraph {
  PeriodicGraph graph;
  std::vector<double> row_charges;

  ChargedGraph(const Crystal& c, const std::vector<double>& charges, double cutoff)
      : graph(c, cutoff, 1.0) {
    for (std::size_t r = 0; r < graph.n_rows(); ++r) row_charges.push_back(charges[graph.owner(r)]);
  }
  models::AtomGraph atoms() const {
    models::AtomGraph g = graph.graph();
    g.charges = row_charges.data();
    g.has_cell = true;
    const Mat3& h = graph.box().h;  // columns are the cell vectors
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) g.cell[3 * r + c] = h[c][r];
    g.periodic = {true, true, true};
    return g;
  }
};

models::ModelOutputs compute(models::Model& model, const ChargedGraph& g, const DistributionSpec& spec,
                             const models::AtomGraph* atoms = nullptr, models::OutputRequest request = {true, true, true}) {
  models::register_builtin_ops();
  Dispatcher dispatch(spec, Device::cpu, model.info().ops, 1);
  IndexedHaloExchange halo = g.graph.halo_exchange();
  dispatch.attach(halo);
  models::ModelOutputs out;
  model.compute(atoms ? *atoms : g.atoms(), dispatch, request, out);
  return out;
}

double energy(models::Model& model, const ChargedGraph& g, const DistributionSpec& spec) {
  models::OutputRequest energy_only;
  energy_only.forces = false;
  return compute(model, g, spec, nullptr, energy_only).energy;
}

// Converged Ewald parameters (erfc(alpha rc) = 1.5e-8, exp(-k^2/4alpha^2) < 1e-9 beyond kmax)
// give the Madelung energy -M C q^2 / r0 per ion pair.
TEST(Ewald, RockSaltEnergyIsTheMadelungEnergy) {
  const double a = 5.64, q = 1.0;
  const Crystal c = rock_salt(a, 3);
  const models::ModelFile file = ewald_file(0.5, {13, 13, 13}, 8.0);
  auto model = models::make_model(file);
  const ChargedGraph g(c, rock_salt_charges(c, q), file.cutoff);
  const models::ModelOutputs out = compute(*model, g, file.spec.core);
  const double pairs = 0.5 * double(c.positions.size());
  const double madelung = -pairs * kMadelungRockSalt * kCoulombMetal * q * q / (0.5 * a);
  EXPECT_NEAR(out.energy / madelung, 1.0, 1e-7) << out.energy << " vs " << madelung;
  // Every ion sits at a centre of symmetry: no force, and all ions of a kind have one energy.
  for (double f : out.forces) EXPECT_NEAR(f, 0.0, 1e-8);
  for (std::size_t i = 0; i < c.positions.size(); ++i)
    EXPECT_NEAR(out.energy_rows[i] / (madelung / double(c.positions.size())), 1.0, 1e-7);
}

// Forces and virial are derivatives of the energy (the exact erfc: the polynomial's force is
// LAMMPS' and not the derivative of its energy).
TEST(Ewald, ForcesAndVirialAreDerivativesOfTheEnergy) {
  Crystal c = rock_salt(5.64, 2);
  jiggle(c, 0.3, 7);
  std::vector<double> charges = rock_salt_charges(c, 0.8);
  charges[0] += 0.3;  // uneven charges, still neutral
  charges[5] -= 0.3;
  const models::ModelFile file = ewald_file(0.35, {6, 6, 6}, 5.5);
  auto model = models::make_model(file);
  const ChargedGraph g(c, charges, file.cutoff);
  const models::ModelOutputs out = compute(*model, g, file.spec.core);
  const double h = 1e-5;
  for (std::size_t i : {0u, 3u, 17u, 40u})
    for (int k = 0; k < 3; ++k) {
      ChargedGraph plus = g, minus = g;
      Vec3 d{};
      d[k] = h;
      plus.graph.displace(i, d);
      d[k] = -h;
      minus.graph.displace(i, d);
      const double fd = -(energy(*model, plus, file.spec.core) - energy(*model, minus, file.spec.core)) / (2 * h);
      EXPECT_NEAR(out.forces[3 * i + k], fd, 2e-6 * (1.0 + std::abs(fd))) << "atom " << i << " component " << k;
    }
  // W_ab = -dE/d eps_ab under x -> (I + eps) x with the cell.
  constexpr int ab[6][2] = {{0, 0}, {1, 1}, {2, 2}, {0, 1}, {0, 2}, {1, 2}};
  for (int v = 0; v < 3; ++v) {  // the box stays orthogonal under diagonal strains only
    double e[2];
    for (int s = 0; s < 2; ++s) {
      ChargedGraph strained = g;
      Mat3 eps{};
      eps[ab[v][0]][ab[v][1]] = s == 0 ? h : -h;
      strained.graph.deform(eps);
      e[s] = energy(*model, strained, file.spec.core);
    }
    const double fd = -(e[0] - e[1]) / (2 * h);
    EXPECT_NEAR(out.virial[v], fd, 1e-5 * (1.0 + std::abs(fd))) << "virial component " << v;
  }
  // The per-row virials and energies sum to the global ones.
  for (int v = 0; v < 6; ++v) {
    double sum = 0.0;
    for (std::size_t i = 0; i < g.graph.n_owned(); ++i) sum += out.virial_rows[6 * i + v];
    EXPECT_NEAR(sum, out.virial[v], 1e-10 * (1.0 + std::abs(out.virial[v])));
  }
  double sum = 0.0;
  for (std::size_t i = 0; i < g.graph.n_owned(); ++i) sum += out.energy_rows[i];
  EXPECT_NEAR(sum, out.energy, 1e-10 * std::abs(out.energy));
  // Everything lands on owned rows: the spec may declare forces owned-only.
  for (std::size_t r = g.graph.n_owned(); r < g.graph.n_rows(); ++r)
    for (int k = 0; k < 3; ++k) EXPECT_EQ(out.forces[3 * r + k], 0.0);
}

// LAMMPS 4Feb2025's log for kspace_modify gewald 0.3 kmax/ewald 7 7 7 in a 22.56 A cube:
// "KSpace vectors: actual max1d max3d = 709 7 1687"; for 5 4 3 in 20 x 17 x 13 A: 144.
TEST(Ewald, KVectorsAreLammps) {
  EXPECT_EQ(models::ewald::lammps_k_vectors({22.56, 22.56, 22.56}, {7, 7, 7}).size() / 3, 709u);
  EXPECT_EQ(models::ewald::lammps_k_vectors({20.0, 17.0, 13.0}, {5, 4, 3}).size() / 3, 144u);
}

// The per-axis phase products equal cos(k.x) and sin(k.x); k-vectors off the reciprocal lattice,
// or a tilted cell, are refused (the kernels then evaluate them directly).
TEST(Ewald, PhaseTableEqualsDirectEvaluation) {
  const std::array<double, 9> cell{20.0, 0, 0, 0, 17.0, 0, 0, 0, 13.0};
  std::vector<double> k = models::ewald::lammps_k_vectors({20.0, 17.0, 13.0}, {5, 4, 3});
  models::ewald::PhaseTable table;
  ASSERT_TRUE(table.build(cell.data(), k.data(), k.size() / 3));
  const double x[3] = {-3.7, 12.25, 30.5};  // outside the cell, as atoms drift between reneighbourings
  table.set_atom(x);
  for (std::size_t m = 0; m < k.size() / 3; ++m) {
    double c, s;
    table.phase(m, c, s);
    const double kr = k[3 * m] * x[0] + k[3 * m + 1] * x[1] + k[3 * m + 2] * x[2];
    EXPECT_NEAR(c, std::cos(kr), 1e-13) << m;
    EXPECT_NEAR(s, std::sin(kr), 1e-13) << m;
  }
  k[4] *= 1.001;
  EXPECT_FALSE(table.build(cell.data(), k.data(), k.size() / 3));
  std::array<double, 9> tilted = cell;
  tilted[3] = 2.0;
  EXPECT_FALSE(table.build(tilted.data(), k.data(), k.size() / 3));
}

// Under the spec the op sums each owned row once, whatever rows the model hands it: the same
// numbers as the kernel called on the owned rows alone, not those of every row (halo images).
TEST(Ewald, StructureFactorOpSumsOwnedRowsOnceUnderTheSpec) {
  const Crystal c = rock_salt(5.64, 2);
  const models::ModelFile file = ewald_file(0.35, {5, 5, 5}, 5.5);
  std::vector<double> charges = rock_salt_charges(c, 1.0);
  charges[1] += 0.5;  // a net charge, so that halo images would show in the total too
  const ChargedGraph g(c, charges, file.cutoff);
  const models::AtomGraph atoms = g.atoms();
  const std::vector<double> k = models::ewald::lammps_k_vectors({11.28, 11.28, 11.28}, {5, 5, 5});
  const std::size_t n_k = k.size() / 3, n = g.graph.n_rows(), n_owned = g.graph.n_owned();
  const double alpha = 0.35;
  auto args = [&](std::size_t rows) {
    return std::vector<TensorRef>{TensorRef::of(atoms.positions, rows, 3), TensorRef::of(atoms.charges, rows),
                                  TensorRef::of(atoms.cell.data(), 3, 3), TensorRef::of(k.data(), n_k, 3),
                                  TensorRef::of(&alpha, 1)};
  };
  struct Sums {
    std::vector<double> re, im;
    double total = 0.0;
    std::vector<TensorRef> refs() {
      return {TensorRef::of(re.data(), re.size()), TensorRef::of(im.data(), im.size()), TensorRef::of(&total, 1)};
    }
  };
  Sums adapted{std::vector<double>(n_k), std::vector<double>(n_k)}, owned = adapted, every = adapted;
  models::register_builtin_ops();
  Dispatcher dispatch(file.spec.core, Device::cpu, {models::ewald::kStructureFactorsOp}, 1);
  IndexedHaloExchange halo = g.graph.halo_exchange();
  dispatch.attach(halo);
  dispatch.call(models::ewald::kStructureFactorsOp, args(n), adapted.refs(), nullptr);
  const OpKernel& kernel = *OpRegistry::global().find(models::ewald::kStructureFactorsOp, Device::cpu);
  auto direct = [&](std::size_t rows, Sums& out) {
    const std::vector<TensorRef> a = args(rows), o = out.refs();
    kernel(Span<const TensorRef>(a.data(), a.size()), Span<const TensorRef>(o.data(), o.size()), nullptr);
  };
  direct(n_owned, owned);
  direct(n, every);
  EXPECT_EQ(adapted.re, owned.re);
  EXPECT_EQ(adapted.im, owned.im);
  EXPECT_DOUBLE_EQ(adapted.total, 0.5);
  EXPECT_GT(std::abs(every.total - adapted.total), 1.0) << "the halo rows should hold images";
  EXPECT_EQ(dispatch.stats().all_reduce, 3u);
}

// A spec that lost the adapter, or part of it, is refused when the model is made.
TEST(EwaldErrors, SpecWithoutTheStructureFactorAdapter) {
  const models::ModelFile file = ewald_file(0.35, {5, 5, 5}, 5.5);
  models::ModelFile bare = file;
  bare.spec.core.custom_ops.clear();
  bare.spec_source = "inline";
  try {
    models::make_model(bare);
    FAIL() << "a spec without the structure-factor adapter was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/spec/core/custom_ops: the spec has no adapter for op "
                                         "'alchemiops::_ewald_compute_partial_structure_factors'"),
              std::string::npos)
        << e.what();
  }
  bare.spec = file.spec;
  bare.spec.core.custom_ops[0].output_transforms.erase(2);
  try {
    models::make_model(bare);
    FAIL() << "a spec without all_reduce_sum on the total charge was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/spec/core/custom_ops/0/output_transforms: op "
                                         "'alchemiops::_ewald_compute_partial_structure_factors' needs output 2 all_reduce_sum"),
              std::string::npos)
        << e.what();
  }
  // A spec file's errors name the file.
  bare.spec_source = potentials("specs/ewald_halo.json");
  bare.spec.core.custom_ops[0].arg_transforms.erase(1);
  try {
    models::make_model(bare);
    FAIL() << "a spec without slice_owned on the charges was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.file(), bare.spec_source);
    EXPECT_EQ(e.pointer(), "/core/custom_ops/0/arg_transforms");
  }
}

// The shipped spec is nvalchemi's own Ewald spec, as the released wheel saved it: the model
// runs under it unmodified, its batched and slab adapters unbound (no kernel is needed).
TEST(Ewald, ShippedSpecIsTheReleasedWheelsAndBindsUnmodified) {
  const std::string bytes = models::read_file_bytes(potentials("specs/ewald_halo.json"));
  const MLIPSpec spec = read_mlip_spec(bytes, "ewald_halo.json");
  EXPECT_EQ(write_mlip_spec(spec), bytes);
  EXPECT_EQ(bytes, models::read_file_bytes(std::string(DISTSPEC_POTENTIALS_DIR) +
                                           "/../unittest/golden_specs/nvalchemi-0.2.0/model_ewald_halo.json"));
  ASSERT_EQ(spec.core.custom_ops.size(), 4u);
  ASSERT_TRUE(spec.compile);
  EXPECT_EQ(spec.compile->force_strategy, ForceStrategy::framework_from_node_energy);
  models::register_builtin_ops();
  const auto model = models::make_model(models::read_model_file(potentials("nacl_ewald.json")));
  EXPECT_NO_THROW(Dispatcher(spec.core, Device::cpu, model->info().ops, 4));
}

std::string system_error(models::Model& model, const ChargedGraph& g, const DistributionSpec& spec,
                         const models::AtomGraph& atoms) {
  try {
    compute(model, g, spec, &atoms);
  } catch (const Error& e) {
    EXPECT_EQ(e.id(), models::model_error_id::system);
    return e.what();
  }
  return "";
}

TEST(EwaldErrors, SystemsTheModelCannotRun) {
  const Crystal c = rock_salt(5.64, 2);
  const models::ModelFile file = ewald_file(0.35, {5, 5, 5}, 5.5);
  auto model = models::make_model(file);
  std::vector<double> charges = rock_salt_charges(c, 1.0);
  charges[3] += 0.01;
  const ChargedGraph charged(c, charges, file.cutoff);
  EXPECT_NE(system_error(*model, charged, file.spec.core, charged.atoms())
                .find("ewald: the system is not charge neutral: net charge 0.01 (sum of q over the model's atoms, "
                      "allowed |sum q| <= 1e-05)"),
            std::string::npos);

  const ChargedGraph g(c, rock_salt_charges(c, 1.0), file.cutoff);
  models::AtomGraph atoms = g.atoms();
  atoms.periodic[2] = false;
  EXPECT_NE(system_error(*model, g, file.spec.core, atoms).find("the box is not periodic in z; Ewald summation sums over "
                                                                "periodic images: use boundary p p p"),
            std::string::npos);
  atoms = g.atoms();
  atoms.cell[3] = 1.5;
  EXPECT_NE(system_error(*model, g, file.spec.core, atoms).find("the box is triclinic (tilts xy 1.5, xz 0, yz 0)"),
            std::string::npos);
  atoms = g.atoms();
  atoms.has_cell = false;
  EXPECT_NE(system_error(*model, g, file.spec.core, atoms).find("the host gave no simulation cell"), std::string::npos);
  atoms = g.atoms();
  atoms.charges = nullptr;
  EXPECT_NE(system_error(*model, g, file.spec.core, atoms).find("the host gave no charges"), std::string::npos);
}

TEST(EwaldErrors, Parameters) {
  models::ModelFile file = ewald_file(0.35, {5, 5, 5}, 5.5);
  auto error_of = [&](const Json& parameters) {
    models::ModelFile f = file;
    f.parameters = parameters;
    try {
      models::make_model(f);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error_of(Json{{"kmax", {5, 5, 5}}}).find("/parameters/alpha: missing required key 'alpha'"), std::string::npos)
      << error_of(Json{{"kmax", {5, 5, 5}}});
  EXPECT_NE(error_of(Json{{"alpha", 0.3}, {"kmax", {5, 5}}}).find("/parameters/kmax: expected three integers"),
            std::string::npos);
  EXPECT_NE(error_of(Json{{"alpha", 0.3}, {"kmax", {5, 0, 5}}}).find("/parameters/kmax/1: expected an integer from 1 to 200, found 0"),
            std::string::npos);
  EXPECT_NE(error_of(Json{{"alpha", 0.3}, {"kmax", {5, 5, 5}}, {"erfc", "tabulated"}}).find("/parameters/erfc"),
            std::string::npos);
  EXPECT_NE(error_of(Json{{"alpha", -1.0}, {"kmax", {5, 5, 5}}}).find("/parameters/alpha"), std::string::npos);
}

TEST(Ewald, CoulombConstantFollowsUnits) {
  EXPECT_EQ(models::ewald::coulomb_constant_of("metal"), 14.399645);
  EXPECT_EQ(models::ewald::coulomb_constant_of("real"), 332.06371);
  models::ModelFile file = ewald_file(0.35, {5, 5, 5}, 5.5);
  file.parameters["coulomb_constant"] = 7.0;
  const auto params = models::ewald::parse_params(file.parameters, file.units, 2, file.cutoff);
  EXPECT_EQ(params.coulomb_constant, 7.0);
}

}  // namespace
}  // namespace distspec::test
