#include "periodic_graph.h"

#include <cmath>
#include <random>

namespace distspec::test {
namespace {

Vec3 mul(const Mat3& m, const Vec3& v) {
  return {m[0][0] * v[0] + m[0][1] * v[1] + m[0][2] * v[2], m[1][0] * v[0] + m[1][1] * v[1] + m[1][2] * v[2],
          m[2][0] * v[0] + m[2][1] * v[1] + m[2][2] * v[2]};
}

Mat3 mul(const Mat3& a, const Mat3& b) {
  Mat3 c{};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 3; ++k) c[i][j] += a[i][k] * b[k][j];
  return c;
}

double norm(const Vec3& v) { return std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]); }

}  // namespace

Box Box::triclinic(double lx, double ly, double lz, double xy, double xz, double yz) {
  Box b;
  b.h = {Vec3{lx, xy, xz}, Vec3{0.0, ly, yz}, Vec3{0.0, 0.0, lz}};
  return b;
}

double Box::volume() const {
  return h[0][0] * (h[1][1] * h[2][2] - h[1][2] * h[2][1]) - h[0][1] * (h[1][0] * h[2][2] - h[1][2] * h[2][0]) +
         h[0][2] * (h[1][0] * h[2][1] - h[1][1] * h[2][0]);
}

Mat3 Box::inverse() const {
  const double d = volume();
  Mat3 inv{};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      // cofactor of h[j][i]
      const int r0 = (j + 1) % 3, r1 = (j + 2) % 3, c0 = (i + 1) % 3, c1 = (i + 2) % 3;
      inv[i][j] = (h[r0][c0] * h[r1][c1] - h[r0][c1] * h[r1][c0]) / d;
    }
  return inv;
}

Vec3 Box::cartesian(const Vec3& s) const { return mul(h, s); }

Crystal fcc(double a, int n) {
  Crystal c;
  c.box = Box::orthorhombic(a * n, a * n, a * n);
  const double basis[4][3] = {{0, 0, 0}, {0.5, 0.5, 0}, {0.5, 0, 0.5}, {0, 0.5, 0.5}};
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      for (int k = 0; k < n; ++k)
        for (const auto& b : basis) c.positions.push_back({a * (i + b[0]), a * (j + b[1]), a * (k + b[2])});
  c.species.assign(c.positions.size(), 0);
  return c;
}

void shear(Crystal& c, double xy, double xz, double yz) {
  const Mat3& h = c.box.h;
  const Box target = Box::triclinic(h[0][0], h[1][1], h[2][2], xy, xz, yz);
  const Mat3 map = mul(target.h, c.box.inverse());
  for (Vec3& x : c.positions) x = mul(map, x);
  c.box = target;
}

void jiggle(Crystal& c, double amplitude, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-amplitude, amplitude);
  for (Vec3& x : c.positions)
    for (double& v : x) v += u(rng);
}

void randomize_species(Crystal& c, int n_species, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> u(0, n_species - 1);
  for (int& s : c.species) s = u(rng);
}

PeriodicGraph::PeriodicGraph(const Crystal& crystal, double cutoff, double skin)
    : box_(crystal.box), n_owned_(crystal.positions.size()) {
  const double reach = cutoff + skin;
  const Mat3 inv = box_.inverse();
  // Owned atoms wrapped into the cell, as LAMMPS keeps them.
  std::vector<Vec3> frac(n_owned_);
  for (std::size_t i = 0; i < n_owned_; ++i) {
    frac[i] = mul(inv, crystal.positions[i]);
    for (double& s : frac[i]) s -= std::floor(s);
    const Vec3 x = box_.cartesian(frac[i]);
    x_.insert(x_.end(), x.begin(), x.end());
    owner_.push_back(i);
  }
  species_ = crystal.species;

  // Ghost shell: an image is kept when each fractional coordinate lies within reach of the
  // cell, measured across the face (reach / face distance = reach * |row k of h^-1|).
  Vec3 shell{};
  std::array<int, 3> nmax{};
  for (int k = 0; k < 3; ++k) {
    shell[k] = reach * norm(inv[k]);
    nmax[k] = static_cast<int>(std::ceil(shell[k]));
  }
  for (int a = -nmax[0]; a <= nmax[0]; ++a)
    for (int b = -nmax[1]; b <= nmax[1]; ++b)
      for (int c = -nmax[2]; c <= nmax[2]; ++c) {
        if (a == 0 && b == 0 && c == 0) continue;
        const Vec3 shift = box_.image_shift({a, b, c});
        for (std::size_t i = 0; i < n_owned_; ++i) {
          const Vec3 s{frac[i][0] + a, frac[i][1] + b, frac[i][2] + c};
          bool inside = true;
          for (int k = 0; k < 3; ++k) inside = inside && s[k] >= -shell[k] && s[k] < 1.0 + shell[k];
          if (!inside) continue;
          for (int k = 0; k < 3; ++k) x_.push_back(x_[3 * i + k] + shift[k]);
          species_.push_back(species_[i]);
          owner_.push_back(i);
        }
      }

  // Full neighbour list of the owned atoms, skin included.
  offsets_.push_back(0);
  for (std::size_t i = 0; i < n_owned_; ++i) {
    receivers_.push_back(static_cast<int>(i));
    for (std::size_t j = 0; j < n_rows(); ++j) {
      if (j == i) continue;
      double rsq = 0.0;
      for (int k = 0; k < 3; ++k) rsq += (x_[3 * i + k] - x_[3 * j + k]) * (x_[3 * i + k] - x_[3 * j + k]);
      if (rsq < reach * reach) senders_.push_back(static_cast<int>(j));
    }
    offsets_.push_back(static_cast<int>(senders_.size()));
  }
}

