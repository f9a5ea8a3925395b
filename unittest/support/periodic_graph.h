// A periodic system laid out the way one LAMMPS rank holding every atom sees it: rows
// [owned | halo], the halo rows periodic images within cutoff + skin of the box faces (LAMMPS'
// ghost criterion, in fractional coordinates so triclinic boxes work too), a CSR full
// neighbour list over the owned receivers that keeps pairs up to cutoff + skin (so kernels must
// apply the cutoff themselves), and an IndexedHaloExchange mapping each halo row to its owner.
// Moves (displace, deform) keep the edges, as LAMMPS does between reneighbourings.
#pragma once

#include <array>
#include <cstddef>
#include <vector>

#include "distspec/halo/indexed_halo_exchange.h"
#include "models/model.h"

namespace distspec::test {

using Vec3 = std::array<double, 3>;
using Mat3 = std::array<Vec3, 3>;  // row-major

// Cell vectors are the columns of h. LAMMPS' triclinic cell: a = (lx, 0, 0), b = (xy, ly, 0),
// c = (xz, yz, lz).
struct Box {
  Mat3 h{};

  static Box orthorhombic(double lx, double ly, double lz) { return triclinic(lx, ly, lz, 0.0, 0.0, 0.0); }
  static Box triclinic(double lx, double ly, double lz, double xy, double xz, double yz);

  Mat3 inverse() const;
  Vec3 cartesian(const Vec3& fractional) const;   // h s
  Vec3 image_shift(const std::array<int, 3>& n) const { return cartesian({double(n[0]), double(n[1]), double(n[2])}); }
  double volume() const;
};

struct Crystal {
  Box box;
  std::vector<Vec3> positions;
  std::vector<int> species;
};

// An fcc crystal of n x n x n cubic cells of lattice constant a: 4 n^3 atoms of species 0.
Crystal fcc(double a, int n);
// Maps box and positions by the affine shear that gives the box tilts xy, xz, yz: a strained
// crystal in a triclinic cell.
void shear(Crystal& c, double xy, double xz, double yz);
// Each coordinate moved by a uniform random amount in [-amplitude, amplitude).
void jiggle(Crystal& c, double amplitude, unsigned seed);
// Species drawn uniformly from [0, n_species).
void randomize_species(Crystal& c, int n_species, unsigned seed);

// Brute force, for references: calls f(i, j, rsq) for every atom i and every periodic image of
// every atom j within `images` cells along each cell vector (an atom's own position excepted),
// rsq the squared distance from i to that image.
template <class F>
void for_each_image_pair(const Crystal& c, int images, F&& f) {
  for (std::size_t i = 0; i < c.positions.size(); ++i)
    for (std::size_t j = 0; j < c.positions.size(); ++j)
      for (int a = -images; a <= images; ++a)
        for (int b = -images; b <= images; ++b)
          for (int k = -images; k <= images; ++k) {
            if (i == j && a == 0 && b == 0 && k == 0) continue;
            const Vec3 s = c.box.image_shift({a, b, k});
            double rsq = 0.0;
            for (int d = 0; d < 3; ++d) {
              const double del = c.positions[i][d] - c.positions[j][d] - s[d];
              rsq += del * del;
            }
            f(i, j, rsq);
          }
}

class PeriodicGraph {
 public:
  PeriodicGraph(const Crystal& crystal, double cutoff, double skin);

  std::size_t n_owned() const { return n_owned_; }
  std::size_t n_rows() const { return owner_.size(); }
  std::size_t n_edges() const { return senders_.size(); }
  const Box& box() const { return box_; }
  const std::vector<double>& positions() const { return x_; }  // n_rows x 3
  const std::vector<int>& species() const { return species_; }
  std::size_t owner(std::size_t row) const { return owner_[row]; }

  // Views into this object.
  models::AtomGraph graph() const;
  // The same edges as a half list (each pair once), as LAMMPS' half lists hold them on one rank
  // that owns every atom: half_newton_off keeps the pairs with a halo row as the full list has
  // them, half_newton_on keeps one of the two mirror images of each (an owned atom i and an
  // image of k, against k and an image of i), by atom index, then by position for an atom and
  // its own image.
  // newton_on_ends (with half_newton_off): each receiver's senders ordered newton on's pairs
  // first, and their ends given (AtomGraph::newton_on_ends).
  void use_edge_list(models::EdgeList list, bool newton_on_ends = false);
  IndexedHaloExchange halo_exchange() const;

  // Moves owned atom i and every image of it by d.
  void displace(std::size_t i, const Vec3& d);
  // x -> (I + eps) x for every row, and the box with it.
  void deform(const Mat3& eps);

 private:
  Box box_;
  std::size_t n_owned_ = 0;
  std::vector<double> x_;
  std::vector<int> species_;
  std::vector<std::size_t> owner_;  // per row
  std::vector<int> receivers_, offsets_, senders_;
  std::vector<int> full_offsets_, full_senders_;  // the full list, kept for use_edge_list
  std::vector<int> newton_on_ends_;
  models::EdgeList edge_list_ = models::EdgeList::full;
};

}  // namespace distspec::test
