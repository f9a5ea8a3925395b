// The symmetric contraction on the GPU (symmetric_contraction.h): one thread per (node, channel),
// the channels of a node on consecutive threads, so that a warp reads one element's coefficients
// [term, c..c+31] as one line per term while the tables (monomials, offsets, outputs) are the same
// address for the whole warp. A thread keeps its node's D + 1 factors and its outputs (or their
// gradients) in its own column of the block's shared memory ([slot][kThreads], so a warp's
// threads hit 32 banks): the monomial tables index them at run time, which would put per-thread
// arrays in local memory, where the coefficients streamed through L1 evict them.
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

// This thread's column of the block's shared memory: slot i of it is column[i * kThreads].
template <class Real>
__device__ Real* thread_column() {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  return reinterpret_cast<Real*>(shared_bytes) + threadIdx.x;
}

template <class Real>
__device__ bool load_factors(const Kernel<Real>& k, int64_t n, int64_t c, Real* factors, int64_t& element) {
  const int64_t D = k.tables.components;
  const Real* x = k.x + (n * k.tables.channels + c) * D;
  for (int64_t i = 0; i < D; ++i) factors[i * kThreads] = x[i];
  factors[D * kThreads] = Real(1);
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
    Real* const factors = thread_column<Real>();                    // [D + 1]
    Real* const acc = factors + (tables.components + 1) * kThreads;  // [O]
    int64_t element = 0;
    const bool known = load_factors(k, n, c, factors, element);
    for (int o = 0; o < layout.count; ++o) acc[o * kThreads] = known ? Real(0) : Real(NAN);
    if (known) {
      const Real* coefficients = tables.coefficients + element * tables.terms * C + c;
      for (int64_t p = 0; p < tables.n_monomials; ++p) {
        const Real mono = factors[__ldg(tables.monomials + 3 * p) * kThreads] *
                          factors[__ldg(tables.monomials + 3 * p + 1) * kThreads] *
                          factors[__ldg(tables.monomials + 3 * p + 2) * kThreads];
        for (int32_t t = __ldg(tables.term_offsets + p); t < __ldg(tables.term_offsets + p + 1); ++t)
          acc[__ldg(tables.term_outputs + t) * kThreads] += coefficients[t * C] * mono;
      }
    }
    Real* row = out + n * layout.row;
    for (int o = 0; o < layout.count; ++o) row[layout.column(o, static_cast<int32_t>(c))] = acc[o * kThreads];
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
    Real* const factors = thread_column<Real>();             // [D + 1]
    Real* const grad_factors = factors + (D + 1) * kThreads;  // [D + 1]
    Real* const grad = grad_factors + (D + 1) * kThreads;     // [O]
    int64_t element = 0;
    const bool known = load_factors(k, n, c, factors, element);
    Real* g_node = grad_x + (n * C + c) * D;
    if (!known) {
      for (int64_t d = 0; d < D; ++d) g_node[d] = Real(NAN);
      continue;
    }
    const Real* row = grad_out + n * layout.row;
    for (int o = 0; o < layout.count; ++o) grad[o * kThreads] = row[layout.column(o, static_cast<int32_t>(c))];
    for (int64_t d = 0; d <= D; ++d) grad_factors[d * kThreads] = Real(0);
    const Real* coefficients = tables.coefficients + element * tables.terms * C + c;
    for (int64_t p = 0; p < tables.n_monomials; ++p) {
      Real gm = 0;
      for (int32_t t = __ldg(tables.term_offsets + p); t < __ldg(tables.term_offsets + p + 1); ++t)
        gm += coefficients[t * C] * grad[__ldg(tables.term_outputs + t) * kThreads];
      const int32_t i = __ldg(tables.monomials + 3 * p), j = __ldg(tables.monomials + 3 * p + 1),
                    l = __ldg(tables.monomials + 3 * p + 2);
      // The constant's slot D collects what nobody reads.
      const Real fi = factors[i * kThreads], fj = factors[j * kThreads], fl = factors[l * kThreads];
      grad_factors[i * kThreads] += gm * fj * fl;
      grad_factors[j * kThreads] += gm * fi * fl;
      grad_factors[l * kThreads] += gm * fi * fj;
    }
    for (int64_t d = 0; d < D; ++d) g_node[d] = grad_factors[d * kThreads];
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

// Allows `kernel` the shared memory of its threads' columns (up to 99 KB in float64 for D = 32
// and 32 outputs: above the 48 KB a launch gets by default, within what a block may have).
template <class KernelFunction>
size_t reserve_shared(KernelFunction kernel, size_t bytes) {
  if (bytes > 48 * 1024) {
    const cudaError_t status =
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
    if (status != cudaSuccess)
      throw std::runtime_error(std::string("distspec_mace::symmetric_contraction: reserving ") +
                               std::to_string(bytes) + " bytes of shared memory: " + cudaGetErrorString(status));
  }
  return bytes;
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
  const size_t shared =
      reserve_shared(forward_kernel<Real>, sizeof(Real) * kThreads * (tables.components + 1 + tables.outputs.count));
  forward_kernel<Real><<<blocks_for(nodes * tables.channels), kThreads, shared, static_cast<cudaStream_t>(stream)>>>(
      k, out);
  check_launch("symmetric_contraction");
}

template <class Real>
void symmetric_contraction_backward_cuda(const SymmetricContractionTables<Real>& tables, const Real* grad_out,
                                         const Real* x, const int64_t* species, int64_t nodes, Real* grad_x,
                                         void* stream) {
  const Kernel<Real> k = kernel_of(tables, x, species, nodes);
  const size_t shared = reserve_shared(backward_kernel<Real>,
                                      sizeof(Real) * kThreads * (2 * (tables.components + 1) + tables.outputs.count));
  backward_kernel<Real><<<blocks_for(nodes * tables.channels), kThreads, shared, static_cast<cudaStream_t>(stream)>>>(
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
