// Shared by the CUDA kernels of lib/models (*.cu only): error checks, device arrays that persist
// across compute() calls and grow with padding, the device copy of an AtomGraph and its
// transpose, fixed-order reductions, per-launch timing, and the receiver-centric pair kernel
// that LJ and EAM share.
//
// Every launch goes to the legacy default stream, so a cudaMemcpy to or from the host (outputs,
// halo staging) waits for the kernels before it: no explicit synchronisation anywhere.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "distspec/dispatch/dispatcher.h"
#include "distspec/halo/device_staging.h"
#include "distspec/ops/tensor_ref.h"
#include "models/cuda_runtime.h"
#include "models/model.h"

namespace distspec::models::cuda {

// Throws distspec::Error (id model.device) naming the call when a CUDA call failed.
void check(cudaError_t status, const char* what);
// After a launch: a bad configuration shows up here, a fault at the next synchronising call.
void check_launch(const char* label);

// Device memory of T that keeps its allocation across calls: resize() grows it (by 1/8 plus a
// little, so that a slowly growing row count does not reallocate every reneighbouring) and
// never shrinks it; contents are not kept when it grows.
template <class T>
class DeviceArray {
 public:
  DeviceArray() = default;
  ~DeviceArray() { release(); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  DeviceArray(DeviceArray&& o) noexcept : data_(o.data_), size_(o.size_), capacity_(o.capacity_) {
    o.data_ = nullptr;
    o.size_ = o.capacity_ = 0;
  }
  DeviceArray& operator=(DeviceArray&& o) noexcept {
    if (this != &o) {
      release();
      data_ = o.data_;
      size_ = o.size_;
      capacity_ = o.capacity_;
      o.data_ = nullptr;
      o.size_ = o.capacity_ = 0;
    }
    return *this;
  }

  void resize(std::size_t n) {
    if (n > capacity_) {
      release();
      const std::size_t padded = n + n / 8 + 64;
      check(cudaMalloc(reinterpret_cast<void**>(&data_), padded * sizeof(T)), "cudaMalloc");
      capacity_ = padded;
    }
    size_ = n;
  }
  // resize(n), then n values from host memory (or device memory: the copy direction follows
  // the pointers, so a host that keeps its arrays on the device is served as well).
  void upload(const T* host, std::size_t n) {
    resize(n);
    if (n) check(cudaMemcpy(data_, host, n * sizeof(T), cudaMemcpyDefault), "cudaMemcpy (upload)");
  }
  void upload(const std::vector<T>& host) { upload(host.data(), host.size()); }
  // The first n values into `host` (host or device memory).
  void download(T* host, std::size_t n) const {
    if (n) check(cudaMemcpy(host, data_, n * sizeof(T), cudaMemcpyDefault), "cudaMemcpy (download)");
  }
  void zero() {
    if (size_) check(cudaMemsetAsync(data_, 0, size_ * sizeof(T)), "cudaMemsetAsync");
  }

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  void release() {
    if (data_) cudaFree(data_);
    data_ = nullptr;
    size_ = capacity_ = 0;
  }
  T* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

template <class T>
TensorRef device_ref(T* data, std::size_t rows, std::size_t cols = 1) {
  return TensorRef::of(data, rows, cols, Device::cuda);
}

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

// out[c] += sum over rows r < n of x[r * cols + c], for c < cols (<= 8), in a fixed order
// (block partials, then one block), so that the result does not depend on scheduling.
void add_column_sums(const double* x, std::size_t n, int cols, double* out, DeviceArray<double>& scratch);

// Brackets one launch with CUDA events while profiling is on (cuda_runtime.h).
class LaunchTimer {
 public:
  LaunchTimer(const char* label, double stream_bytes, double gather_bytes, double flops);
  ~LaunchTimer();
  LaunchTimer(const LaunchTimer&) = delete;
  LaunchTimer& operator=(const LaunchTimer&) = delete;

 private:
  int slot_ = -1;
};

// The sum of x[0 .. n) in a fixed order, downloaded (`scratch` holds the partials, `total` the sum).
double device_sum(const double* x, std::size_t n, DeviceArray<double>& scratch, DeviceArray<double>& total);

// A pair-like model's outputs, from the device into `out`: the energy of the owned rows (a
// fixed-order sum), forces, and the virial (with `virial`) and per-row energy and virial where
// `request` asks for them. `energy` and `forces` hold `n_rows` rows. With
// request.rows_on_device only the energy and the virial are downloaded: the rows stay where
// they are and `out.device` points at them.
struct DeviceResultArrays {
  DeviceArray<double>& energy;
  DeviceArray<double>& forces;
  DeviceArray<double>& virial;
  DeviceArray<double>& virial_rows;
};
void download_outputs(const DeviceResultArrays& rows, std::size_t n_owned, std::size_t n_rows, const OutputRequest& request,
                      bool virial, DeviceArray<double>& scratch, DeviceArray<double>& total, ModelOutputs& out);

// For one compute(): checks that the dispatcher's ops are bound for the device, and gives it a
// halo exchange that takes device rows, its own if it does, else `staging` around it; the
// host's exchange is attached again when this goes out of scope.
class StagedHalo {
 public:
  StagedHalo(Dispatcher& dispatch, DeviceStagingHaloExchange& staging, const char* model);
  ~StagedHalo();
  StagedHalo(const StagedHalo&) = delete;
  StagedHalo& operator=(const StagedHalo&) = delete;

 private:
  Dispatcher& dispatch_;
  HaloExchange* host_ = nullptr;
};

// Blocks for a grid-stride loop over `items` with `per_block` items a block.
inline unsigned grid_for(std::size_t items, unsigned per_block) {
  const std::size_t blocks = (items + per_block - 1) / per_block;
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > 65535 ? 65535 : blocks));
}

// Lets `kernel` take `bytes` of dynamic shared memory (above 48 KiB needs the opt-in).
template <class Kernel>
void allow_shared_memory(Kernel kernel, std::size_t bytes) {
  if (bytes > 48 * 1024)
    check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)),
          "cudaFuncSetAttribute (dynamic shared memory)");
}

