// Whether this LAMMPS and plugin can run on a GPU here: tests that need one skip, visibly, with
// the reason these return ("" when they can run). Each probes once per process.
#pragma once

#include <string>

namespace distspec::testing {

// `pair_style distspec device cuda gpu_share yes`: needs a plugin built with CUDA and a GPU.
const std::string& device_cuda_unavailable();
// distspec/kk under `-k on g 1 -sf kk`: needs LAMMPS' KOKKOS built for CUDA and a GPU.
const std::string& gpu_kokkos_unavailable();

}  // namespace distspec::testing
