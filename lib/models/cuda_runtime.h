// What a host (tests, benchmarks, the LAMMPS glue) may ask of the CUDA side of the model library
// without including a CUDA header: whether a device is there, and per-kernel timings. Defined
// only in builds with DISTSPEC_ENABLE_CUDA (cuda/device.cu, cuda/launch_timer.cu).
#pragma once

#include <string>
#include <vector>

namespace distspec::models::cuda {

// Whether a CUDA device can be used; when not, *why (if given) says what the runtime answered.
bool device_available(std::string* why = nullptr);
// "NVIDIA H200, sm_90, 132 SMs, 140.4 GiB" for the current device.
std::string device_description();
// The device the host selected (cudaSetDevice) in this library's CUDA runtime, which is not
// the one LibTorch links: the torch model kind places its tensors on this index.
int current_device();

// Per-kernel timing. While enabled, every kernel launch of the CUDA models is bracketed by a pair
// of CUDA events (which costs a little and serialises nothing), and its label is charged with
// the launch's elapsed time and with the bytes and flops its launch site counts:
//   stream_bytes  every array the kernel touches, read or written once (compulsory traffic)
//   gather_bytes  stream_bytes plus every per-edge gather of a node row counted again, i.e. the
//                 traffic if no gathered row were reused from cache
//   flops         LJ and EAM: every listed edge (skin included) as a pair within the cutoff, an
//                 upper bound; MPNN: the edges within the cutoff, counted while profiling
struct KernelTiming {
  std::string label;  // "DistSpec::<Model>::<stage>"
  long calls = 0;
  double ms = 0.0;  // summed over calls
  double stream_bytes = 0.0;
  double gather_bytes = 0.0;
  double flops = 0.0;
};
void set_profiling(bool on);
bool profiling();
void reset_profile();
// Waits for the recorded launches and sums them per label, slowest first.
std::vector<KernelTiming> profile();

}  // namespace distspec::models::cuda
