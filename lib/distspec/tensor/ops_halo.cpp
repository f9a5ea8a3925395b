#include "distspec/tensor/ops_halo.h"

#include "distspec/tensor/ops_rows.h"

namespace distspec::tensor {

template <class T>
void halo_refresh(Tape& tape, Dispatcher& dispatch, const Var<T>& x, RowKind kind) {
  dispatch.before_gather(x.value().view(), kind);
  // Recorded before the reading op, so it runs after that op's adjoint has accumulated into x.
  if (x.requires_grad()) tape.record([&dispatch, x, kind] { dispatch.before_gather_adjoint(x.grad().view(), kind); });
}

template <class T>
Var<T> halo_gather_rows(Tape& tape, Dispatcher& dispatch, const Var<T>& x, Span<const int> index, RowKind kind) {
  halo_refresh(tape, dispatch, x, kind);
  return gather_rows(tape, x, index);
}

#define DISTSPEC_INSTANTIATE(T)                                               \
  template void halo_refresh<T>(Tape&, Dispatcher&, const Var<T>&, RowKind);  \
  template Var<T> halo_gather_rows<T>(Tape&, Dispatcher&, const Var<T>&, Span<const int>, RowKind);
DISTSPEC_INSTANTIATE(double)
DISTSPEC_INSTANTIATE(float)
#undef DISTSPEC_INSTANTIATE

}  // namespace distspec::tensor
