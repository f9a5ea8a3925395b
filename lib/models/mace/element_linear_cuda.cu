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

// One kernel for both directions of a path's product with its element's [mul_in, mul_out]
// matrix W (W[u, w] at weight_offset + u mul_out + w):
//   forward (kTransposed false): out[n, out_offset + w d + m] = sum_u x[n, in_offset + u d + m] W[u, w]
//   backward (kTransposed true): grad_x[n, in_offset + u d + m] = sum_w grad_out[n, out_offset + w d + m] W[u, w]
// Each thread writes one column `col` of `to` (the output, or grad_x) from the rows of `from` (x, or
// grad_out), summing over every path whose block holds the column.
template <bool kTransposed, class Real>
__global__ void product_kernel(ElementLinearTables<Real> tables, const Real* from, const int64_t* species,
                               int64_t nodes, Real* to) {
  const int64_t from_dim = kTransposed ? tables.out_dim : tables.in_dim;
  const int64_t to_dim = kTransposed ? tables.in_dim : tables.out_dim;
  for (int64_t idx = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; idx < nodes * to_dim;
       idx += int64_t(gridDim.x) * blockDim.x) {
    const int64_t n = idx / to_dim, col = idx % to_dim, e = species[n];
    if (e < 0 || e >= tables.elements) {
      to[idx] = Real(NAN);
      continue;
    }
    Real acc = 0;
    for (int64_t p = 0; p < tables.n_paths; ++p) {
      const ElementLinearPath path = path_at(tables, p);
      const int64_t from_offset = kTransposed ? path.out_offset : path.in_offset;
      const int64_t from_mul = kTransposed ? path.mul_out : path.mul_in;
      const int64_t to_offset = kTransposed ? path.in_offset : path.out_offset;
      const int64_t to_mul = kTransposed ? path.mul_in : path.mul_out;
      // W's strides along the summed index and along the written one.
      const int64_t sum_stride = kTransposed ? 1 : path.mul_out, to_stride = kTransposed ? path.mul_out : 1;
      const int64_t local = col - to_offset;
      if (local < 0 || local >= to_mul * path.dim) continue;
      const int64_t k = local / path.dim, m = local % path.dim;
      const Real* in = from + n * from_dim + from_offset + m;
      const Real* weights = tables.weights + e * tables.per_element + path.weight_offset + k * to_stride;
      for (int64_t j = 0; j < from_mul; ++j) acc += in[j * path.dim] * weights[j * sum_stride];
    }
    to[idx] = acc;
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
  product_kernel<false, Real><<<blocks_for(nodes * tables.out_dim), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      tables, x, species, nodes, out);
  check_launch("element_linear");
}

template <class Real>
void element_linear_backward_cuda(const ElementLinearTables<Real>& tables, const Real* grad_out,
                                  const int64_t* species, int64_t nodes, Real* grad_x, void* stream) {
  product_kernel<true, Real><<<blocks_for(nodes * tables.in_dim), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
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