models::AtomGraph PeriodicGraph::graph() const {
  models::AtomGraph g =
      models::csr_graph(n_owned_, n_rows() - n_owned_, x_.data(), species_.data(), receivers_, offsets_, senders_);
  g.edge_list = edge_list_;
  g.newton_on_ends = newton_on_ends_.empty() ? nullptr : newton_on_ends_.data();
  return g;
}

void PeriodicGraph::use_edge_list(models::EdgeList list, bool newton_on_ends) {
  if (full_offsets_.empty()) {
    full_offsets_ = offsets_;
    full_senders_ = senders_;
  }
  edge_list_ = list;
  offsets_.assign(1, 0);
  senders_.clear();
  // Whether the pair (i, j) is listed under receiver i: pairs of owned atoms under the lower one.
  // Whether newton on's list holds the pair of receiver i and halo row j.
  auto newton_on_keeps = [&](std::size_t i, std::size_t j) {
    const std::size_t k = owner_[j];
    if (k != i) return i < k;
    for (int d = 2; d >= 0; --d)
      if (x_[3 * j + d] != x_[3 * i + d]) return x_[3 * j + d] > x_[3 * i + d];
    return false;
  };
  auto keep = [&](std::size_t i, std::size_t j) {
    if (list == models::EdgeList::full) return true;
    if (j < n_owned_) return i < j;
    return list == models::EdgeList::half_newton_off || newton_on_keeps(i, j);
  };
  newton_on_ends_.clear();
  for (std::size_t r = 0; r < receivers_.size(); ++r) {
    const std::size_t i = static_cast<std::size_t>(receivers_[r]);
    std::vector<int> later;
    for (int e = full_offsets_[r]; e < full_offsets_[r + 1]; ++e) {
      const std::size_t j = static_cast<std::size_t>(full_senders_[e]);
      if (!keep(i, j)) continue;
      if (newton_on_ends && j >= n_owned_ && !newton_on_keeps(i, j)) later.push_back(full_senders_[e]);
      else senders_.push_back(full_senders_[e]);
    }
    if (newton_on_ends) newton_on_ends_.push_back(static_cast<int>(senders_.size()));
    senders_.insert(senders_.end(), later.begin(), later.end());
    offsets_.push_back(static_cast<int>(senders_.size()));
  }
}

IndexedHaloExchange PeriodicGraph::halo_exchange() const {
  return IndexedHaloExchange(n_owned_, std::vector<std::size_t>(owner_.begin() + n_owned_, owner_.end()));
}

void PeriodicGraph::displace(std::size_t i, const Vec3& d) {
  for (std::size_t row = 0; row < n_rows(); ++row)
    if (owner_[row] == i)
      for (int k = 0; k < 3; ++k) x_[3 * row + k] += d[k];
}

void PeriodicGraph::deform(const Mat3& eps) {
  Mat3 f = eps;
  for (int k = 0; k < 3; ++k) f[k][k] += 1.0;
  for (std::size_t row = 0; row < n_rows(); ++row) {
    const Vec3 x = mul(f, Vec3{x_[3 * row], x_[3 * row + 1], x_[3 * row + 2]});
    for (int k = 0; k < 3; ++k) x_[3 * row + k] = x[k];
  }
  box_.h = mul(f, box_.h);
}

}  // namespace distspec::test
