// Smooth element-wise activations (smooth, so that forces taken through them are continuous).
#pragma once

#include "distspec/tensor/tape.h"

namespace distspec::tensor {

// SiLU (swish): y = x sigmoid(x).
template <class T>
Var<T> silu(Tape& tape, const Var<T>& x);

// Shifted softplus (SchNet, Schütt et al. 2018): y = ln(1 + e^x) - ln 2, so y(0) = 0.
template <class T>
Var<T> shifted_softplus(Tape& tape, const Var<T>& x);

}  // namespace distspec::tensor
