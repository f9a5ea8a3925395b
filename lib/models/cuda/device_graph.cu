// The AtomGraph upload and its index checks (on the host or, for a device-resident host, on the
// device), and the sender transpose.
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

#include "distspec/error.h"
#include "distspec/halo/device_staging.h"
#include "models/cuda/device_graph.cuh"
#include "models/model_error.h"

namespace distspec::models::cuda {

namespace {

[[noreturn]] void raise(const TopologyFault& f, int n_species, const std::string& what, const std::string& hint) {
  std::string message;
  switch (f.code) {
    case TopologyFault::species:
      message = "species " + std::to_string(f.value) + " of row " + std::to_string(f.row) + " is not one of the model's " +
                std::to_string(n_species) + " elements";
      break;
    case TopologyFault::offset_ends: message = "offsets must run from 0 to the number of senders"; break;
    case TopologyFault::receiver_range: message = "receiver " + std::to_string(f.value) + " is not a row"; break;
    case TopologyFault::receiver_twice:
      message = "receiver " + std::to_string(f.value) + " is listed twice (the CUDA kernels need distinct receivers)";
      break;
    case TopologyFault::offsets_decrease: message = "offsets must not decrease"; break;
    default: message = "sender " + std::to_string(f.value) + " is not a row"; break;
  }
  throw Error(model_error_id::op_args, "", what + ": " + message, hint);
}

// The checks unpack_edge_args makes on the CPU at every call, made once per topology, on a
// graph whose arrays are host memory.
TopologyFault host_topology_fault(const AtomGraph& g, int n_species) {
  const std::size_t n_rows = g.n_rows();
  for (std::size_t i = 0; i < n_rows; ++i)
    if (g.species[i] >= n_species) return {TopologyFault::species, static_cast<int>(i), g.species[i]};
  if (g.n_receivers == 0) return {};
  const std::size_t n_edges = static_cast<std::size_t>(g.offsets[g.n_receivers]);
  if (g.offsets[0] != 0 || g.offsets[g.n_receivers] < 0) return {TopologyFault::offset_ends, 0, g.offsets[0]};
  // Device kernels write each receiver's row without atomics: receivers must be distinct.
  std::vector<unsigned char> seen(n_rows, 0);
  for (std::size_t r = 0; r < g.n_receivers; ++r) {
    const int i = g.receivers[r], slot = static_cast<int>(r);
    if (i < 0 || static_cast<std::size_t>(i) >= n_rows) return {TopologyFault::receiver_range, slot, i};
    if (seen[i]) return {TopologyFault::receiver_twice, slot, i};
    seen[i] = 1;
    if (g.offsets[r + 1] < g.offsets[r]) return {TopologyFault::offsets_decrease, slot, g.offsets[r + 1]};
  }
  for (std::size_t k = 0; k < n_edges; ++k)
    if (g.senders[k] < 0 || static_cast<std::size_t>(g.senders[k]) >= n_rows)
      return {TopologyFault::sender_range, static_cast<int>(k), g.senders[k]};
  return {};
}

// The same checks on the device, for a host that keeps its graph in GPU memory (the KOKKOS
// style under a CUDA execution space): one launch per array and a 12-byte download per
// reneighbouring, where a host copy of the edges would cost hundreds of megabytes at a million
// atoms. Any failing index is reported, not necessarily the first.
__device__ void report(TopologyFault* fault, int code, int row, int value) {
  if (atomicCAS(&fault->code, 0, code) == 0) {
    fault->row = row;
    fault->value = value;
  }
}

__global__ void check_species_kernel(const int* species, std::size_t n_rows, int n_species, TopologyFault* fault) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n_rows; i += stride)
    if (species[i] >= n_species) report(fault, TopologyFault::species, static_cast<int>(i), species[i]);
}

