// The message-passing network on the GPU (mpnn.h): the forward pass and, written out by hand,
// the reverse pass that mpnn_cpu.cpp takes from its tape, in fp64 or fp32 (coordinates, forces,
// energy and virial in fp64 either way, as on the CPU). The halo refresh points are the CPU
// model's: before layer l >= 2 reads h_l of its neighbours, dispatch.before_gather (forward
// exchange); in the reverse pass, after that layer's adjoint, dispatch.before_gather_adjoint
// on grad h_l (reverse exchange), both on device row blocks.
//
// Kernels (one warp per receiver or row unless said; E edges, n rows, S receiver segments,
// F features, K basis functions, H hidden units; T = fp64 or fp32, bytes for fp64):
//   edge_geometry          per edge: r (fp64 difference, rounded to T), the cutoff mask (r < 0:
//                          no edge), half the switched Morse baseline summed on the receiver,
//                          and its slope as the first term of dE/dr. Per edge 4 B sender +
//                          32 B x_j/species_j gathered + 2 x 8 B written; ~40 flops, 1 exp, 1 cos.
//   embed                  h_0 = embedding[species] (thread per value).
//   cfconv_update_forward  per receiver: agg = sum_e h_l[j] * (rbf_e W + b) * fc_e, then
//                          h_{l+1}[i] = h_l[i] + MLP(agg), keeping the MLP's pre-activation u.
//                          Per edge 4 B sender + 8 B r streamed, F * 8 B of h_l[j] gathered;
//                          K exp for rbf, 2 K F + 2 F flops. Per receiver 4 F H flops.
//   readout                per owned row: e_i = MLP_out(h_L[i]) + baseline + E_ref, and, the
//                          energy being a plain sum, grad h_L[i] at once (the readout adjoint).
//   update_backward        per receiver: grad agg = ((grad h_{l+1}[i] W2^T) * act'(u)) W1^T.
//   cfconv_backward        per SENDER row j (the transpose, SenderIndex): for each edge j -> i,
//                          grad h_l[j] += grad agg_i * w_e (no atomics: the row is the warp's),
//                          and grad r_e += sum_c u_c (z_c dfc/dr + fc dz_c/dr), u = grad agg_i *
//                          h_l[j], dz/dr = sum_k dphi_k/dr W[k] made beside z from the same W
//                          loads. Per edge 4 + 4 + 8 + 8 B streamed, F * 8 B of grad agg_i
//                          gathered; K exp, 4 K F + 10 F flops.
//   forces_virial          per row: grad x from grad r over the row's received and sent edges
//                          (f = -grad x; per-row virial -1/2 sum v (x) dE/dv), no atomics.
// The filters w_e are made again where needed (forward, and once more in the reverse pass)
// instead of being stored: E x F values, ~20 GB a layer at a million atoms (F = 64, fp64).
#include <algorithm>
#include <cmath>

#include "distspec/error.h"
#include "models/cuda/device_graph.cuh"
#include "models/cuda/launch_timer.cuh"
#include "models/cuda/pair_tally.cuh"
#include "models/cuda/reductions.cuh"
#include "models/cuda/require_cuda_dispatcher.cuh"
#include "models/model_error.h"
#include "models/mpnn/mpnn.h"

namespace distspec::models::mpnn {
namespace {

using namespace distspec::models::cuda;

constexpr double kPi = 3.14159265358979323846;
constexpr double kLn2 = 0.693147180559945309417;
constexpr int kWarps = 4;       // warps per block of the warp-per-row kernels
constexpr int kChunk = 32;      // edges a warp stages at a time (one per lane)
constexpr int kEdgeBlock = 4;   // edges whose filters are made together: each W load serves 4
constexpr int kMaxFeatures = 128;
constexpr int kMaxBasis = 64;

// ---------------------------------------------------------------------------------------------
// Device functions of one edge length, as models/mpnn/ops_radial.cpp computes them (fp64).

struct BasisView {
  int gaussian = 1;
  int size = 1;
  double start = 0.0, stop = 1.0, inv_w2 = 1.0, cutoff = 1.0, norm = 1.0;

