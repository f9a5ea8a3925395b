// Per-launch timing of the CUDA kernels (cuda_runtime.h's profile()).
#pragma once

#include "models/cuda_runtime.h"

namespace distspec::models::cuda {

// Brackets one launch with CUDA events while profiling is on (cuda_runtime.h).
class LaunchTimer {
 public:
  LaunchTimer(const char* label, double stream_bytes, double gather_bytes, double flops);
  ~LaunchTimer();
  LaunchTimer(const LaunchTimer&) = delete;
  LaunchTimer& operator=(const LaunchTimer&) = delete;

 private:
  int slot_ = -1;
};

}  // namespace distspec::models::cuda
