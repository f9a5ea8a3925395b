// Whether this machine and build can run on a GPU: tests that need one skip, visibly, with the
// reason these return ("" when they can run). They ask the CUDA driver and the build, never the
// plugin: a plugin that fails to start on a GPU must fail the GPU tests, not skip them.
#pragma once

#include <string>

namespace distspec::testing {

// The CUDA devices the driver sees (0 without a driver or a GPU).
int gpu_count();
// Why there is no GPU here, or "" when the driver sees one.
const std::string& no_gpu_reason();
// `pair_style distspec device cuda gpu_share yes`: needs a plugin built with CUDA and a GPU.
const std::string& device_cuda_unavailable();
// distspec/kk under `-k on g 1 -sf kk`: needs LAMMPS' KOKKOS built for CUDA and a GPU.
const std::string& gpu_kokkos_unavailable();

}  // namespace distspec::testing