// `seen` holds n_rows zeros.
__global__ void check_receivers_kernel(const int* receivers, const int* offsets, std::size_t n_receivers,
                                       std::size_t n_rows, int* seen, TopologyFault* fault) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t first = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (first == 0 && (offsets[0] != 0 || offsets[n_receivers] < 0))
    report(fault, TopologyFault::offset_ends, 0, offsets[0]);
  for (std::size_t r = first; r < n_receivers; r += stride) {
    const int i = receivers[r], slot = static_cast<int>(r);
    if (i < 0 || static_cast<std::size_t>(i) >= n_rows) report(fault, TopologyFault::receiver_range, slot, i);
    else if (atomicExch(seen + i, 1) != 0) report(fault, TopologyFault::receiver_twice, slot, i);
    if (offsets[r + 1] < offsets[r]) report(fault, TopologyFault::offsets_decrease, slot, offsets[r + 1]);
  }
}

__global__ void check_senders_kernel(const int* senders, std::size_t n_edges, std::size_t n_rows, TopologyFault* fault) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; k < n_edges; k += stride)
    if (senders[k] < 0 || static_cast<std::size_t>(senders[k]) >= n_rows)
      report(fault, TopologyFault::sender_range, static_cast<int>(k), senders[k]);
}

TopologyFault device_topology_fault(const AtomGraph& g, std::size_t n_edges, int n_species, DeviceArray<int>& seen,
                                    DeviceArray<TopologyFault>& fault) {
  const std::size_t n_rows = g.n_rows();
  fault.resize(1);
  fault.zero();
  constexpr unsigned kBlock = 256;
  if (n_rows) {
    check_species_kernel<<<grid_for(n_rows, kBlock), kBlock>>>(g.species, n_rows, n_species, fault.data());
    check_launch("DistSpec::DeviceGraph::check_species");
  }
  if (g.n_receivers) {
    seen.resize(n_rows);
    seen.zero();
    check_receivers_kernel<<<grid_for(g.n_receivers, kBlock), kBlock>>>(g.receivers, g.offsets, g.n_receivers, n_rows,
                                                                         seen.data(), fault.data());
    check_launch("DistSpec::DeviceGraph::check_receivers");
    if (n_edges) {
      check_senders_kernel<<<grid_for(n_edges, kBlock), kBlock>>>(g.senders, n_edges, n_rows, fault.data());
      check_launch("DistSpec::DeviceGraph::check_senders");
    }
  }
  TopologyFault found;
  fault.download(&found, 1);
  return found;
}

// Whether the graph's topology arrays are device memory; a host hands over all of them in one
// kind of memory.
bool device_topology(const AtomGraph& g) {
  const int* arrays[] = {g.species, g.receivers, g.offsets, g.senders};
  return std::any_of(std::begin(arrays), std::end(arrays), [](const int* p) { return p && is_device_pointer(p); });
}

// offsets[n_receivers], read wherever the offsets live.
std::size_t edge_count(const AtomGraph& g) {
  if (!g.n_receivers) return 0;
  int last = 0;
  if (is_device_pointer(g.offsets))
    check(cudaMemcpy(&last, g.offsets + g.n_receivers, sizeof(int), cudaMemcpyDeviceToHost), "cudaMemcpy (edge count)");
  else
    last = g.offsets[g.n_receivers];
  return static_cast<std::size_t>(std::max(last, 0));
}

}  // namespace

bool DeviceGraph::upload(const AtomGraph& g, int n_species, const std::string& what, const std::string& hint) {
  const std::size_t edges = edge_count(g);
  const bool same = uploaded_ && g.topology_generation != 0 && g.topology_generation == generation_ &&
                    g.n_owned == n_owned && g.n_halo == n_halo && g.n_receivers == n_receivers && edges == n_edges;
  // cudaMemcpyDefault: from host memory, or device to device for a device-resident host.
  x.upload(g.positions, 3 * g.n_rows());
  if (same) return false;
  const TopologyFault fault =
      device_topology(g) ? device_topology_fault(g, edges, n_species, seen_, fault_) : host_topology_fault(g, n_species);
  if (fault.code != TopologyFault::none) raise(fault, n_species, what, hint);
  n_owned = g.n_owned;
  n_halo = g.n_halo;
  n_rows = g.n_rows();
  n_receivers = g.n_receivers;
  n_edges = edges;
  species.upload(g.species, n_rows);
  receivers.upload(g.receivers, n_receivers);
  if (n_receivers) offsets.upload(g.offsets, n_receivers + 1);
  else {
    // A host with no receivers may pass no offsets; kernels read offsets[0] == 0 all the same.
    const int zero = 0;
    offsets.upload(&zero, 1);
  }
  senders.upload(g.senders, n_edges);
  generation_ = g.topology_generation;
  uploaded_ = true;
  return true;
}

