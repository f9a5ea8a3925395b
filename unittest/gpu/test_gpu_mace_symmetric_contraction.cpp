// The CUDA symmetric contraction (lib/models/mace/symmetric_contraction_cuda.cu) against the CPU one
// (symmetric_contraction.cpp, itself tested against mace-torch by ctest
// torch.mace_symmetric_contraction): the same random tables (every monomial of degree 1..3 in
// D = 16 components, one to three terms each into 0e+1o+2e+3o's 16 outputs, random coefficients of
// 3 elements) and random features, 40 and 128 channels (a partial block and warp among them), in
// fp64 to 1e-12 and fp32 to 1e-5 relative to the largest value, output and d/dx; a node of an
// unknown element gets NaN rows. Needs no torch.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "gpu_present.h"
#include "models/mace/symmetric_contraction.h"

namespace {

namespace mace = distspec::models::mace;

constexpr int64_t kComponents = 16, kElements = 3, kNodes = 75;
const int64_t kIrrepDims[] = {1, 3, 5, 7};

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

struct Problem {
  std::vector<int32_t> monomials, term_offsets{0}, term_outputs;
  std::vector<double> coefficients, x, grad_out;
  std::vector<int64_t> species;
  int64_t channels = 0;
};

Problem make_problem(int64_t channels) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::uniform_int_distribution<int32_t> output(0, 15), extra(0, 2);
  Problem p;
  p.channels = channels;
  const int32_t one = kComponents;  // the constant factor
  for (int32_t i = 0; i < kComponents; ++i)
    for (int32_t j = i; j <= one; ++j)
      for (int32_t k = j; k <= one; ++k) {
        if (j == one && k != one) continue;
        p.monomials.insert(p.monomials.end(), {i, j, k});
        const int32_t terms = 1 + extra(rng);
        for (int32_t t = 0; t < terms; ++t) p.term_outputs.push_back(output(rng));
        p.term_offsets.push_back(static_cast<int32_t>(p.term_outputs.size()));
      }
  p.coefficients.resize(kElements * p.term_outputs.size() * channels);
  for (double& c : p.coefficients) c = uniform(rng);
  p.x.resize(kNodes * channels * kComponents);
  for (double& v : p.x) v = uniform(rng);
  p.grad_out.resize(kNodes * channels * 16);
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
void gpu_equals_cpu(int64_t channels, double tolerance) {
  const Problem p = make_problem(channels);
  const std::vector<T> coefficients = as<T>(p.coefficients), x = as<T>(p.x), g = as<T>(p.grad_out);
  mace::SymmetricContractionTables<T> cpu;
  cpu.coefficients = coefficients.data();
  cpu.monomials = p.monomials.data();
  cpu.term_offsets = p.term_offsets.data();
  cpu.term_outputs = p.term_outputs.data();
  cpu.elements = kElements;
  cpu.terms = static_cast<int64_t>(p.term_outputs.size());
  cpu.n_monomials = static_cast<int64_t>(p.monomials.size() / 3);
  cpu.channels = channels;
  cpu.components = kComponents;
  cpu.outputs = mace::output_layout(kIrrepDims, 4, channels);
  ASSERT_EQ(mace::symmetric_contraction_table_error(p.monomials.data(), p.term_offsets.data(),
                                                    p.term_outputs.data(), cpu.n_monomials, cpu.terms, kComponents,
                                                    cpu.outputs.count),
            "");
  const int64_t row = cpu.outputs.row;
  std::vector<T> out(kNodes * row), grad_x(x.size());
  const mace::NodesByElement nodes = mace::group_by_element(p.species.data(), kNodes, kElements);
  const int64_t blocks = mace::channel_blocks<T>(channels);
  mace::symmetric_contraction_cpu(cpu, x.data(), nodes, 0, blocks, out.data());
  mace::symmetric_contraction_backward_cpu(cpu, g.data(), x.data(), nodes, 0, blocks, grad_x.data());

  const DeviceCopy<T> d_coefficients(coefficients), d_x(x), d_g(g);
  const DeviceCopy<int32_t> d_monomials(p.monomials), d_offsets(p.term_offsets), d_outputs(p.term_outputs);
  const DeviceCopy<int64_t> d_species(p.species);
  const DeviceCopy<T> d_out(std::vector<T>(out.size())), d_grad_x(std::vector<T>(x.size()));
  mace::SymmetricContractionTables<T> gpu = cpu;
  gpu.coefficients = d_coefficients.ptr;
  gpu.monomials = d_monomials.ptr;
  gpu.term_offsets = d_offsets.ptr;
  gpu.term_outputs = d_outputs.ptr;
  mace::symmetric_contraction_cuda(gpu, d_x.ptr, d_species.ptr, kNodes, d_out.ptr, nullptr);
  mace::symmetric_contraction_backward_cuda(gpu, d_g.ptr, d_x.ptr, d_species.ptr, kNodes, d_grad_x.ptr, nullptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::vector<T> good = d_out.back(out.size());
  EXPECT_LE(relative(good, out), tolerance) << "output, " << channels << " channels";
  EXPECT_LE(relative(d_grad_x.back(grad_x.size()), grad_x), tolerance) << "d/dx, " << channels << " channels";

  // An element outside the tables: that node's rows are NaN, the others' unchanged.
  std::vector<int64_t> species = p.species;
  species[3] = kElements;
  const DeviceCopy<int64_t> d_bad(species);
  mace::symmetric_contraction_cuda(gpu, d_x.ptr, d_bad.ptr, kNodes, d_out.ptr, nullptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::vector<T> bad = d_out.back(out.size());
  for (int64_t n = 0; n < kNodes; ++n)
    for (int64_t i = 0; i < row; ++i) {
      const T value = bad[n * row + i];
      if (n == 3)
        ASSERT_TRUE(std::isnan(value)) << "column " << i;
      else
        ASSERT_EQ(value, good[n * row + i]);
    }
}

TEST(MaceSymmetricContractionGpu, EqualsCpuInDouble) {
  REQUIRE_CUDA();
  gpu_equals_cpu<double>(128, 1e-12);
  gpu_equals_cpu<double>(40, 1e-12);
}

TEST(MaceSymmetricContractionGpu, EqualsCpuInFloat) {
  REQUIRE_CUDA();
  gpu_equals_cpu<float>(128, 1e-5);
  gpu_equals_cpu<float>(40, 1e-5);
}

}  // namespace
