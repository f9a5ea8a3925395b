// What the distspec_mace op bindings share (torch/mace_*_op.cpp): sizes in messages, torch's
// current stream. This library links no more of the plugin than its kernels, so not torch_runtime.h.
#pragma once

#include <string>

#include <ATen/ATen.h>
#include <torch/library.h>
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

// Binds op NAME and NAME_backward of the namespace distspec_mace (their schemas defined by the op
// file) to torch_kind::NAME and NAME_backward on the CPU and, in a CUDA build, on CUDA (one
// function each, which dispatches on the tensors' device), and to NAME_autograd and
// NAME_backward_autograd for the Autograd key: every op of the library has this shape.
#ifdef DISTSPEC_WITH_CUDA
#define DISTSPEC_MACE_CUDA_KERNELS(NAME)                                                    \
  TORCH_LIBRARY_IMPL(distspec_mace, CUDA, m) {                                              \
    m.impl(#NAME, TORCH_FN(distspec::models::torch_kind::NAME));                            \
    m.impl(#NAME "_backward", TORCH_FN(distspec::models::torch_kind::NAME##_backward));     \
  }
#else
#define DISTSPEC_MACE_CUDA_KERNELS(NAME)
#endif
#define DISTSPEC_MACE_OP_KERNELS(NAME)                                                              \
  TORCH_LIBRARY_IMPL(distspec_mace, CPU, m) {                                                       \
    m.impl(#NAME, TORCH_FN(distspec::models::torch_kind::NAME));                                    \
    m.impl(#NAME "_backward", TORCH_FN(distspec::models::torch_kind::NAME##_backward));             \
  }                                                                                                 \
  DISTSPEC_MACE_CUDA_KERNELS(NAME)                                                                  \
  TORCH_LIBRARY_IMPL(distspec_mace, Autograd, m) {                                                  \
    m.impl(#NAME, TORCH_FN(distspec::models::torch_kind::NAME##_autograd));                         \
    m.impl(#NAME "_backward", TORCH_FN(distspec::models::torch_kind::NAME##_backward_autograd));    \
  }
