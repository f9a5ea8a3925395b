// Dense kernels on single rows, shared by the ops: the work inside a dense layer or a filter
// convolution, per row or per edge. They use GNU vector extensions (GCC, Clang and the
// compilers built on them) rather than trusting the auto-vectoriser, which, given the fixed-width
// blocks these kernels need, prefers to vectorise the wrong loop (across the rows of M, with
// shuffles and spills) and keeps nothing in registers.
#pragma once

#include <cstddef>
#include <cstring>

namespace distspec::tensor::kernels {

// One SIMD register of T at the x86-64 baseline (SSE2: 2 doubles or 4 floats).
template <class T>
struct Simd;
template <>
struct Simd<double> {
  typedef double type __attribute__((vector_size(16)));
};
template <>
struct Simd<float> {
  typedef float type __attribute__((vector_size(16)));
};
template <class T>
using Vec = typename Simd<T>::type;
template <class T>
inline constexpr std::size_t kLanes = sizeof(Vec<T>) / sizeof(T);

template <class T>
inline Vec<T> load(const T* p) {
  Vec<T> v;
  std::memcpy(&v, p, sizeof v);  // unaligned load
  return v;
}
template <class T>
inline void store(T* p, Vec<T> v) {
  std::memcpy(p, &v, sizeof v);
}

// y[0, kV lanes) = b + x M over one block of columns, the block's partial sums held in kV
// registers across the n rows of M (several independent chains hide the latency of the adds).
template <std::size_t kV, class T>
inline void vec_mat_block(const T* x, std::size_t n, const T* m, std::size_t stride, const T* b, T* y) {
  constexpr std::size_t w = kLanes<T>;
  Vec<T> acc[kV];
#pragma GCC unroll 8
  for (std::size_t v = 0; v < kV; ++v) acc[v] = b ? load(b + v * w) : Vec<T>{};
  for (std::size_t i = 0; i < n; ++i) {
    const T xi = x[i];
    const T* mi = m + i * stride;
#pragma GCC unroll 8
    for (std::size_t v = 0; v < kV; ++v) acc[v] += xi * load(mi + v * w);
  }
#pragma GCC unroll 8
  for (std::size_t v = 0; v < kV; ++v) store(y + v * w, acc[v]);
}

// y = b + x M, for x (n), M (n rows of `cols` values, `stride` apart), b and y (cols); a null b
// means zeros. Every y[c] adds b[c] and then the rows in order, as a plain loop would, so the
// result is the same to the bit.
template <class T>
inline void vec_mat(const T* x, std::size_t n, const T* m, std::size_t stride, const T* b, std::size_t cols, T* y) {
  constexpr std::size_t w = kLanes<T>;
  std::size_t c = 0;
  for (; c + 8 * w <= cols; c += 8 * w) vec_mat_block<8>(x, n, m + c, stride, b ? b + c : b, y + c);
  for (; c + 4 * w <= cols; c += 4 * w) vec_mat_block<4>(x, n, m + c, stride, b ? b + c : b, y + c);
  for (; c + w <= cols; c += w) vec_mat_block<1>(x, n, m + c, stride, b ? b + c : b, y + c);
  for (; c < cols; ++c) {
    T s = b ? b[c] : T(0);
    for (std::size_t i = 0; i < n; ++i) s += x[i] * m[i * stride + c];
    y[c] = s;
  }
}

// sum_c a[c] b[c], in interleaved partial sums so that it vectorises (a serial sum is one chain
// of dependent adds); the order, and so the rounding, differs from a serial loop's.
template <class T>
inline T dot(const T* a, const T* b, std::size_t n) {
  constexpr std::size_t w = kLanes<T>;
  Vec<T> part[4] = {};
  std::size_t c = 0;
  for (; c + 4 * w <= n; c += 4 * w)
#pragma GCC unroll 4
    for (std::size_t v = 0; v < 4; ++v) part[v] += load(a + c + v * w) * load(b + c + v * w);
  T s = 0;
  for (; c < n; ++c) s += a[c] * b[c];
  const Vec<T> sum = (part[0] + part[1]) + (part[2] + part[3]);
  for (std::size_t l = 0; l < w; ++l) s += sum[l];
  return s;
}

// The transpose of a rows x cols matrix, for adjoints that multiply by W^T with unit stride.
template <class T>
inline void transpose(const T* m, std::size_t rows, std::size_t cols, T* out) {
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) out[j * rows + i] = m[i * cols + j];
}

}  // namespace distspec::tensor::kernels
