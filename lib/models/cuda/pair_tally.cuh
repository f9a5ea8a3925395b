// The receiver-centric pair kernel that LJ, EAM and Ewald's real space share, and the unpacking
// of a device op's edge-list arguments and pair outputs.
#pragma once

#include <cstddef>
#include <type_traits>

#include "distspec/ops/tensor_ref.h"
#include "distspec/util/span.h"
#include "models/cuda/reductions.cuh"

namespace distspec::models::cuda {

// |d|^2 rounded as the host computes it (no fused multiply-add), so that the GPU keeps exactly
// the edges within a cutoff that the CPU keeps.
__device__ inline double squared_norm_rn(double d0, double d1, double d2) {
  return __dadd_rn(__dadd_rn(__dmul_rn(d0, d0), __dmul_rn(d1, d1)), __dmul_rn(d2, d2));
}


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
  double* row_scalar = nullptr;       // n_rows, added into: a RowScalarPair's per-receiver sum
};

// A Pair whose `static constexpr bool kRowScalar = true` also sums a scalar of its own over each
// receiver's edges (DFT-D3's dE/dCN_i, its coordination number): it takes the lane's running
// sum as an eighth argument and adds to it whether or not it returns true.
template <class P, class = void>
struct sums_row_scalar : std::false_type {};
template <class P>
struct sums_row_scalar<P, std::void_t<decltype(P::kRowScalar)>> : std::bool_constant<P::kRowScalar> {};

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
// that returns false for a pair beyond its cutoff; f_ij = fpair * (x_i - x_j). A RowScalarPair
// (above) takes `double& scalar` after fpair, and the kernel adds each receiver's sum of it into
// a.row_scalar.
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
    double e = 0.0, f[3] = {0.0, 0.0, 0.0}, v[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0}, scalar = 0.0;
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
          bool inside;
          if constexpr (sums_row_scalar<Pair>::value)
            inside = pair(i, j, ai, bj, squared_norm_rn(d0, d1, d2), half_energy, fpair, scalar);
          else
            inside = pair(i, j, ai, bj, squared_norm_rn(d0, d1, d2), half_energy, fpair);
          if (!inside) continue;
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
    if constexpr (sums_row_scalar<Pair>::value) scalar = group_sum<TPA>(scalar);
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
    if constexpr (sums_row_scalar<Pair>::value) a.row_scalar[i] += scalar;
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
