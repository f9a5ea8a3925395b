#include "distspec/tensor/ops_halo.h"

#include "distspec/tensor/ops_rows.h"

namespace distspec::tensor {

template <class T>
Var<T> halo_gather_rows(Tape& tape, Dispatcher& dispatch, const Var<T>& x, Span<const int> index, RowKind kind) {
  dispatch.before_gather(x.value().view(), kind);
  // Recorded before the gather, so it runs after the gather's adjoint has accumulated into x.
  if (x.requires_grad()) tape.record([&dispatch, x, kind] { dispatch.before_gather_adjoint(x.grad().view(), kind); });
  return gather_rows(tape, x, index);
}

template Var<double> halo_gather_rows<double>(Tape&, Dispatcher&, const Var<double>&, Span<const int>, RowKind);
template Var<float> halo_gather_rows<float>(Tape&, Dispatcher&, const Var<float>&, Span<const int>, RowKind);

}  // namespace distspec::tensor
