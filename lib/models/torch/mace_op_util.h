// What the distspec_mace op bindings share (torch/mace_*_op.cpp): sizes in messages, the checks of
// species, the dispatcher's typed ops, the refusal of second derivatives, torch's current stream.
// This library links no more of the plugin than its kernels, so not torch_runtime.h.
#pragma once

#include <string>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/library.h>
#ifdef DISTSPEC_WITH_CUDA
#include <c10/cuda/CUDAStream.h>
#endif

#include "models/mace/nodes_by_element.h"

namespace distspec::models::torch_kind {

namespace mace = distspec::models::mace;

inline std::string sizes_of(at::IntArrayRef sizes) {
  std::string text = "[";
  for (size_t d = 0; d < sizes.size(); ++d) text += (d ? ", " : "") + std::to_string(sizes[d]);
  return text + "]";
}
inline std::string sizes_of(const at::Tensor& t) { return sizes_of(t.sizes()); }

// The rows a kernel reads (x, grad_out): float32 or float64, on a device the library has kernels for.
inline void check_floating(const char* op, const char* name, const at::Tensor& t) {
  TORCH_CHECK(t.scalar_type() == at::kFloat || t.scalar_type() == at::kDouble, op, ": ", name,
              " must be float32 or float64; got ", t.scalar_type());
  TORCH_CHECK(t.is_cpu() || t.is_cuda(), op, ": ", name, " is on ", t.device(),
              "; the kernels run on the cpu and cuda");
#ifndef DISTSPEC_WITH_CUDA
  TORCH_CHECK(t.is_cpu(), op, ": ", name, " is on ", t.device(), ", and this library was built without CUDA");
#endif
}

// species int64 [n]: each node's index into the exported elements; `n_is` says what n is.
inline void check_species(const char* op, const at::Tensor& species, int64_t n, const char* n_is) {
  TORCH_CHECK(species.dim() == 1 && species.size(0) == n && species.scalar_type() == at::kLong, op,
              ": species must be int64 [n] with ", n_is, n, "; got ", species.scalar_type(), " ", sizes_of(species),
              " (each node's index into the exported elements)");
}

// Every value of species (a host tensor) in [0, elements): the rows the tables were built for.
inline void check_species_range(const char* op, const at::Tensor& species, int64_t elements) {
  if (species.numel() == 0) return;
  const auto [low, high] = at::aminmax(species);
  TORCH_CHECK(low.item<int64_t>() >= 0 && high.item<int64_t>() < elements, op, ": species holds values in [",
              low.item<int64_t>(), ", ", high.item<int64_t>(), "], outside [0, ", elements,
              "): the index of each node's element among the ", elements,
              " exported elements (the rows the tables were built for)");
}

// The op `name` (its overload "") as the autograd kernels call it below the Autograd key: through the
// dispatcher, so that make_fx records the op in the graph it traces.
template <class Signature>
c10::TypedOperatorHandle<Signature> typed_op(const char* name) {
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, "").template typed<Signature>();
}

// The backward op's own backward: the kernels give first derivatives only; `module` names the
// mace-torch module to differentiate instead.
[[noreturn]] inline void no_second_derivative(const char* op, const char* module) {
  TORCH_CHECK(false, op,
              ": second derivatives are not implemented (the kernels give forces and virials, first derivatives "
              "of the energy); differentiate mace-torch's own ", module, " for higher ones");
}

#ifdef DISTSPEC_WITH_CUDA
// torch's current stream on x's device (a cudaStream_t), on which the kernels queue their work.
inline void* current_stream(const at::Tensor& x) {
  return c10::cuda::getCurrentCUDAStream(x.device().index()).stream();
}
#endif

// One call of the kernels of an op whose nodes each have an element (species, checked by the
// caller): nothing for no rows; in a CUDA build, cuda(stream) with torch's current stream where the
// rows `t` are on a CUDA device; else cpu(nodes, begin, end) on the CPU threads, the nodes grouped by
// element and [0, count) split among the threads in pieces of at least `grain`.
template <class Cpu, class Cuda>
void run_kernels(const at::Tensor& t, const at::Tensor& species, int64_t elements, int64_t count, int64_t grain,
                 Cpu&& cpu, Cuda&& cuda) {
  if (t.size(0) == 0) return;
#ifdef DISTSPEC_WITH_CUDA
  if (t.is_cuda()) {
    cuda(current_stream(t));
    return;
  }
#else
  (void)cuda;  // a build without CUDA calls no CUDA kernel
#endif
  const mace::NodesByElement nodes = mace::group_by_element(species.data_ptr<int64_t>(), t.size(0), elements);
  at::parallel_for(0, count, grain, [&](int64_t begin, int64_t end) { cpu(nodes, begin, end); });
}

}  // namespace distspec::models::torch_kind

// The qualified names of op NAME and its backward, kForward and kBackward, in messages and in the
// dispatcher's look-ups.
#define DISTSPEC_MACE_OP_NAMES(NAME)                               \
  constexpr const char* kForward = "distspec_mace::" #NAME;        \
  constexpr const char* kBackward = "distspec_mace::" #NAME "_backward";

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