  __device__ double centre(int k) const { return size > 1 ? start + (stop - start) * k / (size - 1) : start; }
  __device__ double value(double r, int k) const {
    if (gaussian) {
      const double mu = centre(k);
      return exp(-0.5 * (r - mu) * (r - mu) * inv_w2);
    }
    return norm * sin((k + 1) * kPi / cutoff * r) / r;
  }
  // dphi_k/dr given phi = phi_k(r).
  __device__ double slope(double r, int k, double phi) const {
    if (gaussian) return -(r - centre(k)) * inv_w2 * phi;
    const double w = (k + 1) * kPi / cutoff;
    return norm * (w * cos(w * r) / r - sin(w * r) / (r * r));
  }
};

__device__ inline void cosine_cutoff(double inner, double outer, double r, double& value, double& slope) {
  if (r <= inner) {
    value = 1.0;
    slope = 0.0;
  } else if (r >= outer) {
    value = 0.0;
    slope = 0.0;
  } else {
    const double w = kPi / (outer - inner);
    value = 0.5 * (cos(w * (r - inner)) + 1.0);
    slope = -0.5 * w * sin(w * (r - inner));
  }
}

template <class T>
__device__ inline T sigmoid(T v) {
  return T(1) / (T(1) + exp(-v));
}

// ops_activation.cpp: shifted softplus max(v, 0) + log1p(e^-|v|) - ln 2, or silu v sigmoid(v).
template <class T>
__device__ inline T activation(int silu, T v) {
  if (silu) return v * sigmoid(v);
  return (v > T(0) ? v : T(0)) + log1p(exp(-(v < T(0) ? -v : v))) - T(kLn2);
}

template <class T>
__device__ inline T activation_slope(int silu, T v) {
  const T s = sigmoid(v);
  return silu ? s * (T(1) + v * (T(1) - s)) : s;
}

// ---------------------------------------------------------------------------------------------
// Kernel arguments

template <class T>
struct GraphView {
  const double* x = nullptr;
  const int* species = nullptr;
  const int* receivers = nullptr;
  const int* offsets = nullptr;
  const int* senders = nullptr;
  std::size_t n_rows = 0, n_owned = 0, n_segments = 0;
  // SenderIndex
  const int* edge_segment = nullptr;
  const int* row_segment = nullptr;
  const int* by_sender = nullptr;
  const int* sender_offsets = nullptr;
};

template <class T>
struct LayerArgs {
  GraphView<T> g;
  const T* r = nullptr;  // per edge; < 0: not an edge of the model
  BasisView basis;
  double cutoff = 0.0;
  int K = 0, F = 0, H = 0, silu = 0;
  const T *wf = nullptr, *bf = nullptr;  // filter K x F, F
  const T *w1 = nullptr, *b1 = nullptr, *w1t = nullptr;  // F x H, H, H x F
  const T *w2 = nullptr, *b2 = nullptr, *w2t = nullptr;  // H x F, F, F x H
  const T* h = nullptr;  // h_l, n_rows x F
  T* h_next = nullptr;   // h_{l+1}, a copy of h_l that receivers add their update to
  T* u = nullptr;        // S x H, the update MLP's pre-activation
  T* grad_h = nullptr;   // n_rows x F
  T* grad_agg = nullptr; // S x F
  T* grad_r = nullptr;   // per edge
  int need_grad_h = 0;
};

// Dynamic shared memory of the layer kernels: block-wide weights, then one region per warp.
struct SharedLayout {
  std::size_t weights = 0, per_warp = 0;
  std::size_t rbf = 0, slope = 0, fc = 0, dfc = 0, seg = 0, edge = 0, x = 0, a = 0;
  std::size_t total() const { return weights + kWarps * per_warp; }
};

__host__ __device__ inline std::size_t align16(std::size_t b) { return (b + 15) & ~std::size_t(15); }

// forward: W (K x F); per warp rbf, fc, sender, agg (F), activations (H)
__host__ __device__ inline SharedLayout forward_layout(int K, int F, int H, std::size_t t) {
  SharedLayout l;
  l.weights = align16(t * K * F);
  std::size_t o = 0;
  l.rbf = o; o = align16(o + t * kChunk * K);
  l.fc = o; o = align16(o + t * kChunk);
  l.seg = o; o = align16(o + 4 * kChunk);
  l.x = o; o = align16(o + t * F);
  l.a = o; o = align16(o + t * H);
  l.per_warp = o;
  return l;
}

// backward: W (K x F); per warp the staged edges: basis values and slopes, fc, dfc/dr, segment, id
__host__ __device__ inline SharedLayout backward_layout(int K, int F, std::size_t t) {
  SharedLayout l;
  l.weights = align16(t * K * F);
  std::size_t o = 0;
  l.rbf = o; o = align16(o + t * kChunk * K);
  l.slope = o; o = align16(o + t * kChunk * K);
  l.fc = o; o = align16(o + t * kChunk);
  l.dfc = o; o = align16(o + t * kChunk);
  l.seg = o; o = align16(o + 4 * kChunk);
  l.edge = o; o = align16(o + 4 * kChunk);
  l.per_warp = o;
  return l;
}

// Per-warp scratch of the row kernels (update_backward, readout): two vectors.
__host__ __device__ inline std::size_t row_scratch(int a, int b, std::size_t t) { return align16(t * a) + align16(t * b); }

// ---------------------------------------------------------------------------------------------
// Kernels

template <class T>
struct GeometryArgs {
  GraphView<T> g;
  double cutsq = 0.0, cutoff = 0.0, switch_inner = 0.0;
  const double* morse = nullptr;  // per species pair: D, alpha, r0
  int n_species = 0;
  T* r = nullptr;
  T* grad_r = nullptr;
  T* pair_rows = nullptr;
  unsigned long long* active = nullptr;  // edges within the cutoff are counted here when not null
};

// r_e, the mask, the baseline 1/2 phi(r) s(r) summed per receiver, and its slope (the edge's
// share of dE/dr when its receiver's energy counts: an owned row).
template <class T>
__global__ void __launch_bounds__(kWarps * 32) edge_geometry(const GeometryArgs<T> a) {
  const int lane = threadIdx.x & 31;
  const std::size_t n_warps = static_cast<std::size_t>(gridDim.x) * kWarps;
  for (std::size_t s = static_cast<std::size_t>(blockIdx.x) * kWarps + (threadIdx.x >> 5); s < a.g.n_segments;
       s += n_warps) {
    const int i = a.g.receivers[s];
    const int ai = a.g.species[i];
    const bool counted = ai >= 0 && static_cast<std::size_t>(i) < a.g.n_owned;
    const double xi0 = a.g.x[3 * i], xi1 = a.g.x[3 * i + 1], xi2 = a.g.x[3 * i + 2];
    T pair = T(0);
    int active = 0;
    for (int e = a.g.offsets[s] + lane; e < a.g.offsets[s + 1]; e += 32) {
      const int j = a.g.senders[e];
      const int bj = a.g.species[j];
      T r = T(-1), grad = T(0);
      if (ai >= 0 && bj >= 0) {
        const double d0 = xi0 - a.g.x[3 * j], d1 = xi1 - a.g.x[3 * j + 1], d2 = xi2 - a.g.x[3 * j + 2];
        if (squared_norm_rn(d0, d1, d2) < a.cutsq) {
          const T v0 = T(d0), v1 = T(d1), v2 = T(d2);
          r = T(sqrt(double(v0) * v0 + double(v1) * v1 + double(v2) * v2));
          ++active;
          const double* m = a.morse + 3 * (ai * a.n_species + bj);
          const double xm = exp(-m[1] * (double(r) - m[2]));
          const T half_morse = T(0.5 * m[0] * (xm * xm - 2.0 * xm));
          double sw, dsw;
          cosine_cutoff(a.switch_inner, a.cutoff, double(r), sw, dsw);
          const T swt = T(sw);
          pair += half_morse * swt;
          if (counted) grad = T(double(swt) * m[0] * m[1] * (xm - xm * xm)) + T(double(half_morse) * dsw);
        }
      }
      a.r[e] = r;
      a.grad_r[e] = grad;
    }
    pair = warp_sum(pair);
    if (lane == 0 && ai >= 0) a.pair_rows[i] = pair;
    if (a.active) {
      active = warp_sum(active);
      if (lane == 0) atomicAdd(a.active, static_cast<unsigned long long>(active));
    }
  }
}

// h_0[i] = embedding[species_i], zero for rows of no species.
template <class T>
__global__ void embed(const int* species, std::size_t n_rows, int F, const T* table, T* h) {
  const std::size_t n = n_rows * F, stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t q = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; q < n; q += stride) {
    const std::size_t i = q / F;
    const int s = species[i];
    h[q] = s >= 0 ? table[static_cast<std::size_t>(s) * F + (q - i * F)] : T(0);
  }
}

// z[b][t] = bias + sum_k rbf[b][k] W[k][c] for the lane's features c = lane + 32 t and up to
// kEdgeBlock staged edges (rows of rbf); each W value read from shared memory serves every edge.
// With kSlope, also dz[b][t] = sum_k slope[b][k] W[k][c] = dz/dr, from the same W loads.
template <class T, int FPL, bool kSlope>
__device__ inline void make_filters(const T* rbf, const T* slope, int n_b, int K, int F, const T* sw,
                                    const T (&bias)[FPL], int lane, T (&z)[kEdgeBlock][FPL], T (&dz)[kEdgeBlock][FPL]) {
#pragma unroll
  for (int b = 0; b < kEdgeBlock; ++b)
#pragma unroll
    for (int t = 0; t < FPL; ++t) {
      z[b][t] = bias[t];
      dz[b][t] = T(0);
    }
  for (int k = 0; k < K; ++k) {
    T w[FPL];
#pragma unroll
    for (int t = 0; t < FPL; ++t) {
      const int c = lane + 32 * t;
      w[t] = c < F ? sw[k * F + c] : T(0);
    }
#pragma unroll
    for (int b = 0; b < kEdgeBlock; ++b) {
      const T x = b < n_b ? rbf[b * K + k] : T(0);
#pragma unroll
      for (int t = 0; t < FPL; ++t) z[b][t] += x * w[t];
      if (kSlope) {
        const T d = b < n_b ? slope[b * K + k] : T(0);
#pragma unroll
        for (int t = 0; t < FPL; ++t) dz[b][t] += d * w[t];
      }
    }
  }
}

// Stages the lane's edge e (-1: none) if it is an edge of the model (r_e >= 0): compacted in
// lane order, its cutoff weight and basis values (and their slopes, given s_slope) into shared
// memory. Returns the edge's slot
// (-1 when inactive) and, in *n_active, how many the warp staged.
template <class T>
__device__ inline int stage_edge(int e, const T* r_of_edge, const BasisView& basis, double cutoff, int K, int lane,
                                 T* s_rbf, T* s_slope, T* s_fc, int* n_active, double* dfc_out) {
  const T r = e >= 0 ? r_of_edge[e] : T(-1);
  const bool active = r >= T(0);
  const unsigned mask = __ballot_sync(kFullMask, active);
  *n_active = __popc(mask);
  if (!active) return -1;
  const int slot = __popc(mask & ((1u << lane) - 1u));
  double fc, dfc;
  cosine_cutoff(0.0, cutoff, double(r), fc, dfc);
  s_fc[slot] = T(fc);
  *dfc_out = dfc;
  for (int k = 0; k < K; ++k) {
    const T phi = T(basis.value(double(r), k));
    s_rbf[slot * K + k] = phi;
    if (s_slope) s_slope[slot * K + k] = T(basis.slope(double(r), k, double(phi)));
  }
  return slot;
}

// agg_i = sum_e h_l[j] * w_e; h_{l+1}[i] += MLP(agg_i), u = the MLP's pre-activation.
template <class T, int FPL>
__global__ void __launch_bounds__(kWarps * 32) cfconv_update_forward(const LayerArgs<T> a) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int K = a.K, F = a.F, H = a.H, lane = threadIdx.x & 31;
  const SharedLayout L = forward_layout(K, F, H, sizeof(T));
  T* sw = reinterpret_cast<T*>(smem);
  for (int q = threadIdx.x; q < K * F; q += blockDim.x) sw[q] = a.wf[q];
  unsigned char* mine = smem + L.weights + (threadIdx.x >> 5) * L.per_warp;
  T* s_rbf = reinterpret_cast<T*>(mine + L.rbf);
  T* s_fc = reinterpret_cast<T*>(mine + L.fc);
  int* s_j = reinterpret_cast<int*>(mine + L.seg);
  T* s_x = reinterpret_cast<T*>(mine + L.x);
  T* s_a = reinterpret_cast<T*>(mine + L.a);
  T bias[FPL];
#pragma unroll
  for (int t = 0; t < FPL; ++t) bias[t] = lane + 32 * t < F ? a.bf[lane + 32 * t] : T(0);
  __syncthreads();

