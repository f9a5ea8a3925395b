// The `torch` model kind: a potential exported from PyTorch (tools/distspec-export) into an
// AOTInductor package (.pt2) or a TorchScript module (.pt), run under the spec's dispatcher.
// doc/torch_models.md is the contract between the exporter and this file.
//
// Model file "parameters":
//   {"graph": "toy_mpnn_L2.pt2",        the graph file, relative to the model file's folder
//    "format": "aoti" | "torchscript",  (default: from the extension, .pt2 or .pt)
//    "precision": "fp64" | "fp32",      dtype of positions and outputs
//    "message_passing_layers": 2,       hops of the receptive field
//    "comm_width": 16,                  widest feature row a halo op exchanges, in values
//    "contract": 1,                     version of the calling convention
//    "torch_version": "2.15.0",         the torch that compiled the graph (a .pt2 runs only there)
//    "graph_sha256": "...",             SHA-256 of the graph file, and of the spec's canonical JSON,
//    "spec_sha256": "..."}              as exported (graph_provenance.h checks them, and the rest of
//                                       the file against the graph's own metadata)
//
// Calling convention 1: inputs (positions [N,3], species [N] int64, edge_index [2,E] int64 with
// row 0 the sender and row 1 the (owned) receiver, the pairs closer than the cutoff, n_owned []
// int64, send_index [0] int64, recv_dest [n_halo] int64 = arange(n_owned, N), recv_real
// [n_halo] bool, all true), outputs (atomic_energies [N], forces [N,3][, atomic_virials [N,6]])
// in the file's precision; forces are -d(sum of owned atomic energies)/d(positions) on every row,
// halo rows holding partials of their owners. atomic_virials (xx yy zz xy xz yz) is each edge's
// -r (x) dE/dr shared between its two ends' rows as the model's package shares it (trace.py's
// atomic_virials; halo rows: partials, folded like forces);
// [0,6], or absent from an older export, where the model gives none: the global virial is then
// the sum over all rows of r (x) f, and a per-atom virial is refused rather than made from
// absolute positions (which depend on the origin). A TorchScript module may return the atomic
// energies alone: forces are then taken by autograd, and it gives no per-atom virial.
//
// The graph runs once at load on a small graph of the model's own, so that one that breaks the
// convention is reported when the model file is read; that call also records the collectives a
// call makes, which a rank owning no atom then makes without running the graph.
//
// This header includes no torch header: the model factory (C++17) includes it.
#pragma once

#include <memory>

#include "distspec/ops/op_registry.h"
#include "models/model.h"

namespace distspec::models {
struct ModelFile;
}

namespace distspec::models::torch_kind {

// Loads the graph the file names; every error is a distspec::Error naming the model file (or
// the graph file) and what to do.
std::unique_ptr<Model> make_model(const ModelFile& file, Device device = Device::cpu);

// SevenNet's own serial module, called with SevenNet's inputs (sevennet_serial.h): a model file
// of architecture torch whose parameters name the contract "sevennet-serial".
bool is_sevennet_serial(const ModelFile& file);
std::unique_ptr<Model> make_sevennet_serial_model(const ModelFile& file, Device device);

// Registers the halo ops with torch (halo_ops.h), and with `registry` the same qualnames as ops
// the dispatcher binds for a torch model: they run inside its graph, never through
// Dispatcher::call, so a spec that adapts them binds to a kernel that says so.
void register_ops(OpRegistry& registry);

}  // namespace distspec::models::torch_kind
