// Smooth particle-mesh Ewald (Essmann et al., J. Chem. Phys. 103, 8577 (1995)) of point charges
// in a periodic cell, orthogonal or triclinic, run under nvalchemi's own PME spec
// (potentials/specs/pme_halo.json, as the released wheel saves it):
//
//   E = E_real + E_recip + E_self + E_background, all times the Coulomb constant C
//   E_real  = sum over pairs i<j, r_ij < cutoff, of q_i q_j erfc(alpha r_ij) / r_ij
//             (the Ewald model's real-space kernel, distspec_ewald::real_space)
//   E_recip = 1 / (2 pi V) sum over m != 0 of exp(-pi^2 m^2 / alpha^2) / m^2 B(m) |F(Q)(m)|^2,
//             Q the charges spread onto a K1 x K2 x K3 mesh of the cell by cardinal B-splines of
//             order p (p points per axis), B(m) their Euler exponential moduli, m = m1 a* + m2 b*
//             + m3 c* the reciprocal lattice vectors
//   E_self  = -alpha / sqrt(pi) sum_i q_i^2
//   E_background = -pi Q^2 / (2 alpha^2 V), Q = sum_i q_i: the neutralising background of a
//             charged system, as LAMMPS' kspace styles add it (kspace.cpp warns, pppm.cpp adds it)
// Each atom's share of E_recip is q_i phi(r_i) / 2, phi the mesh potential interpolated by the
// same B-splines; its force is -q_i grad phi(r_i) (analytic B-spline derivatives); the virial is
// the k-space sum of E(m) (delta_ab - 2 (1 + pi^2 m^2 / alpha^2) m_a m_b / m^2), and the
// per-atom virial its interpolated mesh share (six more inverse FFTs, only when asked for).
//
// Parameters ("parameters" of the model file; "cutoff" of the file is the real-space cutoff):
//   {"accuracy": 1e-5,   the relative RMS force accuracy of kspace_style pppm ACC: alpha and the
//                        mesh, where not given, by LAMMPS pppm's own rule (pme_accuracy.h), at
//                        the first step of each run
//    "alpha": 0.3,       the splitting parameter (kspace_modify gewald)
//    "mesh": [32,32,32], K1 K2 K3 along a, b, c (kspace_modify mesh); raised to the next size
//                        of factors 2, 3 and 5, as LAMMPS raises its grid
//    "order": 5,         B-spline order, 2 to 7 (kspace_modify order; default 5 as LAMMPS')
//    "erfc": "exact",    "exact" or "lammps_polynomial" (the Ewald model's, ewald.h)
//    "coulomb_constant": 14.399645   optional; default LAMMPS' qqr2e of the file's units
//   }
// Either accuracy, or alpha and mesh, must be given.
//
// The mesh is global and replicated, as the spec says: spline_spread runs on each rank's owned
// atoms (slice_owned) and its output is all_reduce_sum with replicated_consumer, so every rank
// holds the whole charge mesh and runs the same FFTs. Unlike LAMMPS' pppm, which distributes its
// mesh over ranks, that costs each rank a full-mesh all-reduce and a full-mesh FFT per step
// (bench/pme_cost measures where it stops scaling).
//
// Ops, all fp64; device cpu (FFTW3), and cuda in builds with CUDA (cuFFT, every tensor on the
// device):
//   nvalchemiops::spline_spread                 (nvalchemi's)
//     args: 0 positions (n x 3), 1 charges (n), 2 cell_inv_t (3 x 3: the transposed inverse of
//           the cell whose rows are a, b, c)
//     outs: 0 charge mesh (K1 K2 K3, row-major, K3 fastest); written, not added into
//   alchemiops::_pme_compute_partial_total_charge   (nvalchemi's)
//     args: 0 charges (n)      outs: 0 sum of the charges (1)
//   distspec_pme::solve
//     args: 0 the global charge mesh, 1 cell_inv_t, 2 alpha (1)
//     outs: 0 potential mesh phi (K1 K2 K3), 1 the k-space virial / C (6), 2 the six virial
//           meshes (6 x K1 K2 K3, may be empty); written
//   distspec_pme::interpolate
//     args: 0 positions (n x 3), 1 charges (n), 2 cell_inv_t, 3 potential mesh, 4 virial meshes
//           (may be empty), 5 total charge (1), 6 alpha (1)
//     outs: 0 energy rows (n), 1 forces (n x 3), 2 per-row virial (n x 6, may be empty); added
//           into. Each row's k-space, self and background energy, its force, its virial share.
// Every output lands on owned rows only, exact there: the spec declares forces owned_only.
#pragma once

