// Element-wise products and sums of two blocks.
#pragma once

#include "distspec/tensor/tape.h"

namespace distspec::tensor {

// y = a * b element-wise. b has a's shape, or one column that multiplies every column of its
// row (a per-edge scalar times a per-edge feature row).
template <class T>
Var<T> mul(Tape& tape, const Var<T>& a, const Var<T>& b);

// y = a + b, both of one shape.
template <class T>
Var<T> add(Tape& tape, const Var<T>& a, const Var<T>& b);

}  // namespace distspec::tensor
