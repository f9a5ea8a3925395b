#include "distspec/halo/device_row_packer.h"

#include <cuda_runtime.h>

#include <string>

#include "distspec/error.h"

namespace distspec {
namespace {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw Error("halo.device", "", std::string("device row packer: ") + what + " failed: " + cudaGetErrorString(status),
                "check that the rows handed to the exchange are device memory of the current GPU");
}

cudaStream_t as_stream(void* stream) { return static_cast<cudaStream_t>(stream); }

unsigned blocks_for(std::size_t items) {
  const std::size_t blocks = (items + 255) / 256;
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > 65535 ? 65535 : blocks));
}

__global__ void gather_rows(const double* rows, int width, const int* list, int n, double* out) {
  const std::size_t total = static_cast<std::size_t>(n) * width;
  for (std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; k < total;
       k += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::size_t i = k / width, c = k % width;
    out[k] = rows[static_cast<std::size_t>(list[i]) * width + c];
  }
}

__global__ void add_rows(const double* in, const int* list, int n, int width, double* rows) {
  const std::size_t total = static_cast<std::size_t>(n) * width;
  for (std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; k < total;
       k += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::size_t i = k / width, c = k % width;
    rows[static_cast<std::size_t>(list[i]) * width + c] += in[k];
  }
}

template <class From, class To>
__global__ void convert(const From* from, std::size_t n, To* to) {
  for (std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; k < n;
       k += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    to[k] = static_cast<To>(from[k]);
}

}  // namespace

DeviceRowPacker::~DeviceRowPacker() {
  drop_lists();
  for (void* p : {static_cast<void*>(message_), static_cast<void*>(wide_)})
    if (p) cudaFree(p);
}

void DeviceRowPacker::drop_lists() {
  for (auto& entry : lists_) cudaFree(entry.second);
  lists_.clear();
}

void DeviceRowPacker::keep_lists_for(std::uint64_t list_generation) {
  if (list_generation == lists_generation_) return;
  // The stream may still read a list of the previous build.
  if (!lists_.empty()) synchronize();
  drop_lists();
  lists_generation_ = list_generation;
}

template <class T>
T* DeviceRowPacker::grow(T*& data, std::size_t& capacity, std::size_t n) {
  if (n > capacity) {
    if (data) cudaFree(data);
    data = nullptr;
    capacity = 0;
    const std::size_t padded = n + n / 8 + 64;
    check(cudaMalloc(reinterpret_cast<void**>(&data), padded * sizeof(T)), "cudaMalloc");
    capacity = padded;
  }
  return data;
}

const int* DeviceRowPacker::upload(const int* list, int n) {
  int*& d_list = lists_[{list, n}];
  if (!d_list) {
    check(cudaMalloc(reinterpret_cast<void**>(&d_list), n * sizeof(int)), "cudaMalloc (row list)");
    check(cudaMemcpyAsync(d_list, list, n * sizeof(int), cudaMemcpyHostToDevice, as_stream(stream_)), "cudaMemcpyAsync (row list)");
  }
  return d_list;
}

void DeviceRowPacker::pack(const double* rows, int width, const int* list, int n, double* buf) {
  if (n <= 0) return;
  const std::size_t values = static_cast<std::size_t>(n) * width;
  const int* d_list = upload(list, n);
  double* d_message = grow(message_, message_capacity_, values);
  gather_rows<<<blocks_for(values), 256, 0, as_stream(stream_)>>>(rows, width, d_list, n, d_message);
  check(cudaGetLastError(), "gather_rows");
  check(cudaMemcpyAsync(buf, d_message, values * sizeof(double), cudaMemcpyDeviceToHost, as_stream(stream_)),
        "cudaMemcpyAsync (packed rows)");
  synchronize();  // the host sends buf next
}

void DeviceRowPacker::unpack(const double* buf, int n, int first, int width, double* rows) {
  if (n <= 0) return;
  // From pageable memory: staged before the call returns, so the host may reuse buf.
  check(cudaMemcpyAsync(rows + static_cast<std::size_t>(first) * width, buf,
                        static_cast<std::size_t>(n) * width * sizeof(double), cudaMemcpyHostToDevice, as_stream(stream_)),
        "cudaMemcpyAsync (received rows)");
}

void DeviceRowPacker::pack_range(const double* rows, int first, int n, int width, double* buf) {
  if (n <= 0) return;
  check(cudaMemcpyAsync(buf, rows + static_cast<std::size_t>(first) * width,
                        static_cast<std::size_t>(n) * width * sizeof(double), cudaMemcpyDeviceToHost, as_stream(stream_)),
        "cudaMemcpyAsync (halo rows)");
  synchronize();  // the host sends buf next
}

void DeviceRowPacker::unpack_add(const double* buf, const int* list, int n, int width, double* rows) {
  if (n <= 0) return;
  const std::size_t values = static_cast<std::size_t>(n) * width;
  const int* d_list = upload(list, n);
  double* d_message = grow(message_, message_capacity_, values);
  check(cudaMemcpyAsync(d_message, buf, values * sizeof(double), cudaMemcpyHostToDevice, as_stream(stream_)),
        "cudaMemcpyAsync (partials)");
  add_rows<<<blocks_for(values), 256, 0, as_stream(stream_)>>>(d_message, d_list, n, width, rows);
  check(cudaGetLastError(), "add_rows");
}

void DeviceRowPacker::copy_rows(double* rows, int width, const int* list, int n, int first) {
  if (n <= 0) return;
  const std::size_t values = static_cast<std::size_t>(n) * width;
  const int* d_list = upload(list, n);
  gather_rows<<<blocks_for(values), 256, 0, as_stream(stream_)>>>(rows, width, d_list, n, rows + static_cast<std::size_t>(first) * width);
  check(cudaGetLastError(), "gather_rows (self swap)");
}

void DeviceRowPacker::add_rows_back(double* rows, int width, const int* list, int n, int first) {
  if (n <= 0) return;
  const std::size_t values = static_cast<std::size_t>(n) * width;
  const int* d_list = upload(list, n);
  add_rows<<<blocks_for(values), 256, 0, as_stream(stream_)>>>(rows + static_cast<std::size_t>(first) * width, d_list, n, width, rows);
  check(cudaGetLastError(), "add_rows (self swap)");
}

void DeviceRowPacker::zero(double* rows, std::size_t begin, std::size_t end, int width) {
  if (end <= begin) return;
  check(cudaMemsetAsync(rows + begin * width, 0, (end - begin) * width * sizeof(double), as_stream(stream_)), "cudaMemsetAsync");
}

double* DeviceRowPacker::widen(const float* rows, std::size_t n) {
  double* wide = grow(wide_, wide_capacity_, n);
  if (n) {
    convert<<<blocks_for(n), 256, 0, as_stream(stream_)>>>(rows, n, wide);
    check(cudaGetLastError(), "widen");
  }
  return wide;
}

void DeviceRowPacker::narrow(float* rows, std::size_t n) {
  if (!n) return;
  convert<<<blocks_for(n), 256, 0, as_stream(stream_)>>>(wide_, n, rows);
  check(cudaGetLastError(), "narrow");
}

void DeviceRowPacker::synchronize() { check(cudaStreamSynchronize(as_stream(stream_)), "cudaStreamSynchronize"); }

void DeviceRowPacker::copy(void* to, const void* from, std::size_t bytes) {
  if (!bytes) return;
  check(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDefault, as_stream(stream_)), "cudaMemcpyAsync");
  synchronize();
}

}  // namespace distspec
