#include "distspec/halo/device_indexed_halo_exchange.h"

#include <cuda_runtime.h>

#include <string>

#include "distspec/error.h"
#include "distspec/halo/device_staging.h"

namespace distspec {
namespace {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw Error("halo.device", "", std::string("device halo exchange: ") + what + " failed: " + cudaGetErrorString(status));
}

int* upload(const std::vector<int>& v) {
  int* d = nullptr;
  if (v.empty()) return d;
  check(cudaMalloc(reinterpret_cast<void**>(&d), v.size() * sizeof(int)), "cudaMalloc");
  check(cudaMemcpy(d, v.data(), v.size() * sizeof(int), cudaMemcpyHostToDevice), "cudaMemcpy");
  return d;
}

unsigned blocks(std::size_t n) {
  const std::size_t b = (n + 255) / 256;
  return static_cast<unsigned>(b < 1 ? 1 : (b > 65535 ? 65535 : b));
}

// Halo row h (value c) = owner's row: one thread per value.
template <class T>
__global__ void copy_to_halo(T* rows, std::size_t n_owned, std::size_t n_halo, int width, const int* owner) {
  const std::size_t n = n_halo * width, stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t q = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; q < n; q += stride) {
    const std::size_t h = q / width, c = q - h * width;
    rows[(n_owned + h) * width + c] = rows[static_cast<std::size_t>(owner[h]) * width + c];
  }
}

// Owned row i (value c) += its images, summed in fp64 in halo order; one thread per value.
template <class T>
__global__ void sum_images(T* rows, std::size_t n_owned, int width, const int* offsets, const int* images) {
  const std::size_t n = n_owned * width, stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t q = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; q < n; q += stride) {
    const std::size_t i = q / width, c = q - i * width;
    if (offsets[i] == offsets[i + 1]) continue;
    double acc = rows[q];
    for (int p = offsets[i]; p < offsets[i + 1]; ++p) acc += rows[(n_owned + images[p]) * width + c];
    rows[q] = static_cast<T>(acc);
  }
}

}  // namespace

DeviceIndexedHaloExchange::DeviceIndexedHaloExchange(std::size_t n_owned, std::vector<std::size_t> halo_owner)
    : host_(n_owned, halo_owner) {
  std::vector<int> owner(halo_owner.begin(), halo_owner.end());
  std::vector<int> offsets(n_owned + 1, 0), images(halo_owner.size());
  for (std::size_t o : halo_owner) ++offsets[o + 1];
  for (std::size_t i = 0; i < n_owned; ++i) offsets[i + 1] += offsets[i];
  std::vector<int> fill(offsets.begin(), offsets.end() - 1);
  for (std::size_t h = 0; h < halo_owner.size(); ++h) images[fill[halo_owner[h]]++] = static_cast<int>(h);
  owner_ = upload(owner);
  image_offsets_ = upload(offsets);
  images_ = upload(images);
}

DeviceIndexedHaloExchange::~DeviceIndexedHaloExchange() {
  for (int* p : {owner_, image_offsets_, images_})
    if (p) cudaFree(p);
}

template <class T>
void DeviceIndexedHaloExchange::forward_impl(Rows<T> rows) {
  if (rows.size() == 0 || !is_device_pointer(rows.data)) return host_.forward(rows);
  if (n_halo() == 0) return;
  const auto stream = static_cast<cudaStream_t>(stream_);
  copy_to_halo<<<blocks(n_halo() * rows.width), 256, 0, stream>>>(rows.data, n_owned(), n_halo(), rows.width, owner_);
  check(cudaGetLastError(), "copy_to_halo");
}

template <class T>
void DeviceIndexedHaloExchange::reverse_impl(Rows<T> rows) {
  if (rows.size() == 0 || !is_device_pointer(rows.data)) return host_.reverse(rows);
  if (n_halo() == 0) return;
  const auto stream = static_cast<cudaStream_t>(stream_);
  if (n_owned()) {
    sum_images<<<blocks(n_owned() * rows.width), 256, 0, stream>>>(rows.data, n_owned(), rows.width, image_offsets_, images_);
    check(cudaGetLastError(), "sum_images");
  }
  check(cudaMemsetAsync(rows.data + n_owned() * rows.width, 0, n_halo() * rows.width * sizeof(T), stream),
        "cudaMemsetAsync");
}

template void DeviceIndexedHaloExchange::forward_impl<double>(Rows<double>);
template void DeviceIndexedHaloExchange::forward_impl<float>(Rows<float>);
template void DeviceIndexedHaloExchange::reverse_impl<double>(Rows<double>);
template void DeviceIndexedHaloExchange::reverse_impl<float>(Rows<float>);

}  // namespace distspec