// ---------------------------------------------------------------------------------------------
// Device helpers

constexpr unsigned kFullMask = 0xffffffffu;

template <class T>
__device__ inline T warp_sum(T v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(kFullMask, v, o);
  return v;
}

// Sum over the W lanes of an aligned group (W a power of two <= 32); every lane gets it.
template <int W, class T>
__device__ inline T group_sum(T v) {
#pragma unroll
  for (int o = W / 2; o > 0; o >>= 1) v += __shfl_xor_sync(kFullMask, v, o, W);
  return v;
}

// |d|^2 rounded as the host computes it (no fused multiply-add), so that the GPU keeps exactly
// the edges within a cutoff that the CPU keeps.
__device__ inline double squared_norm_rn(double d0, double d1, double d2) {
  return __dadd_rn(__dadd_rn(__dmul_rn(d0, d0), __dmul_rn(d1, d1)), __dmul_rn(d2, d2));
}

// ---------------------------------------------------------------------------------------------
// Receiver-centric pair kernel (LJ, EAM forces): TPA lanes per receiver walk its edges, each
// edge's energy, force and virial go to the receiver (models/edge_kernel.h PairOutputs::tally),
// the group sums its lanes with shuffles, and one lane adds the row's totals: no atomics, and a
// fixed summation order.

struct PairTallyArgs {
  const double* x = nullptr;
  const int* species = nullptr;
  const int* receivers = nullptr;
  const int* offsets = nullptr;
  const int* senders = nullptr;
  std::size_t n_receivers = 0;
  double* energy = nullptr;           // n_rows, added into
  double* forces = nullptr;           // n_rows x 3, added into
  double* virial_rows = nullptr;      // n_rows x 6, added into; may be null
  double* receiver_virial = nullptr;  // n_receivers x 6, written (for the global sum); may be null
};

