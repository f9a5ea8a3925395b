// The halo exchange a CUDA model runs its exchanges through.
#include <string>

#include "distspec/error.h"
#include "models/cuda/staged_halo.cuh"
#include "models/model_error.h"

namespace distspec::models::cuda {

StagedHalo::StagedHalo(Dispatcher& dispatch, DeviceStagingHaloExchange& staging, const char* model)
    : dispatch_(dispatch) {
  if (dispatch.device() != Device::cuda)
    throw Error(model_error_id::device, "",
                std::string(model) + " was made for cuda, but the dispatcher binds its ops for " +
                    device_name(dispatch.device()),
                "build the Dispatcher with Device::cuda for a model made with Device::cuda");
  HaloExchange& halo = dispatch.halo();
  if (halo.accepts_device_rows()) return;
  staging.wrap(halo);
  dispatch.attach(staging);
  host_ = &halo;
}

StagedHalo::~StagedHalo() {
  if (host_) dispatch_.attach(*host_);
}

}  // namespace distspec::models::cuda
