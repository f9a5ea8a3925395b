// The host side of the Ewald model's k-space, shared by its CPU and CUDA variants and, where PME
// computes alike, by the PME model: the cell it accepts, the spec's adapters of the ops that sum
// over every atom, LAMMPS' k-vectors for that cell, the charges its kernels see, and the
// neutrality check on the global total charge.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "distspec/spec/mlip_spec.h"
#include "models/ewald/ewald.h"
#include "models/model.h"
#include "models/model_file.h"

namespace distspec::models::ewald {

// Throws model.system unless the graph has a cell that is periodic in x, y and z; `model` prefixes
// the message ("ewald: ..."), `method` names the sum in the hint ("Ewald summation").
void check_periodic_cell(const AtomGraph& graph, const char* model, const char* method);
// check_periodic_cell, and an orthogonal cell: this model's k-vectors are those of a rectangular box.
void check_cell(const AtomGraph& graph);

// An op that sums over every atom of every rank (a structure factor, a charge mesh), as the spec
// must adapt it: `sliced_args` slice_owned, or each halo image would count as an atom, and
// `summed_outputs` all_reduce_sum, or each rank would see only its own atoms' `sum`.
struct GlobalSumOp {
  const char* op;
  std::vector<int> sliced_args;
  std::vector<int> summed_outputs;
  const char* sum;  // what the all-reduce completes ("structure factor"; "charges")
};
// Throws distspec::Error (id value, pointer into the spec) unless the spec's first adapter of
// `rule.op` does so; `missing` says what goes wrong without one, `hint` how to adapt it.
void check_global_sum_adapter(const MLIPSpec& spec, const GlobalSumOp& rule, const std::string& missing,
                              const std::string& hint);

// A k-space model's (Ewald's, PME's) reading of its file: the parameters, inline only, by the
// model's `parse`, and the file's spec checked by `check_spec`. The model reads the host's charges
// and sums over periodic images: `info` says so.
template <class Params>
Params read_kspace_params(const ModelFile& file, Params (*parse)(const Json&, const std::string&, int, double),
                          void (*check_spec)(const MLIPSpec&), ModelInfo& info) {
  info.reads_charges = true;
  info.needs_periodic_cell = true;
  require_inline_parameters(file, file.architecture);
  Params params = parse(file.parameters, file.units, static_cast<int>(file.elements.size()), file.cutoff);
  check_file_spec(file, check_spec);
  return params;
}

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
