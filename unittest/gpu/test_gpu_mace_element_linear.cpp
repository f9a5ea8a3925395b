// The CUDA element-dependent linear (lib/models/mace/element_linear_cuda.cu) against the CPU one
// (element_linear.cpp, itself tested against mace-torch by ctest torch.mace_element_linear): the same
// random matrices of 3 elements and random features, paths l = 0..3 of `mul` channels each plus a
// second 0e input into the 0e output (two paths adding into one block), 128 and 40 channels, in fp64
// to 1e-12 and fp32 to 1e-5 relative to the largest value, output and d/dx; a node of an unknown
// element gets NaN rows. Needs no torch.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "mace_gpu_compare.h"
#include "models/mace/element_linear.h"

namespace {

namespace mace = distspec::models::mace;
using namespace distspec::testing;  // mace_gpu_compare.h

constexpr int64_t kElements = 3, kNodes = 70;

// Input mul x (0e, 1o, 2e, 3o) then another mul x 0e; output mul x (0e, 1o, 2e, 3o).
struct Problem {
  std::vector<int64_t> paths;
  std::vector<double> weights;
  int64_t in_dim = 0, out_dim = 0, per_element = 0;
  RandomNodes nodes;
};

Problem make_problem(int64_t mul) {
  std::mt19937_64 rng(5);
  Problem p;
  for (int64_t l = 0; l <= 3; ++l) {
    const int64_t d = 2 * l + 1;
    p.paths.insert(p.paths.end(), {p.in_dim, mul, p.out_dim, mul, d, p.per_element});
    p.in_dim += mul * d;
    p.out_dim += mul * d;
    p.per_element += mul * mul;
  }
  p.paths.insert(p.paths.end(), {p.in_dim, mul, 0, mul, 1, p.per_element});
  p.in_dim += mul;
  p.per_element += mul * mul;
  fill_uniform(p.weights, kElements * p.per_element, rng);
  p.nodes = random_nodes(rng, kNodes, kElements, p.in_dim, p.out_dim);
  return p;
}

// The kernels' view of p's tables on the host, with its weights in T.
template <class T>
mace::ElementLinearTables<T> tables_of(const Problem& p, const std::vector<T>& weights) {
  mace::ElementLinearTables<T> tables;
  tables.weights = weights.data();
  tables.paths = p.paths.data();
  tables.n_paths = static_cast<int64_t>(p.paths.size()) / mace::kElementLinearPathFields;
  tables.elements = kElements;
  tables.per_element = p.per_element;
  tables.in_dim = p.in_dim;
  tables.out_dim = p.out_dim;
  return tables;
}

template <class T>
void gpu_equals_cpu(int64_t mul, double tolerance) {
  const Problem p = make_problem(mul);
  const std::vector<T> weights = as<T>(p.weights), x = as<T>(p.nodes.x), g = as<T>(p.nodes.grad_out);
  const mace::ElementLinearTables<T> cpu = tables_of(p, weights);
  ASSERT_EQ(mace::element_linear_table_error(p.paths.data(), cpu.n_paths, p.per_element, p.in_dim, p.out_dim), "");
  std::vector<T> out(kNodes * p.out_dim, T(0)), grad_x(x.size(), T(0));
  const mace::NodesByElement nodes = mace::group_by_element(p.nodes.species.data(), kNodes, kElements);
  mace::element_linear_cpu(cpu, x.data(), nodes, 0, kNodes, out.data());
  const std::vector<T> transposed = mace::element_linear_transposed(cpu);
  mace::element_linear_backward_cpu(cpu, transposed.data(), g.data(), nodes, 0, kNodes, grad_x.data());

  const DeviceCopy<T> d_weights(weights), d_x(x), d_g(g);
  const DeviceCopy<int64_t> d_paths(p.paths);
  mace::ElementLinearTables<T> gpu = cpu;
  gpu.weights = d_weights.ptr;
  gpu.paths = d_paths.ptr;
  expect_gpu_equals_cpu(
      p.nodes.species, kElements, p.out_dim, out, grad_x, tolerance, ", mul " + std::to_string(mul),
      [&](const int64_t* species, T* result) {
        mace::element_linear_cuda(gpu, d_x.ptr, species, kNodes, result, nullptr);
      },
      [&](const int64_t* species, T* result) {
        mace::element_linear_backward_cuda(gpu, d_g.ptr, species, kNodes, result, nullptr);
      });
}

DISTSPEC_MACE_GPU_TESTS(MaceElementLinearGpu, gpu_equals_cpu, 128, 40)

}  // namespace
