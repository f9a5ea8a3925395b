// What the torch model kinds share about running under LibTorch: where their tensors live, and
// how a failed graph call reads.
#pragma once

#include <cstdint>
#include <string>

#include <c10/core/Device.h>
#include <torch/csrc/jit/api/module.h>
#ifdef DISTSPEC_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAStream.h>
#endif

#include "distspec/ops/tensor_ref.h"
#ifdef DISTSPEC_WITH_CUDA
#include "models/cuda_runtime.h"
#endif

namespace distspec::models::torch_kind {

// The plugin's CUDA code links the static CUDA runtime and LibTorch its own shared one, so the
// GPU the host selected (cudaSetDevice, one per rank) is not torch's current device: it is
// named by index.
inline c10::Device torch_device(Device device) {
#ifdef DISTSPEC_WITH_CUDA
  if (device == Device::cuda) return {c10::kCUDA, static_cast<c10::DeviceIndex>(cuda::current_device())};
#endif
  return c10::Device(device == Device::cuda ? c10::kCUDA : c10::kCPU);
}

// The stream torch queues its work for `device` on (a cudaStream_t), on which an exchange queues
// its own work behind the graph's instead of waiting for it on the host; nullptr on the cpu.
inline void* current_stream(c10::Device device) {
#ifdef DISTSPEC_WITH_CUDA
  if (device.is_cuda()) return c10::cuda::getCurrentCUDAStream(device.index()).stream();
#else
  (void)device;
#endif
  return nullptr;
}

// TorchScript's graph executor fuses elementwise chains into kernels it compiles (NVRTC) while a
// step runs, specialised by default twice on the first calls' static shapes and then on dynamic
// ones. A rank's edge count changes at nearly every step (pairs crossing the cutoff), so static
// specialisations fail their guards and each costs a compile mid-run: a MACE step on an H100
// took 0.126 s instead of 0.06 at one system size. Dynamic-shape fusions from the first call hold
// across steps, as nequip's, SevenNet's and DeePMD's LAMMPS styles set them. This is torch's
// process-wide setting; every TorchScript graph the plugin loads wants the same.
inline void fuse_for_dynamic_shapes() {
  torch::jit::FusionStrategy dynamic{{torch::jit::FusionBehavior::DYNAMIC, 10}};
  torch::jit::setFusionStrategy(dynamic);
}

// The first line of a torch error names the failure; frames and C++ traces follow it.
inline std::string first_line(const std::string& text) {
  // An error a TorchScript graph raised comes below the interpreter's header and frame dump.
  static const std::string relayed = "The following operation failed in the TorchScript interpreter";
  if (text.compare(0, relayed.size(), relayed) == 0) {
    const std::size_t end = text.find_last_not_of("\n ");
    const std::size_t start = text.rfind('\n', end);
    if (end != std::string::npos && start != std::string::npos) return text.substr(start + 1, end - start);
  }
  return text.substr(0, text.find('\n'));
}

// Whether a failed graph call ran out of device memory: TorchScript says so below its first
// line, and an AOTInductor package reports its failed allocation (aoti_torch_empty_strided).
inline bool out_of_memory(const std::string& text) {
  return text.find("out of memory") != std::string::npos || text.find("aoti_torch_empty_strided") != std::string::npos;
}
// Allocations torch's caching allocator has failed on the device so far (0 on the cpu): an
// AOTInductor package reports a failed allocation only as a failed call.
inline std::int64_t failed_allocations(c10::Device device) {
#ifdef DISTSPEC_WITH_CUDA
  if (device.is_cuda()) return c10::cuda::CUDACachingAllocator::getDeviceStats(device.index()).num_ooms;
#endif
  return 0;
}
inline std::string out_of_memory_message(const std::string& graph, std::size_t rows, std::size_t edges) {
  return "graph " + graph + " ran out of GPU memory on " + std::to_string(rows) + " rows and " + std::to_string(edges) +
         " edges of this rank";
}
constexpr char kOutOfMemoryHint[] =
    "give each GPU fewer atoms: more MPI ranks on more GPUs (gpu_share yes does not add memory), or a smaller system";

}  // namespace distspec::models::torch_kind
