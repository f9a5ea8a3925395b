// What the distspec_mace op bindings share (torch/mace_*_op.cpp): sizes in messages, torch's
// current stream. This library links no more of the plugin than its kernels, so not torch_runtime.h.
#pragma once

#include <string>

#include <ATen/ATen.h>
#ifdef DISTSPEC_WITH_CUDA
#include <c10/cuda/CUDAStream.h>
#endif

namespace distspec::models::torch_kind {

inline std::string sizes_of(at::IntArrayRef sizes) {
  std::string text = "[";
  for (size_t d = 0; d < sizes.size(); ++d) text += (d ? ", " : "") + std::to_string(sizes[d]);
  return text + "]";
}
inline std::string sizes_of(const at::Tensor& t) { return sizes_of(t.sizes()); }

#ifdef DISTSPEC_WITH_CUDA
// torch's current stream on x's device (a cudaStream_t), on which the kernels queue their work.
inline void* current_stream(const at::Tensor& x) {
  return c10::cuda::getCurrentCUDAStream(x.device().index()).stream();
}
#endif

}  // namespace distspec::models::torch_kind