  const std::size_t n_warps = static_cast<std::size_t>(gridDim.x) * kWarps;
  for (std::size_t s = static_cast<std::size_t>(blockIdx.x) * kWarps + (threadIdx.x >> 5); s < a.g.n_segments;
       s += n_warps) {
    const int i = a.g.receivers[s];
    if (a.g.species[i] < 0) continue;
    T acc[FPL];
#pragma unroll
    for (int t = 0; t < FPL; ++t) acc[t] = T(0);
    const int end = a.g.offsets[s + 1];
    for (int base = a.g.offsets[s]; base < end; base += kChunk) {
      const int e = base + lane < end ? base + lane : -1;
      int n_active;
      double dfc;
      const int slot = stage_edge(e, a.r, a.basis, a.cutoff, K, lane, s_rbf, static_cast<T*>(nullptr), s_fc, &n_active, &dfc);
      if (slot >= 0) s_j[slot] = a.g.senders[e];
      __syncwarp();
      for (int b0 = 0; b0 < n_active; b0 += kEdgeBlock) {
        T z[kEdgeBlock][FPL], unused[kEdgeBlock][FPL];
        make_filters<T, FPL, false>(s_rbf + b0 * K, nullptr, n_active - b0, K, F, sw, bias, lane, z, unused);
#pragma unroll
        for (int b = 0; b < kEdgeBlock; ++b) {
          if (b0 + b >= n_active) break;
          const T* hj = a.h + static_cast<std::size_t>(s_j[b0 + b]) * F;
          const T fc = s_fc[b0 + b];
#pragma unroll
          for (int t = 0; t < FPL; ++t) {
            const int c = lane + 32 * t;
            if (c < F) acc[t] += hj[c] * (z[b][t] * fc);
          }
        }
      }
      __syncwarp();
    }
    // The update MLP on the receiver's row: u = agg W1 + b1, h += act(u) W2 + b2.
#pragma unroll
    for (int t = 0; t < FPL; ++t)
      if (lane + 32 * t < F) s_x[lane + 32 * t] = acc[t];
    __syncwarp();
    for (int o = lane; o < H; o += 32) {
      T u = a.b1[o];
      for (int c = 0; c < F; ++c) u += s_x[c] * a.w1[c * H + o];
      a.u[s * H + o] = u;
      s_a[o] = activation(a.silu, u);
    }
    __syncwarp();
    T* hi = a.h_next + static_cast<std::size_t>(i) * F;
    for (int c = lane; c < F; c += 32) {
      T m = a.b2[c];
      for (int o = 0; o < H; ++o) m += s_a[o] * a.w2[o * F + c];
      hi[c] += m;
    }
    __syncwarp();
  }
}

