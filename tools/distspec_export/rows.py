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
import contextvars
import operator
import os
from typing import Iterator

import torch
from torch.fx.experimental.symbolic_shapes import statically_known_true

# What the graph says when a caller breaks the contract it relies on (trace.trace_forces puts the
# check into the graph; TorchScript raises this text, AOTInductor its own "Expected ... <= ...").
CONTRACT_MESSAGE = ("recv_dest has more entries than positions has rows: calling convention 1 passes "
                    "recv_dest = arange(n_owned, N), and the graph takes n_owned = N - len(recv_dest)")

# A context variable, as element_linears.py keeps its switch: no module state outlives the block.
_EVERY_ROW: contextvars.ContextVar[bool] = contextvars.ContextVar("rows_every_row", default=False)


@contextlib.contextmanager
def every_row() -> Iterator[None]:
    """Inside the block, the exporter's energy functions compute every node update on every row,
    as they did before owned-row work (the reference of the tests)."""
    token = _EVERY_ROW.set(True)
    try:
        yield
    finally:
        _EVERY_ROW.reset(token)


# Set to 1, the exporter traces every node update on every row, as every_row() does: an export
# to measure the owned-row work against (bench/accelerators/run.sh with BENCH_OUT elsewhere).
EVERY_ROW_VARIABLE = "DISTSPEC_EXPORT_EVERY_ROW"


def owned_only() -> bool:
    """Whether node updates run on the rows that are read (True) or on every row (every_row(),
    or the environment variable EVERY_ROW_VARIABLE set to 1)."""
    return not _EVERY_ROW.get() and os.environ.get(EVERY_ROW_VARIABLE, "") != "1"


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


def size_nodes(graph: torch.fx.Graph):
    """Nodes of N (positions' first size) and n_halo (recv_dest's), put after the inputs."""
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    with graph.inserting_after(placeholders[-1]):
        n_rows = graph.call_function(torch.ops.aten.sym_size.int, (placeholders[0], 0))
    with graph.inserting_after(n_rows):
        n_halo = graph.call_function(torch.ops.aten.sym_size.int, (placeholders[5], 0))
    return n_rows, n_halo


def slices_as_splits(gm: torch.fx.GraphModule) -> int:
    """Every `x[:n_owned]` of a traced graph (aten.slice of the rows [N, ...] to the owned rows)
    rewritten as the first piece of `split_with_sizes(x, [n_owned, n_halo])`: the same rows, but
    torch.export, which traces the graph again, then knows their count (a slice to a symbolic end
    gets a size of its own). A package's own code cuts rows so (nequip's interaction blocks).
    Returns how many were rewritten."""
    graph = gm.graph
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    n_rows = placeholders[0].meta["val"].shape[0]
    n_owned = n_rows - placeholders[5].meta["val"].shape[0]
    cuts = [node for node in graph.nodes
            if node.op == "call_function" and node.target is torch.ops.aten.slice.Tensor
            and len(node.args) >= 4 and node.args[1] == 0 and node.args[2] in (0, None)
            and (len(node.args) < 5 or node.args[4] == 1) and not node.kwargs
            and isinstance(node.args[0].meta.get("val"), torch.Tensor) and isinstance(node.meta.get("val"), torch.Tensor)
            and has_rows(node.args[0].meta["val"], n_rows) and has_rows(node.meta["val"], n_owned)]
    if not cuts:
        return 0
    rows_node, halo_node = size_nodes(graph)
    with graph.inserting_after(halo_node):
        owned_node = graph.call_function(operator.sub, (rows_node, halo_node))
    for node in cuts:
        with graph.inserting_before(node):
            pieces = graph.call_function(torch.ops.aten.split_with_sizes.default, (node.args[0], [owned_node, halo_node]))
            first = graph.call_function(operator.getitem, (pieces, 0))
        first.meta["val"] = node.meta["val"]
        node.replace_all_uses_with(first)
        graph.erase_node(node)
    graph.lint()
    gm.recompile()
    return len(cuts)


