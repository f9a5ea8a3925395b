// The CUDA spline convolution (lib/models/mace/spline_convolution_cuda.cu) against the CPU one
// (spline_convolution.cpp, itself tested against mace-torch by ctest torch.mace_convolution): the
// same random tables and random edges grouped by receiver, in fp64 to 1e-12 and fp32 to 1e-5
// relative to the largest value, message, d/d node_feats and d/d vectors. Two path sets:
// MACE-MP-0 interaction 1's (128x0e+128x1o x Y_0..3, 10 "uvu" paths) and every (l1, l2, l3) with
// l <= 3 of 0e+1o+2e+3o x Y_0..3, which the CUDA kernels instantiate one by one; channel counts of
// a whole warp and not. Needs no torch.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <vector>

#include "mace_gpu_compare.h"
#include "models/mace/spline_convolution.h"

namespace {

namespace mace = distspec::models::mace;
using namespace distspec::testing;  // mace_gpu_compare.h

constexpr int64_t kRows = 60, kOut = 50, kKnots = 64;
constexpr double kRMax = 6.0;

// The layer's tables: paths (l1, l2, l3) of 0e+1o x 0e+1o+2e+3o into its sorted outputs, each with
// every (i, j, k) of its block as a random CG entry.
struct Problem {
  std::vector<int64_t> paths, cg_ijk, senders, receivers;
  std::vector<double> cg_value, spline, node_feats, vectors, grad_message;
  int64_t n_paths = 0, in_dim = 0, out_dim = 0, n_edges = 0;
};

enum class Paths { mp0_interaction_1, every_l_to_3 };

std::vector<std::array<int, 3>> triples_of(Paths paths) {
  if (paths == Paths::mp0_interaction_1)
    return {{0, 0, 0}, {1, 1, 0}, {0, 1, 1}, {1, 0, 1}, {1, 2, 1}, {0, 2, 2}, {1, 1, 2}, {1, 3, 2}, {0, 3, 3}, {1, 2, 3}};
  std::vector<std::array<int, 3>> triples;
  for (int l1 = 0; l1 <= 3; ++l1)
    for (int l2 = 0; l2 <= 3; ++l2)
      for (int l3 = std::abs(l1 - l2); l3 <= std::min(3, l1 + l2); ++l3) triples.push_back({l1, l2, l3});
  return triples;
}

Problem make_problem(int64_t channels, Paths paths) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  Problem p;
  const std::vector<std::array<int, 3>> triples = triples_of(paths);
  const int max_l1 = paths == Paths::mp0_interaction_1 ? 1 : 3;
  std::vector<int64_t> in_offset;  // C x 0e, then C x 1o, ...
  for (int l = 0, at = 0; l <= max_l1; at += static_cast<int>(channels) * (2 * l + 1), ++l) in_offset.push_back(at);
  int64_t out = 0;
  for (const auto& t : triples) {
    const int64_t d1 = 2 * t[0] + 1, d2 = 2 * t[1] + 1, d3 = 2 * t[2] + 1;
    const int64_t begin = static_cast<int64_t>(p.cg_value.size());
    for (int64_t i = 0; i < d1; ++i)
      for (int64_t j = 0; j < d2; ++j)
        for (int64_t k = 0; k < d3; ++k) {
          p.cg_ijk.insert(p.cg_ijk.end(), {i, j, k});
          p.cg_value.push_back(uniform(rng));
        }
    p.paths.insert(p.paths.end(), {t[0], t[1], t[2], in_offset[t[0]], out, begin,
                                   static_cast<int64_t>(p.cg_value.size())});
    out += channels * d3;
    ++p.n_paths;
  }
  p.in_dim = (max_l1 + 1) * (max_l1 + 1) * channels;
  p.out_dim = out;
  fill_uniform(p.spline, static_cast<size_t>(kKnots * 2 * p.n_paths * channels), rng);
  fill_uniform(p.node_feats, static_cast<size_t>(kRows * p.in_dim), rng);
  fill_uniform(p.grad_message, static_cast<size_t>(kOut * p.out_dim), rng);
  // Receivers grouped, some rows without edges; a few edges beyond r_max.
  std::uniform_int_distribution<int64_t> row(0, kRows - 1), count(0, 12);
  for (int64_t r = 0; r < kOut; ++r)
    for (int64_t n = count(rng); n > 0; --n) {
      p.receivers.push_back(r);
      p.senders.push_back(row(rng));
      for (int a = 0; a < 3; ++a) p.vectors.push_back(4.0 * uniform(rng));
    }
  p.n_edges = static_cast<int64_t>(p.receivers.size());
  return p;
}