// A device op's edge-list arguments 0..4 (models/edge_kernel.h) and, for a pair op, its outputs
// in PairOutputs' layout: device memory and shapes checked as unpack_edge_args and
// unpack_pair_outputs check host ones, naming `op`. Indices were checked when DeviceGraph
// uploaded them. Outputs hold n_rows rows (the positions'); `n_outputs` 2 (energy rows, forces) or 4 (with the virial and the per-row
// virial, either of which may be empty); the global virial output is returned (or null), for
// the op's add_column_sums over receiver_virial.
PairTallyArgs unpack_device_edge_args(const char* op, Span<const TensorRef> args);
double* unpack_device_pair_outputs(const char* op, Span<const TensorRef> outs, std::size_t n_outputs, std::size_t n_rows,
                                   PairTallyArgs& a);

// Pair: a functor with
//   __device__ bool operator()(int i, int j, int a, int b, double rsq, double& half_energy, double& fpair) const
// that returns false for a pair beyond its cutoff; f_ij = fpair * (x_i - x_j).
template <int TPA, class Pair>
__global__ void pair_tally_kernel(const PairTallyArgs a, const Pair pair) {
  static_assert(TPA >= 1 && TPA <= 32 && (32 % TPA) == 0, "TPA divides a warp");
  constexpr int kGroups = 32 / TPA;
  const int lane = threadIdx.x & 31, sub = lane % TPA;
  const std::size_t warp = (static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const std::size_t n_warps = (static_cast<std::size_t>(gridDim.x) * blockDim.x) >> 5;
  const bool virial = a.virial_rows || a.receiver_virial;
  // The loop bound is uniform over the warp, so every lane reaches every shuffle.
  for (std::size_t s0 = warp * kGroups; s0 < a.n_receivers; s0 += n_warps * kGroups) {
    const std::size_t s = s0 + lane / TPA;
    double e = 0.0, f[3] = {0.0, 0.0, 0.0}, v[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    int i = -1;
    if (s < a.n_receivers) {
      i = a.receivers[s];
      const int ai = a.species[i];
      if (ai < 0) i = -1;
      if (i >= 0) {
        const double xi0 = a.x[3 * i], xi1 = a.x[3 * i + 1], xi2 = a.x[3 * i + 2];
        for (int k = a.offsets[s] + sub; k < a.offsets[s + 1]; k += TPA) {
          const int j = a.senders[k];
          const int bj = a.species[j];
          if (bj < 0) continue;
          const double d0 = xi0 - a.x[3 * j], d1 = xi1 - a.x[3 * j + 1], d2 = xi2 - a.x[3 * j + 2];
          double half_energy, fpair;
          if (!pair(i, j, ai, bj, squared_norm_rn(d0, d1, d2), half_energy, fpair)) continue;
          e += half_energy;
          f[0] += d0 * fpair;
          f[1] += d1 * fpair;
          f[2] += d2 * fpair;
          if (virial) {
            const double h = 0.5 * fpair;
            v[0] += h * d0 * d0;
            v[1] += h * d1 * d1;
            v[2] += h * d2 * d2;
            v[3] += h * d0 * d1;
            v[4] += h * d0 * d2;
            v[5] += h * d1 * d2;
          }
        }
      }
    }
    e = group_sum<TPA>(e);
#pragma unroll
    for (int c = 0; c < 3; ++c) f[c] = group_sum<TPA>(f[c]);
    if (virial) {
#pragma unroll
      for (int c = 0; c < 6; ++c) v[c] = group_sum<TPA>(v[c]);
    }
    if (sub != 0 || s >= a.n_receivers) continue;
    if (a.receiver_virial)
      for (int c = 0; c < 6; ++c) a.receiver_virial[6 * s + c] = v[c];
    if (i < 0) continue;
    a.energy[i] += e;
    for (int c = 0; c < 3; ++c) a.forces[3 * static_cast<std::size_t>(i) + c] += f[c];
    if (a.virial_rows)
      for (int c = 0; c < 6; ++c) a.virial_rows[6 * static_cast<std::size_t>(i) + c] += v[c];
  }
}

// Lanes per receiver of the pair kernels: a full list holds 40..100 edges per atom at the
// usual cutoffs, so 8 lanes keep the sender reads coalesced in 32-byte sectors and the loop a
// handful of iterations long.
constexpr int kPairLanes = 8;
constexpr unsigned kPairBlock = 128;

}  // namespace distspec::models::cuda