// grad agg = ((grad h_{l+1}[i] W2^T) * act'(u)) W1^T per receiver segment.
template <class T>
__global__ void __launch_bounds__(kWarps * 32) update_backward(const LayerArgs<T> a) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int F = a.F, H = a.H, lane = threadIdx.x & 31;
  unsigned char* mine = smem + (threadIdx.x >> 5) * row_scratch(F, H, sizeof(T));
  T* s_g = reinterpret_cast<T*>(mine);
  T* s_gu = reinterpret_cast<T*>(mine + align16(sizeof(T) * F));
  const std::size_t n_warps = static_cast<std::size_t>(gridDim.x) * kWarps;
  for (std::size_t s = static_cast<std::size_t>(blockIdx.x) * kWarps + (threadIdx.x >> 5); s < a.g.n_segments;
       s += n_warps) {
    const int i = a.g.receivers[s];
    if (a.g.species[i] < 0) continue;
    const T* g = a.grad_h + static_cast<std::size_t>(i) * F;
    for (int c = lane; c < F; c += 32) s_g[c] = g[c];
    __syncwarp();
    for (int o = lane; o < H; o += 32) {
      T ga = T(0);
      for (int c = 0; c < F; ++c) ga += s_g[c] * a.w2t[c * H + o];
      s_gu[o] = ga * activation_slope(a.silu, a.u[s * H + o]);
    }
    __syncwarp();
    for (int c = lane; c < F; c += 32) {
      T gx = T(0);
      for (int o = 0; o < H; ++o) gx += s_gu[o] * a.w1t[o * F + c];
      a.grad_agg[s * F + c] = gx;
    }
    __syncwarp();
  }
}

// The cfconv adjoint, gathered per sender row j over the edges it sends (SenderIndex), with
// u = grad agg_i * h_l[j] and dz/dr = sum_k dphi_k/dr W[k] (made beside z from the same loads):
//   grad h_l[j] += grad agg_i * z_e * fc_e                    (when need_grad_h)
//   grad r_e    += sum_c u_c (z_e,c dfc/dr + fc_e dz_e,c/dr)   (one warp sum per edge)
template <class T, int FPL>
__global__ void __launch_bounds__(kWarps * 32) cfconv_backward(const LayerArgs<T> a) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int K = a.K, F = a.F, lane = threadIdx.x & 31;
  const SharedLayout L = backward_layout(K, F, sizeof(T));
  T* sw = reinterpret_cast<T*>(smem);
  for (int q = threadIdx.x; q < K * F; q += blockDim.x) sw[q] = a.wf[q];
  unsigned char* mine = smem + L.weights + (threadIdx.x >> 5) * L.per_warp;
  T* s_rbf = reinterpret_cast<T*>(mine + L.rbf);
  T* s_slope = reinterpret_cast<T*>(mine + L.slope);
  T* s_fc = reinterpret_cast<T*>(mine + L.fc);
  T* s_dfc = reinterpret_cast<T*>(mine + L.dfc);
  int* s_seg = reinterpret_cast<int*>(mine + L.seg);
  int* s_edge = reinterpret_cast<int*>(mine + L.edge);
  T bias[FPL];
#pragma unroll
  for (int t = 0; t < FPL; ++t) bias[t] = lane + 32 * t < F ? a.bf[lane + 32 * t] : T(0);
  __syncthreads();

  const std::size_t n_warps = static_cast<std::size_t>(gridDim.x) * kWarps;
  for (std::size_t j = static_cast<std::size_t>(blockIdx.x) * kWarps + (threadIdx.x >> 5); j < a.g.n_rows;
       j += n_warps) {
    const int begin = a.g.sender_offsets[j], end = a.g.sender_offsets[j + 1];
    if (begin == end || a.g.species[j] < 0) continue;
    T hj[FPL], gh[FPL];
#pragma unroll
    for (int t = 0; t < FPL; ++t) {
      const int c = lane + 32 * t;
      hj[t] = c < F ? a.h[j * F + c] : T(0);
      gh[t] = T(0);
    }
    for (int base = begin; base < end; base += kChunk) {
      const int e = base + lane < end ? a.g.by_sender[base + lane] : -1;
      int n_active;
      double dfc;
      const int slot = stage_edge(e, a.r, a.basis, a.cutoff, K, lane, s_rbf, s_slope, s_fc, &n_active, &dfc);
      if (slot >= 0) {
        s_edge[slot] = e;
        s_seg[slot] = a.g.edge_segment[e];
        s_dfc[slot] = T(dfc);
      }
      __syncwarp();
      for (int b0 = 0; b0 < n_active; b0 += kEdgeBlock) {
        const int n_b = min(kEdgeBlock, n_active - b0);
        T z[kEdgeBlock][FPL], dz[kEdgeBlock][FPL];
        make_filters<T, FPL, true>(s_rbf + b0 * K, s_slope + b0 * K, n_b, K, F, sw, bias, lane, z, dz);
#pragma unroll
        for (int b = 0; b < kEdgeBlock; ++b) {
          if (b >= n_b) break;
          const T* g = a.grad_agg + static_cast<std::size_t>(s_seg[b0 + b]) * F;
          const T fc = s_fc[b0 + b], dfc_b = s_dfc[b0 + b];
          T part = T(0);
#pragma unroll
          for (int t = 0; t < FPL; ++t) {
            const int c = lane + 32 * t;
            if (c < F) {
              const T gc = g[c];
              if (a.need_grad_h) gh[t] += gc * (z[b][t] * fc);
              part += (gc * hj[t]) * (z[b][t] * dfc_b + fc * dz[b][t]);
            }
          }
          part = warp_sum(part);
          if (lane == 0) a.grad_r[s_edge[b0 + b]] += part;
        }
      }
      __syncwarp();
    }
    if (a.need_grad_h)
#pragma unroll
      for (int t = 0; t < FPL; ++t) {
        const int c = lane + 32 * t;
        if (c < F) a.grad_h[j * F + c] += gh[t];
      }
  }
}

