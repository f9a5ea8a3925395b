// Independent evaluation of EAM functions straight from a potential file's raw table (cubic
// Lagrange interpolation through the four nearest grid values), for checking the tables the
// model builds (LAMMPS' splines) and the energies it computes. The two interpolations differ
// by their truncation errors (larger in LAMMPS' end intervals, which fall back to low-order
// differences): ~1e-6 relative on the shipped files' grids.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace distspec::test {

// f[k] = f(k delta); value (or derivative) of the cubic through the four grid points nearest x.
inline double raw_table(const std::vector<double>& f, double delta, double x, bool derivative = false) {
  const int n = static_cast<int>(f.size());
  const double t = x / delta;
  const int k0 = std::clamp(static_cast<int>(std::floor(t)) - 1, 0, n - 4);
  double sum = 0.0;
  for (int a = 0; a < 4; ++a) {
    double l = 1.0, dl = 0.0;
    for (int b = 0; b < 4; ++b) {
      if (b == a) continue;
      const double num = t - (k0 + b), den = double(a - b);
      // d/dt of a product: sum over factors of (1/den) * the others
      dl = dl * num / den + l / den;
      l *= num / den;
    }
    sum += f[static_cast<std::size_t>(k0 + a)] * (derivative ? dl / delta : l);
  }
  return sum;
}

// A funcfl file's text (DYNAMO format, 5 values per line) from tables already sampled.
inline std::string funcfl_text(int z, double mass, double drho, const std::vector<double>& frho, double dr, double cut,
                               const std::vector<double>& zr, const std::vector<double>& rhor) {
  auto block = [](const std::vector<double>& v) {
    std::string s;
    char buf[40];
    for (std::size_t i = 0; i < v.size(); ++i) {
      std::snprintf(buf, sizeof buf, "%.16e", v[i]);
      s += buf;
      s += (i % 5 == 4 || i + 1 == v.size()) ? "\n" : " ";
    }
    return s;
  };
  char head[200];
  std::snprintf(head, sizeof head, "%d %.3f 3.6 FCC\n%zu %.16e %zu %.16e %.16e\n", z, mass, frho.size(), drho,
                zr.size(), dr, cut);
  return "synthetic test potential UNITS: metal\n" + std::string(head) + block(frho) + block(zr) + block(rhor);
}

}  // namespace distspec::test
