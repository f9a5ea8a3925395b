#include "models/ewald/ewald_kspace.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "distspec/error.h"
#include "models/ewald/ewald_math.h"
#include "models/model_error.h"

namespace distspec::models::ewald {
namespace {

[[noreturn]] void refuse(const std::string& message, const std::string& hint) {
  throw Error(model_error_id::system, "", "ewald: " + message, hint);
}

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.8g", v);
  return text;
}

}  // namespace

void check_periodic_cell(const AtomGraph& graph, const char* model, const char* method) {
  auto refuse_as = [&](const std::string& message, const std::string& hint) {
    throw Error(model_error_id::system, "", std::string(model) + ": " + message, hint);
  };
  if (!graph.has_cell)
    refuse_as("the host gave no simulation cell", std::string(method) + " needs the periodic box (AtomGraph::cell)");
  static const char* axis = "xyz";
  for (int d = 0; d < 3; ++d)
    if (!graph.periodic[d])
      refuse_as(std::string("the box is not periodic in ") + axis[d],
                std::string(method) + " sums over periodic images: use boundary p p p");
}

void check_cell(const AtomGraph& graph) {
  check_periodic_cell(graph, "ewald", "Ewald summation");
  const std::array<double, 9>& h = graph.cell;
  // Rows a, b, c: an orthogonal box has a = (lx, 0, 0), b = (0, ly, 0), c = (0, 0, lz).
  if (h[1] != 0.0 || h[2] != 0.0 || h[3] != 0.0 || h[5] != 0.0 || h[6] != 0.0 || h[7] != 0.0)
    refuse("the box is triclinic (tilts xy " + number(h[3]) + ", xz " + number(h[6]) + ", yz " + number(h[7]) + ")",
           "this Ewald model supports orthogonal boxes only; use an orthogonal box, or pair_style coul/long with "
           "kspace_style ewald for triclinic ones");
}

void check_global_sum_adapter(const MLIPSpec& spec, const GlobalSumOp& rule, const std::string& missing,
                              const std::string& hint) {
  const auto& ops = spec.core.custom_ops;
  std::size_t i = 0;
  while (i < ops.size() && ops[i].op != rule.op) ++i;
  if (i == ops.size())
    throw Error(error_id::value, "/core/custom_ops",
                std::string("the spec has no adapter for op '") + rule.op + "': " + missing, hint);
  const OpAdapter& adapter = ops[i];
  const std::string at = "/core/custom_ops/" + std::to_string(i);
  for (int pos : rule.sliced_args) {
    const auto t = adapter.arg_transforms.find(pos);
    if (t == adapter.arg_transforms.end() || t->second != ArgTransform::slice_owned)
      throw Error(error_id::value, at + "/arg_transforms",
                  std::string("op '") + rule.op + "' needs argument " + std::to_string(pos) +
                      " slice_owned, or every halo image of an atom would count as another atom",
                  hint);
  }
  for (int pos : rule.summed_outputs) {
    const auto t = adapter.output_transforms.find(pos);
    if (t == adapter.output_transforms.end() || t->second != OutputTransform::all_reduce_sum)
      throw Error(error_id::value, at + "/output_transforms",
                  std::string("op '") + rule.op + "' needs output " + std::to_string(pos) +
                      " all_reduce_sum, or each rank would see only its own atoms' " + rule.sum,
                  hint);
  }
}

void KVectors::update(const AtomGraph& graph, const std::array<int, 3>& kmax) {
  check_cell(graph);
  const std::array<double, 9>& h = graph.cell;
  changed_ = !valid_ || h != cell_ || kmax != kmax_;
  if (!changed_) return;
  cell_ = h;
  kmax_ = kmax;
  k_ = lammps_k_vectors({h[0], h[4], h[8]}, kmax);
  valid_ = true;
}

std::vector<double> lammps_k_vectors(const std::array<double, 3>& lengths, const std::array<int, 3>& kmax) {
  // ewald.cpp setup(): unitk, the largest kmax, and gsqmx, the |k|^2 bound (with its 1.00001
  // margin). The expressions are LAMMPS' own, so a vector on the bound is kept or dropped alike.
  double unitk[3];
  for (int d = 0; d < 3; ++d) unitk[d] = 2.0 * kPi / lengths[d];
  const int kx = kmax[0], ky = kmax[1], kz = kmax[2];
  const int kmax_all = std::max({kx, ky, kz});
  double gsqmx = 0.0;
  for (int d = 0; d < 3; ++d) gsqmx = std::max(gsqmx, unitk[d] * unitk[d] * kmax[d] * kmax[d]);
  gsqmx *= 1.00001;

  std::vector<double> k;
  auto add = [&](int n0, int n1, int n2) {
    k.insert(k.end(), {unitk[0] * n0, unitk[1] * n1, unitk[2] * n2});
  };
  // ewald.cpp coeffs(): (m,0,0), (0,m,0), (0,0,m) up to the largest kmax ...
  for (int m = 1; m <= kmax_all; ++m)
    for (int d = 0; d < 3; ++d)
      if ((m * unitk[d]) * (m * unitk[d]) <= gsqmx) add(d == 0 ? m : 0, d == 1 ? m : 0, d == 2 ? m : 0);
  // ... (k,+-l,0) ...
  for (int a = 1; a <= kx; ++a)
    for (int b = 1; b <= ky; ++b)
      if ((unitk[0] * a) * (unitk[0] * a) + (unitk[1] * b) * (unitk[1] * b) <= gsqmx) {
        add(a, b, 0);
        add(a, -b, 0);
      }
  // ... (0,l,+-m) ...
  for (int b = 1; b <= ky; ++b)
    for (int c = 1; c <= kz; ++c)
      if ((unitk[1] * b) * (unitk[1] * b) + (unitk[2] * c) * (unitk[2] * c) <= gsqmx) {
        add(0, b, c);
        add(0, b, -c);
      }
  // ... (k,0,+-m) ...
  for (int a = 1; a <= kx; ++a)
    for (int c = 1; c <= kz; ++c)
      if ((unitk[0] * a) * (unitk[0] * a) + (unitk[2] * c) * (unitk[2] * c) <= gsqmx) {
        add(a, 0, c);
        add(a, 0, -c);
      }
  // ... (k,+-l,+-m).
  for (int a = 1; a <= kx; ++a)
    for (int b = 1; b <= ky; ++b)
      for (int c = 1; c <= kz; ++c)
        if ((unitk[0] * a) * (unitk[0] * a) + (unitk[1] * b) * (unitk[1] * b) + (unitk[2] * c) * (unitk[2] * c) <=
            gsqmx) {
          add(a, b, c);
          add(a, -b, c);
          add(a, b, -c);
          add(a, -b, -c);
        }
  return k;
}

void model_charges(const AtomGraph& graph, std::vector<double>& out) {
  if (!graph.charges)
    refuse("the host gave no charges",
           "Ewald summation reads per-atom charges: use an atom style with charges (charge, full) and a spec whose "
           "shard_fields promote \"charges\"");
  const std::size_t n = graph.n_rows();
  out.resize(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = (graph.species && graph.species[i] < 0) ? 0.0 : graph.charges[i];
}

void check_neutral(double total_charge) {
  if (std::abs(total_charge) <= kNeutralityTolerance) return;
  refuse("the system is not charge neutral: net charge " + number(total_charge) + " (sum of q over the model's atoms, "
             "allowed |sum q| <= " + number(kNeutralityTolerance) + ")",
         "Ewald summation here has no neutralising background for a net charge: give the atoms charges that sum to "
         "zero (set ... charge)");
}

}  // namespace distspec::models::ewald
