// Embedded-atom method, as LAMMPS `pair_style eam` (funcfl files), `eam/alloy` (setfl) and
// `eam/fs` (Finnis-Sinclair setfl):
//   E = sum_i F_a(rho_i) + 1/2 sum_i sum_{j != i} phi_ab(r_ij),   rho_i = sum_{j != i} rho_ba(r_ij),
// where rho_ba, the density an atom of element b gives one of element a, is rho_b but in eam/fs.
// from the same tables pair_eam.cpp builds (eam_tables.h). The model runs in three ops through
// the dispatcher, so that which halo exchanges happen between them is the spec's policy, not
// model code (pair_eam.cpp under newton off: forward comm of F'; newton on adds a reverse of rho):
//   density                                    owned rows complete over a full or newton-off list;
//                                              a half_newton_on list adds dispatch.after_scatter(rho)
//   embedding                                  F(rho_i), F'(rho_i) of owned rows
//   dispatch.before_gather(fp) -> forces       [halo: forward, halo rows get their owners' F']
// The CPU model takes newton off's half list (ModelInfo::half_list): one exchange per step; its
// force op walks the pairs newton on's list would hold where the host gives newton_on_ends, and
// its density op, given the owner rows as well, takes a pair with a periodic image of this
// rank's own atom once (as newton on would) and adds the image's share to its owner's row.
//
// Parameters: {"file_format": "funcfl" | "setfl" | "fs"} with "parameters_file" naming the LAMMPS
// file; a funcfl model of several elements instead lists one file per element,
// "files": {"Cu": "Cu_u3.eam", "Ni": "Ni_u3.eam"}, mixed as pair_eam.cpp mixes several funcfl
// files. Units must be metal. The model cutoff must be the file's (funcfl: the longest).
//
// Ops (device cpu, and cuda in builds with CUDA: eam_cuda.cu, the same layouts with every tensor
// on the device and the tables copied there once). Their states are their handles' below:
//   distspec_eam::density
//     args: the five edge-list arguments (models/edge_kernel.h)
//     outs: 0 rho (n_rows, f64), added into: rho_i += rho_ba(r_ij) for each edge j -> i
//   distspec_eam::embedding
//     args: 0 rho (n, f64), 1 species (n, i32)          n: the rows to embed (the host passes
//     outs: 0 fp (n, f64), written: F'(rho_i)              its owned rows)
//           1 energy rows (n, f64), added into: F(rho_i)
//   distspec_eam::forces
//     args: the five edge-list arguments, then 5 fp (n_rows, f64; halo rows hold their owners' F')
//     outs: 0 energy rows (n_rows; cpu: an empty tensor skips the pair energy), 1 forces
//           (n_rows x 3), and optionally 2 virial (6), 3 per-row virial (n_rows x 6); all f64
//           and added into; given four outputs, 2 and 3 may each be an empty tensor (skipped).
//           Per pair: 1/2 phi(r) energy and 1/2 del (x) f to each atom, the pair force from
//           F'_i rho_b'(r) + F'_j rho_a'(r) + phi'(r) to both with opposite signs; over a full
//           or half_newton_off list to receivers only, so owned rows are exact and halo rows
//           stay zero.
#pragma once

#include <memory>

#include "distspec/ops/op_registry.h"
#include "models/eam/eam_tables.h"
#include "models/edge_kernel.h"
#include "models/model.h"

namespace distspec::models {
struct ModelFile;
}

namespace distspec::models::eam {

// The CUDA kernels' state (eam_cuda.cu): the tables, uploaded once, and scratch on the device.
struct DeviceTables;

// The CPU edge ops read the tables and the call's listing and threads; the embedding reads the
// tables only.
inline constexpr Op<EdgeOpState<Tables>, DeviceTables> kDensityOp{"distspec_eam::density"};
inline constexpr Op<Tables, DeviceTables> kEmbeddingOp{"distspec_eam::embedding"};
inline constexpr Op<EdgeOpState<Tables>, DeviceTables> kForcesOp{"distspec_eam::forces"};

// Reads the LAMMPS file(s) the model file names and builds the tables (errors point into the
// model file, or name the potential file and its line).
Tables load_tables(const ModelFile& file);

void register_ops(OpRegistry& registry);
// The model for a file, running its ops on `device` (cuda: a build with DISTSPEC_ENABLE_CUDA).
std::unique_ptr<Model> make_model(const ModelFile& file, Device device = Device::cpu);

// eam_cuda.cu (builds with CUDA only): the cuda kernels of the three ops, and the model that
// keeps its graph, tables and per-atom buffers on the device.
void register_cuda_ops(OpRegistry& registry);
std::unique_ptr<Model> make_cuda_model(ModelInfo info, Tables tables);

}  // namespace distspec::models::eam
