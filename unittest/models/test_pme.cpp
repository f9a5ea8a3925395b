// The PME model against independent references: a brute-force Ewald sum over reciprocal lattice
// vectors written here (orthogonal and triclinic cells, neutral and charged), the Madelung energy
// of rock salt, forces and virial against finite differences of the model's own energy (smooth
// PME's forces and virial are exact derivatives of its energy), threads against one thread, the
// spec's spread adapter (a rank's owned rows spread once, then all-reduced), LAMMPS pppm's mesh
// rule, and the errors of parameters and specs the model cannot run.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <complex>
#include <string>
#include <vector>

#include "distspec/error.h"
#include "models/factory/model_factory.h"
#include "models/model_file.h"
#include "models/pme/pme.h"
#include "models/pme/pme_accuracy.h"
#include "models/pme/pme_moduli.h"
#include "models/system_derived.h"
#include "charged_crystal.h"
#include "model_test_util.h"

namespace distspec::test {
namespace {

using models::Json;

const double kPi = std::acos(-1.0);

models::ModelFile pme_file(Json parameters, double cutoff) {
  models::ModelFile f = models::read_model_file(potentials("nacl_pme.json"));
  f.cutoff = cutoff;
  f.parameters = std::move(parameters);
  return f;
}

// The Ewald sum, written out: real-space pairs over images, the reciprocal sum over every
// reciprocal lattice vector m = h^-T n with |n_d| <= n_max, self and background terms; and the
// forces by its analytic gradient. Independent of the model's mesh, splines and FFTs.
struct EwaldReference {
  double energy = 0.0;
  std::vector<Vec3> forces;
};

EwaldReference ewald_reference(const Crystal& c, const std::vector<double>& q, double alpha, double cutoff,
                               int n_max) {
  EwaldReference ref;
  const std::size_t n = c.positions.size();
  ref.forces.assign(n, Vec3{});
  const double cut2 = cutoff * cutoff;
  // Real space (pairs i, j and images, each ordered pair once: half the energy).
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      for (int a = -2; a <= 2; ++a)
        for (int b = -2; b <= 2; ++b)
          for (int k = -2; k <= 2; ++k) {
            if (i == j && a == 0 && b == 0 && k == 0) continue;
            const Vec3 s = c.box.image_shift({a, b, k});
            Vec3 del;
            double rsq = 0.0;
            for (int d = 0; d < 3; ++d) {
              del[d] = c.positions[i][d] - c.positions[j][d] - s[d];
              rsq += del[d] * del[d];
            }
            if (rsq >= cut2) continue;
            const double r = std::sqrt(rsq);
            ref.energy += 0.5 * kCoulombMetal * q[i] * q[j] * std::erfc(alpha * r) / r;
            const double fpair = kCoulombMetal * q[i] * q[j] *
                                 (std::erfc(alpha * r) / r + 2.0 * alpha / std::sqrt(kPi) * std::exp(-alpha * alpha * rsq)) /
                                 rsq;
            for (int d = 0; d < 3; ++d) ref.forces[i][d] += fpair * del[d];
          }
  // Reciprocal space.
  const Mat3 inv = c.box.inverse();  // rows: reciprocal vectors a*, b*, c*
  const double volume = c.box.volume();
  for (int a = -n_max; a <= n_max; ++a)
    for (int b = -n_max; b <= n_max; ++b)
      for (int k = -n_max; k <= n_max; ++k) {
        if (a == 0 && b == 0 && k == 0) continue;
        Vec3 m;
        for (int d = 0; d < 3; ++d) m[d] = a * inv[0][d] + b * inv[1][d] + k * inv[2][d];
        const double msq = m[0] * m[0] + m[1] * m[1] + m[2] * m[2];
        const double g = std::exp(-kPi * kPi * msq / (alpha * alpha)) / (kPi * volume * msq);
        std::complex<double> s{};
        for (std::size_t i = 0; i < n; ++i) {
          const double arg = 2.0 * kPi * (m[0] * c.positions[i][0] + m[1] * c.positions[i][1] + m[2] * c.positions[i][2]);
          s += q[i] * std::complex<double>(std::cos(arg), std::sin(arg));
        }
        ref.energy += 0.5 * kCoulombMetal * g * std::norm(s);
        for (std::size_t i = 0; i < n; ++i) {
          const double arg = 2.0 * kPi * (m[0] * c.positions[i][0] + m[1] * c.positions[i][1] + m[2] * c.positions[i][2]);
          // -dE/dr_i = C g q_i 2 pi m Im(e^{-i arg} S)... written out:
          const double im = std::sin(arg) * s.real() - std::cos(arg) * s.imag();
          for (int d = 0; d < 3; ++d) ref.forces[i][d] += kCoulombMetal * g * q[i] * 2.0 * kPi * m[d] * im;
        }
      }
  double qsum = 0.0, qsq = 0.0;
  for (double v : q) {
    qsum += v;
    qsq += v * v;
  }
  ref.energy -= kCoulombMetal * (alpha / std::sqrt(kPi) * qsq + kPi * qsum * qsum / (2.0 * alpha * alpha * volume));
  return ref;
}

void expect_matches_ewald(const Crystal& c, const std::vector<double>& charges, double tolerance) {
  const double alpha = 0.42, cutoff = 7.0;
  const models::ModelFile file = pme_file(Json{{"alpha", alpha}, {"mesh", {40, 40, 40}}, {"order", 6}}, cutoff);
  auto model = models::make_model(file);
  const ChargedGraph g(c, charges, cutoff);
  const models::ModelOutputs out = compute(*model, g, file.spec.core);
  const EwaldReference ref = ewald_reference(c, charges, alpha, cutoff, 9);
  EXPECT_NEAR(out.energy, ref.energy, tolerance * std::abs(ref.energy));
  double largest = 0.0;
  for (const Vec3& f : ref.forces)
    for (double v : f) largest = std::max(largest, std::abs(v));
  for (std::size_t i = 0; i < c.positions.size(); ++i)
    for (int d = 0; d < 3; ++d)
      EXPECT_NEAR(out.forces[3 * i + d], ref.forces[i][d], tolerance * largest) << "atom " << i << " axis " << d;
}

// A fine mesh (40^3, order 6) reproduces the Ewald sum.
TEST(Pme, EqualsTheEwaldSumInAnOrthogonalCell) {
  Crystal c = rock_salt(5.64, 2);
  jiggle(c, 0.3, 11);
  std::vector<double> q = rock_salt_charges(c, 0.9);
  q[0] += 0.4;
  q[9] -= 0.4;
  expect_matches_ewald(c, q, 2e-6);
}

TEST(Pme, EqualsTheEwaldSumInATriclinicCell) {
  Crystal c = rock_salt(5.64, 2);
  shear(c, 1.7, -0.9, 1.1);
  jiggle(c, 0.25, 5);
  expect_matches_ewald(c, rock_salt_charges(c, 1.0), 2e-6);
}

// A net charge: the neutralising background term, as LAMMPS adds it.
TEST(Pme, EqualsTheEwaldSumOfAChargedSystem) {
  Crystal c = rock_salt(5.64, 2);
  jiggle(c, 0.2, 3);
  std::vector<double> q = rock_salt_charges(c, 1.0);
  q[4] += 1.0;
  q[20] += 0.5;
  expect_matches_ewald(c, q, 2e-6);
}

TEST(Pme, RockSaltEnergyIsTheMadelungEnergy) {
  const double a = 5.64;
  const Crystal c = rock_salt(a, 3);
  const models::ModelFile file = pme_file(Json{{"alpha", 0.5}, {"mesh", {64, 64, 64}}, {"order", 6}}, 8.0);
  auto model = models::make_model(file);
  const ChargedGraph g(c, rock_salt_charges(c, 1.0), file.cutoff);
  const models::ModelOutputs out = compute(*model, g, file.spec.core);
  const double madelung = -0.5 * double(c.positions.size()) * kMadelungRockSalt * kCoulombMetal / (0.5 * a);
  EXPECT_NEAR(out.energy / madelung, 1.0, 1e-7);
  for (double f : out.forces) EXPECT_NEAR(f, 0.0, 1e-6);
}

// Forces, virial and per-row sums of a coarse mesh: derivatives of the model's own energy.
TEST(Pme, ForcesAndVirialAreDerivativesOfTheEnergy) {
  for (bool triclinic : {false, true}) {
    SCOPED_TRACE(triclinic ? "triclinic" : "orthogonal");
    Crystal c = rock_salt(5.64, 2);
    if (triclinic) shear(c, 1.3, 0.8, -0.6);
    jiggle(c, 0.3, 7);
    std::vector<double> q = rock_salt_charges(c, 0.8);
    q[3] += 0.5;  // and charged
    const models::ModelFile file = pme_file(Json{{"alpha", 0.35}, {"mesh", {15, 16, 18}}, {"order", 5}}, 5.5);
    auto model = models::make_model(file);
    const ChargedGraph g(c, q, file.cutoff);
    const models::ModelOutputs out = compute(*model, g, file.spec.core);
    expect_forces_are_energy_derivatives(*model, g, file.spec.core, out);
    // A charged system's background energy depends on the volume; LAMMPS leaves its virial out,
    // and so does the model: the diagonal is compared on a neutral system only (below).
    for (int v = 3; v < 6; ++v) {
      const double fd = fd_strain_virial(*model, g, file.spec.core, v);
      EXPECT_NEAR(out.virial[v], fd, 1e-5 * (1.0 + std::abs(fd))) << "virial component " << v;
    }
    expect_owned_rows_complete(out, g);
  }
}

// The diagonal of the virial of a neutral system, against the strain derivative.
TEST(Pme, VirialDiagonalOfANeutralSystem) {
  Crystal c = rock_salt(5.64, 2);
  shear(c, 0.9, 0.4, -0.7);
  jiggle(c, 0.3, 17);
  const models::ModelFile file = pme_file(Json{{"alpha", 0.35}, {"mesh", {15, 16, 18}}, {"order", 4}}, 5.5);
  auto model = models::make_model(file);
  const ChargedGraph g(c, rock_salt_charges(c, 1.0), file.cutoff);
  const models::ModelOutputs out = compute(*model, g, file.spec.core);
  for (int v = 0; v < 3; ++v) {
    const double fd = fd_strain_virial(*model, g, file.spec.core, v);
    EXPECT_NEAR(out.virial[v], fd, 1e-5 * (1.0 + std::abs(fd))) << "virial component " << v;
  }
}

TEST(Pme, ThreadsGiveTheOneThreadOutputs) {
  expect_charged_threads_match_one_thread(pme_file(Json{{"alpha", 0.35}, {"mesh", {24, 24, 24}}}, 5.5));
}

// Under the spec the spread sums each owned row once: the same mesh as the kernel called on the
// owned rows alone, not that of every row (halo images), after one all-reduce.
TEST(Pme, SpreadOpSpreadsOwnedRowsOnceUnderTheSpec) {
  const Crystal c = rock_salt(5.64, 2);
  const models::ModelFile file = pme_file(Json{{"alpha", 0.35}, {"mesh", {12, 12, 12}}}, 5.5);
  const ChargedGraph g(c, rock_salt_charges(c, 1.0), file.cutoff);
  const models::AtomGraph atoms = g.atoms();
  models::pme::Params params = models::pme::parse_params(file.parameters, "metal", 2, 5.5);
  const models::pme::OpState state{&params, 1, nullptr};
  const double inv = 1.0 / 11.28;
  const std::array<double, 9> inv_t{inv, 0, 0, 0, inv, 0, 0, 0, inv};
  const std::size_t k = params.mesh_points(), n = g.graph.n_rows(), n_owned = g.graph.n_owned();
  auto args = [&](std::size_t rows) {
    return std::vector<TensorRef>{TensorRef::of(atoms.positions, rows, 3), TensorRef::of(atoms.charges, rows),
                                  TensorRef::of(inv_t.data(), 3, 3)};
  };
  std::vector<double> adapted(k), owned(k), every(k);
  models::register_builtin_ops();
  Dispatcher dispatch(file.spec.core, Device::cpu, {models::pme::kSpreadOp}, 1);
  IndexedHaloExchange halo = g.graph.halo_exchange();
  dispatch.attach(halo);
  dispatch.call(models::pme::kSpreadOp, args(n), {TensorRef::of(adapted.data(), k)}, state);
  auto direct = [&](std::size_t rows, std::vector<double>& out) {
    const std::vector<TensorRef> a = args(rows);
    const std::vector<TensorRef> o{TensorRef::of(out.data(), k)};
    OpRegistry::global().run<Device::cpu>(models::pme::kSpreadOp, Span<const TensorRef>(a.data(), a.size()),
                                          Span<const TensorRef>(o.data(), o.size()), state);
  };
  direct(n_owned, owned);
  direct(n, every);
  EXPECT_EQ(adapted, owned);
  double owned_sum = 0.0, every_abs = 0.0;
  for (std::size_t i = 0; i < k; ++i) {
    owned_sum += owned[i];
    every_abs += std::abs(every[i] - owned[i]);
  }
  EXPECT_NEAR(owned_sum, 0.0, 1e-10) << "the mesh of a neutral crystal holds no net charge";
  EXPECT_GT(every_abs, 1.0) << "the halo rows should hold images";
  EXPECT_EQ(dispatch.stats().all_reduce, 1u);
}

// The moduli of odd orders at the Nyquist point of an even mesh: the neighbours' mean, finite.
TEST(Pme, SplineModuliAreFiniteAtTheNyquistPoint) {
  for (int order : {3, 5, 7}) {
    const std::vector<double> b = models::pme::bspline_moduli(order, 16);
    EXPECT_TRUE(std::isfinite(b[8]));
    EXPECT_NEAR(b[8], 0.5 * (b[7] + b[9]), 1e-12 * b[8]);
    EXPECT_DOUBLE_EQ(b[0], 1.0);  // the spline's integer values sum to 1
  }
}

// LAMMPS pppm's rule: sizes that are products of 2, 3 and 5, a finer mesh for a tighter
// accuracy, and the balance of real- and k-space errors it adjusts alpha to.
TEST(Pme, MeshRuleIsPppms) {
  EXPECT_TRUE(models::pme::factorable(30));
  EXPECT_TRUE(models::pme::factorable(1));
  EXPECT_FALSE(models::pme::factorable(14));
  EXPECT_FALSE(models::pme::factorable(49));
  models::pme::Box box;
  box.prd[0] = box.prd[1] = box.prd[2] = 22.56;
  const double natoms = 512, q2 = natoms * kCoulombMetal, cutoff = 10.0;
  const auto coarse = models::pme::pppm_choice(1e-4, natoms, q2, cutoff, box, 5, 0.0, {});
  const auto fine = models::pme::pppm_choice(1e-6, natoms, q2, cutoff, box, 5, 0.0, {});
  for (int d = 0; d < 3; ++d) {
    EXPECT_TRUE(models::pme::factorable(coarse.mesh[d]));
    EXPECT_GT(fine.mesh[d], coarse.mesh[d]);
  }
  EXPECT_LT(fine.estimated_accuracy, coarse.estimated_accuracy);
  // alpha balances 2 q2 exp(-alpha^2 rc^2) / sqrt(N rc V) against the k-space estimate: its
  // real-space estimate is within 1e-5 (pppm.cpp SMALL) of the total's 1/sqrt(2).
  const double rspace = 2.0 * q2 * std::exp(-fine.alpha * fine.alpha * cutoff * cutoff) /
                        std::sqrt(natoms * cutoff * 22.56 * 22.56 * 22.56);
  EXPECT_NEAR(rspace, fine.estimated_accuracy / std::sqrt(2.0), 1e-5);
}

TEST(PmeErrors, ParametersTheModelCannotRun) {
  struct Row {
    Json parameters;
    std::string expected;
  };
  const std::vector<Row> rows{
      {Json{{"alpha", 0.3}}, "/parameters/mesh: missing required key 'mesh'"},
      {Json{{"mesh", {10, 10, 10}}}, "/parameters/alpha: missing required key 'alpha'"},
      {Json{{"accuracy", 1e-5}, {"order", 9}}, "/parameters/order: expected a B-spline order from 2 to 7, found 9"},
      {Json{{"alpha", 0.3}, {"mesh", {10, 3, 10}}}, "/parameters/mesh/1: expected from 5 (the order) to 16383 mesh points, found 3"},
      {Json{{"accuracy", -1.0}}, "/parameters/accuracy: expected a relative accuracy > 0"},
      {Json{{"accuracy", 1e-5}, {"kmax", 3}}, "/parameters/kmax: unknown key 'kmax'; expected one of accuracy, alpha, mesh, order"},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.parameters.dump());
    const Error e = error_of([&] { models::make_model(pme_file(row.parameters, 5.0)); });
    EXPECT_NE(std::string(e.what()).find(row.expected), std::string::npos) << e.what();
  }
}

// A mesh given beside an accuracy it cannot reach stops the run at its first step, naming the
// mesh LAMMPS' rule would choose.
TEST(PmeErrors, MeshTooCoarseForTheAccuracy) {
  const Crystal c = rock_salt(5.64, 2);
  const models::ModelFile file = pme_file(Json{{"accuracy", 1e-6}, {"mesh", {6, 6, 6}}}, 5.0);
  auto model = models::make_model(file);
  const ChargedGraph g(c, rock_salt_charges(c, 1.0), file.cutoff);
  const Error e = error_of([&] { compute(*model, g, file.spec.core); });
  EXPECT_NE(std::string(e.what()).find("/parameters/mesh: pme: mesh 6 6 6 is too coarse for accuracy 1e-06"),
            std::string::npos)
      << e.what();
  EXPECT_NE(std::string(e.what()).find("LAMMPS' rule chooses"), std::string::npos) << e.what();
}

TEST(PmeErrors, SpecWithoutTheSpreadAdapter) {
  models::ModelFile file = pme_file(Json{{"alpha", 0.3}, {"mesh", {10, 10, 10}}}, 5.0);
  file.spec.core.custom_ops[0].arg_transforms.erase(1);
  file.spec_source = "inline";
  const Error e = error_of([&] { models::make_model(file); });
  EXPECT_NE(std::string(e.what()).find("/spec/core/custom_ops/0/arg_transforms: op 'nvalchemiops::spline_spread' "
                                       "needs argument 1 slice_owned"),
            std::string::npos)
      << e.what();
  file.spec.core.custom_ops.clear();
  const Error bare = error_of([&] { models::make_model(file); });
  EXPECT_NE(std::string(bare.what()).find("the spec has no adapter for op 'nvalchemiops::spline_spread'"),
            std::string::npos)
      << bare.what();
}

TEST(PmeErrors, OpenBox) {
  const Crystal c = rock_salt(5.64, 2);
  const models::ModelFile file = pme_file(Json{{"alpha", 0.3}, {"mesh", {10, 10, 10}}}, 5.0);
  auto model = models::make_model(file);
  ChargedGraph g(c, rock_salt_charges(c, 1.0), file.cutoff);
  models::AtomGraph atoms = g.atoms();
  atoms.periodic[2] = false;
  const Error e = error_of([&] { compute(*model, g, file.spec.core, &atoms); });
  EXPECT_NE(std::string(e.what()).find("pme: the box is not periodic in z"), std::string::npos) << e.what();
}

}  // namespace
}  // namespace distspec::test
