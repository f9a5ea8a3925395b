// The CUDA element-dependent linear (lib/models/mace/element_linear_cuda.cu) against the CPU one
// (element_linear.cpp, itself tested against mace-torch by ctest torch.mace_element_linear): the same
// random matrices of 3 elements and random features, paths l = 0..3 of `mul` channels each plus a
// second 0e input into the 0e output (two paths adding into one block), 128 and 40 channels, in fp64
// to 1e-12 and fp32 to 1e-5 relative to the largest value, output and d/dx; a node of an unknown
// element gets NaN rows. Needs no torch.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "gpu_present.h"
#include "models/mace/element_linear.h"

namespace {

namespace mace = distspec::models::mace;

constexpr int64_t kElements = 3, kNodes = 70;

template <class T>
struct DeviceCopy {
  T* ptr = nullptr;
  explicit DeviceCopy(const std::vector<T>& host) {
    EXPECT_EQ(cudaMalloc(&ptr, std::max<size_t>(1, host.size()) * sizeof(T)), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(ptr, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  }
  std::vector<T> back(size_t n) const {
    std::vector<T> host(n);
    EXPECT_EQ(cudaMemcpy(host.data(), ptr, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    return host;
  }
  ~DeviceCopy() { cudaFree(ptr); }
};

// Input mul x (0e, 1o, 2e, 3o) then another mul x 0e; output mul x (0e, 1o, 2e, 3o).
struct Problem {
  std::vector<int64_t> paths, species;
  std::vector<double> weights, x, grad_out;
  int64_t in_dim = 0, out_dim = 0, per_element = 0;
};

Problem make_problem(int64_t mul) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
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
  p.weights.resize(kElements * p.per_element);
  for (double& w : p.weights) w = uniform(rng);
  p.x.resize(kNodes * p.in_dim);
  for (double& v : p.x) v = uniform(rng);
  p.grad_out.resize(kNodes * p.out_dim);
  for (double& v : p.grad_out) v = uniform(rng);
  for (int64_t n = 0; n < kNodes; ++n) p.species.push_back(static_cast<int64_t>(rng() % kElements));
  return p;
}

template <class T>
std::vector<T> as(const std::vector<double>& v) {
  return std::vector<T>(v.begin(), v.end());
}

template <class T>
double relative(const std::vector<T>& a, const std::vector<T>& b) {
  double err = 0, scale = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    err = std::max(err, std::abs(static_cast<double>(a[i]) - static_cast<double>(b[i])));
    scale = std::max(scale, std::abs(static_cast<double>(b[i])));
  }
  return err / std::max(scale, 1e-300);
}

template <class T>
void gpu_equals_cpu(int64_t mul, double tolerance) {
  const Problem p = make_problem(mul);
  const std::vector<T> weights = as<T>(p.weights), x = as<T>(p.x), g = as<T>(p.grad_out);
  mace::ElementLinearTables<T> cpu;
  cpu.weights = weights.data();
  cpu.paths = p.paths.data();
  cpu.n_paths = static_cast<int64_t>(p.paths.size()) / mace::kElementLinearPathFields;
  cpu.elements = kElements;
  cpu.per_element = p.per_element;
  cpu.in_dim = p.in_dim;
  cpu.out_dim = p.out_dim;
  ASSERT_EQ(mace::element_linear_table_error(p.paths.data(), cpu.n_paths, p.per_element, p.in_dim, p.out_dim), "");
  std::vector<T> out(kNodes * p.out_dim, T(0)), grad_x(x.size(), T(0));
  const mace::NodesByElement nodes = mace::group_by_element(p.species.data(), kNodes, kElements);
  mace::element_linear_cpu(cpu, x.data(), nodes, 0, kNodes, out.data());
  const std::vector<T> transposed = mace::element_linear_transposed(cpu);
  mace::element_linear_backward_cpu(cpu, transposed.data(), g.data(), nodes, 0, kNodes, grad_x.data());

  const DeviceCopy<T> d_weights(weights), d_x(x), d_g(g);
  const DeviceCopy<int64_t> d_paths(p.paths), d_species(p.species);
  const DeviceCopy<T> d_out(std::vector<T>(out.size())), d_grad_x(std::vector<T>(x.size()));
  mace::ElementLinearTables<T> gpu = cpu;
  gpu.weights = d_weights.ptr;
  gpu.paths = d_paths.ptr;
  mace::element_linear_cuda(gpu, d_x.ptr, d_species.ptr, kNodes, d_out.ptr, nullptr);
  mace::element_linear_backward_cuda(gpu, d_g.ptr, d_species.ptr, kNodes, d_grad_x.ptr, nullptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::vector<T> good = d_out.back(out.size());
  EXPECT_LE(relative(good, out), tolerance) << "output, mul " << mul;
  EXPECT_LE(relative(d_grad_x.back(grad_x.size()), grad_x), tolerance) << "d/dx, mul " << mul;

  // An element outside the tables: that node's row is NaN, the others' unchanged.
  std::vector<int64_t> species = p.species;
  species[3] = kElements;
  const DeviceCopy<int64_t> d_bad(species);
  mace::element_linear_cuda(gpu, d_x.ptr, d_bad.ptr, kNodes, d_out.ptr, nullptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::vector<T> bad = d_out.back(out.size());
  for (int64_t n = 0; n < kNodes; ++n)
    for (int64_t i = 0; i < p.out_dim; ++i) {
      if (n == 3)
        ASSERT_TRUE(std::isnan(bad[n * p.out_dim + i])) << "column " << i;
      else
        ASSERT_EQ(bad[n * p.out_dim + i], good[n * p.out_dim + i]);
    }
}

TEST(MaceElementLinearGpu, EqualsCpuInDouble) {
  REQUIRE_CUDA();
  gpu_equals_cpu<double>(128, 1e-12);
  gpu_equals_cpu<double>(40, 1e-12);
}

TEST(MaceElementLinearGpu, EqualsCpuInFloat) {
  REQUIRE_CUDA();
  gpu_equals_cpu<float>(128, 1e-5);
  gpu_equals_cpu<float>(40, 1e-5);
}

}  // namespace
