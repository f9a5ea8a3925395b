// The symmetric contraction on the GPU (symmetric_contraction.h): one thread per (node, channel),
// the channels of a node on consecutive threads, so that a warp reads one element's coefficients
// [term, c..c+31] as one line per term while the tables (monomials, offsets, outputs) are the same
// address for the whole warp. A thread keeps its node's D + 1 factors and its outputs (or their
// gradients) in per-thread arrays, which the compiler places in local memory, interleaved across
// the threads of a warp.
#include "models/mace/symmetric_contraction.h"

#include <cuda_runtime.h>

#include <cmath>
#include <stdexcept>
#include <string>

namespace distspec::models::mace {
namespace {

// Coupling irreps of both parities up to l = 3 (MACE's own have D = 16).
constexpr int kMaxComponents = 32;
constexpr int kThreads = 128;

template <class Real>
struct Kernel {
  SymmetricContractionTables<Real> tables;
  const Real* x;
  const int64_t* species;
  int64_t nodes;
};

template <class Real>
__device__ bool load_factors(const Kernel<Real>& k, int64_t n, int64_t c, Real* factors, int64_t& element) {
  const int64_t D = k.tables.components;
  const Real* x = k.x + (n * k.tables.channels + c) * D;
  for (int64_t i = 0; i < D; ++i) factors[i] = x[i];
  factors[D] = Real(1);
  element = k.species[n];
  return element >= 0 && element < k.tables.elements;
}

template <class Real>
__global__ void forward_kernel(Kernel<Real> k, Real* out) {
  const auto& tables = k.tables;
  const OutputLayout& layout = tables.outputs;
  const int64_t C = tables.channels;
  for (int64_t idx = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; idx < k.nodes * C;
       idx += int64_t(gridDim.x) * blockDim.x) {
    const int64_t n = idx / C, c = idx % C;
    Real factors[kMaxComponents + 1], acc[kMaxOutputComponents];
    int64_t element = 0;
    const bool known = load_factors(k, n, c, factors, element);
    for (int o = 0; o < layout.count; ++o) acc[o] = known ? Real(0) : Real(NAN);
    if (known) {
      const Real* coefficients = tables.coefficients + element * tables.terms * C + c;
      for (int64_t p = 0; p < tables.n_monomials; ++p) {
        const Real mono = factors[__ldg(tables.monomials + 3 * p)] * factors[__ldg(tables.monomials + 3 * p + 1)] *
                          factors[__ldg(tables.monomials + 3 * p + 2)];
        for (int32_t t = __ldg(tables.term_offsets + p); t < __ldg(tables.term_offsets + p + 1); ++t)
          acc[__ldg(tables.term_outputs + t)] += coefficients[t * C] * mono;
      }
    }
    Real* row = out + n * layout.row;
    for (int o = 0; o < layout.count; ++o) row[layout.column(o, static_cast<int32_t>(c))] = acc[o];
  }
}

template <class Real>
__global__ void backward_kernel(Kernel<Real> k, const Real* grad_out, Real* grad_x) {
  const auto& tables = k.tables;
  const OutputLayout& layout = tables.outputs;
  const int64_t C = tables.channels, D = tables.components;
  for (int64_t idx = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; idx < k.nodes * C;
       idx += int64_t(gridDim.x) * blockDim.x) {
    const int64_t n = idx / C, c = idx % C;
    Real factors[kMaxComponents + 1], grad_factors[kMaxComponents + 1], grad[kMaxOutputComponents];
    int64_t element = 0;
    const bool known = load_factors(k, n, c, factors, element);
    Real* g_node = grad_x + (n * C + c) * D;
    if (!known) {
      for (int64_t d = 0; d < D; ++d) g_node[d] = Real(NAN);
      continue;
    }
    const Real* row = grad_out + n * layout.row;
    for (int o = 0; o < layout.count; ++o) grad[o] = row[layout.column(o, static_cast<int32_t>(c))];
    for (int64_t d = 0; d <= D; ++d) grad_factors[d] = Real(0);
    const Real* coefficients = tables.coefficients + element * tables.terms * C + c;
    for (int64_t p = 0; p < tables.n_monomials; ++p) {
      Real gm = 0;
      for (int32_t t = __ldg(tables.term_offsets + p); t < __ldg(tables.term_offsets + p + 1); ++t)
        gm += coefficients[t * C] * grad[__ldg(tables.term_outputs + t)];
      const int32_t i = __ldg(tables.monomials + 3 * p), j = __ldg(tables.monomials + 3 * p + 1),
                    l = __ldg(tables.monomials + 3 * p + 2);
      // The constant's slot D collects what nobody reads.
      grad_factors[i] += gm * factors[j] * factors[l];
      grad_factors[j] += gm * factors[i] * factors[l];
      grad_factors[l] += gm * factors[i] * factors[j];
    }
    for (int64_t d = 0; d < D; ++d) g_node[d] = grad_factors[d];
  }
}

void check_launch(const char* what) {
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess)
    throw std::runtime_error(std::string("distspec_mace::") + what + ": kernel launch failed: " +
                             cudaGetErrorString(status));
}

template <class Real>
Kernel<Real> kernel_of(const SymmetricContractionTables<Real>& tables, const Real* x, const int64_t* species,
                       int64_t nodes) {
  if (tables.components > kMaxComponents)
    throw std::invalid_argument("distspec_mace::symmetric_contraction: x has " + std::to_string(tables.components) +
                                " components per channel; the CUDA kernel takes at most " +
                                std::to_string(kMaxComponents) + " (coupling irreps up to l = 3)");
  return {tables, x, species, nodes};
}

unsigned blocks_for(int64_t threads) {
  // Enough blocks to fill the device several times; the kernels stride over the rest.
  const int64_t blocks = (threads + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 65535 * 8 ? blocks : 65535 * 8);
}

}  // namespace

template <class Real>
void symmetric_contraction_cuda(const SymmetricContractionTables<Real>& tables, const Real* x, const int64_t* species,
                                int64_t nodes, Real* out, void* stream) {
  const Kernel<Real> k = kernel_of(tables, x, species, nodes);
  forward_kernel<Real><<<blocks_for(nodes * tables.channels), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      k, out);
  check_launch("symmetric_contraction");
}

template <class Real>
void symmetric_contraction_backward_cuda(const SymmetricContractionTables<Real>& tables, const Real* grad_out,
                                         const Real* x, const int64_t* species, int64_t nodes, Real* grad_x,
                                         void* stream) {
  const Kernel<Real> k = kernel_of(tables, x, species, nodes);
  backward_kernel<Real><<<blocks_for(nodes * tables.channels), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      k, grad_out, grad_x);
  check_launch("symmetric_contraction_backward");
}

template void symmetric_contraction_cuda<float>(const SymmetricContractionTables<float>&, const float*,
                                                const int64_t*, int64_t, float*, void*);
template void symmetric_contraction_cuda<double>(const SymmetricContractionTables<double>&, const double*,
                                                 const int64_t*, int64_t, double*, void*);
template void symmetric_contraction_backward_cuda<float>(const SymmetricContractionTables<float>&, const float*,
                                                         const float*, const int64_t*, int64_t, float*, void*);
template void symmetric_contraction_backward_cuda<double>(const SymmetricContractionTables<double>&, const double*,
                                                          const double*, const int64_t*, int64_t, double*, void*);

}  // namespace distspec::models::mace
