// Ewald summation of point charges in a periodic orthogonal box, the sums of LAMMPS
// `pair_style coul/long` + `kspace_style ewald` (pair_coul_long.cpp, ewald.cpp):
//
//   E = E_real + E_recip + E_self + E_background, all times the Coulomb constant C
//   E_real  = sum over pairs i<j, r_ij < cutoff, of q_i q_j erfc(alpha r_ij) / r_ij
//   E_recip = sum over k in half of k-space of (4 pi / V) exp(-k^2 / 4 alpha^2) / k^2 |S(k)|^2,
//             S(k) = sum_i q_i exp(i k.r_i)
//   E_self  = -alpha / sqrt(pi) sum_i q_i^2
//   E_background = -pi Q^2 / (2 alpha^2 V), Q = sum_i q_i: only for |Q| <= 1e-5 (LAMMPS'
//             kspace.cpp threshold); a larger net charge is refused (model.system error).
// The k-vectors are LAMMPS' for `kspace_modify kmax/ewald kx ky kz` (ewald.cpp coeffs()):
// k = 2 pi (nx / Lx, ny / Ly, nz / Lz), half of k-space (nx > 0, or nx = 0 and ny > 0, or
// nx = ny = 0 and nz > 0), |ny| <= ky and |nz| <= kz off the axes, |n| <= max(kx, ky, kz) on
// them, and |k|^2 <= 1.00001 max_d (2 pi k_d / L_d)^2.
//
// Parameters ("parameters" of the model file; "cutoff" of the file is the real-space cutoff):
//   {"alpha": 0.3,                 the splitting parameter (LAMMPS g_ewald), 1/distance
//    "kmax": [7, 7, 7],            kx ky kz as kspace_modify kmax/ewald
//    "accuracy": 1e-5,             the relative RMS force accuracy of kspace_style ewald ACC: alpha
//                                  and kmax, where not given, by LAMMPS' own rule (ewald_accuracy.h):
//                                  alpha at the first step of each run from the model's atom count,
//                                  C sum q^2 (global sums), the cutoff and the box; kmax then and
//                                  whenever the box changes. Given alpha / kmax are kept, as
//                                  kspace_modify gewald / kmax/ewald keep theirs. Either accuracy,
//                                  or alpha and kmax, must be given; the k-vectors of a derived kmax
//                                  follow the rules below as a given one does
//    "erfc": "exact",              "exact": std::erfc and its exact derivative (default);
//                                  "lammps_polynomial": the Abramowitz & Stegun 7.1.26
//                                  polynomial that coul/long evaluates with pair_modify table 0
//                                  (|error| < 1.5e-7), to reproduce LAMMPS to the last digits
//    "coulomb_constant": 14.399645 optional; default LAMMPS' qqr2e of the file's units
//                                  (update.cpp): C = 1 / (4 pi eps0) in energy x distance / charge^2
//   }
// Charges are the host's per-row charges (LAMMPS atom q), promoted by the spec's shard_fields;
// atoms of no species of this model carry no charge here.
//
// Ops, all fp64; device cpu, and cuda in builds with CUDA (ewald_cuda.cu: every tensor on the
// device):
//   alchemiops::_ewald_compute_partial_structure_factors     (nvalchemi's stage 1)
//     args: 0 positions (n x 3), 1 charges (n), 2 cell (3 x 3, rows a b c), 3 k-vectors (K x 3,
//           Cartesian), 4 alpha (1)
//     outs: 0 real part, 1 imaginary part of the Green-weighted structure factor
//           G(k) sum_i q_i exp(i k.r_i), G(k) = 8 pi / V exp(-k^2 / 4 alpha^2) / k^2 (K each),
//           2 total charge (1); written, not added into
//     Under ewald_halo.json args 0 and 1 are slice_owned and every output all_reduce_sum: each
//     rank sums its owned atoms once, the all-reduce makes the sums global. The model's spec,
//     potentials/specs/ewald_halo.json, is nvalchemi's own, as the released wheel saves it: it
//     also adapts the batched and slab-correction kernels (family_ops), which a single periodic
//     system never calls, so they stay unbound and need no kernel here.
//   distspec_ewald::reciprocal_from_structure_factors
//     args: 0..4 as above, 5 real part, 6 imaginary part, 7 total charge (the global sums)
//     outs: 0 energy rows (n), 1 forces (n x 3), 2 virial (6), 3 per-row virial (n x 6); added
//           into; either virial may be an empty tensor. The k-space, self and background energy
//           of each row's atom, its k-space force and its share of the k-space virial (LAMMPS'
//           eatom / vatom of ewald.cpp).
//   distspec_ewald::real_space
//     args: the five edge-list arguments (models/edge_kernel.h), 5 charges (n_rows)
//     outs: the PairOutputs layout with virial (edge_kernel.h): per edge j -> i half the pair
//           energy, the whole pair force and half the pair virial on the receiver.
// Every output lands on owned rows only, exact there: the spec may declare forces owned_only.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "distspec/ops/op_registry.h"
#include "distspec/spec/mlip_spec.h"
#include "models/edge_kernel.h"
#include "models/json_fields.h"
#include "models/model.h"