std::vector<TensorRef> DeviceGraph::edge_args() {
  return {device_ref(x.data(), n_rows, 3), device_ref(species.data(), n_rows), device_ref(receivers.data(), n_receivers),
          device_ref(offsets.data(), n_receivers + 1), device_ref(senders.data(), n_edges)};
}

// ---------------------------------------------------------------------------------------------
// Sender transpose

namespace {

// Per receiver segment s: its edges' segment, and the receiver row's segment.
__global__ void label_segments(const int* receivers, const int* offsets, std::size_t n_receivers, int* edge_segment,
                               int* row_segment, int* edge_ids) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t s = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; s < n_receivers; s += stride) {
    row_segment[receivers[s]] = static_cast<int>(s);
    for (int e = offsets[s]; e < offsets[s + 1]; ++e) {
      edge_segment[e] = static_cast<int>(s);
      edge_ids[e] = e;
    }
  }
}

// sender_offsets[j] = first position of sender j in the sorted keys (a lower bound).
__global__ void sender_bounds(const int* sorted, std::size_t n_edges, std::size_t n_rows, int* sender_offsets) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t j = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; j <= n_rows; j += stride) {
    std::size_t lo = 0, hi = n_edges;
    while (lo < hi) {
      const std::size_t mid = (lo + hi) / 2;
      if (static_cast<std::size_t>(sorted[mid]) < j) lo = mid + 1;
      else hi = mid;
    }
    sender_offsets[j] = static_cast<int>(lo);
  }
}

}  // namespace

void SenderIndex::build(const DeviceGraph& g) {
  const std::size_t n_edges = g.n_edges, n_rows = g.n_rows;
  edge_segment.resize(n_edges);
  row_segment.resize(n_rows);
  by_sender.resize(n_edges);
  sender_offsets.resize(n_rows + 1);
  values_in_.resize(n_edges);
  keys_out_.resize(n_edges);
  if (n_rows) check(cudaMemsetAsync(row_segment.data(), 0xff, n_rows * sizeof(int)), "cudaMemsetAsync");
  if (g.n_receivers) {
    label_segments<<<grid_for(g.n_receivers, 256), 256>>>(g.receivers.data(), g.offsets.data(), g.n_receivers,
                                                          edge_segment.data(), row_segment.data(), values_in_.data());
    check_launch("DistSpec::SenderIndex::label_segments");
  }
  if (n_edges) {
    // A stable LSD radix sort of (sender, edge id) over the bits a row index needs.
    int bits = 1;
    while (bits < 31 && (std::size_t(1) << bits) <= n_rows) ++bits;
    std::size_t temp_bytes = 0;
    check(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, g.senders.data(), keys_out_.data(), values_in_.data(),
                                          by_sender.data(), static_cast<int>(n_edges), 0, bits),
          "cub::DeviceRadixSort::SortPairs (size)");
    temp_.resize(temp_bytes);
    check(cub::DeviceRadixSort::SortPairs(temp_.data(), temp_bytes, g.senders.data(), keys_out_.data(),
                                          values_in_.data(), by_sender.data(), static_cast<int>(n_edges), 0, bits),
          "cub::DeviceRadixSort::SortPairs");
  }
  sender_bounds<<<grid_for(n_rows + 1, 256), 256>>>(keys_out_.data(), n_edges, n_rows, sender_offsets.data());
  check_launch("DistSpec::SenderIndex::sender_bounds");
}

}  // namespace distspec::models::cuda
