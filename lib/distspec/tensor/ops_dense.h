// A dense (linear) layer over rows. Weights are borrowed constants: they must outlive the
// tape's backward(), and no gradient is taken with respect to them (the runtime differentiates
// by its inputs, not by parameters).
#pragma once

#include "distspec/tensor/tape.h"

namespace distspec::tensor {

// y = x W + b:  x (n x in), weight (in x out), bias (1 x out), y (n x out).
// adjoint: grad x += grad y W^T
template <class T>
Var<T> linear(Tape& tape, const Var<T>& x, const Tensor<T>& weight, const Tensor<T>& bias);

}  // namespace distspec::tensor
