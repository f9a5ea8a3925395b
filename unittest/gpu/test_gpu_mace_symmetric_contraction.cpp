// The CUDA symmetric contraction (lib/models/mace/symmetric_contraction_cuda.cu) against the CPU one
// (symmetric_contraction.cpp, itself tested against mace-torch by ctest
// torch.mace_symmetric_contraction): the same random tables (every monomial of degree 1..3 in
// D = 16 components, one to three terms each into 0e+1o+2e+3o's 16 outputs, random coefficients of
// 3 elements) and random features, 40 and 128 channels (a partial block and warp among them), in
// fp64 to 1e-12 and fp32 to 1e-5 relative to the largest value, output and d/dx; a node of an
// unknown element gets NaN rows. Needs no torch.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "mace_gpu_compare.h"
#include "models/mace/symmetric_contraction.h"

namespace {

namespace mace = distspec::models::mace;
using namespace distspec::testing;  // mace_gpu_compare.h

constexpr int64_t kComponents = 16, kElements = 3, kNodes = 75;
const int64_t kIrrepDims[] = {1, 3, 5, 7};

struct Problem {
  std::vector<int32_t> monomials, term_offsets{0}, term_outputs;
  std::vector<double> coefficients;
  int64_t channels = 0;
  RandomNodes nodes;
};

Problem make_problem(int64_t channels) {
  std::mt19937_64 rng(11);
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
  fill_uniform(p.coefficients, kElements * p.term_outputs.size() * channels, rng);
  p.nodes = random_nodes(rng, kNodes, kElements, channels * kComponents, channels * 16);
  return p;
}

template <class T>
void gpu_equals_cpu(int64_t channels, double tolerance) {
  const Problem p = make_problem(channels);
  const std::vector<T> coefficients = as<T>(p.coefficients), x = as<T>(p.nodes.x), g = as<T>(p.nodes.grad_out);
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
  const mace::NodesByElement nodes = mace::group_by_element(p.nodes.species.data(), kNodes, kElements);
  const int64_t blocks = mace::channel_blocks<T>(channels);
  mace::symmetric_contraction_cpu(cpu, x.data(), nodes, 0, blocks, out.data());
  mace::symmetric_contraction_backward_cpu(cpu, g.data(), x.data(), nodes, 0, blocks, grad_x.data());

  const DeviceCopy<T> d_coefficients(coefficients), d_x(x), d_g(g);
  const DeviceCopy<int32_t> d_monomials(p.monomials), d_offsets(p.term_offsets), d_outputs(p.term_outputs);
  mace::SymmetricContractionTables<T> gpu = cpu;
  gpu.coefficients = d_coefficients.ptr;
  gpu.monomials = d_monomials.ptr;
  gpu.term_offsets = d_offsets.ptr;
  gpu.term_outputs = d_outputs.ptr;
  expect_gpu_equals_cpu(
      p.nodes.species, kElements, row, out, grad_x, tolerance, ", " + std::to_string(channels) + " channels",
      [&](const int64_t* species, T* result) {
        mace::symmetric_contraction_cuda(gpu, d_x.ptr, species, kNodes, result, nullptr);
      },
      [&](const int64_t* species, T* result) {
        mace::symmetric_contraction_backward_cuda(gpu, d_g.ptr, d_x.ptr, species, kNodes, result, nullptr);
      });
}

// 128 and 40 channels: a partial block and warp among them.
DISTSPEC_MACE_GPU_TESTS(MaceSymmetricContractionGpu, gpu_equals_cpu, 128, 40)

}  // namespace
