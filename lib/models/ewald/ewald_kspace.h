// The host side of the Ewald model's k-space, shared by its CPU and CUDA variants: the cell it
// accepts, LAMMPS' k-vectors for that cell, the charges its kernels see, and the neutrality
// check on the global total charge.
#pragma once

#include <array>
#include <vector>

#include "models/ewald/ewald.h"
#include "models/model.h"

namespace distspec::models::ewald {

// Throws model.system unless the graph has a cell that is periodic in x, y and z and orthogonal.
void check_cell(const AtomGraph& graph);

// The k-vectors of a cell, recomputed only when the cell changes (fix npt, fix deform).
class KVectors {
 public:
  // Checks the graph's cell (check_cell()) and updates the k-vectors to it.
  void update(const AtomGraph& graph, const std::array<int, 3>& kmax);

  const std::array<double, 9>& cell() const { return cell_; }
  const std::vector<double>& vectors() const { return k_; }  // K x 3, Cartesian
  std::size_t count() const { return k_.size() / 3; }
  bool changed() const { return changed_; }  // by the last update()

 private:
  bool valid_ = false;
  bool changed_ = false;
  std::array<int, 3> kmax_{};
  std::array<double, 9> cell_{};
  std::vector<double> k_;
};

// LAMMPS ewald.cpp's k-vectors for an orthogonal box of edge lengths `lengths` under
// kspace_modify kmax/ewald kmax (setup() and coeffs()), Cartesian, K x 3, in LAMMPS' order.
std::vector<double> lammps_k_vectors(const std::array<double, 3>& lengths, const std::array<int, 3>& kmax);

// Per row: the row's charge for atoms of this model's species, 0 for the others (NULL types).
// Throws model.system when the graph carries no charges.
void model_charges(const AtomGraph& graph, std::vector<double>& out);

// Throws model.system when |total_charge| exceeds kNeutralityTolerance.
void check_neutral(double total_charge);

}  // namespace distspec::models::ewald
