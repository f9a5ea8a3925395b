#include <string>

#include "distspec/error.h"
#include "models/cuda/require_cuda_dispatcher.cuh"
#include "models/model_error.h"

namespace distspec::models::cuda {

void require_cuda_dispatcher(const Dispatcher& dispatch, const char* model) {
  if (dispatch.device() != Device::cuda)
    throw Error(model_error_id::device, "",
                std::string(model) + " was made for cuda, but the dispatcher binds its ops for " +
                    device_name(dispatch.device()),
                "build the Dispatcher with Device::cuda for a model made with Device::cuda");
}

}  // namespace distspec::models::cuda
