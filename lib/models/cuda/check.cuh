// The CUDA kernels' error checks and launch shapes (lib/models, *.cu only). Every launch goes
// to the legacy default stream, so a cudaMemcpy to or from the host (outputs, halo staging)
// waits for the kernels before it: no explicit synchronisation anywhere.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace distspec::models::cuda {

// Throws distspec::Error (id model.device) naming the call when a CUDA call failed.
void check(cudaError_t status, const char* what);
// After a launch: a bad configuration shows up here, a fault at the next synchronising call.
void check_launch(const char* label);


// Blocks for a grid-stride loop over `items` with `per_block` items a block.
inline unsigned grid_for(std::size_t items, unsigned per_block) {
  const std::size_t blocks = (items + per_block - 1) / per_block;
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > 65535 ? 65535 : blocks));
}

// Lets `kernel` take `bytes` of dynamic shared memory (above 48 KiB needs the opt-in).
template <class Kernel>
void allow_shared_memory(Kernel kernel, std::size_t bytes) {
  if (bytes > 48 * 1024)
    check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)),
          "cudaFuncSetAttribute (dynamic shared memory)");
}

}  // namespace distspec::models::cuda
