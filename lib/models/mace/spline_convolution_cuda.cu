// The convolution of spline_convolution.h on the GPU. One block per receiver row, one thread per
// channel (blockDim = C rounded up to a warp, C <= 1024): a row's edges are found by binary search
// in the grouped receivers, and each thread sums its channel's share of the row over them, so the
// forward writes every message row once, with no atomics. Every thread of a block computes the
// edge's radius (fp64), harmonics and spline segment itself: the loads are broadcasts, and the
// block needs no synchronisation in the forward.
//
// The backward runs the same grid: the receiver's gradient row drives each edge's three products
// (d/dx of the sender, d/dR and d/dY per channel); the channels' d/dr and d/dY are summed across the
// block for the edge's d/dv, and the sender's row gets its gradient by atomics. Atomics rather
// than a second pass by sender: that pass needs a sender-grouped copy of the edge list each step,
// and rereads every receiver gradient row through it; the atomics of one edge go to one sender row
// (D_in per channel, 4 for MACE-MP-0), spread over the launch, so they rarely collide. They make
// fp32 gradient sums order-dependent (1e-7 relative). To measure on the GPU machine.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "models/mace/spherical_harmonics.h"
#include "models/mace/spline_convolution.h"

namespace distspec::models::mace {
namespace {

constexpr int kMaxD = 2 * kMaxShL + 1;
constexpr int kWarp = 32;
constexpr int kMaxThreads = 1024;
constexpr int kDefaultSharedBytes = 48 * 1024;
// What a block reduces per edge in the backward: dE/dr and dE/dY_1..15 (Y_0 is constant).
constexpr int kEdgeSums = kShDim;

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw std::runtime_error(std::string("distspec_mace::spline_convolution (CUDA): ") + what + ": " +
                             cudaGetErrorString(status));
}

__device__ int64_t first_edge_of(const int64_t* receivers, int64_t n_edges, int64_t row) {
  int64_t lo = 0, hi = n_edges;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (receivers[mid] < row) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

struct DevicePath {
  int d1, d2, d3, y0;
  int64_t in, out, cg_begin, cg_end;
};

__device__ DevicePath path_of(const int64_t* row) {
  return {static_cast<int>(2 * row[kL1] + 1), static_cast<int>(2 * row[kL2] + 1),
          static_cast<int>(2 * row[kL3] + 1), static_cast<int>(row[kL2] * row[kL2]),
          row[kInOffset], row[kOutOffset], row[kCgBegin], row[kCgEnd]};
}

// The edge's direction and place in the table; false where it contributes nothing.
template <class T>
__device__ bool edge_direction(const SplineConvolution<T>& conv, int64_t e, double u[3], double& r) {
  const T* v = conv.vectors + 3 * e;
  const double x = v[0], y = v[1], z = v[2];
  r = sqrt(x * x + y * y + z * z);
  if (!conv.radial.inside(r)) return false;
  u[0] = x / r;
  u[1] = y / r;
  u[2] = z / r;
  return true;
}

// A[i][k] = sum_j cg[i, j, k] Y_j for one path.
template <class T>
__device__ void coupling(const SplineConvolution<T>& conv, const DevicePath& p, const double* Y, T A[kMaxD][kMaxD]) {
  for (int i = 0; i < p.d1; ++i)
    for (int k = 0; k < p.d3; ++k) A[i][k] = T(0);
  for (int64_t n = p.cg_begin; n < p.cg_end; ++n) {
    const int64_t* ijk = conv.cg_ijk + 3 * n;
    A[ijk[0]][ijk[2]] += conv.cg_value[n] * static_cast<T>(Y[p.y0 + ijk[1]]);
  }
}

template <class T>
__global__ void forward_kernel(SplineConvolution<T> conv, int64_t n_out, T* message) {
  extern __shared__ unsigned char shared_bytes[];
  T* acc = reinterpret_cast<T*>(shared_bytes);  // [out_dim / C][blockDim]: this thread's row slots
  const int64_t row = blockIdx.x;
  const int tid = threadIdx.x, stride = blockDim.x;
  const int64_t C = conv.channels, u = tid;
  const bool active = u < C;
  const int64_t slots = conv.out_dim / C;
  for (int64_t q = 0; q < slots; ++q) acc[q * stride + tid] = T(0);
  const int64_t begin = first_edge_of(conv.receivers, conv.n_edges, row);
  const int64_t end = first_edge_of(conv.receivers, conv.n_edges, row + 1);
  T A[kMaxD][kMaxD];
  for (int64_t e = begin; e < end && active; ++e) {
    double dir[3], r, Y[kShDim];
    if (!edge_direction(conv, e, dir, r)) continue;
    spherical_harmonics(dir, Y);
    const SplinePoint point = conv.radial.locate(r);
    const T* x = conv.node_feats + conv.senders[e] * conv.in_dim;
    for (int64_t q = 0; q < conv.n_paths; ++q) {
      const DevicePath p = path_of(conv.paths + q * kPathColumns);
      coupling(conv, p, Y, A);
      const T R = conv.radial.evaluate(point, q * C + u, false);
      const T* xu = x + p.in + u * p.d1;
      T* slot = acc + (p.out / C) * stride + tid;
      for (int i = 0; i < p.d1; ++i) {
        const T xr = R * xu[i];
        for (int k = 0; k < p.d3; ++k) slot[k * stride] += xr * A[i][k];
      }
    }
  }
  if (!active || row >= n_out) return;
  T* out = message + row * conv.out_dim;
  // Paths that share an output block write the same sums twice.
  for (int64_t q = 0; q < conv.n_paths; ++q) {
    const DevicePath p = path_of(conv.paths + q * kPathColumns);
    for (int k = 0; k < p.d3; ++k) out[p.out + u * p.d3 + k] = acc[(p.out / C + k) * stride + tid];
  }
}

// Sums the block's values of `v` into sums[0..kEdgeSums) of thread 0 (shared `scratch` of
// kEdgeSums per warp).
template <class T>
__device__ void block_sum(T v[kEdgeSums], T* scratch) {
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp, warps = (blockDim.x + kWarp - 1) / kWarp;
  for (int q = 0; q < kEdgeSums; ++q) {
    T s = v[q];
    for (int offset = kWarp / 2; offset > 0; offset /= 2) s += __shfl_down_sync(0xffffffffu, s, offset);
    if (lane == 0) scratch[warp * kEdgeSums + q] = s;
  }
  __syncthreads();
  if (threadIdx.x == 0)
    for (int q = 0; q < kEdgeSums; ++q) {
      T s = T(0);
      for (int w = 0; w < warps; ++w) s += scratch[w * kEdgeSums + q];
      v[q] = s;
    }
  __syncthreads();
}

template <class T>
__global__ void backward_kernel(SplineConvolution<T> conv, int64_t n_out, const T* grad_message, T* grad_node_feats,
                                T* grad_vectors) {
  __shared__ T scratch[(kMaxThreads / kWarp) * kEdgeSums];
  const int64_t row = blockIdx.x;
  const int64_t C = conv.channels, u = threadIdx.x;
  const bool active = u < C;
  const int64_t begin = first_edge_of(conv.receivers, conv.n_edges, row);
  const int64_t end = row < n_out ? first_edge_of(conv.receivers, conv.n_edges, row + 1) : begin;
  const T* gm = grad_message + row * conv.out_dim;
  T A[kMaxD][kMaxD];
  for (int64_t e = begin; e < end; ++e) {
    double dir[3], r;
    // Uniform across the block: every thread reads the same vector.
    if (!edge_direction(conv, e, dir, r)) {
      if (threadIdx.x == 0) grad_vectors[3 * e] = grad_vectors[3 * e + 1] = grad_vectors[3 * e + 2] = T(0);
      continue;
    }
    double Y[kShDim];
    spherical_harmonics(dir, Y);
    const SplinePoint point = conv.radial.locate(r);
    const int64_t s = conv.senders[e];
    const T* x = conv.node_feats + s * conv.in_dim;
    T sums[kEdgeSums] = {};  // [0]: dE/dr, [j]: dE/dY_j
    T gx[kMaxInPerChannel] = {};  // this channel's d/dx of the sender, per input slot
    for (int64_t q = 0; q < conv.n_paths && active; ++q) {
      const DevicePath p = path_of(conv.paths + q * kPathColumns);
      coupling(conv, p, Y, A);
      const T R = conv.radial.evaluate(point, q * C + u, false);
      const T dR = conv.radial.evaluate(point, q * C + u, true);
      T xu[kMaxD], gu[kMaxD];
      for (int i = 0; i < p.d1; ++i) xu[i] = x[p.in + u * p.d1 + i];
      for (int k = 0; k < p.d3; ++k) gu[k] = gm[p.out + u * p.d3 + k];
      T dE_dR = T(0);
      for (int i = 0; i < p.d1; ++i) {
        T t = T(0);
        for (int k = 0; k < p.d3; ++k) t += A[i][k] * gu[k];
        gx[p.in / C + i] += R * t;
        dE_dR += xu[i] * t;
      }
      sums[0] += dR * dE_dR;
      // Y_0 is constant, and its slot holds dE/dr: an l = 0 path adds nothing through Y.
      for (int64_t n = p.cg_begin; n < p.cg_end && p.y0 > 0; ++n) {
        const int64_t* ijk = conv.cg_ijk + 3 * n;
        sums[p.y0 + ijk[1]] += conv.cg_value[n] * R * xu[ijk[0]] * gu[ijk[2]];
      }
    }
    if (active) {
      // One atomic per input slot of this channel: paths reading one input block share its slots.
      T* gs = grad_node_feats + s * conv.in_dim;
      for (int64_t q = 0; q < conv.n_paths; ++q) {
        const DevicePath p = path_of(conv.paths + q * kPathColumns);
        bool first = true;
        for (int64_t earlier = 0; earlier < q && first; ++earlier)
          first = conv.paths[earlier * kPathColumns + kInOffset] != p.in;
        if (!first) continue;
        for (int i = 0; i < p.d1; ++i) atomicAdd(gs + p.in + u * p.d1 + i, gx[p.in / C + i]);
      }
    }
    block_sum(sums, scratch);
    if (threadIdx.x == 0) {
      double Yv[kShDim], dY_dv[kShDim][3];
      spherical_harmonics_with_gradient(dir, r, Yv, dY_dv);
      for (int a = 0; a < 3; ++a) {
        double d = static_cast<double>(sums[0]) * dir[a];
        for (int j = 1; j < kShDim; ++j) d += static_cast<double>(sums[j]) * dY_dv[j][a];
        grad_vectors[3 * e + a] = static_cast<T>(d);
      }
    }
  }
}

int threads_for(int64_t channels) {
  if (channels < 1 || channels > kMaxThreads)
    throw std::runtime_error("distspec_mace::spline_convolution (CUDA): " + std::to_string(channels) +
                             " channels; the CUDA kernels take 1 to 1024 (one thread per channel)");
  return static_cast<int>((channels + kWarp - 1) / kWarp * kWarp);
}

}  // namespace

template <class T>
void spline_convolution_forward_cuda(const SplineConvolution<T>& conv, int64_t n_out, T* message,
                                     CUstream_st* stream) {
  if (n_out == 0) return;
  const int threads = threads_for(conv.channels);
  const size_t shared = static_cast<size_t>(conv.out_dim / conv.channels) * threads * sizeof(T);
  if (shared > kDefaultSharedBytes)
    check(cudaFuncSetAttribute(forward_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               static_cast<int>(shared)),
          "the forward's row accumulators exceed the shared memory a block can have");
  forward_kernel<T><<<static_cast<unsigned>(n_out), threads, shared, stream>>>(conv, n_out, message);
  check(cudaGetLastError(), "forward launch");
}

template <class T>
void spline_convolution_backward_cuda(const SplineConvolution<T>& conv, int64_t n_out, const T* grad_message,
                                      T* grad_node_feats, T* grad_vectors, CUstream_st* stream) {
  if (conv.n_edges == 0) return;
  const int threads = threads_for(conv.channels);
  // Every edge's receiver is a row < n_out (the op's contract), so the rows' blocks cover every
  // edge and write each d/dv once.
  if (n_out > 0)
    backward_kernel<T><<<static_cast<unsigned>(n_out), threads, 0, stream>>>(conv, n_out, grad_message,
                                                                           grad_node_feats, grad_vectors);
  check(cudaGetLastError(), "backward launch");
}

template void spline_convolution_forward_cuda<float>(const SplineConvolution<float>&, int64_t, float*, CUstream_st*);
template void spline_convolution_forward_cuda<double>(const SplineConvolution<double>&, int64_t, double*,
                                                      CUstream_st*);
template void spline_convolution_backward_cuda<float>(const SplineConvolution<float>&, int64_t, const float*, float*,
                                                      float*, CUstream_st*);
template void spline_convolution_backward_cuda<double>(const SplineConvolution<double>&, int64_t, const double*,
                                                       double*, double*, CUstream_st*);

}  // namespace distspec::models::mace
