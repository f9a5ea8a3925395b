// A minimal non-owning view of contiguous elements (std::span arrives with C++20; the project is
// C++17 because LAMMPS 2021 and Kokkos 3.4 are).
#pragma once

#include <cstddef>
#include <vector>

namespace distspec {

template <class T>
class Span {
 public:
  constexpr Span() = default;
  constexpr Span(T* data, std::size_t size) : data_(data), size_(size) {}
  template <class U>
  Span(std::vector<U>& v) : data_(v.data()), size_(v.size()) {}  // NOLINT: implicit like std::span
  template <class U>
  Span(const std::vector<U>& v) : data_(v.data()), size_(v.size()) {}  // NOLINT

  constexpr T* data() const { return data_; }
  constexpr std::size_t size() const { return size_; }
  constexpr bool empty() const { return size_ == 0; }
  constexpr T& operator[](std::size_t i) const { return data_[i]; }
  constexpr T* begin() const { return data_; }
  constexpr T* end() const { return data_ + size_; }
  constexpr Span first(std::size_t n) const { return {data_, n}; }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace distspec
