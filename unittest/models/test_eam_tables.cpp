// EAM tables: the readers against the files' own numbers, LAMMPS' spline through the grid
// values and close to smooth functions between them, funcfl grid merging and Z-Z mixing
// against analytic functions, F's linear continuation above rhomax, and reader errors.
#include <gtest/gtest.h>

#include <cmath>

#include "distspec/error.h"
#include "eam_reference.h"
#include "models/eam/eam_tables.h"
#include "models/json_fields.h"
#include "model_test_util.h"

namespace distspec::test {
namespace {

using namespace models::eam;

Funcfl cu_u3() {
  const std::string path = potentials("Cu_u3.eam");
  return parse_funcfl(models::read_file_bytes(path), path);
}

Setfl cuni() {
  const std::string path = potentials("CuNi.eam.alloy");
  return parse_setfl(models::read_file_bytes(path), path);
}

TEST(EamFiles, FuncflReaderKeepsTheFileNumbers) {
  const Funcfl f = cu_u3();
  EXPECT_EQ(f.units, "metal");
  EXPECT_EQ(f.atomic_number, 29);
  EXPECT_EQ(f.mass, 63.550);
  EXPECT_EQ(f.nrho, 500);
  EXPECT_EQ(f.drho, 5.0100200400801306e-04);
  EXPECT_EQ(f.nr, 500);
  EXPECT_EQ(f.dr, 1.0000000000000009e-02);
  EXPECT_EQ(f.cut, 4.9499999999999886e+00);
  ASSERT_EQ(f.frho.size(), 500u);
  EXPECT_EQ(f.frho[0], 0.0);
  EXPECT_EQ(f.frho[1], -3.1561636903424350e-01);
  EXPECT_EQ(f.frho[5], -9.9329216586042435e-01);  // first value of the second line
  ASSERT_EQ(f.zr.size(), 500u);
  ASSERT_EQ(f.rhor.size(), 500u);
}

TEST(EamFiles, SetflReaderKeepsTheFileNumbers) {
  const Setfl f = cuni();
  EXPECT_EQ(f.units, "metal");
  EXPECT_EQ(f.elements, (std::vector<std::string>{"Ni", "Cu"}));
  EXPECT_EQ(f.atomic_numbers, (std::vector<int>{28, 29}));
  EXPECT_EQ(f.masses, (std::vector<double>{58.689, 63.546}));
  EXPECT_EQ(f.nrho, 500);
  EXPECT_EQ(f.drho, 0.5957203073046090E-02);
  EXPECT_EQ(f.dr, 0.1281429334268537E-01);
  EXPECT_EQ(f.cut, 0.6394332378000000E+01);
  EXPECT_EQ(f.frho[0][1], 0.2310449218913587E+00);
  ASSERT_EQ(f.z2r.size(), 3u);  // Ni-Ni, Cu-Ni, Cu-Cu
  for (const auto& t : f.z2r) EXPECT_EQ(t.size(), 500u);
}

// Away from the table's ends, where interpolate() falls back to lower-order differences.
TEST(EamTables, SplinePassesThroughTheGridAndFollowsSmoothFunctions) {
  const double delta = 0.01;
  std::vector<double> f(400);
  for (std::size_t k = 0; k < f.size(); ++k) f[k] = std::exp(-0.8 * k * delta) * std::cos(1.3 * k * delta);
  const Spline s = interpolate(f, delta);
  for (int m = 1; m < 400; ++m) EXPECT_EQ(spline_value(s, {m, 0.0}), f[m - 1]);
  for (double x : {0.123, 1.0051, 2.5, 3.5432}) {
    const int m = static_cast<int>(x / delta) + 1;
    const Knot k{m, x / delta + 1.0 - m};
    const double ref = std::exp(-0.8 * x) * std::cos(1.3 * x);
    const double slope = -0.8 * ref - 1.3 * std::exp(-0.8 * x) * std::sin(1.3 * x);
    EXPECT_NEAR(spline_value(s, k), ref, 1e-8);
    EXPECT_NEAR(spline_slope(s, k), slope, 1e-5);
  }
}

TEST(EamTables, SetflTablesFollowTheFileForTheModelsElementOrder) {
  const Setfl file = cuni();
  const Tables t = tables_from_setfl(file, {"Cu", "Ni"}, "CuNi.eam.alloy");
  EXPECT_EQ(t.n_species, 2);
  EXPECT_EQ(t.rhomax, 499 * file.drho);
  EXPECT_EQ(t.cutoff, file.cut);
  // Species 0 is Cu, the file's element 1; pairs in the file: Ni-Ni 0, Cu-Ni 1, Cu-Cu 2.
  for (int m : {1, 2, 77, 499}) {
    EXPECT_EQ(spline_value(t.frho[0], {m, 0.0}), file.frho[1][m - 1]);
    EXPECT_EQ(spline_value(t.frho[1], {m, 0.0}), file.frho[0][m - 1]);
    EXPECT_EQ(spline_value(t.rhor[0], {m, 0.0}), file.rhor[1][m - 1]);
    EXPECT_EQ(spline_value(t.z2r[Tables::pair_index(0, 0)], {m, 0.0}), file.z2r[2][m - 1]);
    EXPECT_EQ(spline_value(t.z2r[Tables::pair_index(1, 0)], {m, 0.0}), file.z2r[1][m - 1]);
    EXPECT_EQ(spline_value(t.z2r[Tables::pair_index(0, 1)], {m, 0.0}), file.z2r[1][m - 1]);
    EXPECT_EQ(spline_value(t.z2r[Tables::pair_index(1, 1)], {m, 0.0}), file.z2r[0][m - 1]);
  }
}

TEST(EamTables, SetflMustCoverTheModelsElements) {
  try {
    tables_from_setfl(cuni(), {"Cu", "Al"}, "CuNi.eam.alloy");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.pointer(), "/elements");
    EXPECT_EQ(e.message(), "element 'Al' is not in the setfl file 'CuNi.eam.alloy', which has Ni, Cu");
    EXPECT_EQ(e.hint(), "the model's elements (Cu, Al) must all be in the potential file");
  }
}

TEST(EamTables, FuncflTablesAreTheFileResampledWithZZPairs) {
  const Funcfl f = cu_u3();
  const Tables t = tables_from_funcfl({f});
  // pair_eam.cpp: nr = (nr - 1) dr / dr + 0.5, one point fewer than the file has.
  EXPECT_EQ(t.nr, 499);
  EXPECT_EQ(t.nrho, 499);
  EXPECT_EQ(t.cutoff, f.cut);
  for (int m : {3, 100, 250, 497}) {
    EXPECT_NEAR(spline_value(t.frho[0], {m, 0.0}), f.frho[m - 1], 1e-12);
    EXPECT_NEAR(spline_value(t.rhor[0], {m, 0.0}), f.rhor[m - 1], 1e-12);
    // 27.2 eV/Hartree * 0.529 Angstrom/Bohr (pair_eam.cpp)
    EXPECT_NEAR(spline_value(t.z2r[0], {m, 0.0}), 27.2 * 0.529 * f.zr[m - 1] * f.zr[m - 1], 1e-10);
  }
}

// Two synthetic funcfl files on different grids, from analytic functions.
struct Analytic {
  double f1, f2, z0, zk, r0, rk;
  double F(double rho) const { return -f1 * rho + f2 * rho * rho; }
  double Z(double r) const { return z0 * std::exp(-zk * r); }
  double rho(double r) const { return r0 * (1.0 + r) * std::exp(-rk * r); }
  Funcfl file(int nrho, double drho, int nr, double dr, double cut) const {
    std::vector<double> fv(nrho), zv(nr), rv(nr);
    for (int k = 0; k < nrho; ++k) fv[k] = F(k * drho);
    for (int k = 0; k < nr; ++k) zv[k] = Z(k * dr), rv[k] = rho(k * dr);
    return parse_funcfl(funcfl_text(29, 63.5, drho, fv, dr, cut, zv, rv), "synthetic.eam");
  }
};

TEST(EamTables, FuncflFilesMergeOntoTheCoarsestLongestGrid) {
  const Analytic a{3.0, 5.0, 2.0, 1.1, 0.9, 1.5}, b{2.0, 3.0, 1.5, 0.8, 1.2, 1.7};
  const Funcfl fa = a.file(300, 0.004, 600, 0.01, 5.5);
  const Funcfl fb = b.file(250, 0.005, 420, 0.013, 5.2);
  const Tables t = tables_from_funcfl({fa, fb});
  // pair_eam.cpp file2array(): the largest spacings, the largest ranges, rounded.
  EXPECT_EQ(t.dr, 0.013);
  EXPECT_EQ(t.drho, 0.005);
  EXPECT_EQ(t.nr, static_cast<int>(599 * 0.01 / 0.013 + 0.5));
  EXPECT_EQ(t.rhomax, 249 * 0.005);
  EXPECT_EQ(t.nrho, static_cast<int>(249 * 0.005 / 0.005 + 0.5));
  EXPECT_EQ(t.cutoff, 5.5);
  for (double r : {0.5, 1.77, 3.1, 5.0}) {
    const Knot k = t.r_knot(r);
    EXPECT_NEAR(spline_value(t.rhor[0], k), a.rho(r), 1e-7);
    EXPECT_NEAR(spline_value(t.rhor[1], k), b.rho(r), 1e-7);
    EXPECT_NEAR(spline_value(t.z2r[Tables::pair_index(0, 0)], k), 27.2 * 0.529 * a.Z(r) * a.Z(r), 1e-6);
    EXPECT_NEAR(spline_value(t.z2r[Tables::pair_index(0, 1)], k), 27.2 * 0.529 * a.Z(r) * b.Z(r), 1e-6);
    EXPECT_NEAR(spline_value(t.z2r[Tables::pair_index(1, 1)], k), 27.2 * 0.529 * b.Z(r) * b.Z(r), 1e-6);
  }
  double fp = 0.0;
  for (double rho : {0.1, 0.55, 1.0})
    for (int s : {0, 1}) {
      const Analytic& f = s == 0 ? a : b;
      EXPECT_NEAR(t.embedding(s, rho, &fp), f.F(rho), 1e-8);
      EXPECT_NEAR(fp, -f.f1 + 2.0 * f.f2 * rho, 1e-6);
    }
}

TEST(EamTables, EmbeddingContinuesLinearlyAboveRhomax) {
  const Tables t = tables_from_funcfl({cu_u3()});
  double fp_max = 0.0, fp = 0.0;
  const double f_max = t.embedding(0, t.rhomax, &fp_max);
  for (double extra : {0.01, 0.3}) {
    EXPECT_NEAR(t.embedding(0, t.rhomax + extra, &fp), f_max + fp_max * extra, 1e-12);
    EXPECT_EQ(fp, fp_max);
  }
  // Distances past the table use its last interval's end.
  const Knot k = t.r_knot(1e6);
  EXPECT_EQ(k.m, t.nr - 1);
  EXPECT_EQ(k.p, 1.0);
}

void expect_table_error(const std::string& text, const std::string& message) {
  try {
    parse_funcfl(text, "bad.eam");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.id(), "model.table");
    EXPECT_EQ(e.file(), "bad.eam");
    EXPECT_EQ(e.message(), message);
  }
}

TEST(EamFiles, MalformedFilesNameTheLine) {
  const std::string head = "comment\n29 63.55 3.6 FCC\n";
  expect_table_error(head + "5 0.1 5 0.1 4.0\n1 2 3 4 5\n1 2 3\n",
                     "line 5: expected 5 values for Z(r), found 3 before the end of the file");
  expect_table_error(head + "5 0.1 5 0.1 4.0\n1 2 x 4 5\n", "line 4: expected a number for F(rho), found 'x'");
  expect_table_error(head + "5 0.1 5 nan 4.0\n", "line 3: expected a number for dr, found 'nan'");
  expect_table_error(head + "4 0.1 5 0.1 4.0\n",
                     "line 3: invalid grid: nrho and nr must be at least 5, drho, dr and the cutoff positive");
  try {
    parse_setfl("a\nb\nc\n2 Cu\n", "bad.eam.alloy");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "line 4: the element line gives 2 elements but names 1");
  }
}

}  // namespace
}  // namespace distspec::test
