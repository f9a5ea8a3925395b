// DFT-D3 dispersion (Grimme, Antony, Ehrlich, Krieg, J. Chem. Phys. 132, 154104 (2010)), its
// two-body part as LAMMPS `pair_style dispersion/d3` (EXTRA-PAIR) and s-dftd3 compute it:
//   E = 1/2 sum_i sum_{j != i, r_ij < cutoff} e_ij,   e_ij = -sum_{n = 6, 8} s_n C_n^ij f_n(r_ij) / r_ij^n,
//   C6^ij = sum_ab w_a(CN_i) w_b(CN_j) C6_ref^ij(a, b),   C8^ij = 3 C6^ij q_i q_j,
//   w_a(CN) = exp(-4 (CN - CN_a)^2) / sum_b exp(-4 (CN - CN_b)^2),
//   CN_i = sum_{j != i, r_ij < cn_cutoff} 1 / (1 + exp(-16 (rcov_i + rcov_j) / r_ij + 16)),
// with the damping f_n of the functional (dftd3_reference.h). The three-body (ATM) term is not
// computed, as in LAMMPS' style. A step runs in three passes over a full edge list, each writing
// its receivers' rows only, and two halo refreshes between them, which the spec's policy makes
// (nvalchemi's model_dftd3.json, the default spec: halo, forward reads):
//   coordination numbers CN_i               owned rows
//   dispatch.before_gather(CN)              halo rows get their owners' CN
//   pair terms                              energy, the C6 part of the forces and virial, dE/dCN_i
//   dispatch.before_gather(dE/dCN)          halo rows get their owners' dE/dCN
//   coordination-number terms               forces and virial of (dE/dCN_i + dE/dCN_j) dCN/dr_ij
// Per pair: half the energy and half the virial to each atom (the receiver takes its half from
// its own edge), as dispersion/d3's ev_tally. No op is called through the dispatcher: the spec
// adapts none (custom_ops is empty).
//
// Parameters (metal units only; the model cutoff is the dispersion cutoff):
//   {"damping": "bj" | "zero" | "bjm" | "zerom", "functional": "pbe", "cn_cutoff": 10.0,
//    and optional overrides of the functional's values: "s6", "s8", "a1", "a2" (Angstrom),
//    "rs6", "rs8", "alpha", "beta" (1/Angstrom)}
// "functional" names any functional s-dftd3 parametrises for that damping (lowercase, hyphens
// ignored, s-dftd3's aliases: "b3-lyp" = "b3lyp"); without it every parameter the damping uses
// must be given. "cn_cutoff" defaults to the model cutoff and may not exceed it.
//   "c6_fallback": "none" (default) | "nearest_reference". Where an atom's CN lies far beyond
// its references (a metal's CN of 12 against copper's 0 and 0.96), the unnormalised Gaussian
// weights of a pair, exp(-4 [(CN_i - CN_a)^2 + (CN_j - CN_b)^2]), sum to less than 1e-99. "none"
// normalises them all the same (the shift of their exponents keeps that exact), as s-dftd3 and
// nvalchemi's DFT-D3 kernels do; "nearest_reference" takes the C6 of the nearest pair of
// references and no CN derivative there, as Grimme's dftd3 program and LAMMPS' dispersion/d3
// do. The two differ for pairs with such an atom whose partner's weights are spread (water on
// copper), by up to a few per cent of those pairs' C6.
#pragma once

#include <array>
#include <memory>
#include <vector>

#include "models/dftd3/dftd3_reference.h"
#include "models/model.h"

namespace distspec::models {
struct ModelFile;
}

namespace distspec::models::dftd3 {

// What a step needs, per model element and per pair of model elements (species s, t).
struct Tables {
  FunctionalParameters damping{};
  double cutoff = 0.0, cn_cutoff = 0.0;
  bool nearest_reference_fallback = false;  // "c6_fallback": "nearest_reference"
  struct Element {
    double rcov = 0.0, r4r2 = 0.0;
    int n_references = 0;
    std::array<double, kMaxReferences> cn{};
  };
  std::vector<Element> elements;
  struct Pair {
    double rcov = 0.0;    // rcov_s + rcov_t
    double r0 = 0.0;      // zero damping: r0ab; rational: R0 = a1 sqrt(C8/C6) + a2
    double c8_over_c6 = 0.0;
    std::array<double, kMaxReferences * kMaxReferences> c6{};  // eV A^6, [reference of s][of t]
  };
  std::vector<Pair> pairs;  // s * n_species + t

  int n_species() const { return static_cast<int>(elements.size()); }
  const Pair& pair(int s, int t) const { return pairs[static_cast<std::size_t>(s * n_species() + t)]; }
};

// The tables for a model file (errors point into it: /parameters/functional, /elements/2, ...).
Tables load_tables(const ModelFile& file);

std::unique_ptr<Model> make_model(const ModelFile& file, Device device = Device::cpu);

// dftd3_cuda.cu (builds with CUDA only): the model on device rows.
std::unique_ptr<Model> make_cuda_model(ModelInfo info, Tables tables);

}  // namespace distspec::models::dftd3
