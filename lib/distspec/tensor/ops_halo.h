// The policy-aware gather: reading node rows by sender index where some senders are halo rows.
// The dispatcher decides from the spec whether the halo rows must be refreshed first; these ops
// only put that decision at the right place in the forward pass and its adjoint at the right
// place in the backward pass:
//   forward:  dispatch.before_gather(x)            (halo_read, features: forward exchange)
//             out[k] = x[index[k]]
//   backward: grad x[index[k]] += grad out[k]
//             dispatch.before_gather_adjoint(grad x) (halo_read, features: reverse exchange)
// x's halo rows are refreshed in place, so gather a block through these ops before anything
// else reads its halo rows; then every use of x sits after the refresh on the tape, its
// gradient is complete when the adjoint exchange runs, and halo-row gradients (which the
// refresh makes copies' gradients) go back to their owners and leave the halo rows zero.
// The dispatcher is borrowed: it must outlive the tape's backward().
#pragma once

#include "distspec/dispatch/dispatcher.h"
#include "distspec/tensor/tape.h"
#include "distspec/util/span.h"

namespace distspec::tensor {

// The refresh alone, for an op that reads x's rows by index itself (a fused edge op such as
// cfconv, which never forms the gathered block): call it, then record that op.
// x has n_owned + n_halo rows of the dispatcher's halo exchange.
template <class T>
void halo_refresh(Tape& tape, Dispatcher& dispatch, const Var<T>& x, RowKind kind);

// halo_refresh, then out[k] = x[index[k]].
template <class T>
Var<T> halo_gather_rows(Tape& tape, Dispatcher& dispatch, const Var<T>& x, Span<const int> index, RowKind kind);

}  // namespace distspec::tensor
