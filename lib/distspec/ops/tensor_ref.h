// A non-owning, typed view of a 2-D row-major block handed to op kernels. Kernels receive
// arguments positionally, the way the spec's op adapters number them.
#pragma once

#include <cstddef>
#include <cstdint>

namespace distspec {

enum class DType : std::uint8_t { f64, f32, i32, i64 };
enum class Device : std::uint8_t { cpu, cuda };

template <class T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<double>() { return DType::f64; }
template <> constexpr DType dtype_of<float>() { return DType::f32; }
template <> constexpr DType dtype_of<std::int32_t>() { return DType::i32; }
template <> constexpr DType dtype_of<std::int64_t>() { return DType::i64; }

const char* dtype_name(DType);
const char* device_name(Device);

struct TensorRef {
  void* data = nullptr;
  DType dtype = DType::f64;
  Device device = Device::cpu;
  std::size_t rows = 0;
  std::size_t cols = 1;

  template <class T>
  static TensorRef of(T* data, std::size_t rows, std::size_t cols = 1, Device device = Device::cpu) {
    return {const_cast<void*>(static_cast<const void*>(data)), dtype_of<std::remove_const_t<T>>(), device, rows, cols};
  }
  // Typed access; throws distspec::Error when the kernel expects another dtype.
  template <class T> T* as() const;
  std::size_t size() const { return rows * cols; }
};

}  // namespace distspec

#include "distspec/ops/tensor_ref_impl.h"
