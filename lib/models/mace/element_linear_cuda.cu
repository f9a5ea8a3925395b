// MACE's element-dependent linears on the GPU (element_linear.h): one thread per (node, column) of
// the result, consecutive columns on consecutive threads, so that a warp reads a row of the
// element's matrix (forward) or a node's gradient row (backward) together; the node's element is
// one per warp in the usual case of rows wider than a warp. A column sums over every path that
// writes it (the paths table is small and read by all threads alike).
#include "models/mace/element_linear.h"

#include <cuda_runtime.h>

#include <cmath>
#include <stdexcept>
#include <string>

namespace distspec::models::mace {
namespace {

constexpr int kThreads = 128;

template <class Real>
__device__ ElementLinearPath path_at(const ElementLinearTables<Real>& tables, int64_t p) {
  const int64_t* f = tables.paths + kElementLinearPathFields * p;
  return {__ldg(f), __ldg(f + 1), __ldg(f + 2), __ldg(f + 3), __ldg(f + 4), __ldg(f + 5)};
}

template <class Real>
__global__ void forward_kernel(ElementLinearTables<Real> tables, const Real* x, const int64_t* species, int64_t nodes,
                               Real* out) {
  for (int64_t idx = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; idx < nodes * tables.out_dim;
       idx += int64_t(gridDim.x) * blockDim.x) {
    const int64_t n = idx / tables.out_dim, col = idx % tables.out_dim, e = species[n];
    if (e < 0 || e >= tables.elements) {
      out[idx] = Real(NAN);
      continue;
    }
    Real acc = 0;
    for (int64_t p = 0; p < tables.n_paths; ++p) {
      const ElementLinearPath path = path_at(tables, p);
      const int64_t local = col - path.out_offset;
      if (local < 0 || local >= path.mul_out * path.dim) continue;
      const int64_t w = local / path.dim, m = local % path.dim;
      const Real* in = x + n * tables.in_dim + path.in_offset + m;
      const Real* weights = tables.weights + e * tables.per_element + path.weight_offset + w;
      for (int64_t u = 0; u < path.mul_in; ++u) acc += in[u * path.dim] * weights[u * path.mul_out];
    }
    out[idx] = acc;
  }
}

template <class Real>
__global__ void backward_kernel(ElementLinearTables<Real> tables, const Real* grad_out, const int64_t* species,
                                int64_t nodes, Real* grad_x) {
  for (int64_t idx = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; idx < nodes * tables.in_dim;
       idx += int64_t(gridDim.x) * blockDim.x) {
    const int64_t n = idx / tables.in_dim, col = idx % tables.in_dim, e = species[n];
    if (e < 0 || e >= tables.elements) {
      grad_x[idx] = Real(NAN);
      continue;
    }
    Real acc = 0;
    for (int64_t p = 0; p < tables.n_paths; ++p) {
      const ElementLinearPath path = path_at(tables, p);
      const int64_t local = col - path.in_offset;
      if (local < 0 || local >= path.mul_in * path.dim) continue;
      const int64_t u = local / path.dim, m = local % path.dim;
      const Real* g = grad_out + n * tables.out_dim + path.out_offset + m;
      const Real* weights = tables.weights + e * tables.per_element + path.weight_offset + u * path.mul_out;
      for (int64_t w = 0; w < path.mul_out; ++w) acc += g[w * path.dim] * weights[w];
    }
    grad_x[idx] = acc;
  }
}

unsigned blocks_for(int64_t threads) {
  const int64_t blocks = (threads + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 65535 * 8 ? blocks : 65535 * 8);  // the kernels stride over the rest
}

void check_launch(const char* what) {
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess)
    throw std::runtime_error(std::string("distspec_mace::") + what + ": kernel launch failed: " +
                             cudaGetErrorString(status));
}

}  // namespace

template <class Real>
void element_linear_cuda(const ElementLinearTables<Real>& tables, const Real* x, const int64_t* species,
                         int64_t nodes, Real* out, void* stream) {
  forward_kernel<Real><<<blocks_for(nodes * tables.out_dim), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      tables, x, species, nodes, out);
  check_launch("element_linear");
}

template <class Real>
void element_linear_backward_cuda(const ElementLinearTables<Real>& tables, const Real* grad_out,
                                  const int64_t* species, int64_t nodes, Real* grad_x, void* stream) {
  backward_kernel<Real><<<blocks_for(nodes * tables.in_dim), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      tables, grad_out, species, nodes, grad_x);
  check_launch("element_linear_backward");
}

template void element_linear_cuda<float>(const ElementLinearTables<float>&, const float*, const int64_t*, int64_t,
                                         float*, void*);
template void element_linear_cuda<double>(const ElementLinearTables<double>&, const double*, const int64_t*,
                                          int64_t, double*, void*);
template void element_linear_backward_cuda<float>(const ElementLinearTables<float>&, const float*, const int64_t*,
                                                  int64_t, float*, void*);
template void element_linear_backward_cuda<double>(const ElementLinearTables<double>&, const double*,
                                                   const int64_t*, int64_t, double*, void*);

}  // namespace distspec::models::mace
