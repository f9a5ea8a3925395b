// Fixed-order column sums: block partials, then one block.
#include <algorithm>

#include "distspec/error.h"
#include "models/cuda/launch_timer.cuh"
#include "models/cuda/reductions.cuh"
#include "models/model_error.h"

namespace distspec::models::cuda {

namespace {

constexpr int kSumBlock = 256;
constexpr int kMaxCols = 8;
constexpr unsigned kMaxSumBlocks = 1024;

// Block b sums rows [b * chunk, (b + 1) * chunk) into partial[b * cols + c].
__global__ void column_partials(const double* x, std::size_t n, int cols, std::size_t chunk, double* partial) {
  __shared__ double s[kSumBlock];
  const std::size_t begin = blockIdx.x * chunk, end = begin + chunk < n ? begin + chunk : n;
  for (int c = 0; c < cols; ++c) {
    double v = 0.0;
    for (std::size_t r = begin + threadIdx.x; r < end; r += kSumBlock) v += x[r * cols + c];
    s[threadIdx.x] = v;
    __syncthreads();
    for (int w = kSumBlock / 2; w > 0; w >>= 1) {
      if (static_cast<int>(threadIdx.x) < w) s[threadIdx.x] += s[threadIdx.x + w];
      __syncthreads();
    }
    if (threadIdx.x == 0) partial[blockIdx.x * cols + c] = s[0];
    __syncthreads();
  }
}

__global__ void add_partials(const double* partial, unsigned n_blocks, int cols, double* out) {
  __shared__ double s[kSumBlock];
  for (int c = 0; c < cols; ++c) {
    double v = 0.0;
    for (unsigned b = threadIdx.x; b < n_blocks; b += kSumBlock) v += partial[b * cols + c];
    s[threadIdx.x] = v;
    __syncthreads();
    for (int w = kSumBlock / 2; w > 0; w >>= 1) {
      if (static_cast<int>(threadIdx.x) < w) s[threadIdx.x] += s[threadIdx.x + w];
      __syncthreads();
    }
    if (threadIdx.x == 0) out[c] += s[0];
    __syncthreads();
  }
}

}  // namespace

void add_column_sums(const double* x, std::size_t n, int cols, double* out, DeviceArray<double>& scratch) {
  if (n == 0) return;
  if (cols > kMaxCols) throw Error(model_error_id::device, "", "add_column_sums: at most 8 columns");
  const std::size_t chunk = std::max<std::size_t>((n + kMaxSumBlocks - 1) / kMaxSumBlocks, 4 * kSumBlock);
  const unsigned blocks = static_cast<unsigned>((n + chunk - 1) / chunk);
  scratch.resize(std::size_t(blocks) * cols);
  LaunchTimer timer("DistSpec::column_sums", double(n) * cols * 8, double(n) * cols * 8, double(n) * cols);
  column_partials<<<blocks, kSumBlock>>>(x, n, cols, chunk, scratch.data());
  check_launch("DistSpec::column_partials");
  add_partials<<<1, kSumBlock>>>(scratch.data(), blocks, cols, out);
  check_launch("DistSpec::add_partials");
}

double device_sum(const double* x, std::size_t n, DeviceArray<double>& scratch, DeviceArray<double>& total) {
  total.resize(1);
  total.zero();
  add_column_sums(x, n, 1, total.data(), scratch);
  double sum = 0.0;
  total.download(&sum, 1);
  return sum;
}

}  // namespace distspec::models::cuda
