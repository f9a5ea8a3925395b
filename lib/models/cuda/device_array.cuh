// Device arrays that persist across compute() calls and grow with padding, and TensorRefs of
// device memory.
#pragma once

#include <cstddef>
#include <vector>

#include "distspec/ops/tensor_ref.h"
#include "models/cuda/check.cuh"

namespace distspec::models::cuda {

// Device memory of T that keeps its allocation across calls: resize() grows it (by 1/8 plus a
// little, so that a slowly growing row count does not reallocate every reneighbouring) and
// never shrinks it; contents are not kept when it grows.
template <class T>
class DeviceArray {
 public:
  DeviceArray() = default;
  ~DeviceArray() { release(); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  DeviceArray(DeviceArray&& o) noexcept : data_(o.data_), size_(o.size_), capacity_(o.capacity_) {
    o.data_ = nullptr;
    o.size_ = o.capacity_ = 0;
  }
  DeviceArray& operator=(DeviceArray&& o) noexcept {
    if (this != &o) {
      release();
      data_ = o.data_;
      size_ = o.size_;
      capacity_ = o.capacity_;
      o.data_ = nullptr;
      o.size_ = o.capacity_ = 0;
    }
    return *this;
  }

  void resize(std::size_t n) {
    if (n > capacity_) {
      release();
      const std::size_t padded = n + n / 8 + 64;
      check(cudaMalloc(reinterpret_cast<void**>(&data_), padded * sizeof(T)), "cudaMalloc");
      capacity_ = padded;
    }
    size_ = n;
  }
  // resize(n), then n values from host memory (or device memory: the copy direction follows
  // the pointers, so a host that keeps its arrays on the device is served as well).
  void upload(const T* host, std::size_t n) {
    resize(n);
    if (n) check(cudaMemcpy(data_, host, n * sizeof(T), cudaMemcpyDefault), "cudaMemcpy (upload)");
  }
  void upload(const std::vector<T>& host) { upload(host.data(), host.size()); }
  // The first n values into `host` (host or device memory).
  void download(T* host, std::size_t n) const {
    if (n) check(cudaMemcpy(host, data_, n * sizeof(T), cudaMemcpyDefault), "cudaMemcpy (download)");
  }
  void zero() {
    if (size_) check(cudaMemsetAsync(data_, 0, size_ * sizeof(T)), "cudaMemsetAsync");
  }

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  void release() {
    if (data_) cudaFree(data_);
    data_ = nullptr;
    size_ = capacity_ = 0;
  }
  T* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

template <class T>
TensorRef device_ref(T* data, std::size_t rows, std::size_t cols = 1) {
  return TensorRef::of(data, rows, cols, Device::cuda);
}

}  // namespace distspec::models::cuda
