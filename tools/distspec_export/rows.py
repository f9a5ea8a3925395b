"""Owned rows of an exported graph, by shape: which rows a node update runs on.

A graph's rows are `[owned | halo]`. Its edges end on owned rows, so a node update's result is
read on the owned rows, and on halo rows only by a gather of senders' features before the next
halo refresh (which overwrites every halo row from its owner). The energy functions therefore
update owned rows only, wherever no such gather follows (doc/torch_models.md, "What the exporter
changes in a graph").

The owned count is taken from shapes, never from the value of the `n_owned` input: every host
passes `recv_dest = arange(n_owned, N)` (the plugin, lib/models/torch/torch_model.cpp
make_inputs; the exporter's examples and check; host_ops.py), so `n_owned = N - len(recv_dest)`
is a symbolic size under make_fx and torch.export, no shape depends on data, and no `.item()`
is traced. Rows are cut with `split`, whose pieces have exactly the sizes asked for: `x[:n]`
with a symbolic `n` becomes a size of its own under torch.export (an unbacked symbol), which
later shapes could not be matched with.

`every_row()` traces the energy functions as they were before they were cut down (every node
update on every row): the tests compare the two graphs, their values and their row counts.
"""

from __future__ import annotations

import contextlib
from typing import Iterator

import torch
from torch.fx.experimental.symbolic_shapes import statically_known_true

# What the graph says when a caller breaks the contract it relies on (trace.trace_forces puts the
# check into the graph; TorchScript raises this text, AOTInductor its own "Expected ... <= ...").
CONTRACT_MESSAGE = ("recv_dest has more entries than positions has rows: calling convention 1 passes "
                    "recv_dest = arange(n_owned, N), and the graph takes n_owned = N - len(recv_dest)")

_every_row = False


@contextlib.contextmanager
def every_row() -> Iterator[None]:
    """Inside the block, the exporter's energy functions compute every node update on every row,
    as they did before owned-row work (the reference of the tests)."""
    global _every_row
    saved, _every_row = _every_row, True
    try:
        yield
    finally:
        _every_row = saved


def owned_only() -> bool:
    """Whether node updates run on the rows that are read (True) or on every row (every_row())."""
    return not _every_row


def counts(positions: torch.Tensor, recv_dest: torch.Tensor):
    """(n_owned, n_halo) from shapes: N - len(recv_dest) and len(recv_dest)."""
    n_rows, n_halo = positions.shape[0], recv_dest.shape[0]
    torch._check(n_halo <= n_rows, lambda: CONTRACT_MESSAGE)
    return n_rows - n_halo, n_halo


def has_rows(t: torch.Tensor, n) -> bool:
    """Whether `t` has n rows, as far as its sizes tell without a guard (symbolic sizes)."""
    return statically_known_true(t.shape[0] == n)


def owned(t: torch.Tensor, n_owned, n_halo) -> torch.Tensor:
    """The first n_owned rows of `t` ([N, ...] or already [n_owned, ...])."""
    if has_rows(t, n_owned):
        return t
    if not has_rows(t, n_owned + n_halo):
        raise ValueError(f"a tensor of {t.shape[0]} rows is neither every row ({n_owned + n_halo}) nor the owned "
                         f"rows ({n_owned})")
    return t.split([n_owned, n_halo])[0]


def padded(t: torch.Tensor, n_halo) -> torch.Tensor:
    """`t` [n_owned, ...] with n_halo zero rows below: [N, ...], for a halo op, which takes every
    row (the refresh overwrites the zeros)."""
    return torch.cat([t, t.new_zeros((n_halo, *t.shape[1:]))])


MATMULS = ("mm", "addmm", "bmm", "baddbmm", "matmul", "linear", "einsum", "_weight_norm_interface")


def census(gm: torch.fx.GraphModule) -> dict[str, int]:
    """How many aten ops of a traced force graph (trace.trace_forces) produce a tensor of every
    row ([N, ...]) and how many of the owned rows ([N - n_halo, ...]); `*_matmul`: of those, the
    matrix products (MATMULS), which carry most of a node update's work. Views and size ops
    count too: the numbers compare two traces of one model, they are not costs."""
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    n_rows = placeholders[0].meta["val"].shape[0]
    n_owned = n_rows - placeholders[5].meta["val"].shape[0]
    out = {"n_rows": 0, "n_owned": 0, "n_rows_matmul": 0, "n_owned_matmul": 0}
    for node in gm.graph.nodes:
        val = node.meta.get("val")
        if (node.op != "call_function" or not isinstance(node.target, torch._ops.OpOverload)
                or node.target.namespace != "aten" or not isinstance(val, torch.Tensor) or val.dim() == 0):
            continue
        which = "n_rows" if has_rows(val, n_rows) else "n_owned" if has_rows(val, n_owned) else None
        if which is None:
            continue
        out[which] += 1
        if node.target._opname in MATMULS:
            out[which + "_matmul"] += 1
    return out
