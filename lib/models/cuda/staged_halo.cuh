// The halo exchange a CUDA model runs its exchanges through.
#pragma once

#include "distspec/dispatch/dispatcher.h"
#include "distspec/halo/device_staging.h"

namespace distspec::models::cuda {

// For one compute(): checks that the dispatcher's ops are bound for the device, and gives it a
// halo exchange that takes device rows, its own if it does, else `staging` around it; the
// host's exchange is attached again when this goes out of scope.
class StagedHalo {
 public:
  StagedHalo(Dispatcher& dispatch, DeviceStagingHaloExchange& staging, const char* model);
  ~StagedHalo();
  StagedHalo(const StagedHalo&) = delete;
  StagedHalo& operator=(const StagedHalo&) = delete;

 private:
  Dispatcher& dispatch_;
  HaloExchange* host_ = nullptr;
};

}  // namespace distspec::models::cuda
