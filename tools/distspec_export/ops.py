"""The halo ops an exported graph may call, and the opaque backward the exporter traces.

nvalchemi registers `halo_forward_static`, `halo_scatter_correct_static`, `per_system_reduce`
and `halo_keepalive` (importing `nvalchemi.distributed._core.particle_halo`,
`..._core.per_system` and `nvalchemi.distributed.compile_refresh`). Its autograd formulas for
`halo_forward_static` and `per_system_reduce` run `_c10d_functional` collectives, which a
LAMMPS process cannot run (and which, traced at one process, vanish: the gradient of a sum over
ranks would then only be indexed locally). `opaque_halo_backward()` swaps them, for the time of
a trace, for one call of `nvalchemi::halo_forward_static_backward` and
`nvalchemi::per_system_reduce_backward`, defined here with fake (shape) implementations and
eager reference implementations, so that traced force graphs hold those ops instead.
"""

from __future__ import annotations

import contextlib
from typing import Iterator

import torch

NAMESPACE = "nvalchemi"
BACKWARD_OP = "halo_forward_static_backward"
REDUCE_BACKWARD_OP = "per_system_reduce_backward"

# Exact schemas, as nvalchemi-toolkit 0.2.0 registers them (doc/torch_models.md).
ROUTING_ARGS = "Tensor send_index, Tensor recv_dest, Tensor recv_real, Tensor n_owned, SymInt world_size"
SCHEMAS = {
    "halo_forward_static": f"(Tensor padded_in, {ROUTING_ARGS}) -> Tensor",
    "halo_scatter_correct_static": f"(Tensor padded_in, {ROUTING_ARGS}) -> Tensor",
    BACKWARD_OP: f"(Tensor grad_out, {ROUTING_ARGS}) -> Tensor",
    "per_system_reduce": "(Tensor local_vals, Tensor system_index, SymInt n_systems) -> Tensor",
    REDUCE_BACKWARD_OP: "(Tensor grad_out, Tensor system_index) -> Tensor",
    "halo_keepalive": "(Tensor x, Tensor si, Tensor rd, Tensor rr, Tensor no) -> Tensor",
}
# Ops that exchange rows over the halo (their first argument is the exchanged tensor).
HALO_OPS = ("halo_forward_static", "halo_scatter_correct_static", BACKWARD_OP)
# Every custom op the C++ side provides, by qualified name.
KNOWN_OPS = tuple(f"{NAMESPACE}::{name}" for name in SCHEMAS)

_backward_lib: torch.library.Library | None = None


def import_nvalchemi_ops() -> None:
    """Import the nvalchemi modules that register its halo ops."""
    import nvalchemi.distributed._core.particle_halo  # noqa: F401, PLC0415
    import nvalchemi.distributed._core.per_system  # noqa: F401, PLC0415
    import nvalchemi.distributed.compile_refresh  # noqa: F401, PLC0415


_nvalchemi: bool | None = None


def have_nvalchemi() -> bool:
    """Whether nvalchemi's ops import here (once per process).

    Where they do not (a GPU machine that cannot install nvalchemi-toolkit and its warp), the
    exporter defines the ops itself from their schemas (define_standalone_ops) and takes the
    spec as a file saved by nvalchemi elsewhere.
    """
    global _nvalchemi
    if _nvalchemi is None:
        try:
            import_nvalchemi_ops()
            _nvalchemi = True
        except ImportError:
            _nvalchemi = False
    return _nvalchemi