def _size_symbols(graph: torch.fx.Graph):
    """(the symbols of N: positions' and species' first sizes, which export may keep apart and
    assert equal; the symbol of n_halo: recv_dest's), or None where a size is not a symbol."""
    import sympy  # noqa: PLC0415

    rows_syms, halo_syms = set(), set()
    for node in graph.nodes:
        val = node.meta.get("val") if node.op == "placeholder" else None
        expr = getattr(getattr(val.shape[0], "node", None), "expr", None) \
            if isinstance(val, torch.Tensor) and val.dim() >= 1 else None
        if not isinstance(expr, sympy.Symbol):
            continue
        if node.name.startswith(("positions", "species")):
            rows_syms.add(expr)
        elif node.name.startswith("recv_dest"):
            halo_syms.add(expr)
    return (rows_syms, next(iter(halo_syms))) if rows_syms and len(halo_syms) == 1 else None


def _owned_counts_held(expr, symbols, owned_counts) -> bool:
    """Whether a size condition holds for each owned count given, with a few halo counts."""
    import sympy  # noqa: PLC0415

    rows_syms, halo_sym = symbols
    if not expr.free_symbols <= rows_syms | {halo_sym}:
        return True  # not about N and n_halo alone: not this module's business
    for halo in (0, 3, 17):
        for k in owned_counts:
            # at once (a size symbol is positive: replaced one by one, `s76 <= s28` reads s76 <= 0 first)
            values = {**{r: sympy.Integer(halo + k) for r in rows_syms}, halo_sym: sympy.Integer(halo)}
            if not bool(expr.xreplace(values)):
                return False
    return True


def _asserts(graph: torch.fx.Graph):
    """(assert node, its condition's sympy expression) of an exported graph's size asserts."""
    for node in graph.nodes:
        if node.op == "call_function" and node.target is torch.ops.aten._assert_scalar.default:
            cond = node.args[0]
            val = cond.meta.get("val") if isinstance(cond, torch.fx.Node) else None
            expr = getattr(getattr(val, "node", None), "expr", None)
            if expr is not None:
                yield node, expr


def drop_owned_lower_bounds(ep) -> int:
    """Removes from an ExportedProgram the runtime asserts that ask for at least 2 owned rows.

    torch.export reasons about a symbol of size (N, n_halo) as if it could be 0, 1 or more
    (`backed_size_oblivious`), but not about an expression of them: an op on the owned rows [N -
    n_halo, ...] whose meta function inspects memory layout (e3nn's copies into an output,
    `copy_`'s overlap check) asks whether N - n_halo is 0 or 1, and export turns the answer into
    asserts `N != n_halo`, `N != n_halo + 1`, `n_halo + 2 <= N`, which would stop a rank owning
    no atom or one. They are what AOTInductor's lower bounds of a free size are
    (`aot_inductor.check_lowerbound` off, trace.compile_aoti), and are dropped alike; the export's
    check runs the graph on such ranks (check.small_ranks). An assert is dropped when it holds for
    every owned count from 2 on and fails only below 2. Returns how many were dropped."""
    graph = ep.graph_module.graph
    symbols = _size_symbols(graph)
    if symbols is None:
        return 0
    dropped = 0
    for node, expr in list(_asserts(graph)):
        if _owned_counts_held(expr, symbols, range(2, 6)) and not _owned_counts_held(expr, symbols, (0, 1)):
            cond = node.args[0]
            graph.erase_node(node)
            dropped += 1
            # the condition and the size arithmetic only it used
            pending = [cond]
            while pending:
                n = pending.pop()
                if not n.users and n.op == "call_function":
                    args = list(n.all_input_nodes)
                    graph.erase_node(n)
                    pending.extend(args)
    if dropped:
        graph.lint()
        ep.graph_module.recompile()
    return dropped


def small_rank_asserts(ep) -> list[str]:
    """The size asserts of an ExportedProgram that a rank owning no atom or one would fail."""
    symbols = _size_symbols(ep.graph_module.graph)
    if symbols is None:
        return ["the sizes of positions and recv_dest are not free symbols"]
    return [str(expr) for _, expr in _asserts(ep.graph_module.graph)
            if not _owned_counts_held(expr, symbols, (0, 1))]


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
