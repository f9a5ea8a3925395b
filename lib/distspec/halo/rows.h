// Row blocks: per-node data laid out [owned | halo] rows of `width` contiguous values each.
#pragma once

#include <cstddef>

namespace distspec {

template <class T>
struct Rows {
  T* data = nullptr;
  std::size_t rows = 0;
  int width = 1;

  T* row(std::size_t i) const { return data + i * static_cast<std::size_t>(width); }
  std::size_t size() const { return rows * static_cast<std::size_t>(width); }
};

}  // namespace distspec
