// The convolution of spline_convolution.h on the GPU. One block per receiver row, one thread per
// channel (blockDim = C rounded up to a warp, C <= 1024): a row's edges are found by binary search
// in the grouped receivers, and each thread sums its channel's share of the row over them, so the
// forward writes every message row once, with no atomics.
//
// What is the same for every channel of an edge (its fp64 radius and direction, harmonics, spline
// segment, and each path's coupling matrix A = cg . Y) is computed once per edge by the block, for
// a tile of up to kTileEdges edges at a time, into shared memory; the channel threads then read it as
// broadcasts. Each path's channel work is instantiated for its (l1, l2, l3), so that a thread's
// rows of x, the gradient and its 16 sums stay in registers (loops of a size known only at run
// time would index them through local memory).
//
// The backward runs the same grid: the receiver's gradient row drives each edge's three products
// (d/dx of the sender, d/dR and d/dY per channel). The channels' d/dr and d/dY of an edge are
// summed per warp by shuffles and across warps once per tile, where one thread per edge turns them
// into the edge's d/dv. The sender's row gets its gradient by atomics: a second pass by sender
// would need a sender-grouped copy of the edge list each step and reread every receiver gradient
// row through it; the atomics of one edge go to one sender row (D_in per channel, 4 for MACE-MP-0),
// spread over the launch, so they rarely collide. They make fp32 gradient sums order-dependent
// (1e-7 relative).
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>
#include <type_traits>

#include "models/mace/spherical_harmonics.h"
#include "models/mace/spline_convolution.h"

namespace distspec::models::mace {
namespace {

constexpr int kMaxD = 2 * kMaxShL + 1;
constexpr int kWarp = 32;
constexpr int kMaxThreads = 1024;
constexpr int kDefaultSharedBytes = 48 * 1024;
// Most edges whose shared data a block holds at once: each tile costs the block 4
// synchronisations. Fewer where the paths' matrices would not fit (SharedLayout).
constexpr int kTileEdges = 8;
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

// One row of the path table as the block keeps it: offsets within a row in elements, and where
// the path's coupling matrix (per tile edge) and dense CG block (backward) lie in shared memory.
struct SharedPath {
  int l1, l2, l3;
  int in, out;          // element offsets of the path's input and output blocks in a row
  int a_offset;         // of A[d1][d3] within an edge's coupling matrices
  int cg_offset;        // of cg[d1][d2][d3] within the dense CG blocks
  int first_of_input;   // the first path to read its input block: it sends that block's atomics
};

// An edge as every channel thread reads it.
template <class T>
struct EdgeShared {
  double dir[3];
  double r;
  double Y[kShDim];
  T value_basis[4];
  T slope_basis[4];
  int64_t knot;
  int64_t sender;
  int inside;
};

__host__ __device__ constexpr size_t align_up(size_t bytes) {
  return (bytes + 15) / 16 * 16;
}

// The block's dynamic shared memory: edges, paths, coupling matrices, then the pass's own arrays
// (forward: the row's output slots per thread; backward: the dense CG blocks, the sender's input
// slots per thread and the warps' edge sums), for `tile` edges at a time. Sizes are bounds from
// n_paths (the path table is on the device); the block packs its paths into them.
template <class T>
struct SharedLayout {
  size_t edges = 0, paths = 0, coupling = 0, cg = 0, slots = 0, sums = 0, total = 0;

  __host__ __device__ SharedLayout(int64_t n_paths, int64_t slot_count, int threads, bool backward, int tile) {
    const size_t a_bound = static_cast<size_t>(n_paths) * kMaxD * kMaxD;
    size_t at = 0;
    edges = at;
    at += align_up(sizeof(EdgeShared<T>) * tile);
    paths = at;
    at += align_up(sizeof(SharedPath) * static_cast<size_t>(n_paths));
    coupling = at;
    at += align_up(sizeof(T) * a_bound * tile);
    cg = at;
    if (backward) at += align_up(sizeof(T) * static_cast<size_t>(n_paths) * kMaxD * kMaxD * kMaxD);
    slots = at;
    at += align_up(sizeof(T) * static_cast<size_t>(slot_count) * threads);
    sums = at;
    if (backward) at += align_up(sizeof(T) * tile * (threads / kWarp) * kEdgeSums);
    total = at;
  }
};

template <class T>
struct BlockShared {
  EdgeShared<T>* edges;
  SharedPath* paths;
  T* coupling;  // [tile][a_stride]
  T* cg;        // backward: dense [d1][d2][d3] per path
  T* slots;     // [slot][blockDim]: this thread's row slots
  T* sums;      // backward: [tile][warps][kEdgeSums]
  int a_stride;

