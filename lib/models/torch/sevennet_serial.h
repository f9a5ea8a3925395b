// SevenNet's own serial deployment (`sevenn_get_model`, deployed_serial.pt) under the torch
// model kind: the TorchScript module SevenNet's `pair_style e3gnn` runs, called with SevenNet's
// own inputs. It has no halo ops: periodic images are mapped onto their owners by atom ID
// (AtomGraph::owner_rows), so it runs on one MPI rank; for many ranks, tools/distspec-export
// makes a graph whose halo ops refresh the node features over LAMMPS' communication.
//
// Model file "parameters":
//   {"graph": "deployed_serial.pt",     the deployed module, relative to the model file's folder
//    "contract": "sevennet-serial"}     SevenNet's calling convention, below
// The model file's cutoff must be the module's (its extra file `cutoff`); its elements are any
// of the module's (`chemical_symbols_to_index`); its precision is the module's (`dtype`).
//
// Calling convention: forward({"x": SevenNet type index of each owned atom [n] int64,
// "edge_index": [2,E] int64 (row 0 the centre atom i, row 1 the owner of its neighbour j),
// "edge_vec": r_j - r_i [E,3] float32 (neighbour image minus centre, requiring grad),
// "num_atoms": [n] as [1] int64, "nlocal": the same, on the cpu}) -> a dict holding
// "inferred_total_energy" and "atomic_energy" [n,1]. With g = dE/d(edge_vec): F_i += g,
// F_owner(j) -= g, virial = -sum over edges of edge_vec (x) g (per atom: each edge's whole on its
// neighbour's owner, in SevenNet's components), as `pair_style e3gnn` does.
//
// This header includes no torch header.
#pragma once

#include <memory>

#include "models/model.h"

namespace distspec::models {
struct ModelFile;
}

namespace distspec::models::torch_kind {

inline constexpr char kSevenNetSerialContract[] = "sevennet-serial";

// Loads the module the file names; errors are distspec::Error naming the model file.
std::unique_ptr<Model> make_sevennet_serial(const ModelFile& file, Device device);

}  // namespace distspec::models::torch_kind
