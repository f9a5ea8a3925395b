// What the tests of MACE's CUDA kernels against their CPU twins share (test_gpu_mace_*.cpp): host
// vectors copied to the device and back, random tables in double cast to the kernels' precision,
// the error relative to the largest value, the comparison of an op whose nodes each have an element
// (a node of an element outside the tables gets NaN rows), and the two tests (fp64, fp32) of a kernel.
#pragma once

#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gpu_present.h"

namespace distspec::testing {

// A host vector's copy on the device, freed with it; back(n) copies n values to the host.
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

// v resized to n values uniform in [-1, 1).
inline void fill_uniform(std::vector<double>& v, size_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  v.resize(n);
  for (double& x : v) x = uniform(rng);
}

// An op's random node inputs, drawn from `rng` after its tables: features x [nodes, x_width] and
// their cotangent grad_out [nodes, grad_width], uniform in [-1, 1), and each node's element in
// [0, elements).
struct RandomNodes {
  std::vector<double> x, grad_out;
  std::vector<int64_t> species;
};
inline RandomNodes random_nodes(std::mt19937_64& rng, int64_t nodes, int64_t elements, int64_t x_width,
                                int64_t grad_width) {
  RandomNodes r;
  fill_uniform(r.x, static_cast<size_t>(nodes * x_width), rng);
  fill_uniform(r.grad_out, static_cast<size_t>(nodes * grad_width), rng);
  for (int64_t n = 0; n < nodes; ++n) r.species.push_back(static_cast<int64_t>(rng() % elements));
  return r;
}

template <class T>
std::vector<T> as(const std::vector<double>& v) {
  return std::vector<T>(v.begin(), v.end());
}

// max |a - b| over max |b|.
template <class T>
double relative(const std::vector<T>& a, const std::vector<T>& b) {
  double err = 0.0, scale = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    err = std::max(err, std::abs(static_cast<double>(a[i]) - static_cast<double>(b[i])));
    scale = std::max(scale, std::abs(static_cast<double>(b[i])));
  }
  return err / std::max(scale, 1e-300);
}

// The device's result `d` copied back and checked within `tolerance` of the CPU's `host`, relative
// to its largest value; `what` names it in a failure.
template <class T>
std::vector<T> expect_near(const DeviceCopy<T>& d, const std::vector<T>& host, double tolerance,
                           const std::string& what) {
  std::vector<T> back = d.back(host.size());
  EXPECT_LE(relative(back, host), tolerance) << what;
  return back;
}

// The CUDA kernels of an op whose nodes each have an element against the CPU's output `out` and
// d/dx `grad_x`, within `tolerance` relative to the largest value (`at` says which case in a
// failure): forward(species, out) and backward(species, grad_x) queue the kernels on the device
// arrays. Then node 3 given element `elements`, one past the tables: its row of the output (`row`
// values) is NaN, every other row as before. A failed ASSERT ends this check, not the caller.
template <class T, class Forward, class Backward>
void expect_gpu_equals_cpu(std::vector<int64_t> species, int64_t elements, int64_t row, const std::vector<T>& out,
                           const std::vector<T>& grad_x, double tolerance, const std::string& at, Forward&& forward,
                           Backward&& backward) {
  const DeviceCopy<int64_t> d_species(species);
  const DeviceCopy<T> d_out(std::vector<T>(out.size())), d_grad_x(std::vector<T>(grad_x.size()));
  forward(d_species.ptr, d_out.ptr);
  backward(d_species.ptr, d_grad_x.ptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::vector<T> good = expect_near(d_out, out, tolerance, "output" + at);
  expect_near(d_grad_x, grad_x, tolerance, "d/dx" + at);

  species[3] = elements;
  const DeviceCopy<int64_t> d_bad(species);
  forward(d_bad.ptr, d_out.ptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::vector<T> bad = d_out.back(out.size());
  for (size_t n = 0; n < species.size(); ++n)
    for (int64_t i = 0; i < row; ++i) {
      const T value = bad[n * row + i];
      if (n == 3)
        ASSERT_TRUE(std::isnan(value)) << "column " << i << at;
      else
        ASSERT_EQ(value, good[n * row + i]);
    }
}

}  // namespace distspec::testing

// A kernel's two tests, each skipped without a CUDA device: SUITE.EqualsCpuInDouble runs
// CHECK<double>(channels, 1e-12) and SUITE.EqualsCpuInFloat CHECK<float>(channels, 1e-5) (the GPU
// against the CPU) for each channel count of the list after CHECK.
#define DISTSPEC_MACE_GPU_TESTS(SUITE, CHECK, ...)                               \
  TEST(SUITE, EqualsCpuInDouble) {                                               \
    REQUIRE_CUDA();                                                              \
    for (const int64_t channels : {__VA_ARGS__}) CHECK<double>(channels, 1e-12); \
  }                                                                              \
  TEST(SUITE, EqualsCpuInFloat) {                                                \
    REQUIRE_CUDA();                                                              \
    for (const int64_t channels : {__VA_ARGS__}) CHECK<float>(channels, 1e-5);   \
  }