def _row_mask(rows: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    return rows.reshape((rows.shape[0],) + (1,) * (like.dim() - 1))


def halo_forward_static_backward_reference(grad_out, send_index, recv_dest, recv_real, n_owned,
                                           world_size):
    """nvalchemi's backward of `halo_forward_static`, as one op.

    The adjoint of the forward exchange: ghost rows (as `recv_dest` lists them) go back to the
    rank that sent them and are summed into the owned rows `send_index` names; ghost rows of
    the result are zero. At world size 1 the exchange is the identity; on more ranks it is
    nvalchemi's own `halo_exchange_fixed` over its active halo group.
    """
    rows = torch.arange(grad_out.shape[0], device=grad_out.device)
    ghost = _row_mask(rows >= n_owned, grad_out)
    grad_ghost = grad_out * ghost.to(grad_out.dtype)
    grad_recv = grad_ghost.index_select(0, recv_dest) * _row_mask(recv_real, grad_out).to(grad_out.dtype)
    if world_size != 1:
        from nvalchemi.distributed._core import particle_halo as ph  # noqa: PLC0415
        from nvalchemi.distributed._core.gather_primitives import halo_exchange_fixed  # noqa: PLC0415

        grad_recv = halo_exchange_fixed(grad_recv, world_size, ph._HALO_PROCESS_GROUP)
    grad_in = grad_out * (~ghost).to(grad_out.dtype)
    return grad_in.index_add(0, send_index, grad_recv)


def per_system_reduce_backward_reference(grad_out, system_index):
    """nvalchemi's backward of `per_system_reduce`, as one op.

    The gradient of the per-system sums, summed over the ranks (the sums are replicated on every
    rank, and each rank differentiates its own energy), then gathered by `system_index`: one row
    per entry. Over more ranks the sum is nvalchemi's all-reduce over the default group. Which
    rows the forward summed is the caller's business here (nvalchemi masks the others); DISTSPEC's
    kernels sum the owned rows only, and give the others zero.
    """
    import torch.distributed as dist  # noqa: PLC0415

    if dist.is_initialized() and dist.get_world_size() > 1:
        from nvalchemi.distributed._core.gather_primitives import funcol_all_reduce  # noqa: PLC0415

        grad_out = funcol_all_reduce(grad_out.contiguous(), None)
    return grad_out.index_select(0, system_index.long())


def _save_systems(ctx, inputs, output):
    ctx.save_for_backward(inputs[1])
    ctx.n_systems = inputs[0].shape[0] if len(inputs) == 2 else inputs[2]


def _reduce_backward(ctx, grad_out):
    """per_system_reduce's backward: one call of the opaque op."""
    (system_index,) = ctx.saved_tensors
    grad = getattr(torch.ops, NAMESPACE).per_system_reduce_backward(grad_out.contiguous(), system_index)
    return grad, None, None


def _reduce_backward_backward(ctx, grad_out):
    """The opaque op's own adjoint: per_system_reduce (graphs of second derivatives)."""
    (system_index,) = ctx.saved_tensors
    return getattr(torch.ops, NAMESPACE).per_system_reduce(grad_out, system_index, ctx.n_systems), None


def _save_routing(ctx, inputs, output):
    _, send_index, recv_dest, recv_real, n_owned, world_size = inputs
    ctx.save_for_backward(send_index, recv_dest, recv_real, n_owned)
    ctx.world_size = world_size


def _backward_by(name: str):
    """An autograd backward that is one call of `nvalchemi::name` on the gradient."""

    def backward(ctx, grad_out):
        send_index, recv_dest, recv_real, n_owned = ctx.saved_tensors
        op = getattr(getattr(torch.ops, NAMESPACE), name)
        grad_in = op(grad_out.contiguous(), send_index, recv_dest, recv_real, n_owned, ctx.world_size)
        return grad_in, None, None, None, None, None

    return backward


def define_backward_op() -> None:
    """Define `nvalchemi::halo_forward_static_backward` and `::per_system_reduce_backward`
    (once per process)."""
    global _backward_lib
    if _backward_lib is not None or hasattr(getattr(torch.ops, NAMESPACE), BACKWARD_OP):
        return
    lib = torch.library.Library(NAMESPACE, "FRAGMENT")
    lib.define(REDUCE_BACKWARD_OP + SCHEMAS[REDUCE_BACKWARD_OP])
    lib.impl(REDUCE_BACKWARD_OP, per_system_reduce_backward_reference, "CompositeExplicitAutograd")
    torch.library.register_fake(
        f"{NAMESPACE}::{REDUCE_BACKWARD_OP}",
        lambda grad_out, system_index: grad_out.new_empty((system_index.shape[0],) + tuple(grad_out.shape[1:])),
        lib=lib)
    torch.library.register_autograd(f"{NAMESPACE}::{REDUCE_BACKWARD_OP}", _reduce_backward_backward,
                                    setup_context=_save_systems, lib=lib)
    lib.define(BACKWARD_OP + SCHEMAS[BACKWARD_OP])
    lib.impl(BACKWARD_OP, halo_forward_static_backward_reference, "CompositeExplicitAutograd")
    torch.library.register_fake(f"{NAMESPACE}::{BACKWARD_OP}",
                                lambda grad_out, *routing: torch.empty_like(grad_out), lib=lib)
    # Its own adjoint is the forward exchange (graphs of second derivatives).
    torch.library.register_autograd(f"{NAMESPACE}::{BACKWARD_OP}", _backward_by("halo_forward_static"),
                                    setup_context=_save_routing, lib=lib)
    _backward_lib = lib


def halo_forward_static_reference(padded_in, send_index, recv_dest, recv_real, n_owned, world_size):
    """`halo_forward_static` on one process: the ghost rows `recv_dest` names (where `recv_real`)
    are copies of the owned rows `send_index` names."""
    if world_size != 1:
        raise RuntimeError("halo_forward_static without nvalchemi runs on one process (world_size 1)")
    real = recv_dest[recv_real]
    return padded_in.index_copy(0, real, padded_in.index_select(0, send_index[:real.shape[0]]))


def halo_scatter_correct_static_reference(padded_in, send_index, recv_dest, recv_real, n_owned, world_size):
    """`halo_scatter_correct_static` on one process: ghost rows summed into their owners, then the
    owners' sums copied back to the ghost rows (reverse, then forward: self-adjoint)."""
    if world_size != 1:
        raise RuntimeError("halo_scatter_correct_static without nvalchemi runs on one process (world_size 1)")
    real = recv_dest[recv_real]
    owners = send_index[:real.shape[0]]
    ghost = (torch.arange(padded_in.shape[0], device=padded_in.device) >= n_owned).reshape(
        (-1,) + (1,) * (padded_in.dim() - 1))
    summed = torch.where(ghost, torch.zeros_like(padded_in), padded_in).index_add(0, owners,
                                                                                padded_in.index_select(0, real))
    return summed.index_copy(0, real, summed.index_select(0, owners))


def per_system_reduce_reference(local_vals, system_index, n_systems):
    """`per_system_reduce` on one process: rows summed per system."""
    out = local_vals.new_zeros((n_systems,) + tuple(local_vals.shape[1:]))
    return out.index_add(0, system_index.long(), local_vals)


_standalone_lib: torch.library.Library | None = None


def define_standalone_ops() -> None:
    """nvalchemi's ops defined here, where nvalchemi does not import: its schemas, a fake
    (shape) kernel, a one-process reference kernel and, as autograd, the opaque backwards
    (once per process)."""
    global _standalone_lib
    if _standalone_lib is not None:
        return
    lib = torch.library.Library(NAMESPACE, "FRAGMENT")
    forward_ops = {"halo_forward_static": halo_forward_static_reference,
                   "halo_scatter_correct_static": halo_scatter_correct_static_reference}
    for name, kernel in forward_ops.items():
        lib.define(name + SCHEMAS[name])
        lib.impl(name, kernel, "CompositeExplicitAutograd")
        torch.library.register_fake(f"{NAMESPACE}::{name}", lambda x, *routing: torch.empty_like(x), lib=lib)
    lib.define("per_system_reduce" + SCHEMAS["per_system_reduce"])
    lib.impl("per_system_reduce", per_system_reduce_reference, "CompositeExplicitAutograd")
    torch.library.register_fake(
        f"{NAMESPACE}::per_system_reduce",
        lambda local_vals, system_index, n_systems: local_vals.new_empty((n_systems,) + tuple(local_vals.shape[1:])),
        lib=lib)
    lib.define("halo_keepalive" + SCHEMAS["halo_keepalive"])
    lib.impl("halo_keepalive", lambda x, *routing: x.clone(), "CompositeExplicitAutograd")
    torch.library.register_fake(f"{NAMESPACE}::halo_keepalive", lambda x, *routing: torch.empty_like(x), lib=lib)
    _standalone_lib = lib
    define_backward_op()
    # The forward refresh's adjoint is the opaque backward; the scatter correction is its own
    # adjoint (nvalchemi's formula).
    torch.library.register_autograd(f"{NAMESPACE}::halo_forward_static", _backward_by(BACKWARD_OP),
                                    setup_context=_save_routing, lib=lib)
    torch.library.register_autograd(f"{NAMESPACE}::halo_scatter_correct_static",
                                    _backward_by("halo_scatter_correct_static"), setup_context=_save_routing, lib=lib)
    torch.library.register_autograd(f"{NAMESPACE}::per_system_reduce", _reduce_backward,
                                    setup_context=_save_systems, lib=lib)


@contextlib.contextmanager
def opaque_halo_backward() -> Iterator[None]:
    """Within the block, autograd of `halo_forward_static` and `per_system_reduce` calls the
    opaque backward ops.

    nvalchemi's own formulas are put back on exit. Without nvalchemi, the ops defined here
    have no other autograd.
    """
    if not have_nvalchemi():
        define_standalone_ops()
        yield
        return
    define_backward_op()
    from nvalchemi.distributed._core import particle_halo as ph  # noqa: PLC0415
    from nvalchemi.distributed._core import per_system as ps  # noqa: PLC0415

    swaps = ((ph.halo_forward_static_op, _backward_by(BACKWARD_OP), _save_routing),
             (ps.per_system_reduce_op, _reduce_backward, _save_systems))
    saved = [(op, op._backward_fn, op._setup_context_fn) for op, _, _ in swaps]
    for op, backward, setup in swaps:
        op.register_autograd(backward, setup_context=setup)
    try:
        yield
    finally:
        for op, backward, setup in saved:
            op.register_autograd(backward, setup_context=setup)
