// Dense kernels on single rows, shared by the ops: the work inside a dense layer or a filter
// convolution, per row or per edge. Written so that the compiler vectorises them at any -O2
// target: fixed-width blocks, unit stride, partial sums in registers.
#pragma once

#include <algorithm>
#include <cstddef>

namespace distspec::tensor::kernels {

// Columns per register block: 16 partial sums, enough independent chains to hide the latency
// of the adds.
inline constexpr std::size_t kBlock = 16;

// y = b + x M, for x (n), M (n rows of `cols` values, `stride` apart), b and y (cols); a null b
// means zeros. kBlock columns at a time, their sums kept in registers over the n rows of M
// instead of being stored and reloaded per row. Every y[c] adds b[c] and then the rows in
// order, so it equals a plain loop's sum to the bit.
template <class T>
inline void vec_mat(const T* x, std::size_t n, const T* m, std::size_t stride, const T* b, std::size_t cols, T* y) {
  std::size_t c = 0;
  for (; c + kBlock <= cols; c += kBlock) {
    T acc[kBlock];
    if (b)
      std::copy_n(b + c, kBlock, acc);
    else
      std::fill_n(acc, kBlock, T(0));
    for (std::size_t i = 0; i < n; ++i) {
      const T xi = x[i];
      const T* mi = m + i * stride + c;
      for (std::size_t l = 0; l < kBlock; ++l) acc[l] += xi * mi[l];
    }
    std::copy_n(acc, kBlock, y + c);
  }
  for (; c < cols; ++c) {
    T s = b ? b[c] : T(0);
    for (std::size_t i = 0; i < n; ++i) s += x[i] * m[i * stride + c];
    y[c] = s;
  }
}

// sum_c a[c] b[c] in kBlock interleaved partial sums, so that it vectorises (a serial sum
// would be one chain of dependent adds); the order differs from a serial loop's by rounding.
template <class T>
inline T dot(const T* a, const T* b, std::size_t n) {
  T part[kBlock] = {};
  std::size_t c = 0;
  for (; c + kBlock <= n; c += kBlock)
    for (std::size_t l = 0; l < kBlock; ++l) part[l] += a[c + l] * b[c + l];
  T s = 0;
  for (; c < n; ++c) s += a[c] * b[c];
  for (std::size_t l = 0; l < kBlock; ++l) s += part[l];
  return s;
}

// The transpose of a rows x cols matrix, for adjoints that multiply by W^T with unit stride.
template <class T>
inline void transpose(const T* m, std::size_t rows, std::size_t cols, T* out) {
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) out[j * rows + i] = m[i * cols + j];
}

}  // namespace distspec::tensor::kernels