  __device__ BlockShared(unsigned char* bytes, const SharedLayout<T>& layout)
      : edges(reinterpret_cast<EdgeShared<T>*>(bytes + layout.edges)),
        paths(reinterpret_cast<SharedPath*>(bytes + layout.paths)),
        coupling(reinterpret_cast<T*>(bytes + layout.coupling)),
        cg(reinterpret_cast<T*>(bytes + layout.cg)),
        slots(reinterpret_cast<T*>(bytes + layout.slots)),
        sums(reinterpret_cast<T*>(bytes + layout.sums)),
        a_stride(0) {}
};

// The path table into shared memory (packed offsets from one thread: n_paths is small), then, for
// the backward, each path's dense CG block from its own thread (sparse entries summed in order).
template <class T>
__device__ void load_paths(const SplineConvolution<T>& conv, BlockShared<T>& s, bool dense_cg) {
  __shared__ int a_stride;
  if (threadIdx.x == 0) {
    int a = 0, cg = 0;
    for (int64_t q = 0; q < conv.n_paths; ++q) {
      const int64_t* row = conv.paths + q * kPathColumns;
      SharedPath p;
      p.l1 = static_cast<int>(row[kL1]);
      p.l2 = static_cast<int>(row[kL2]);
      p.l3 = static_cast<int>(row[kL3]);
      p.in = static_cast<int>(row[kInOffset]);
      p.out = static_cast<int>(row[kOutOffset]);
      p.a_offset = a;
      p.cg_offset = cg;
      p.first_of_input = 1;
      for (int64_t earlier = 0; earlier < q; ++earlier)
        if (conv.paths[earlier * kPathColumns + kInOffset] == row[kInOffset]) p.first_of_input = 0;
      const int d1 = 2 * p.l1 + 1, d2 = 2 * p.l2 + 1, d3 = 2 * p.l3 + 1;
      a += d1 * d3;
      cg += d1 * d2 * d3;
      s.paths[q] = p;
    }
    a_stride = a;
  }
  __syncthreads();
  s.a_stride = a_stride;
  if (!dense_cg) return;
  for (int64_t q = threadIdx.x; q < conv.n_paths; q += blockDim.x) {
    const SharedPath p = s.paths[q];
    const int d2 = 2 * p.l2 + 1, d3 = 2 * p.l3 + 1, size = (2 * p.l1 + 1) * d2 * d3;
    T* block = s.cg + p.cg_offset;
    for (int n = 0; n < size; ++n) block[n] = T(0);
    const int64_t* row = conv.paths + q * kPathColumns;
    for (int64_t n = row[kCgBegin]; n < row[kCgEnd]; ++n) {
      const int64_t* ijk = conv.cg_ijk + 3 * n;
      block[(ijk[0] * d2 + ijk[1]) * d3 + ijk[2]] += conv.cg_value[n];
    }
  }
  __syncthreads();
}

// Tile edges [e0, e0 + n): radius, direction, harmonics and spline segment, one thread per edge;
// then each (edge, path)'s A[i][k] = sum_j cg[i, j, k] Y_j, one thread per pair. Ends synchronised.
template <class T>
__device__ void load_tile(const SplineConvolution<T>& conv, int64_t e0, int n, BlockShared<T>& s) {
  for (int t = threadIdx.x; t < n; t += blockDim.x) {
    EdgeShared<T>& g = s.edges[t];
    const int64_t e = e0 + t;
    const T* v = conv.vectors + 3 * e;
    const double x = v[0], y = v[1], z = v[2];
    const double r = sqrt(x * x + y * y + z * z);
    g.r = r;
    g.sender = conv.senders[e];
    g.inside = conv.radial.inside(r);
    if (!g.inside) continue;
    double dir[3] = {x / r, y / r, z / r}, Y[kShDim];
    spherical_harmonics(dir, Y);
    const SplinePoint point = conv.radial.locate(r);
    for (int a = 0; a < 3; ++a) g.dir[a] = dir[a];
    for (int j = 0; j < kShDim; ++j) g.Y[j] = Y[j];
    for (int b = 0; b < 4; ++b) {
      g.value_basis[b] = static_cast<T>(point.value_basis[b]);
      g.slope_basis[b] = static_cast<T>(point.slope_basis[b]);
    }
    g.knot = point.knot;
  }
  __syncthreads();
  for (int64_t w = threadIdx.x; w < n * conv.n_paths; w += blockDim.x) {
    const int t = static_cast<int>(w / conv.n_paths);
    const int64_t q = w % conv.n_paths;
    if (!s.edges[t].inside) continue;
    const SharedPath& p = s.paths[q];
    const int d3 = 2 * p.l3 + 1, y0 = p.l2 * p.l2;
    T* A = s.coupling + t * s.a_stride + p.a_offset;
    for (int m = 0; m < (2 * p.l1 + 1) * d3; ++m) A[m] = T(0);
    const int64_t* row = conv.paths + q * kPathColumns;
    for (int64_t c = row[kCgBegin]; c < row[kCgEnd]; ++c) {
      const int64_t* ijk = conv.cg_ijk + 3 * c;
      A[ijk[0] * d3 + ijk[2]] += conv.cg_value[c] * static_cast<T>(s.edges[t].Y[y0 + ijk[1]]);
    }
  }
  __syncthreads();
}

template <int L1, int L2, int L3>
struct Dims {
  enum : int { d1 = 2 * L1 + 1, d2 = 2 * L2 + 1, d3 = 2 * L3 + 1, y0 = L2 * L2 };
};

// f(Dims<l1, l2, l3>{}) for the path's degrees; a triple that breaks the triangle rule (which no
// e3nn path has) instantiates nothing.
template <int L1, int L2, class F>
__device__ __forceinline__ void with_l3(int l3, F& f) {
  constexpr int lo = L1 > L2 ? L1 - L2 : L2 - L1, hi = L1 + L2;
  switch (l3) {
    case 0: if constexpr (lo <= 0 && 0 <= hi) f(Dims<L1, L2, 0>{}); break;
    case 1: if constexpr (lo <= 1 && 1 <= hi) f(Dims<L1, L2, 1>{}); break;
    case 2: if constexpr (lo <= 2 && 2 <= hi) f(Dims<L1, L2, 2>{}); break;
    case 3: if constexpr (lo <= 3 && 3 <= hi) f(Dims<L1, L2, 3>{}); break;
    default: break;
  }
}
template <int L1, class F>
__device__ __forceinline__ void with_l2(int l2, int l3, F& f) {
  switch (l2) {
    case 0: with_l3<L1, 0>(l3, f); break;
    case 1: with_l3<L1, 1>(l3, f); break;
    case 2: with_l3<L1, 2>(l3, f); break;
    case 3: with_l3<L1, 3>(l3, f); break;
    default: break;
  }
}
template <class F>
__device__ __forceinline__ void with_dims(const SharedPath& p, F&& f) {
  static_assert(kMaxShL == 3, "with_dims instantiates l <= 3");
  switch (p.l1) {
    case 0: with_l2<0>(p.l2, p.l3, f); break;
    case 1: with_l2<1>(p.l2, p.l3, f); break;
    case 2: with_l2<2>(p.l2, p.l3, f); break;
    case 3: with_l2<3>(p.l2, p.l3, f); break;
    default: break;
  }
}

template <class T>
__global__ void forward_kernel(SplineConvolution<T> conv, int64_t n_out, int tile, T* message) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  const int stride = blockDim.x, tid = threadIdx.x;
  const int64_t C = conv.channels, u = tid, slots = conv.out_dim / C;
  BlockShared<T> s(shared_bytes, SharedLayout<T>(conv.n_paths, slots, stride, false, tile));
  load_paths(conv, s, false);
  const bool active = u < C;
  T* acc = s.slots + tid;
  for (int64_t q = 0; q < slots; ++q) acc[q * stride] = T(0);
  const int64_t row = blockIdx.x;
  const int64_t begin = first_edge_of(conv.receivers, conv.n_edges, row);
  const int64_t end = first_edge_of(conv.receivers, conv.n_edges, row + 1);
  for (int64_t e0 = begin; e0 < end; e0 += tile) {
    const int n = static_cast<int>(end - e0 < tile ? end - e0 : tile);
    load_tile(conv, e0, n, s);
    for (int t = 0; t < n && active; ++t) {
      const EdgeShared<T>& g = s.edges[t];
      if (!g.inside) continue;
      const T* x = conv.node_feats + g.sender * conv.in_dim;
      const T* A_edge = s.coupling + t * s.a_stride;
      for (int64_t q = 0; q < conv.n_paths; ++q) {
        const SharedPath& p = s.paths[q];
        with_dims(p, [&](auto dims) {
          using D = decltype(dims);
          const T R = conv.radial.combine(g.value_basis, g.knot, q * C + u);
          const T* xu = x + p.in + u * D::d1;
          T xr[D::d1];
#pragma unroll
          for (int i = 0; i < D::d1; ++i) xr[i] = R * xu[i];
          const T* A = A_edge + p.a_offset;
          T* slot = acc + (p.out / C) * stride;
#pragma unroll
          for (int k = 0; k < D::d3; ++k) {
            T m = T(0);
#pragma unroll
            for (int i = 0; i < D::d1; ++i) m += xr[i] * A[i * D::d3 + k];
            slot[k * stride] += m;
          }
        });
      }
    }
    __syncthreads();
  }
  if (!active || row >= n_out) return;
  T* out = message + row * conv.out_dim;
  // Paths that share an output block write the same sums twice.
  for (int64_t q = 0; q < conv.n_paths; ++q) {
    const SharedPath& p = s.paths[q];
    const int d3 = 2 * p.l3 + 1;
    for (int k = 0; k < d3; ++k) out[p.out + u * d3 + k] = acc[(p.out / C + k) * stride];
  }
}

template <class T>
__global__ void backward_kernel(SplineConvolution<T> conv, int64_t n_out, int tile, const T* grad_message,
                                T* grad_node_feats, T* grad_vectors) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  const int stride = blockDim.x, tid = threadIdx.x, lane = tid % kWarp, warp = tid / kWarp,
            warps = stride / kWarp;
  const int64_t C = conv.channels, u = tid, in_slots = conv.in_dim / C;
  BlockShared<T> s(shared_bytes, SharedLayout<T>(conv.n_paths, in_slots, stride, true, tile));
  load_paths(conv, s, true);
  const bool active = u < C;
  const int64_t row = blockIdx.x;
  const int64_t begin = first_edge_of(conv.receivers, conv.n_edges, row);
  const int64_t end = row < n_out ? first_edge_of(conv.receivers, conv.n_edges, row + 1) : begin;
  const T* gm = grad_message + row * conv.out_dim;
  T* gx = s.slots + tid;  // this channel's d/dx of the edge's sender, per input slot
  for (int64_t e0 = begin; e0 < end; e0 += tile) {
    const int n = static_cast<int>(end - e0 < tile ? end - e0 : tile);
    load_tile(conv, e0, n, s);
    for (int t = 0; t < n; ++t) {
      const EdgeShared<T>& g = s.edges[t];
      if (!g.inside) continue;  // uniform across the block
      T sums[kEdgeSums] = {};   // [0]: dE/dr, [j]: dE/dY_j
      if (active) {
        for (int64_t q = 0; q < in_slots; ++q) gx[q * stride] = T(0);
        const T* x = conv.node_feats + g.sender * conv.in_dim;
        const T* A_edge = s.coupling + t * s.a_stride;
        for (int64_t q = 0; q < conv.n_paths; ++q) {
          const SharedPath& p = s.paths[q];
          with_dims(p, [&](auto dims) {
            using D = decltype(dims);
            const T R = conv.radial.combine(g.value_basis, g.knot, q * C + u);
            const T dR = conv.radial.combine(g.slope_basis, g.knot, q * C + u);
            T xu[D::d1], gu[D::d3];
#pragma unroll
            for (int i = 0; i < D::d1; ++i) xu[i] = x[p.in + u * D::d1 + i];
#pragma unroll
            for (int k = 0; k < D::d3; ++k) gu[k] = gm[p.out + u * D::d3 + k];
            const T* A = A_edge + p.a_offset;
            T* gxp = gx + (p.in / C) * stride;
            T dE_dR = T(0);
#pragma unroll
            for (int i = 0; i < D::d1; ++i) {
              T a = T(0);  // (A g)_i
#pragma unroll
              for (int k = 0; k < D::d3; ++k) a += A[i * D::d3 + k] * gu[k];
              gxp[i * stride] += R * a;
              dE_dR += xu[i] * a;
            }
            sums[0] += dR * dE_dR;
            // Y_0 is constant, and its slot holds dE/dr: an l = 0 path adds nothing through Y.
            if constexpr (D::y0 > 0) {
              const T* cg = s.cg + p.cg_offset;
#pragma unroll
              for (int i = 0; i < D::d1; ++i) {
                const T rx = R * xu[i];
#pragma unroll
                for (int j = 0; j < D::d2; ++j) {
                  T m = T(0);
#pragma unroll
                  for (int k = 0; k < D::d3; ++k) m += cg[(i * D::d2 + j) * D::d3 + k] * gu[k];
                  sums[D::y0 + j] += rx * m;
                }
              }
            }
          });
        }
        // One atomic per input slot of this channel: paths reading one input block share its slots.
        T* gs = grad_node_feats + g.sender * conv.in_dim;
        for (int64_t q = 0; q < conv.n_paths; ++q) {
          const SharedPath& p = s.paths[q];
          if (!p.first_of_input) continue;
          const int d1 = 2 * p.l1 + 1;
          for (int i = 0; i < d1; ++i) atomicAdd(gs + p.in + u * d1 + i, gx[(p.in / C + i) * stride]);
        }
      }
#pragma unroll
      for (int q = 0; q < kEdgeSums; ++q) {
        T v = sums[q];
        for (int offset = kWarp / 2; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
        if (lane == 0) s.sums[(t * warps + warp) * kEdgeSums + q] = v;
      }
    }
    __syncthreads();
    // One thread per tile edge: the warps' sums, and the edge's d/dv through r and Y.
    for (int t = tid; t < n; t += stride) {
      const EdgeShared<T>& g = s.edges[t];
      T* gv = grad_vectors + 3 * (e0 + t);
      if (!g.inside) {
        gv[0] = gv[1] = gv[2] = T(0);
        continue;
      }
      double total[kEdgeSums] = {};
      for (int w = 0; w < warps; ++w)
        for (int q = 0; q < kEdgeSums; ++q) total[q] += static_cast<double>(s.sums[(t * warps + w) * kEdgeSums + q]);
      double Yv[kShDim], dY_dv[kShDim][3];
      spherical_harmonics_with_gradient(g.dir, g.r, Yv, dY_dv);
      for (int a = 0; a < 3; ++a) {
        double d = total[0] * g.dir[a];
        for (int j = 1; j < kShDim; ++j) d += total[j] * dY_dv[j][a];
        gv[a] = static_cast<T>(d);
      }
    }
    __syncthreads();
  }
}

int threads_for(int64_t channels) {
  if (channels < 1 || channels > kMaxThreads)
    throw std::runtime_error("distspec_mace::spline_convolution (CUDA): " + std::to_string(channels) +
                             " channels; the CUDA kernels take 1 to 1024 (one thread per channel)");
  return static_cast<int>((channels + kWarp - 1) / kWarp * kWarp);
}

// The block's layout for the largest tile (kTileEdges, then halves) whose shared memory this
// device gives one block, with the kernel allowed that much; refuses what fits not even one edge.
template <class T, class Kernel>
SharedLayout<T> reserve_shared(Kernel kernel, const SplineConvolution<T>& conv, int64_t slot_count, int threads,
                               bool backward, int& tile) {
  int device = 0, most = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&most, cudaDevAttrMaxSharedMemoryPerBlockOptin, device), "shared memory limit");
  for (tile = kTileEdges; tile >= 1; tile /= 2) {
    const SharedLayout<T> layout(conv.n_paths, slot_count, threads, backward, tile);
    if (layout.total > static_cast<size_t>(most)) continue;
    if (layout.total > kDefaultSharedBytes)
      check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(layout.total)),
            "reserving the block's shared memory");
    return layout;
  }
  const size_t need = SharedLayout<T>(conv.n_paths, slot_count, threads, backward, 1).total;
  throw std::runtime_error(std::string("distspec_mace::spline_convolution (CUDA): the ") +
                           (backward ? "backward" : "forward") + " needs " + std::to_string(need) +
                           " bytes of shared memory per block for " + std::to_string(conv.n_paths) + " paths and " +
                           std::to_string(conv.channels) + " channels, and this device gives at most " +
                           std::to_string(most) + "; export with fewer channels or paths, or run this layer on the CPU");
}

}  // namespace

