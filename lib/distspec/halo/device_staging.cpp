#include "distspec/halo/device_staging.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <string>

#include "distspec/error.h"

namespace distspec {
namespace {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw Error("halo.device", "", std::string("device staging: ") + what + " failed: " + cudaGetErrorString(status));
}

}  // namespace

void DeviceStagingHaloExchange::wait_for_device() { check(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); }

bool is_device_pointer(const void* p) {
  if (!p) return false;
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, p) != cudaSuccess) {
    (void)cudaGetLastError();  // an unknown pointer is host memory; clear the sticky error
    return false;
  }
  return attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged;
}

DeviceStagingHaloExchange::~DeviceStagingHaloExchange() {
  if (buffer_) cudaFreeHost(buffer_);
}

HaloExchange& DeviceStagingHaloExchange::host() const {
  if (!inner_) throw Error("halo.device", "", "device staging: no host halo exchange to wrap", "call wrap() first");
  return *inner_;
}

void* DeviceStagingHaloExchange::pinned(std::size_t bytes) {
  if (bytes > capacity_) {
    if (buffer_) check(cudaFreeHost(buffer_), "cudaFreeHost");
    buffer_ = nullptr;
    capacity_ = 0;
    const std::size_t padded = bytes + bytes / 4;  // rows grow between reneighbourings
    check(cudaMallocHost(&buffer_, padded), "cudaMallocHost");
    capacity_ = padded;
  }
  return buffer_;
}

template <class T>
void DeviceStagingHaloExchange::exchange(Rows<T> rows, bool reverse) {
  HaloExchange& inner = host();
  if (rows.size() == 0 || !is_device_pointer(rows.data)) {
    if (reverse) inner.reverse(rows);
    else inner.forward(rows);
    return;
  }
  const std::size_t width = static_cast<std::size_t>(rows.width);
  const std::size_t owned = std::min(inner.n_owned(), rows.rows) * width;  // values in owned rows
  const std::size_t all = rows.size(), halo = all - owned;
  T* staged = static_cast<T*>(pinned(all * sizeof(T)));
  const Rows<T> host_rows{staged, rows.rows, rows.width};
  // Copies on the legacy default stream wait for the kernels that wrote the rows.
  if (reverse) {
    // Every row goes down; the owners come back and the halo rows, which a reverse exchange
    // leaves zero, are zeroed in place.
    check(cudaMemcpy(staged, rows.data, all * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy (rows to host)");
    inner.reverse(host_rows);
    if (owned) check(cudaMemcpy(rows.data, staged, owned * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy (owned rows to device)");
    if (halo) check(cudaMemsetAsync(rows.data + owned, 0, halo * sizeof(T)), "cudaMemsetAsync (halo rows)");
  } else {
    // A forward exchange reads owned rows and writes halo rows only.
    if (owned) check(cudaMemcpy(staged, rows.data, owned * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy (owned rows to host)");
    inner.forward(host_rows);
    if (halo) check(cudaMemcpy(rows.data + owned, staged + owned, halo * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy (halo rows to device)");
  }
}

void DeviceStagingHaloExchange::all_reduce_sum(double* values, std::size_t n) {
  HaloExchange& inner = host();
  if (n == 0 || !is_device_pointer(values)) {
    inner.all_reduce_sum(values, n);
    return;
  }
  double* staged = static_cast<double*>(pinned(n * sizeof(double)));
  check(cudaMemcpy(staged, values, n * sizeof(double), cudaMemcpyDeviceToHost), "cudaMemcpy (values to host)");
  inner.all_reduce_sum(staged, n);
  check(cudaMemcpy(values, staged, n * sizeof(double), cudaMemcpyHostToDevice), "cudaMemcpy (values to device)");
}

template void DeviceStagingHaloExchange::exchange<double>(Rows<double>, bool);
template void DeviceStagingHaloExchange::exchange<float>(Rows<float>, bool);

}  // namespace distspec
