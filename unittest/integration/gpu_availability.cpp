#include "gpu_availability.h"

#include <dlfcn.h>

#include "library.h"

namespace distspec::testing {
namespace {

// The CUDA devices the driver sees, asked of the driver itself: libcuda, opened at run time so
// that a test program built without CUDA still builds and runs. Never the plugin's own start-up
// on a device: that is what the GPU tests test, and a regression in it must fail them, not turn
// them into skips. `why` says what stood in the way when the answer is 0.
int driver_device_count(std::string& why)
{
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!driver) {
    const char* error = dlerror();
    why = std::string("no CUDA driver (") + (error ? error : "libcuda.so.1 not found") + ")";
    return 0;
  }
  // CUresult cuInit(unsigned), cuDeviceGetCount(int*): 0 is CUDA_SUCCESS, 100 CUDA_ERROR_NO_DEVICE.
  using Init = int (*)(unsigned);
  using Count = int (*)(int*);
  const auto init = reinterpret_cast<Init>(dlsym(driver, "cuInit"));
  const auto count = reinterpret_cast<Count>(dlsym(driver, "cuDeviceGetCount"));
  if (!init || !count) {
    why = "the CUDA driver libcuda.so.1 has no cuInit/cuDeviceGetCount";
    return 0;
  }
  if (const int rc = init(0); rc != 0) {
    why = rc == 100 ? "no GPU: the CUDA driver sees no device" : "the CUDA driver's cuInit failed with CUresult " + std::to_string(rc);
    return 0;
  }
  int n = 0;
  if (const int rc = count(&n); rc != 0) {
    why = "the CUDA driver's cuDeviceGetCount failed with CUresult " + std::to_string(rc);
    return 0;
  }
  // The driver stays loaded: CUDA in the plugin and in LAMMPS' KOKKOS uses the same one.
  if (n == 0) why = "no GPU: the CUDA driver sees no device";
  return n;
}

// The driver's answer, asked once per process.
struct DriverAnswer {
  int count = 0;
  std::string why;
  DriverAnswer() { count = driver_device_count(why); }
};
const DriverAnswer& driver()
{
  static const DriverAnswer answer;
  return answer;
}

}  // namespace

int gpu_count() { return driver().count; }

const std::string& no_gpu_reason()
{
  static const std::string none;
  return driver().count > 0 ? none : driver().why;
}

const std::string& device_cuda_unavailable()
{
  static const std::string why = [] {
#ifndef DISTSPEC_PLUGIN_HAS_CUDA
    return std::string("the plugin is built without CUDA (DISTSPEC_ENABLE_CUDA=OFF)");
#else
    return no_gpu_reason();
#endif
  }();
  return why;
}

const std::string& gpu_kokkos_unavailable()
{
  static const std::string why = [] {
    if (!lammps_config_accelerator("KOKKOS", "api", "cuda"))
      return std::string("this LAMMPS' KOKKOS package is not built for CUDA");
    return no_gpu_reason();
  }();
  return why;
}

}  // namespace distspec::testing
