// Sums with a fixed order, so that a step does not depend on scheduling: over rows of a device
// array, over the lanes of a warp or of a group of lanes.
#pragma once

#include <cstddef>

#include "models/cuda/device_array.cuh"

namespace distspec::models::cuda {

// out[c] += sum over rows r < n of x[r * cols + c], for c < cols (<= 8), in a fixed order
// (block partials, then one block), so that the result does not depend on scheduling.
void add_column_sums(const double* x, std::size_t n, int cols, double* out, DeviceArray<double>& scratch);

// The sum of x[0 .. n) in a fixed order, downloaded (`scratch` holds the partials, `total` the sum).
double device_sum(const double* x, std::size_t n, DeviceArray<double>& scratch, DeviceArray<double>& total);


constexpr unsigned kFullMask = 0xffffffffu;

template <class T>
__device__ inline T warp_sum(T v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(kFullMask, v, o);
  return v;
}

// Sum over the W lanes of an aligned group (W a power of two <= 32); every lane gets it.
template <int W, class T>
__device__ inline T group_sum(T v) {
#pragma unroll
  for (int o = W / 2; o > 0; o >>= 1) v += __shfl_xor_sync(kFullMask, v, o, W);
  return v;
}

}  // namespace distspec::models::cuda