template <class T>
struct ReadoutArgs {
  const T* h = nullptr;  // h_L
  const int* species = nullptr;
  std::size_t n_owned = 0;
  int F = 0, R = 0, silu = 0;
  const T *w1 = nullptr, *b1 = nullptr, *w1t = nullptr, *w2 = nullptr;  // F x R, R, R x F, R
  T b2 = T(0);
  const T* pair_rows = nullptr;
  const double* reference = nullptr;  // per species
  double* energy_rows = nullptr;      // written on owned rows of the model's species
  T* grad_h = nullptr;                // written on those rows; null: energies only
};

// e_i = act(h_L[i] W1 + b1) W2 + b2 + baseline_i + E_ref; grad h_L[i] = (W2 * act'(u)) W1^T.
template <class T>
__global__ void __launch_bounds__(kWarps * 32) readout(const ReadoutArgs<T> a) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int F = a.F, R = a.R, lane = threadIdx.x & 31;
  unsigned char* mine = smem + (threadIdx.x >> 5) * row_scratch(F, R, sizeof(T));
  T* s_x = reinterpret_cast<T*>(mine);
  T* s_u = reinterpret_cast<T*>(mine + align16(sizeof(T) * F));
  const std::size_t n_warps = static_cast<std::size_t>(gridDim.x) * kWarps;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * kWarps + (threadIdx.x >> 5); i < a.n_owned; i += n_warps) {
    const int sp = a.species[i];
    if (sp < 0) continue;
    for (int c = lane; c < F; c += 32) s_x[c] = a.h[i * F + c];
    __syncwarp();
    T part = T(0);
    for (int o = lane; o < R; o += 32) {
      T u = a.b1[o];
      for (int c = 0; c < F; ++c) u += s_x[c] * a.w1[c * R + o];
      s_u[o] = u;
      part += activation(a.silu, u) * a.w2[o];
    }
    const T y = a.b2 + warp_sum(part);
    if (lane == 0) a.energy_rows[i] = double(y + a.pair_rows[i]) + a.reference[sp];
    if (a.grad_h) {
      __syncwarp();
      for (int o = lane; o < R; o += 32) s_u[o] = a.w2[o] * activation_slope(a.silu, s_u[o]);
      __syncwarp();
      for (int c = lane; c < F; c += 32) {
        T g = T(0);
        for (int o = 0; o < R; ++o) g += s_u[o] * a.w1t[o * F + c];
        a.grad_h[i * F + c] = g;
      }
    }
    __syncwarp();
  }
}

template <class T>
struct ForceArgs {
  GraphView<T> g;
  const T* r = nullptr;
  const T* grad_r = nullptr;
  double* forces = nullptr;       // n_rows x 3, written
  double* virial_rows = nullptr;  // n_rows x 6, written; may be null
};

// One edge's share of row i: dE/dv = grad r * v / r, with sign +1 on the receiver, -1 on the
// sender (v = x_receiver - x_sender), and half of -v (x) dE/dv.
template <class T>
__device__ inline void edge_share(double d0, double d1, double d2, T r, T grad_r, double sign, bool virial,
                                  double (&g)[3], double (&w)[6]) {
  const T v[3] = {T(d0), T(d1), T(d2)};
  const T scale = grad_r / r;
  const T gv[3] = {scale * v[0], scale * v[1], scale * v[2]};
  for (int c = 0; c < 3; ++c) g[c] += sign * double(gv[c]);
  if (!virial) return;
  constexpr int ab[6][2] = {{0, 0}, {1, 1}, {2, 2}, {0, 1}, {0, 2}, {1, 2}};
#pragma unroll
  for (int c = 0; c < 6; ++c) w[c] -= 0.5 * (double(v[ab[c][0]]) * double(gv[ab[c][1]]));
}