template <class T>
void spline_convolution_forward_cuda(const SplineConvolution<T>& conv, int64_t n_out, T* message,
                                     CUstream_st* stream) {
  if (n_out == 0) return;
  const int threads = threads_for(conv.channels);
  int tile = 0;
  const size_t shared =
      reserve_shared(forward_kernel<T>, conv, conv.out_dim / conv.channels, threads, false, tile).total;
  forward_kernel<T><<<static_cast<unsigned>(n_out), threads, shared, stream>>>(conv, n_out, tile, message);
  check(cudaGetLastError(), "forward launch");
}

template <class T>
void spline_convolution_backward_cuda(const SplineConvolution<T>& conv, int64_t n_out, const T* grad_message,
                                      T* grad_node_feats, T* grad_vectors, CUstream_st* stream) {
  if (conv.n_edges == 0) return;
  const int threads = threads_for(conv.channels);
  int tile = 0;
  const size_t shared = reserve_shared(backward_kernel<T>, conv, conv.in_dim / conv.channels, threads, true, tile).total;
  // Every edge's receiver is a row < n_out (the op's contract), so the rows' blocks cover every
  // edge and write each d/dv once.
  if (n_out > 0)
    backward_kernel<T><<<static_cast<unsigned>(n_out), threads, shared, stream>>>(conv, n_out, tile, grad_message,
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
