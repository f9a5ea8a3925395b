// The Ewald model against independent references: the Madelung energy of rock salt, forces and
// virial against finite differences of the energy, the k-vector set against LAMMPS' count, the
// spec's structure-factor adapter (a rank's owned rows summed, then all-reduced), and the
// errors of a system the model cannot run (net charge, no cell, a tilted or open box, no charges).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "distspec/error.h"
#include "distspec/spec/spec_json.h"
#include "models/ewald/ewald.h"
#include "models/ewald/ewald_accuracy.h"
#include "models/ewald/ewald_kspace.h"
#include "models/ewald/ewald_phases.h"
#include "models/factory/model_factory.h"
#include "models/model_file.h"
#include "models/system_derived.h"
#include "charged_crystal.h"
#include "model_test_util.h"

namespace distspec::test {
namespace {

using models::Json;


models::ModelFile ewald_file(double alpha, std::array<int, 3> kmax, double cutoff, const std::string& erfc = "exact") {
  models::ModelFile f = models::read_model_file(potentials("nacl_ewald.json"));
  f.cutoff = cutoff;
  f.parameters = Json{{"alpha", alpha}, {"kmax", {kmax[0], kmax[1], kmax[2]}}, {"erfc", erfc}};
  return f;
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
  expect_forces_are_energy_derivatives(*model, g, file.spec.core, out);
  for (int v = 0; v < 3; ++v) {  // the box stays orthogonal under diagonal strains only
    const double fd = fd_strain_virial(*model, g, file.spec.core, v);
    EXPECT_NEAR(out.virial[v], fd, 1e-5 * (1.0 + std::abs(fd))) << "virial component " << v;
  }
  expect_owned_rows_complete(out, g);
}

// LAMMPS 4Feb2025's log for kspace_modify gewald 0.3 kmax/ewald 7 7 7 in a 22.56 A cube:
// "KSpace vectors: actual max1d max3d = 709 7 1687"; for 5 4 3 in 20 x 17 x 13 A: 144.
// The k-space sums over atoms and the real-space pairs on 2 and 3 threads against 1.
TEST(Ewald, ThreadsGiveTheOneThreadOutputs) {
  expect_charged_threads_match_one_thread(ewald_file(0.35, {6, 6, 6}, 5.5));
}

// LAMMPS' k-vectors (ewald.cpp coeffs()) for an orthogonal box, by brute force over the integer
// triples n: one of each pair +-n (the first non-zero component positive), |k|^2 within
// gsqmx = 1.00001 max_d (2 pi kmax_d / L_d)^2, each component within its kmax except along an
// axis, where LAMMPS goes up to the largest kmax; k = 2 pi n / L. Sorted.
std::vector<std::array<double, 3>> brute_force_k_vectors(const std::array<double, 3>& lengths,
                                                         const std::array<int, 3>& kmax) {
  const double two_pi = 2.0 * std::acos(-1.0);
  const int k_all = std::max({kmax[0], kmax[1], kmax[2]});
  double gsqmx = 0.0;
  for (int d = 0; d < 3; ++d) gsqmx = std::max(gsqmx, std::pow(two_pi * kmax[d] / lengths[d], 2));
  gsqmx *= 1.00001;
  std::vector<std::array<double, 3>> out;
  for (int a = -k_all; a <= k_all; ++a)
    for (int b = -k_all; b <= k_all; ++b)
      for (int c = -k_all; c <= k_all; ++c) {
        const int n[3] = {a, b, c};
        const int first = a != 0 ? a : b != 0 ? b : c;
        if (first <= 0) continue;
        const int nonzero = (a != 0) + (b != 0) + (c != 0);
        bool within = true;
        for (int d = 0; d < 3; ++d) within &= nonzero == 1 || std::abs(n[d]) <= kmax[d];
        const std::array<double, 3> k{two_pi * a / lengths[0], two_pi * b / lengths[1], two_pi * c / lengths[2]};
        if (within && k[0] * k[0] + k[1] * k[1] + k[2] * k[2] <= gsqmx) out.push_back(k);
      }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(Ewald, KVectorsAreLammps) {
  struct Case {
    std::array<double, 3> lengths;
    std::array<int, 3> kmax;
    std::size_t count;  // LAMMPS' own count for the cubic box (kspace_style ewald's log)
  };
  for (const Case& c : {Case{{22.56, 22.56, 22.56}, {7, 7, 7}, 709}, Case{{20.0, 17.0, 13.0}, {5, 4, 3}, 144},
                        Case{{9.0, 31.0, 15.5}, {2, 6, 4}, 0}}) {
    SCOPED_TRACE(std::to_string(c.kmax[0]) + " " + std::to_string(c.kmax[1]) + " " + std::to_string(c.kmax[2]));
    const std::vector<double> flat = models::ewald::lammps_k_vectors(c.lengths, c.kmax);
    ASSERT_EQ(flat.size() % 3, 0u);
    std::vector<std::array<double, 3>> got;
    for (std::size_t i = 0; i < flat.size(); i += 3) got.push_back({flat[i], flat[i + 1], flat[i + 2]});
    std::sort(got.begin(), got.end());
    const std::vector<std::array<double, 3>> expected = brute_force_k_vectors(c.lengths, c.kmax);
    if (c.count) EXPECT_EQ(got.size(), c.count);
    ASSERT_EQ(got.size(), expected.size());
    for (std::size_t i = 0; i < got.size(); ++i)
      for (int d = 0; d < 3; ++d) EXPECT_NEAR(got[i][static_cast<std::size_t>(d)], expected[i][static_cast<std::size_t>(d)], 1e-12);
  }
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
  // The op needs no constants: a state without them, on one thread.
  const models::EdgeOpState<models::ewald::Params> state{};
  dispatch.call(models::ewald::kStructureFactorsOp, args(n), adapted.refs(), state);
  auto direct = [&](std::size_t rows, Sums& out) {
    const std::vector<TensorRef> a = args(rows), o = out.refs();
    OpRegistry::global().run<Device::cpu>(models::ewald::kStructureFactorsOp, Span<const TensorRef>(a.data(), a.size()),
                                          Span<const TensorRef>(o.data(), o.size()), state);
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
  // No adapter at all.
  std::string what = error_of([&] { models::make_model(bare); }).what();
  EXPECT_NE(what.find("/spec/core/custom_ops: the spec has no adapter for op "
                      "'alchemiops::_ewald_compute_partial_structure_factors'"),
            std::string::npos)
      << what;
  // No all_reduce_sum on the total charge.
  bare.spec = file.spec;
  bare.spec.core.custom_ops[0].output_transforms.erase(2);
  what = error_of([&] { models::make_model(bare); }).what();
  EXPECT_NE(what.find("/spec/core/custom_ops/0/output_transforms: op "
                      "'alchemiops::_ewald_compute_partial_structure_factors' needs output 2 all_reduce_sum"),
            std::string::npos)
      << what;
  // No slice_owned on the charges: a spec file's errors name the file.
  bare.spec_source = potentials("specs/ewald_halo.json");
  bare.spec.core.custom_ops[0].arg_transforms.erase(1);
  const Error e = error_of([&] { models::make_model(bare); });
  EXPECT_EQ(e.file(), bare.spec_source);
  EXPECT_EQ(e.pointer(), "/core/custom_ops/0/arg_transforms");
}

// The shipped spec is nvalchemi's own Ewald spec, as the released wheel saved it: the model
// runs under it unmodified, its batched and slab adapters unbound (no kernel is needed).
TEST(Ewald, ShippedSpecIsTheReleasedWheelsAndBindsUnmodified) {
  const std::string bytes = models::read_file_bytes(potentials("specs/ewald_halo.json"));
  EXPECT_EQ(bytes, models::read_file_bytes(std::string(DISTSPEC_POTENTIALS_DIR) +
                                           "/../unittest/golden_specs/nvalchemi-0.2.0/model_ewald_halo.json"));
  const MLIPSpec spec = read_mlip_spec(bytes, "ewald_halo.json");
  EXPECT_EQ(write_mlip_spec(spec), bytes);
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

// --- "accuracy": alpha and kmax by LAMMPS' kspace_style ewald rule --------------------------
//
// Reference numbers: LAMMPS' ewald.cpp init() and setup() evaluated in Python (double
// precision, math.log / math.sqrt / math.exp) for each case, not this code's output:
//   acc = rel * qqr2e; q2 = sum q^2 * qqr2e
//   g = acc sqrt(N rc Lx Ly Lz) / (2 q2); g = (1.35 - 0.15 ln acc) / rc if g >= 1 else sqrt(-ln g) / rc
//   k_d = smallest k >= 1 with 2 q2 g / L_d sqrt(1 / (pi k N)) exp(-pi^2 k^2 / (g^2 L_d^2)) <= acc
struct RuleCase {
  double relative, coulomb, natoms, cutoff;
  std::array<double, 3> lengths;
  double sum_q2;
  double g_ewald;
  std::array<int, 3> kmax;
  const char* estimate;  // "estimated absolute RMS force accuracy", %.8g
};

const RuleCase kRuleCases[] = {
    // examples/ewald: 512 ions in a 22.56 A cube, cutoff 10, kspace_style ewald 1e-5
    {1e-5, 14.399645, 512, 10.0, {22.56, 22.56, 22.56}, 512.0, 0.3082154242021012, {7, 7, 7}, "0.0001677103"},
    {1e-5, 14.399645, 64, 5.5, {11.28, 11.28, 11.28}, 64.0, 0.5691400870992452, {7, 7, 7}, "0.00014536171"},
    // real units, a 20 x 17 x 13 box: one kmax per edge
    {1e-4, 332.06371, 210, 8.0, {20.0, 17.0, 13.0}, 70.0, 0.31229395134159466, {5, 5, 4}, "0.03572234"},
    // the first estimate >= 1: g = (1.35 - 0.15 ln acc) / rc
    {1.0, 14.399645, 512, 10.0, {22.56, 22.56, 22.56}, 512.0, 0.09499194669749562, {1, 1, 1}, "0.80066244"},
    {1e-6, 14.399645, 64, 5.5, {11.28, 13.0, 9.5}, 64 * 0.64, 0.6211107600188194, {8, 9, 7}, "1.5081643e-05"},
};

TEST(EwaldAccuracy, RuleIsLammps) {
  for (const RuleCase& c : kRuleCases) {
    SCOPED_TRACE("relative accuracy " + std::to_string(c.relative) + ", " + std::to_string(c.natoms) + " atoms");
    const double accuracy = c.relative * c.coulomb, q2 = c.sum_q2 * c.coulomb;
    const double g = models::ewald::g_ewald_for(accuracy, c.natoms, c.cutoff, c.lengths, q2);
    EXPECT_DOUBLE_EQ(g, c.g_ewald);
    const std::array<int, 3> kmax = models::ewald::kmax_for(accuracy, c.g_ewald, c.natoms, c.lengths, q2);
    EXPECT_EQ(kmax, c.kmax);
    // Each k_d is the smallest that reaches the accuracy.
    for (int d = 0; d < 3; ++d) {
      EXPECT_LE(models::ewald::kspace_rms(kmax[d], c.lengths[d], c.natoms, q2, g), accuracy);
      if (kmax[d] > 1) EXPECT_GT(models::ewald::kspace_rms(kmax[d] - 1, c.lengths[d], c.natoms, q2, g), accuracy);
    }
    char estimate[32];
    std::snprintf(estimate, sizeof estimate, "%.8g",
                  models::ewald::estimated_accuracy(g, kmax, c.natoms, c.cutoff, c.lengths, q2));
    EXPECT_STREQ(estimate, c.estimate);
  }
}

// kspace.cpp two_charge(): qqr2e qelectron^2 / angstrom^2 (update.cpp's constants).
TEST(EwaldAccuracy, TwoChargeForceFollowsUnits) {
  EXPECT_EQ(models::ewald::two_charge_force_of("metal"), 14.399645);
  EXPECT_EQ(models::ewald::two_charge_force_of("real"), 332.06371);
  EXPECT_EQ(models::ewald::two_charge_force_of("lj"), 1.0);
  EXPECT_DOUBLE_EQ(models::ewald::two_charge_force_of("si"), 8.9876e9 * 1.6021765e-19 * 1.6021765e-19 / 1e-20);
  EXPECT_DOUBLE_EQ(models::ewald::two_charge_force_of("electron"), 1.0 / (1.88972612 * 1.88972612));
}

models::ModelFile accuracy_file(const Json& parameters, double cutoff = 5.5) {
  models::ModelFile f = models::read_model_file(potentials("nacl_ewald.json"));
  f.cutoff = cutoff;
  f.parameters = parameters;
  return f;
}

std::string take_report(models::Model& model) {
  auto* derived = dynamic_cast<models::SystemDerived*>(&model);
  EXPECT_NE(derived, nullptr);
  return derived ? derived->take_report() : "";
}

#define EXPECT_HAS(text, needle) EXPECT_NE((text).find(needle), std::string::npos) << (text)

void expect_same_outputs(const models::ModelOutputs& a, const models::ModelOutputs& b) {
  EXPECT_NEAR(a.energy, b.energy, 1e-12 * std::abs(b.energy));
  ASSERT_EQ(a.forces.size(), b.forces.size());
  for (std::size_t i = 0; i < a.forces.size(); ++i) EXPECT_NEAR(a.forces[i], b.forces[i], 1e-11) << i;
  for (int v = 0; v < 6; ++v) EXPECT_NEAR(a.virial[v], b.virial[v], 1e-11 * std::abs(b.virial[v]) + 1e-11) << v;
}

// The model with "accuracy" runs with LAMMPS' alpha and kmax: it prints them as LAMMPS does, and
// its outputs are those of the model given that alpha and kmax.
TEST(EwaldAccuracy, ModelDerivesAlphaAndKmaxAsLammps) {
  Crystal c = rock_salt(5.64, 2);
  jiggle(c, 0.3, 11);
  const ChargedGraph g(c, rock_salt_charges(c, 1.0), 5.5);
  const models::ModelFile file = accuracy_file(Json{{"accuracy", 1e-5}, {"erfc", "lammps_polynomial"}});
  auto model = models::make_model(file);
  const models::ModelOutputs derived = compute(*model, g, file.spec.core);
  const std::string report = take_report(*model);
  EXPECT_HAS(report, "DISTSPEC: ewald: accuracy 1e-05 (absolute 0.00014399645) for 64 atoms: alpha and kmax derived\n");
  EXPECT_HAS(report, "\n  G vector (1/distance) = 0.56914009\n");
  EXPECT_HAS(report, "\n  estimated absolute RMS force accuracy = 0.00014536171\n");
  EXPECT_HAS(report, "\n  estimated relative force accuracy = 1.0094812e-05\n");
  EXPECT_HAS(report, "\n                  kxmax kymax kzmax  = 7 7 7\n");
  // ewald.cpp's count of the 7 7 7 k-vectors in a cube; 4 k^3 + 6 k^2 + 3 k = 1687.
  EXPECT_HAS(report, "\n  KSpace vectors: actual max1d max3d = 709 7 1687\n");
  EXPECT_EQ(take_report(*model), "") << "the report comes once per run";

  auto given = models::make_model(
      accuracy_file(Json{{"alpha", 0.5691400870992452}, {"kmax", {7, 7, 7}}, {"erfc", "lammps_polynomial"}}));
  expect_same_outputs(derived, compute(*given, g, file.spec.core));
}

// A given alpha or kmax is kept, as kspace_modify gewald / kmax/ewald keep theirs.
TEST(EwaldAccuracy, GivenAlphaOrKmaxIsKept) {
  const Crystal c = rock_salt(5.64, 2);
  const ChargedGraph g(c, rock_salt_charges(c, 1.0), 5.5);
  const DistributionSpec& spec = accuracy_file(Json{{"accuracy", 1e-5}}).spec.core;

  auto alpha_given = models::make_model(accuracy_file(Json{{"accuracy", 1e-5}, {"alpha", 0.35}}));
  compute(*alpha_given, g, spec);
  std::string report = take_report(*alpha_given);
  EXPECT_HAS(report, "for 64 atoms: kmax derived\n  G vector (1/distance) = 0.35\n");
  EXPECT_HAS(report, "kxmax kymax kzmax  = 4 4 4\n");

  auto kmax_given = models::make_model(accuracy_file(Json{{"accuracy", 1e-5}, {"kmax", {5, 4, 3}}}));
  compute(*kmax_given, g, spec);
  report = take_report(*kmax_given);
  EXPECT_HAS(report, "for 64 atoms: alpha derived\n  G vector (1/distance) = 0.56914009\n");
  EXPECT_HAS(report, "kxmax kymax kzmax  = 5 4 3\n");

  auto both_given = models::make_model(accuracy_file(Json{{"accuracy", 1e-5}, {"alpha", 0.35}, {"kmax", {5, 4, 3}}}));
  compute(*both_given, g, spec);
  EXPECT_HAS(take_report(*both_given), "for 64 atoms: alpha and kmax given\n  G vector (1/distance) = 0.35\n");

  // Without accuracy nothing is derived and nothing reported.
  auto plain = models::make_model(accuracy_file(Json{{"alpha", 0.35}, {"kmax", {5, 4, 3}}}));
  compute(*plain, g, spec);
  EXPECT_EQ(take_report(*plain), "");
}

// kmax follows the box within a run (LAMMPS' setup() on a box change) with the run's alpha;
// a new run derives alpha afresh (init()).
TEST(EwaldAccuracy, KmaxFollowsTheBoxAndAlphaTheRun) {
  Crystal c = rock_salt(5.64, 2);
  jiggle(c, 0.2, 5);
  ChargedGraph g(c, rock_salt_charges(c, 1.0), 5.5);
  const models::ModelFile file = accuracy_file(Json{{"accuracy", 1e-5}});
  auto model = models::make_model(file);
  compute(*model, g, file.spec.core);
  take_report(*model);
  Mat3 stretch{};
  stretch[0][0] = 0.2;  // x by 1.2: 13.536 A
  g.graph.deform(stretch);

  const models::ModelOutputs same_run = compute(*model, g, file.spec.core);
  EXPECT_EQ(take_report(*model), "");
  auto same_alpha = models::make_model(accuracy_file(Json{{"alpha", 0.5691400870992452}, {"kmax", {8, 7, 7}}}));
  expect_same_outputs(same_run, compute(*same_alpha, g, file.spec.core));

  dynamic_cast<models::SystemDerived&>(*model).begin_run();
  const models::ModelOutputs next_run = compute(*model, g, file.spec.core);
  EXPECT_HAS(take_report(*model), "  G vector (1/distance) = 0.56648642\n");
  auto new_alpha = models::make_model(accuracy_file(Json{{"alpha", 0.5664864158055308}, {"kmax", {8, 7, 7}}}));
  expect_same_outputs(next_run, compute(*new_alpha, g, file.spec.core));
}

TEST(EwaldAccuracyErrors, Parameters) {
  auto error_of = [](const Json& parameters) {
    try {
      models::make_model(accuracy_file(parameters));
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string zero = error_of(Json{{"accuracy", 0.0}});
  EXPECT_HAS(zero, "/parameters/accuracy: expected a relative accuracy > 0, found 0.0; the relative RMS force "
                   "accuracy of kspace_style ewald ACC, e.g. 1e-5");
  EXPECT_HAS(error_of(Json{{"accuracy", -1e-5}}), "/parameters/accuracy: expected a relative accuracy > 0, found -1e-05");
  EXPECT_HAS(error_of(Json{{"accuracy", "1e-5"}}), "/parameters/accuracy: expected a number, found a string");
  EXPECT_HAS(error_of(Json{{"kmax", {5, 5, 5}}}),
             "/parameters/alpha: missing required key 'alpha'; the splitting parameter, LAMMPS' g_ewald (kspace_modify "
             "gewald); or give \"accuracy\" to derive it");
  EXPECT_HAS(error_of(Json{{"alpha", 0.3}}), "/parameters/kmax: missing required key 'kmax'");
  EXPECT_HAS(error_of(Json{{"accuracy", 1e-5}, {"kmax", {5, 0, 5}}}), "/parameters/kmax/1: expected an integer from 1 to 200");
}

// An uncharged system: alpha cannot come from accuracy (LAMMPS: "Must use 'kspace_modify gewald'
// for uncharged system"); with alpha given, kmax is 1 1 1 as LAMMPS' rms() of q2 = 0 gives.
TEST(EwaldAccuracyErrors, UnchargedSystem) {
  const Crystal c = rock_salt(5.64, 2);
  const ChargedGraph g(c, rock_salt_charges(c, 0.0), 5.5);
  const models::ModelFile file = accuracy_file(Json{{"accuracy", 1e-5}});
  auto model = models::make_model(file);
  const std::string e = system_error(*model, g, file.spec.core, g.atoms());
  EXPECT_HAS(e, "/parameters/accuracy: ewald: the system has no charge (sum of q^2 over the model's atoms is 0), so "
                "\"accuracy\" cannot set alpha; give \"alpha\" under \"parameters\" (LAMMPS: kspace_modify gewald");

  auto alpha_given = models::make_model(accuracy_file(Json{{"accuracy", 1e-5}, {"alpha", 0.35}}));
  compute(*alpha_given, g, file.spec.core);
  EXPECT_HAS(take_report(*alpha_given), "kxmax kymax kzmax  = 1 1 1\n");
}

// A kmax beyond 200 cells is refused rather than run for days.
TEST(EwaldAccuracyErrors, DerivedKmaxTooLarge) {
  const Crystal c = rock_salt(5.64, 2);
  const ChargedGraph g(c, rock_salt_charges(c, 1.0), 5.5);
  const models::ModelFile file = accuracy_file(Json{{"accuracy", 1e-12}, {"alpha", 30.0}});
  auto model = models::make_model(file);
  EXPECT_HAS(system_error(*model, g, file.spec.core, g.atoms()),
             "/parameters/accuracy: ewald: accuracy 1e-12 needs more than 200 reciprocal cells along x (box edge 11.28, "
             "alpha 30)");
}

}  // namespace
}  // namespace distspec::test
