// Row gathers, scatters and reductions: how per-node blocks become per-edge blocks and back.
// Indices and offsets are borrowed, like every constant operand of a tape op: they must
// outlive the tape's backward().
#pragma once

#include "distspec/tensor/tape.h"
#include "distspec/util/span.h"

namespace distspec::tensor {

// out[k] = x[index[k]]                          (len(index) x cols)
// adjoint: grad x[index[k]] += grad out[k]
template <class T>
Var<T> gather_rows(Tape& tape, const Var<T>& x, Span<const int> index);

// out = base, then out[index[k]] += src[k]      (base's shape)
// adjoint: grad base += grad out, grad src[k] += grad out[index[k]]
template <class T>
Var<T> scatter_add(Tape& tape, const Var<T>& base, const Var<T>& src, Span<const int> index);

// CSR segments: out[r] = sum of src[offsets[r] .. offsets[r+1])   (len(offsets) - 1 rows)
// adjoint: grad src[e] += grad out[r] for e in segment r
template <class T>
Var<T> segment_sum(Tape& tape, const Var<T>& src, Span<const int> offsets);

// The column sums over every row of x, accumulated and returned in fp64 (1 x cols): a system
// total such as an energy, which fp32 would round at the scale of a large system. Pass the rows
// that belong to this system (owned rows), so that each is counted once over all ranks.
// adjoint: grad x[i] += grad out
template <class T>
Var<double> sum_rows(Tape& tape, const Var<T>& x);

}  // namespace distspec::tensor
