// The state the Ewald model's CUDA ops are called with (ewald_cuda.cu), which the PME model's
// CUDA variant passes to the real-space kernel it shares.
#pragma once

#include "models/cuda/device_array.cuh"
#include "models/ewald/ewald.h"

namespace distspec::models::ewald {

// The parameters, and scratch for the global virials.
struct DeviceParams {
  Params params;
  mutable cuda::DeviceArray<double> row_virial;  // n x 6 (stage 2) or n_receivers x 6 (real space)
  mutable cuda::DeviceArray<double> sums;        // column-sum partials
};

}  // namespace distspec::models::ewald
