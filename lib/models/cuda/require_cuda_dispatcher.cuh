// What a CUDA model asks of the dispatcher it runs under.
#pragma once

#include "distspec/dispatch/dispatcher.h"

namespace distspec::models::cuda {

// Throws distspec::Error (model.device) unless `dispatch` binds its ops for cuda. Such a
// dispatcher hands the model's device rows to its halo exchange, staging them through host
// memory where the exchange takes host rows only (Dispatcher::attach).
void require_cuda_dispatcher(const Dispatcher& dispatch, const char* model);

}  // namespace distspec::models::cuda