namespace distspec::models {
struct ModelFile;
}

namespace distspec::models::ewald {

// The rest of nvalchemi's Ewald family, which its spec adapts: no kernel here.
inline constexpr char kBatchStructureFactorsOp[] = "alchemiops::_batch_ewald_compute_partial_structure_factors";
inline constexpr char kSlabMomentsOp[] = "alchemiops::_slab_compute_partial_moments";
inline constexpr char kBatchSlabMomentsOp[] = "alchemiops::_batch_slab_compute_partial_moments";

// LAMMPS kspace.cpp qsum_qsq(): a larger net charge stops the run ("not charge neutral").
inline constexpr double kNeutralityTolerance = 1e-5;

enum class Erfc { exact, lammps_polynomial };

struct Params {
  int n_species = 0;
  double alpha = 0.0;             // splitting parameter, 1/distance (0 until derived from accuracy)
  double cutoff = 0.0;            // real-space cutoff
  double cutsq = 0.0;
  std::array<int, 3> kmax{};      // kx ky kz (0 0 0 until derived from accuracy)
  Erfc erfc = Erfc::exact;
  double coulomb_constant = 0.0;  // C, LAMMPS qqrd2e
  // "accuracy" (LAMMPS kspace_style ewald's relative accuracy), 0 when not given; with it, the
  // model derives what the file leaves out (ewald_accuracy.h) before each step.
  double accuracy = 0.0;
  double two_charge_force = 0.0;   // LAMMPS two_charge_force of the units (ewald_accuracy.h)
  double accuracy_absolute = 0.0;  // accuracy x two_charge_force, force units
  bool derive_alpha = false;       // accuracy given, alpha not
  bool derive_kmax = false;        // accuracy given, kmax not
};

// Reads the "parameters" object (errors point under /parameters; the caller adds the file).
Params parse_params(const Json& parameters, const std::string& units, int n_species, double cutoff);

// The CUDA kernels' state (ewald_cuda_state.cuh): the constants, and scratch on the device.
struct DeviceParams;

// On the CPU every op reads the constants and the call's listing and threads; the structure
// factors need the threads only (its constants may be null).
using EwaldOp = Op<EdgeOpState<Params>, DeviceParams>;
inline constexpr EwaldOp kStructureFactorsOp{"alchemiops::_ewald_compute_partial_structure_factors"};
inline constexpr EwaldOp kReciprocalOp{"distspec_ewald::reciprocal_from_structure_factors"};
inline constexpr EwaldOp kRealSpaceOp{"distspec_ewald::real_space"};

// LAMMPS' qqr2e for a units style (update.cpp); throws for a name it does not know.
double coulomb_constant_of(const std::string& units);

// Throws distspec::Error (pointer into the spec) unless the spec adapts the structure-factor op
// as ewald_halo.json does: without slice_owned each halo image would count as an atom, without
// all_reduce_sum other ranks' atoms would be missing.
void check_spec(const MLIPSpec& spec);

void register_ops(OpRegistry& registry);
std::unique_ptr<Model> make_model(const ModelFile& file, Device device = Device::cpu);

// ewald_cuda.cu (builds with CUDA only).
void register_cuda_ops(OpRegistry& registry);
std::unique_ptr<Model> make_cuda_model(ModelInfo info, Params params);

}  // namespace distspec::models::ewald
