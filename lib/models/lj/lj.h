// Lennard-Jones, exactly as LAMMPS `pair_style lj/cut` (pair_lj_cut.cpp):
//   E(r) = 4 eps [(sigma/r)^12 - (sigma/r)^6] - offset,   r < cutoff of the pair,
// offset = E(cutoff) with "shift": true (pair_modify shift yes), else 0. Pairs the parameters do
// not list are mixed from the self pairs as Pair::mix_energy / mix_distance do (init_one).
//
// Parameters ("parameters" of the model file, units of the model file):
//   {"pairs": [{"elements": ["Ar", "Ar"], "epsilon": 0.0104, "sigma": 3.4, "cutoff": 8.5}, ...],
//    "shift": false, "mixing": "geometric" | "arithmetic" | "sixthpower"}
// Every element needs its self pair; a pair's "cutoff" defaults to the model cutoff and may not
// exceed it; "shift" defaults to false and "mixing" to geometric (the LAMMPS defaults).
//
// Ops (device cpu, and cuda in builds with CUDA: lj_cuda.cu, the same layouts with every tensor
// on the device), named as nvalchemi's LJ spec names them; their states are their handles' below:
//   nvalchemi::lj_energy_forces_batch
//     args: the five edge-list arguments (models/edge_kernel.h)
//     outs: 0 energy rows (n_rows, f64; cpu: an empty tensor skips the energy), 1 forces
//           (n_rows x 3, f64)
//   nvalchemi::lj_energy_forces_virial_batch
//     args: as above
//     outs: as above, then 2 virial (6, f64: xx yy zz xy xz yz),
//           3 per-row virial (n_rows x 6, f64; an empty tensor skips it)
// Outputs are added into (the caller zeroes them). Per pair: half the pair energy and half the
// pair virial to each atom, the pair force to both with opposite signs, as lj/cut's ev_tally.
// Over a full or half_newton_off list only receivers get them, so owned rows are exact (eatom /
// vatom as LAMMPS gives them) and halo rows stay zero; over a half_newton_on list halo rows get
// their atoms' shares, for the host to fold.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "distspec/ops/op_registry.h"
#include "models/edge_kernel.h"
#include "models/json_fields.h"
#include "models/model.h"

namespace distspec::models {
struct ModelFile;
}

namespace distspec::models::lj {

// pair_lj_cut.cpp's per type-pair coefficients.
struct PairCoeff {
  double lj1 = 0.0;  // 48 eps sigma^12
  double lj2 = 0.0;  // 24 eps sigma^6
  double lj3 = 0.0;  // 4 eps sigma^12
  double lj4 = 0.0;  // 4 eps sigma^6
  double offset = 0.0;
  double cutsq = 0.0;
};

// eps, sigma and cutoff of one species pair, as given or mixed.
struct PairParams {
  double epsilon = 0.0;
  double sigma = 0.0;
  double cutoff = 0.0;
};

// Both matrices are n_species x n_species, symmetric, indexed a * n_species + b.
struct Params {
  int n_species = 0;
  bool shift = false;
  std::vector<PairParams> pairs;  // as given or mixed: what a log should print
  std::vector<PairCoeff> coeffs;  // what the kernel reads

  const PairParams& pair(int a, int b) const { return pairs[index(a, b)]; }
  const PairCoeff& coeff(int a, int b) const { return coeffs[index(a, b)]; }
  std::size_t index(int a, int b) const { return static_cast<std::size_t>(a) * n_species + b; }
};

// Reads the "parameters" object (errors point under /parameters; the caller adds the file).
Params parse_params(const Json& parameters, const std::vector<std::string>& elements, double cutoff);

// The CUDA kernels' state (lj_cuda.cu): the coefficients on the device, and scratch.
struct DeviceParams;

// On the CPU the ops read the constants and the call's listing and threads.
inline constexpr Op<EdgeOpState<Params>, DeviceParams> kEnergyForcesOp{"nvalchemi::lj_energy_forces_batch"};
inline constexpr Op<EdgeOpState<Params>, DeviceParams> kEnergyForcesVirialOp{"nvalchemi::lj_energy_forces_virial_batch"};

void register_ops(OpRegistry& registry);
// The model for a file, running its op on `device` (cuda: a build with DISTSPEC_ENABLE_CUDA).
std::unique_ptr<Model> make_model(const ModelFile& file, Device device = Device::cpu);

// lj_cuda.cu (builds with CUDA only): the cuda kernels of both ops, and the model that keeps its
// graph and outputs on the device.
void register_cuda_ops(OpRegistry& registry);
std::unique_ptr<Model> make_cuda_model(ModelInfo info, Params params);

}  // namespace distspec::models::lj