template <class T>
void gpu_equals_cpu_on(const Problem& p, int64_t channels, double tolerance) {
  const std::vector<T> cg = as<T>(p.cg_value), spline = as<T>(p.spline), x = as<T>(p.node_feats),
                       v = as<T>(p.vectors), g = as<T>(p.grad_message);
  mace::SplineConvolution<T> cpu;
  cpu.n_edges = p.n_edges;
  cpu.channels = channels;
  cpu.in_dim = p.in_dim;
  cpu.out_dim = p.out_dim;
  cpu.n_paths = p.n_paths;
  cpu.node_feats = x.data();
  cpu.vectors = v.data();
  cpu.senders = p.senders.data();
  cpu.receivers = p.receivers.data();
  cpu.radial = {spline.data(), kKnots, p.n_paths * channels, kRMax};
  cpu.paths = p.paths.data();
  cpu.cg_ijk = p.cg_ijk.data();
  cpu.cg_value = cg.data();
  std::vector<T> message(static_cast<size_t>(kOut * p.out_dim), T(0));
  std::vector<T> grad_x(x.size(), T(0)), grad_v(v.size(), T(0));
  mace::spline_convolution_forward(cpu, 0, p.n_edges, message.data());
  mace::spline_convolution_backward(cpu, g.data(), 0, p.n_edges, grad_x.data(), grad_v.data());

  const DeviceCopy<T> d_cg(cg), d_spline(spline), d_x(x), d_v(v), d_g(g);
  const DeviceCopy<int64_t> d_paths(p.paths), d_ijk(p.cg_ijk), d_s(p.senders), d_r(p.receivers);
  const DeviceCopy<T> d_message(std::vector<T>(message.size(), T(0))), d_grad_x(std::vector<T>(x.size(), T(0))),
      d_grad_v(std::vector<T>(v.size(), T(0)));
  mace::SplineConvolution<T> gpu = cpu;
  gpu.node_feats = d_x.ptr;
  gpu.vectors = d_v.ptr;
  gpu.senders = d_s.ptr;
  gpu.receivers = d_r.ptr;
  gpu.radial.table = d_spline.ptr;
  gpu.paths = d_paths.ptr;
  gpu.cg_ijk = d_ijk.ptr;
  gpu.cg_value = d_cg.ptr;
  mace::spline_convolution_forward_cuda(gpu, kOut, d_message.ptr, nullptr);
  mace::spline_convolution_backward_cuda(gpu, kOut, d_g.ptr, d_grad_x.ptr, d_grad_v.ptr, nullptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);

  expect_near(d_message, message, tolerance, "message");
  expect_near(d_grad_x, grad_x, tolerance, "d/d node_feats");
  expect_near(d_grad_v, grad_v, tolerance, "d/d vectors");
}

template <class T>
void gpu_equals_cpu(int64_t channels, double tolerance) {
  for (const Paths paths : {Paths::mp0_interaction_1, Paths::every_l_to_3}) {
    SCOPED_TRACE(paths == Paths::mp0_interaction_1 ? "MACE-MP-0 interaction 1" : "every path of l <= 3");
    gpu_equals_cpu_on<T>(make_problem(channels, paths), channels, tolerance);
  }
}

DISTSPEC_MACE_GPU_TESTS(MaceSplineConvolutionGpu, gpu_equals_cpu, 128, 40)

}  // namespace
