// Where the symmetric contraction writes each output component of a channel: mace's layout of
// SymmetricContraction's output [n, C * sum_b d_b], the blocks of its output irreps one after
// another, each [C, d_b] (channel-major, e3nn's mul_ir), which is what EquivariantProductBasisBlock
// feeds its linear. Shared by the CPU (symmetric_contraction.cpp) and CUDA kernels.
#pragma once

#include <cstdint>

#include "models/mace/host_device.h"

namespace distspec::models::mace {

// Output irreps with l <= 3 give at most 16 components; 32 leaves room for both parities.
inline constexpr int kMaxOutputComponents = 32;

struct OutputLayout {
  int32_t count = 0;  // O = sum_b d_b
  int32_t row = 0;    // C * O, a node's row of the output
  // Component o (the m of block b) of channel c is at column base[o] + c * stride[o]:
  // base = C * (d_0 + ... + d_{b-1}) + m, stride = d_b.
  int32_t base[kMaxOutputComponents] = {};
  int32_t stride[kMaxOutputComponents] = {};

  DISTSPEC_MACE_HD int32_t column(int32_t o, int32_t c) const { return base[o] + c * stride[o]; }
};

// The layout of output irreps of dimensions dims[0..n) for C channels; count 0 when they have
// more than kMaxOutputComponents components.
inline OutputLayout output_layout(const int64_t* dims, int64_t n, int64_t channels) {
  OutputLayout layout;
  int64_t offset = 0;
  for (int64_t b = 0; b < n; ++b) {
    if (offset + dims[b] > kMaxOutputComponents) return OutputLayout{};
    for (int64_t m = 0; m < dims[b]; ++m) {
      layout.base[offset + m] = static_cast<int32_t>(channels * offset + m);
      layout.stride[offset + m] = static_cast<int32_t>(dims[b]);
    }
    offset += dims[b];
  }
  layout.count = static_cast<int32_t>(offset);
  layout.row = static_cast<int32_t>(channels * offset);
  return layout;
}

}  // namespace distspec::models::mace
