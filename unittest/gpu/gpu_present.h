// Whether a CUDA device is present, asked of the CUDA runtime directly (cudaGetDeviceCount), not
// of the models library under test: a regression in its device start-up must fail these tests,
// not turn them into skips. Tests skip, visibly, with the reason when there is none.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

namespace distspec::testing {

inline std::string no_cuda_device()
{
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    return std::string("no CUDA device (cudaGetDeviceCount: ") + cudaGetErrorString(status) + ")";
  }
  return count == 0 ? "no CUDA device (cudaGetDeviceCount: 0)" : "";
}

}  // namespace distspec::testing

#define REQUIRE_CUDA()                                                           \
  do {                                                                           \
    if (const std::string why = distspec::testing::no_cuda_device(); !why.empty()) \
      GTEST_SKIP() << why;                                                       \
  } while (0)
