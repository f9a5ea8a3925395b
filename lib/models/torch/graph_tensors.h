// An AtomGraph as torch tensors, and a model's per-row results back into ModelOutputs, for the
// torch model kinds. The graph's arrays may live in host memory (pair_style distspec,
// distspec/kk on host threads) or in GPU memory (distspec/kk under a CUDA execution space):
// tensors wrap them where they are (from_blob, no copy) and every step after that, the cutoff
// filter of the edges, the per-row energy and virial, their sums, runs as torch ops on the
// device the graph lives on. Only what LAMMPS reads on the host (energy, virial: seven values)
// leaves the device, unless the host asks for rows in host memory.
#pragma once

#include <ATen/ATen.h>

#include "models/model.h"

namespace distspec::models::torch_kind {

// Where the graph's arrays live: the GPU the model runs on when they are device memory, else
// the host.
c10::Device graph_device(const AtomGraph& graph, Device model_device);

// Tensors over the graph's own arrays on `where` (no copy): positions [N,3] fp64, species [N]
// int32, receivers [R], offsets [R+1] and senders [offsets[R]] int32.
struct GraphTensors {
  at::Tensor positions, species, receivers, offsets, senders;
  // On `device`: the same tensors where they are there already, else copies (a host graph for a
  // model on the GPU: its rows and CSR edges go up, and the edge work runs there).
  GraphTensors to(c10::Device device) const;
};
GraphTensors wrap_graph(const AtomGraph& graph, c10::Device where);
// The positions alone, [N,3] fp64 on `where` (no copy, and no read of the edge count: what a call
// needs between neighbour-list builds).
at::Tensor wrap_positions(const AtomGraph& graph, c10::Device where);

// The CSR edges j -> i expanded to one (sender, receiver) pair per edge, int64, both of length
// offsets[R], in the graph's order.
struct EdgePairs {
  at::Tensor senders, receivers;
  std::int64_t size() const { return senders.numel(); }
  // The pairs where `keep` [E] bool is true, in order.
  EdgePairs where(const at::Tensor& keep) const;
};
EdgePairs expand_edges(const GraphTensors& graph);

// Which pairs are closer than `cutoff` (fp64, |x_j - x_i|^2 < cutoff^2, summed as the host
// loops did: x, then y, then z).
at::Tensor within_cutoff(const at::Tensor& positions, const EdgePairs& pairs, double cutoff);

// One model call's per-row results, fp64, contiguous, on one device: energy_rows [N] (zero on
// the rows whose energy is not this rank's), forces [N,3], and, where the request asks for a
// virial, virial_rows [N,6] (LAMMPS' order xx, yy, zz, xy, xz, yz).
struct RowResults {
  at::Tensor energy_rows, forces, virial_rows;
};

// Into `out`: the energy and virial summed on the results' device and downloaded together (one
// transfer, which also waits for every kernel before it); the rows downloaded into out's
// vectors, or, where the request asks for rows on the device and they are there, left in
// `kept` (which holds them until the next call) and named by out.device.
void deliver(RowResults results, std::size_t n_rows, const OutputRequest& request, ModelOutputs& out,
             RowResults& kept);

// r (x) f per row, LAMMPS' order: [N,6] fp64.
at::Tensor virial_rows_of(const at::Tensor& positions, const at::Tensor& forces);

// SevenNet's per-edge virial components (ForceStressOutputFromEdge, as pair_style e3gnn puts them
// into vatom) in LAMMPS' order: r_x g_x, r_y g_y, r_z g_z, r_x g_y, r_z g_x, r_y g_z; [E,6].
at::Tensor sevennet_virial_rows_of(const at::Tensor& r, const at::Tensor& g);

}  // namespace distspec::models::torch_kind