#include <array>
#include <memory>
#include <string>

#include "distspec/ops/op_registry.h"
#include "distspec/spec/mlip_spec.h"
#include "models/ewald/ewald.h"
#include "models/json_fields.h"
#include "models/model.h"

namespace distspec::models::pme {

// The rest of nvalchemi's PME family, which its spec adapts: no kernel here (a single periodic
// system without a slab calls none of them). Its slab-correction kernels are the Ewald family's
// (ewald::kSlabMomentsOp, ewald::kBatchSlabMomentsOp).
inline constexpr char kBatchSpreadOp[] = "nvalchemiops::batch_spline_spread";
inline constexpr char kBatchTotalChargeOp[] = "alchemiops::_batch_pme_compute_partial_total_charge";

// LAMMPS pppm.cpp: MAXORDER 7; order 1 has no derivative.
inline constexpr int kMinOrder = 2;
inline constexpr int kMaxOrder = 7;
// LAMMPS pppm.cpp OFFSET: "PPPM grid is too large" at or above it.
inline constexpr int kMaxMesh = 16384;

struct Params {
  int n_species = 0;
  int order = 5;
  std::array<int, 3> mesh{};  // 0 0 0 until derived from accuracy
  double alpha = 0.0;         // 0 until derived from accuracy
  double cutoff = 0.0;
  double coulomb_constant = 0.0;
  double accuracy = 0.0;           // relative, 0 when not given
  double two_charge_force = 0.0;   // LAMMPS two_charge_force of the units
  double accuracy_absolute = 0.0;  // accuracy x two_charge_force
  bool derive_alpha = false;
  bool derive_mesh = false;
  // The real-space pairs: the Ewald model's kernel and constants.
  ewald::Params real_space;

  std::size_t mesh_points() const {
    return static_cast<std::size_t>(mesh[0]) * static_cast<std::size_t>(mesh[1]) * static_cast<std::size_t>(mesh[2]);
  }
};

class RealFft3d;

// What the PME ops are called with: the constants, the call's CPU threads, and the model's FFT
// plans (the CPU solve's).
struct OpState {
  const Params* params = nullptr;
  int threads = 1;
  RealFft3d* fft = nullptr;
};

// The CUDA kernels' state (pme_cuda.cu): the constants, the cuFFT plans and device scratch.
struct DeviceState;

// The real-space pairs are ewald::kRealSpaceOp, called with the Ewald model's state.
using PmeOp = Op<OpState, DeviceState>;
inline constexpr PmeOp kSpreadOp{"nvalchemiops::spline_spread"};
inline constexpr PmeOp kTotalChargeOp{"alchemiops::_pme_compute_partial_total_charge"};
inline constexpr PmeOp kSolveOp{"distspec_pme::solve"};
inline constexpr PmeOp kInterpolateOp{"distspec_pme::interpolate"};

// Reads the "parameters" object (errors point under /parameters; the caller adds the file).
Params parse_params(const Json& parameters, const std::string& units, int n_species, double cutoff);

// Throws distspec::Error (pointer into the spec) unless the spec adapts spline_spread and the
// total-charge op as pme_halo.json does.
void check_spec(const MLIPSpec& spec);

void register_ops(OpRegistry& registry);
std::unique_ptr<Model> make_model(const ModelFile& file, Device device = Device::cpu);

// pme_cuda.cu (builds with CUDA only).
void register_cuda_ops(OpRegistry& registry);
std::unique_ptr<Model> make_cuda_model(ModelInfo info, Params params);

}  // namespace distspec::models::pme
