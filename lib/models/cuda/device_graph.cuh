// The device copy of an AtomGraph, checked once per topology, and its transpose by sender.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "distspec/ops/tensor_ref.h"
#include "models/cuda/device_array.cuh"
#include "models/model.h"

namespace distspec::models::cuda {

// The hint of the CPU edge kernels' argument errors (edge_kernel.cpp), for the same errors here.
inline constexpr char kOpArgsHint[] = "see the op's argument layout in its model header";

// The first failed index check of a topology; code none when every index is sound.
struct TopologyFault {
  enum Code : int { none = 0, species, offset_ends, receiver_range, receiver_twice, offsets_decrease, sender_range };
  int code = none;
  int row = 0;    // the row, receiver slot or edge that failed
  int value = 0;  // the index found there
};

// The device copy of an AtomGraph. Positions go up at every call; species, receivers, offsets
// and senders only when the host's topology_generation differs from the last upload's (or is
// 0, or a row or edge count changed), after a check of every index: device kernels trust
// indices, so a host bug is an error here rather than a wild read there. The graph's arrays may
// live in host memory (checked on the host) or in device memory (checked on the device, and
// copied device to device).
class DeviceGraph {
 public:
  // `what` starts error messages and `hint` ends them, as the CPU model words its own ("op
  // 'distspec_eam::density'", "mpnn"). Returns true when the topology was uploaded.
  bool upload(const AtomGraph& graph, int n_species, const std::string& what, const std::string& hint);

  // The five edge-list arguments (models/edge_kernel.h), on the device.
  std::vector<TensorRef> edge_args();

  std::size_t n_owned = 0, n_halo = 0, n_rows = 0, n_receivers = 0, n_edges = 0;
  DeviceArray<double> x;  // n_rows x 3
  DeviceArray<int> species, receivers, offsets, senders;

 private:
  std::uint64_t generation_ = 0;
  bool uploaded_ = false;
  // Scratch of the device-side index checks.
  DeviceArray<int> seen_;
  DeviceArray<TopologyFault> fault_;
};

// The transpose of a DeviceGraph's edge list, for kernels that gather what each row sends
// (adjoints of a gather by sender) instead of scattering with atomics: every edge listed by its
// sender in CSR over rows, in increasing edge order within a row (a stable sort), so that every
// sum has a fixed order and a step is bitwise reproducible.
class SenderIndex {
 public:
  void build(const DeviceGraph& graph);

  DeviceArray<int> edge_segment;    // per edge: its receiver segment
  DeviceArray<int> row_segment;     // per row: its segment, -1 when the row receives nothing
  DeviceArray<int> by_sender;       // edge ids, sorted by sender
  DeviceArray<int> sender_offsets;  // n_rows + 1: row j sends edges by_sender[offsets[j] .. offsets[j+1])

 private:
  DeviceArray<int> keys_in_, keys_out_, values_in_;
  DeviceArray<unsigned char> temp_;
};

}  // namespace distspec::models::cuda
