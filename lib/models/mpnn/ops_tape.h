// The tape the network's ops are written on (distspec/tensor/tape.h): each op records its
// adjoint as it computes its value, and the model's backward pass replays them.
#pragma once

#include "distspec/tensor/tape.h"
#include "distspec/util/span.h"

namespace distspec::models::mpnn {

using tensor::Tape;
using tensor::Tensor;
using tensor::Var;

}  // namespace distspec::models::mpnn
