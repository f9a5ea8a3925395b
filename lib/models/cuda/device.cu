// Device queries of cuda_runtime.h, and the error checks of check.cuh.
#include <cstdio>
#include <string>

#include "distspec/error.h"
#include "models/cuda/check.cuh"
#include "models/cuda_runtime.h"
#include "models/model_error.h"

namespace distspec::models::cuda {

void check(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return;
  throw Error(model_error_id::device, "", std::string(what) + " failed: " + cudaGetErrorString(status),
              "check that a CUDA device is visible (CUDA_VISIBLE_DEVICES) and has memory to spare");
}

void check_launch(const char* label) {
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess)
    throw Error(model_error_id::device, "", std::string("kernel ") + label + " failed to launch: " + cudaGetErrorString(status));
}

bool device_available(std::string* why) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    if (why) *why = std::string("cudaGetDeviceCount: ") + cudaGetErrorString(status);
    (void)cudaGetLastError();
    return false;
  }
  if (count == 0) {
    if (why) *why = "cudaGetDeviceCount: no device";
    return false;
  }
  return true;
}

std::string device_description() {
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  cudaDeviceProp p{};
  check(cudaGetDeviceProperties(&p, device), "cudaGetDeviceProperties");
  char text[512];
  std::snprintf(text, sizeof text, "%s, sm_%d%d, %d SMs, %.1f GiB, L2 %.0f MiB", p.name, p.major, p.minor,
                p.multiProcessorCount, p.totalGlobalMem / double(1 << 30), p.l2CacheSize / double(1 << 20));
  return text;
}

int current_device() {
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  return device;
}

}  // namespace distspec::models::cuda