// f_i = -grad x_i over the edges row i receives and sends; per-row virial from the same edges.
template <class T>
__global__ void __launch_bounds__(kWarps * 32) forces_virial(const ForceArgs<T> a) {
  const int lane = threadIdx.x & 31;
  const bool virial = a.virial_rows != nullptr;
  const std::size_t n_warps = static_cast<std::size_t>(gridDim.x) * kWarps;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * kWarps + (threadIdx.x >> 5); i < a.g.n_rows; i += n_warps) {
    double g[3] = {0.0, 0.0, 0.0}, w[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    const double xi0 = a.g.x[3 * i], xi1 = a.g.x[3 * i + 1], xi2 = a.g.x[3 * i + 2];
    const int s = a.g.row_segment[i];
    if (s >= 0)
      for (int e = a.g.offsets[s] + lane; e < a.g.offsets[s + 1]; e += 32) {
        const T r = a.r[e];
        if (r < T(0)) continue;
        const int j = a.g.senders[e];
        edge_share(xi0 - a.g.x[3 * j], xi1 - a.g.x[3 * j + 1], xi2 - a.g.x[3 * j + 2], r, a.grad_r[e], 1.0, virial, g, w);
      }
    for (int p = a.g.sender_offsets[i] + lane; p < a.g.sender_offsets[i + 1]; p += 32) {
      const int e = a.g.by_sender[p];
      const T r = a.r[e];
      if (r < T(0)) continue;
      const int k = a.g.receivers[a.g.edge_segment[e]];
      edge_share(a.g.x[3 * k] - xi0, a.g.x[3 * k + 1] - xi1, a.g.x[3 * k + 2] - xi2, r, a.grad_r[e], -1.0, virial, g, w);
    }
    for (int c = 0; c < 3; ++c) g[c] = warp_sum(g[c]);
    if (virial)
      for (int c = 0; c < 6; ++c) w[c] = warp_sum(w[c]);
    if (lane == 0) {
      for (int c = 0; c < 3; ++c) a.forces[3 * i + c] = -g[c];
      if (virial)
        for (int c = 0; c < 6; ++c) a.virial_rows[6 * i + c] = w[c];
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The model

template <class T>
std::vector<T> cast(const tensor::Tensor<double>& t) {
  return std::vector<T>(t.data(), t.data() + t.size());
}

// The (rows x cols) matrix m transposed, in precision T.
template <class T>
std::vector<T> transposed(const tensor::Tensor<double>& m) {
  std::vector<T> out(m.size());
  for (std::size_t i = 0; i < m.rows(); ++i)
    for (std::size_t j = 0; j < m.cols(); ++j) out[j * m.rows() + i] = static_cast<T>(m(i, j));
  return out;
}

template <class T>
struct DeviceLayer {
  int H = 0;
  DeviceArray<T> wf, bf, w1, b1, w1t, w2, b2, w2t;
};

[[noreturn]] void unsupported(const std::string& message) {
  throw Error(model_error_id::value, "/parameters", "mpnn on cuda: " + message, "run this model on the cpu");
}

template <class T>
class CudaNetwork final : public Model {
 public:
  CudaNetwork(ModelInfo info, Params params) : info_(std::move(info)), params_(std::move(params)) {
    const Weights<double>& w = params_.weights;
    F_ = params_.features;
    K_ = params_.basis.size;
    if (F_ > kMaxFeatures) unsupported("at most " + std::to_string(kMaxFeatures) + " features, the model has " + std::to_string(F_));
    if (K_ > kMaxBasis) unsupported("at most " + std::to_string(kMaxBasis) + " radial basis functions, the model has " + std::to_string(K_));
    embedding_.upload(cast<T>(w.embedding));
    for (const Interaction<double>& layer : w.layers) {
      DeviceLayer<T> d;
      d.H = static_cast<int>(layer.update[0].weight.cols());
      d.wf.upload(cast<T>(layer.filter.weight));
      d.bf.upload(cast<T>(layer.filter.bias));
      d.w1.upload(cast<T>(layer.update[0].weight));
      d.b1.upload(cast<T>(layer.update[0].bias));
      d.w1t.upload(transposed<T>(layer.update[0].weight));
      d.w2.upload(cast<T>(layer.update[1].weight));
      d.b2.upload(cast<T>(layer.update[1].bias));
      d.w2t.upload(transposed<T>(layer.update[1].weight));
      max_H_ = std::max(max_H_, d.H);
      layers_.push_back(std::move(d));
    }
    R_ = static_cast<int>(w.readout[0].weight.cols());
    readout_w1_.upload(cast<T>(w.readout[0].weight));
    readout_b1_.upload(cast<T>(w.readout[0].bias));
    readout_w1t_.upload(transposed<T>(w.readout[0].weight));
    readout_w2_.upload(cast<T>(w.readout[1].weight));
    readout_b2_ = static_cast<T>(w.readout[1].bias(0, 0));
    reference_.upload(params_.reference_energy);
    std::vector<double> morse;
    for (const Morse& m : params_.morse) morse.insert(morse.end(), {m.D, m.alpha, m.r0});
    morse_.upload(morse);

    const RadialBasis& b = params_.basis;
    basis_.gaussian = b.kind == RadialBasis::Kind::gaussian;
    basis_.size = b.size;
    basis_.start = b.start;
    basis_.stop = b.stop;
    basis_.inv_w2 = 1.0 / (b.width * b.width);
    basis_.cutoff = b.cutoff;
    basis_.norm = std::sqrt(2.0 / b.cutoff);

    // The layer kernels' shared memory must fit the device.
    int device = 0, limit = 0;
    check(cudaGetDevice(&device), "cudaGetDevice");
    check(cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device), "cudaDeviceGetAttribute");
    const std::size_t need = std::max(forward_layout(K_, F_, max_H_, sizeof(T)).total(), backward_layout(K_, F_, sizeof(T)).total());
    if (need > static_cast<std::size_t>(limit))
      unsupported("the layer kernels need " + std::to_string(need) + " bytes of shared memory, the device has " +
                  std::to_string(limit));
  }

  const ModelInfo& info() const override { return info_; }
  void compute(const AtomGraph& graph, Dispatcher& dispatch, const OutputRequest& request, ModelOutputs& out) override;

 private:
  // The stages of compute(), each its kernel launch (none when it has no rows).
  void resize_buffers(std::size_t n, bool virial);
  void edge_geometry_stage();
  void embed_stage(std::size_t n);
  template <int FPL> void forward_layer(const LayerArgs<T>& a);
  void readout_stage(std::size_t n, std::size_t n_owned, bool gradients);
  template <int FPL> void backward_layer(const LayerArgs<T>& a);
  void forces_stage(std::size_t n, bool virial);
  LayerArgs<T> layer_args(int l, std::size_t n);

  ModelInfo info_;
  Params params_;
  int F_ = 0, K_ = 0, R_ = 0, max_H_ = 0;
  BasisView basis_;
  DeviceArray<T> embedding_;
  std::vector<DeviceLayer<T>> layers_;
  DeviceArray<T> readout_w1_, readout_b1_, readout_w1t_, readout_w2_;
  T readout_b2_ = T(0);
  DeviceArray<double> reference_, morse_;

  DeviceGraph graph_;
  SenderIndex senders_;
  GraphView<T> view_;
  // Per-step buffers, kept between steps.
  DeviceArray<T> h_;         // (L + 1) x n_rows x F: h_0 .. h_L
  DeviceArray<T> u_;         // sum over layers of S x H
  DeviceArray<T> r_, grad_r_, pair_rows_, grad_h_, grad_agg_;
  DeviceArray<double> energy_rows_, forces_, virial_rows_, virial_, sums_, total_;
  DeviceArray<unsigned long long> active_;
  double active_edges_ = 0.0;  // edges within the cutoff, counted while profiling: what flops are charged for
};

template <class T>
LayerArgs<T> CudaNetwork<T>::layer_args(int l, std::size_t n) {
  const DeviceLayer<T>& d = layers_[static_cast<std::size_t>(l)];
  LayerArgs<T> a;
  a.g = view_;
  a.r = r_.data();
  a.basis = basis_;
  a.cutoff = params_.cutoff;
  a.K = K_;
  a.F = F_;
  a.H = d.H;
  a.silu = params_.activation == Activation::silu;
  a.wf = d.wf.data();
  a.bf = d.bf.data();
  a.w1 = d.w1.data();
  a.b1 = d.b1.data();
  a.w1t = d.w1t.data();
  a.w2 = d.w2.data();
  a.b2 = d.b2.data();
  a.w2t = d.w2t.data();
  a.h = h_.data() + static_cast<std::size_t>(l) * n * F_;
  a.h_next = h_.data() + static_cast<std::size_t>(l + 1) * n * F_;
  std::size_t u_offset = 0;
  for (int k = 0; k < l; ++k) u_offset += view_.n_segments * static_cast<std::size_t>(layers_[k].H);
  a.u = u_.data() + u_offset;
  a.grad_h = grad_h_.data();
  a.grad_agg = grad_agg_.data();
  a.grad_r = grad_r_.data();
  a.need_grad_h = l > 0;
  return a;
}

template <class T>
template <int FPL>
void CudaNetwork<T>::forward_layer(const LayerArgs<T>& a) {
  const std::size_t smem = forward_layout(a.K, a.F, a.H, sizeof(T)).total();
  allow_shared_memory(cfconv_update_forward<T, FPL>, smem);
  // Bytes per listed edge (r is read for each), gathers and flops per edge within the cutoff.
  const double E = double(graph_.n_edges), Ea = active_edges_, S = double(a.g.n_segments), t = sizeof(T);
  LaunchTimer timer("DistSpec::MPNN::cfconv_update_forward", E * t + Ea * 4 + S * (12 + 2 * t * a.F + t * a.H),
                    E * t + Ea * (4 + t * a.F) + S * (12 + 2 * t * a.F + t * a.H),
                    Ea * (2.0 * a.K * a.F + 2.0 * a.F + 10.0 * a.K) + S * 4.0 * a.F * a.H);
  cfconv_update_forward<T, FPL><<<grid_for(a.g.n_segments, kWarps), kWarps * 32, smem>>>(a);
  check_launch("DistSpec::MPNN::cfconv_update_forward");
}

template <class T>
template <int FPL>
void CudaNetwork<T>::backward_layer(const LayerArgs<T>& a) {
  const double E = double(graph_.n_edges), Ea = active_edges_, S = double(a.g.n_segments), n = double(a.g.n_rows),
               t = sizeof(T);
  if (a.g.n_segments) {
    LaunchTimer timer("DistSpec::MPNN::update_backward", S * (8 + 2 * t * a.F + t * a.H), S * (8 + 2 * t * a.F + t * a.H),
                      S * 4.0 * a.F * a.H);
    update_backward<T><<<grid_for(a.g.n_segments, kWarps), kWarps * 32, kWarps * row_scratch(a.F, a.H, sizeof(T))>>>(a);
    check_launch("DistSpec::MPNN::update_backward");
  }
  const std::size_t smem = backward_layout(a.K, a.F, sizeof(T)).total();
  allow_shared_memory(cfconv_backward<T, FPL>, smem);
  LaunchTimer timer("DistSpec::MPNN::cfconv_backward", E * (4 + t) + Ea * (4 + 2 * t) + n * (12 + t * a.F * (1 + a.need_grad_h)),
                    E * (4 + t) + Ea * (4 + 2 * t + t * a.F) + n * (12 + t * a.F * (1 + a.need_grad_h)),
                    Ea * (4.0 * a.K * a.F + 10.0 * a.F + 14.0 * a.K));
  cfconv_backward<T, FPL><<<grid_for(a.g.n_rows, kWarps), kWarps * 32, smem>>>(a);
  check_launch("DistSpec::MPNN::cfconv_backward");
}

template <class T>
void CudaNetwork<T>::resize_buffers(std::size_t n, bool virial) {
  const std::size_t S = graph_.n_receivers, E = graph_.n_edges, F = static_cast<std::size_t>(F_);
  std::size_t u_size = 0;
  for (const DeviceLayer<T>& d : layers_) u_size += S * static_cast<std::size_t>(d.H);
  h_.resize((static_cast<std::size_t>(params_.n_layers()) + 1) * n * F);
  u_.resize(u_size);
  r_.resize(E);
  grad_r_.resize(E);
  pair_rows_.resize(n);
  energy_rows_.resize(n);
  grad_h_.resize(n * F);
  grad_agg_.resize(S * F);
  forces_.resize(3 * n);
  virial_rows_.resize(virial ? 6 * n : 0);
  virial_.resize(6);
  pair_rows_.zero();
  energy_rows_.zero();
  virial_.zero();
}

// Edge lengths, the cutoff mask and the baseline's pair energies; counts the edges within the
// cutoff while profiling (what the layers' flops are charged for).
template <class T>
void CudaNetwork<T>::edge_geometry_stage() {
  const std::size_t S = graph_.n_receivers, E = graph_.n_edges;
  unsigned long long active = 0;
  if (S) {
    GeometryArgs<T> g;
    g.g = view_;
    g.cutoff = params_.cutoff;
    g.cutsq = params_.cutoff * params_.cutoff;
    g.switch_inner = params_.baseline_switch.inner;
    g.morse = morse_.data();
    g.n_species = params_.n_species;
    g.r = r_.data();
    g.grad_r = grad_r_.data();
    g.pair_rows = pair_rows_.data();
    if (profiling()) {
      active_.resize(1);
      check(cudaMemsetAsync(active_.data(), 0, sizeof(unsigned long long)), "cudaMemsetAsync");
      g.active = active_.data();
    }
    LaunchTimer timer("DistSpec::MPNN::edge_geometry", double(E) * (4 + 2 * sizeof(T)) + double(S) * 48,
                      double(E) * (36 + 2 * sizeof(T)) + double(S) * 48, double(E) * 40);
    edge_geometry<T><<<grid_for(S, kWarps), kWarps * 32>>>(g);
    check_launch("DistSpec::MPNN::edge_geometry");
  }
  if (S && profiling()) active_.download(&active, 1);
  active_edges_ = profiling() ? double(active) : double(E);
}

// h_0: each row's species embedding.
template <class T>
void CudaNetwork<T>::embed_stage(std::size_t n) {
  if (!n) return;
  const std::size_t F = static_cast<std::size_t>(F_);
  LaunchTimer timer("DistSpec::MPNN::embed", double(n) * (4 + F * sizeof(T)), double(n) * (4 + F * sizeof(T)), 0);
  embed<T><<<grid_for(n * F, 256), 256>>>(graph_.species.data(), n, F_, embedding_.data(), h_.data());
  check_launch("DistSpec::MPNN::embed");
}

// Per-row energies of owned rows from h_L, and (with gradients) the readout's gradient into grad h_L.
template <class T>
void CudaNetwork<T>::readout_stage(std::size_t n, std::size_t n_owned, bool gradients) {
  if (gradients) grad_h_.zero();
  if (!n_owned) return;
  const std::size_t F = static_cast<std::size_t>(F_);
  ReadoutArgs<T> a;
  a.h = h_.data() + static_cast<std::size_t>(params_.n_layers()) * n * F;
  a.species = graph_.species.data();
  a.n_owned = n_owned;
  a.F = F_;
  a.R = R_;
  a.silu = params_.activation == Activation::silu;
  a.w1 = readout_w1_.data();
  a.b1 = readout_b1_.data();
  a.w1t = readout_w1t_.data();
  a.w2 = readout_w2_.data();
  a.b2 = readout_b2_;
  a.pair_rows = pair_rows_.data();
  a.reference = reference_.data();
  a.energy_rows = energy_rows_.data();
  a.grad_h = gradients ? grad_h_.data() : nullptr;
  LaunchTimer timer("DistSpec::MPNN::readout", double(n_owned) * (4 + 2 * F * sizeof(T) + 8 + sizeof(T)),
                    double(n_owned) * (4 + 2 * F * sizeof(T) + 8 + sizeof(T)), double(n_owned) * 4.0 * F * R_);
  readout<T><<<grid_for(n_owned, kWarps), kWarps * 32, kWarps * row_scratch(F_, R_, sizeof(T))>>>(a);
  check_launch("DistSpec::MPNN::readout");
}

// Forces and (with virial) per-row virials from dE/dr.
template <class T>
void CudaNetwork<T>::forces_stage(std::size_t n, bool virial) {
  if (!n) return;
  const std::size_t E = graph_.n_edges;
  ForceArgs<T> a;
  a.g = view_;
  a.r = r_.data();
  a.grad_r = grad_r_.data();
  a.forces = forces_.data();
  a.virial_rows = virial ? virial_rows_.data() : nullptr;
  LaunchTimer timer("DistSpec::MPNN::forces_virial",
                    double(E) * (8 + 2 * sizeof(T)) + double(n) * (24 + 16 + 24 + (virial ? 48 : 0)),
                    double(E) * (8 + 2 * sizeof(T) + 2 * 24 + 8) + double(n) * (24 + 16 + 24 + (virial ? 48 : 0)),
                    double(E) * (virial ? 2 * 30 : 2 * 12));
  forces_virial<T><<<grid_for(n, kWarps), kWarps * 32>>>(a);
  check_launch("DistSpec::MPNN::forces_virial");
}

template <class T>
void CudaNetwork<T>::compute(const AtomGraph& graph, Dispatcher& dispatch, const OutputRequest& request,
                             ModelOutputs& out) {
  require_cuda_dispatcher(dispatch, "mpnn");
  const std::size_t n = graph.n_rows(), n_owned = graph.n_owned, F = static_cast<std::size_t>(F_);
  out.reset(n, request, request.rows_on_device);
  if (graph_.upload(graph, params_.n_species, "mpnn", "")) senders_.build(graph_);
  const std::size_t S = graph_.n_receivers;
  const int L = params_.n_layers();
  const bool gradients = request.forces || request.virial || request.virial_rows;
  const bool virial = request.virial || request.virial_rows;

  view_ = GraphView<T>{graph_.x.data(), graph_.species.data(), graph_.receivers.data(), graph_.offsets.data(),
                       graph_.senders.data(), n, n_owned, S, senders_.edge_segment.data(), senders_.row_segment.data(),
                       senders_.by_sender.data(), senders_.sender_offsets.data()};
  resize_buffers(n, virial);
  edge_geometry_stage();
  embed_stage(n);

  // Layers. h_0 holds promoted species' embeddings on halo rows already (replicated); from
  // layer 2 on the policy refreshes the halo rows of h_l before they are read.
  for (int l = 0; l < L; ++l) {
    const LayerArgs<T> a = layer_args(l, n);
    dispatch.before_gather(Rows<T>{const_cast<T*>(a.h), n, F_}, l == 0 ? RowKind::replicated : RowKind::features);
    if (n) check(cudaMemcpyAsync(a.h_next, a.h, n * F * sizeof(T), cudaMemcpyDeviceToDevice), "cudaMemcpyAsync (h)");
    if (!S) continue;
    if (F_ <= 64) forward_layer<2>(a);
    else forward_layer<4>(a);
  }

  readout_stage(n, n_owned, gradients);
  out.energy = device_sum(energy_rows_.data(), n_owned, sums_, total_);
  // Rows left on the device are set even without gradients: forces then stay zero there.
  if (request.rows_on_device) {
    if (!gradients) forces_.zero();
    out.device.forces = forces_.data();
    out.device.energy_rows = request.energy_rows ? energy_rows_.data() : nullptr;
  } else if (request.energy_rows) {
    energy_rows_.download(out.energy_rows.data(), n);
  }
  if (!gradients) return;

  // Reverse pass, layer L .. 1; grad h_l accumulates in place in grad_h_.
  for (int l = L - 1; l >= 0; --l) {
    const LayerArgs<T> a = layer_args(l, n);
    if (n) {
      if (F_ <= 64) backward_layer<2>(a);
      else backward_layer<4>(a);
    }
    if (l > 0) dispatch.before_gather_adjoint(Rows<T>{grad_h_.data(), n, F_}, RowKind::features);
  }

  forces_stage(n, virial);
  if (!request.rows_on_device) forces_.download(out.forces.data(), 3 * n);
  if (virial) {
    add_column_sums(virial_rows_.data(), n, 6, virial_.data(), sums_);
    if (request.virial) virial_.download(out.virial.data(), 6);
    if (request.virial_rows) {
      if (request.rows_on_device) out.device.virial_rows = virial_rows_.data();
      else virial_rows_.download(out.virial_rows.data(), 6 * n);
    }
  }
}

}  // namespace

std::unique_ptr<Model> make_cuda_model(ModelInfo info, Params params) {
  info.message_passing_layers = params.n_layers();
  info.halo_feature_reads = params.n_layers() - 1;
  info.comm_width = params.features;
  if (params.precision == Precision::fp32) return std::make_unique<CudaNetwork<float>>(std::move(info), std::move(params));
  return std::make_unique<CudaNetwork<double>>(std::move(info), std::move(params));
}

}  // namespace distspec::models::mpnn
