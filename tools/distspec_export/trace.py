"""Forces traced into one graph, then exported as an AOTInductor package or TorchScript.

The pipeline (measured in ../shared/TORCH.md; plain `torch.export` of a function that calls
`autograd.grad` fails):

1. `make_fx(tracing_mode="symbolic")` over atomic energies plus `autograd.grad` of the owned
   energy, with the opaque backwards of `halo_forward_static` and `per_system_reduce` installed
   (ops.py): an aten-level graph whose outputs are `(atomic_energies, forces, atomic_virials)`
   and whose only custom ops are the halo ops of doc/torch_models.md;
2. `torch.export.export(strict=False, prefer_deferred_runtime_asserts_over_guards=True)` with
   dynamic row, edge and halo counts, each in [0, inf) (`size_oblivious()` through steps 1-3);
3. `torch._inductor.aoti_compile_and_package` (`.pt2`), or `torch.jit.script` of the graph of
   step 1 (`.pt`).
"""

from __future__ import annotations

import contextlib
import inspect
import operator
import os
import sys
import time
from typing import Any, Callable, Iterator, Sequence

import torch
from torch.fx.experimental.proxy_tensor import make_fx

from . import ops, rows

CONTRACT = 1
UNITS = ("lj", "real", "metal", "si", "cgs", "electron", "micro", "nano")  # LAMMPS `units` styles
INPUT_NAMES = ("positions", "species", "edge_index", "n_owned", "send_index", "recv_dest", "recv_real")
OUTPUT_NAMES = ("atomic_energies", "forces", "atomic_virials")
# The energy function's optional last argument: a displacement [E, 3] added to each edge vector
# (sender's row minus receiver's row), zero when the graph runs. The gradient of the energy with
# respect to it is dE/d(edge vector), from which the per-atom virial is built.
EDGE_SHIFT = "edge_shift"

EnergyFn = Callable[..., torch.Tensor]


class ExportError(RuntimeError):
    """An export step failed; the message says which and what to do."""


def takes_edge_shift(energy_fn: EnergyFn) -> bool:
    """Whether the energy function takes the contract's inputs and then `edge_shift`.

    A graph traced with make_fx names its placeholders after the traced function's arguments
    (`edge_shift_1`), so an energy graph of an adapter (MACE's) is recognised too."""
    target = energy_fn.forward if isinstance(energy_fn, torch.nn.Module) else energy_fn
    try:
        names = list(inspect.signature(target).parameters)
    except (TypeError, ValueError):
        return False
    return len(names) == len(INPUT_NAMES) + 1 and names[-1].startswith(EDGE_SHIFT)


# How an edge's virial -r (x) dE/dr is shared between its two atoms, by the package whose per-atom
# virial the graph reproduces (an energy function's attribute ATOMIC_VIRIAL_PARTITION; default
# "half"):
#   "half":      symmetrised, half to the sender's row and half to the receiver's: mace's
#                `get_atomic_virials_stresses` (compute_atomic_stresses), and ev_tally's for a pair term;
#   "sevennet":  all of it to the sender's row (the neighbour), components xx yy zz, xy = r_x g_y,
#                xz = r_z g_x, yz = r_y g_z: SevenNet's ForceStressOutputFromEdge(use_atomic_virial)
#                as its pair_style e3gnn puts it into vatom.
ATOMIC_VIRIAL_PARTITION = "atomic_virial_partition"
PARTITIONS = ("half", "sevennet")


def atomic_virials(positions: torch.Tensor, edge_index: torch.Tensor, edge_grad: torch.Tensor,
                   partition: str = "half") -> torch.Tensor:
    """Per-row virial [N, 6] (LAMMPS' order xx, yy, zz, xy, xz, yz) from g = dE/d(edge vector).

    Each edge's virial -r_e (x) g_e (r_e the sender's row minus the receiver's row) is shared as
    `partition` says (PARTITIONS), in LAMMPS' sign: the sum over rows is the sum of r (x) f. It
    reads edge vectors only, never a row's absolute position, so an atom's value does not depend
    on the origin nor on which periodic images of it are rows: it is the same on every processor
    grid. A share on a halo row is a partial of its owner, folded like the forces."""
    if partition not in PARTITIONS:
        raise ExportError(f"atomic virial partition {partition!r} is not one of {PARTITIONS}")
    sender, receiver = edge_index[0], edge_index[1]
    r = (positions.index_select(0, sender) - positions.index_select(0, receiver)).detach()
    g = edge_grad
    out = torch.zeros(positions.shape[0], 6, dtype=g.dtype, device=g.device)
    if partition == "sevennet":
        six = -torch.stack([r[:, 0] * g[:, 0], r[:, 1] * g[:, 1], r[:, 2] * g[:, 2],
                            r[:, 0] * g[:, 1], r[:, 2] * g[:, 0], r[:, 1] * g[:, 2]], 1)
        return out.index_add(0, sender, six)
    # -(r_a g_b + r_b g_a) / 2, then half of it to each end
    six = -0.25 * torch.stack([2 * r[:, 0] * g[:, 0], 2 * r[:, 1] * g[:, 1], 2 * r[:, 2] * g[:, 2],
                               r[:, 0] * g[:, 1] + r[:, 1] * g[:, 0], r[:, 0] * g[:, 2] + r[:, 2] * g[:, 0],
                               r[:, 1] * g[:, 2] + r[:, 2] * g[:, 1]], 1)
    return out.index_add(0, sender, six).index_add(0, receiver, six)


def force_function(energy_fn: EnergyFn, virials: bool = False) -> Callable[..., tuple[torch.Tensor, ...]]:
    """Contract inputs -> (atomic_energies [N], forces [N, 3]), and with `virials` also
    atomic_virials [N, 6] (atomic_virials(); [0, 6] where the energy function takes no
    `edge_shift`: the graph then gives no per-atom virial, and the plugin refuses to make one up).

    The energy function returns the atomic energies of every row [N] or of the owned rows
    [n_owned]; forces are `-d(sum of owned atomic energies)/d positions` on every row. The owned
    rows are cut by shape (rows.py: n_owned = N - len(recv_dest)), so no shape depends on the
    value of `n_owned`; the graph's atomic_energies are the owned rows' with halo rows zero.
    """
    shifted = takes_edge_shift(energy_fn)
    partition = getattr(energy_fn, ATOMIC_VIRIAL_PARTITION, "half")

    def atomic_energies_and_forces(positions, species, edge_index, n_owned, send_index, recv_dest,
                                   recv_real):
        owned_rows, halo_rows = rows.counts(positions, recv_dest)
        with torch.enable_grad():
            pos = positions.detach().requires_grad_(True)
            inputs = [pos, species, edge_index, n_owned, send_index, recv_dest, recv_real]
            if shifted:
                inputs.append(torch.zeros(edge_index.shape[1], 3, dtype=positions.dtype, device=positions.device,
                                          requires_grad=True))
            energies = energy_fn(*inputs)
            if energies.dim() == 2 and energies.shape[1] == 1:
                energies = energies.squeeze(1)
            energies = rows.owned(energies, owned_rows, halo_rows)
            wrt = [pos, inputs[-1]] if shifted and virials else [pos]
            grads = torch.autograd.grad(energies.sum(), wrt, allow_unused=True, materialize_grads=True)
        energies = rows.padded(energies.detach(), halo_rows)
        if not virials:
            return energies, -grads[0]
        if shifted:
            virial_rows = atomic_virials(positions, edge_index, grads[1], partition)
        else:
            virial_rows = torch.zeros(0, 6, dtype=positions.dtype, device=positions.device)
        return energies, -grads[0], virial_rows

    return atomic_energies_and_forces


def custom_ops_of(gm: torch.fx.GraphModule) -> list[str]:
    """Qualified names (`ns::name`) of the non-aten ops a graph calls, in first-call order."""
    names: list[str] = []
    for node in gm.graph.nodes:
        if node.op != "call_function" or not isinstance(node.target, torch._ops.OpOverload):
            continue
        ns = node.target.namespace
        if ns in ("aten", "prims"):
            continue
        name = f"{ns}::{node.target._opname}"
        if name not in names:
            names.append(name)
    return names


def check_graph_ops(gm: torch.fx.GraphModule, provided: tuple[str, ...] = ()) -> list[str]:
    """The custom ops of the graph; an error for any that DISTSPEC does not provide (its halo
    ops, and the ops of the namespaces `provided`: those of the accelerator the export was asked
    for)."""
    names = custom_ops_of(gm)
    c10d = [n for n in names if "c10d" in n]
    if c10d:
        raise ExportError(
            f"the force graph calls collective ops {c10d}, which a LAMMPS process cannot run: a "
            "halo op's backward was traced through nvalchemi's collective formula. Call the halo "
            "ops through torch.ops.nvalchemi.* so that the exporter's opaque backward applies")
    unknown = [n for n in names if n not in ops.KNOWN_OPS and n.split("::", 1)[0] not in provided]
    if unknown:
        raise ExportError(
            f"the force graph calls ops that DISTSPEC does not provide: {unknown}; it provides "
            f"{list(ops.KNOWN_OPS)}. Express the model in aten ops and these halo ops")
    return names


def comm_width(gm: torch.fx.GraphModule) -> int:
    """The widest row, in values, that a halo op of the graph exchanges (0 if none)."""
    width = 0
    for node in gm.graph.nodes:
        if (node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload)
                and node.target.namespace == ops.NAMESPACE and node.target._opname in ops.HALO_OPS):
            val = node.args[0].meta.get("val")
            if val is None:
                continue
            row = 1
            for d in val.shape[1:]:
                if not isinstance(d, int):
                    raise ExportError(f"{node.target._opname} exchanges rows of dynamic width {tuple(val.shape)}; "
                                      "a halo row must have a fixed number of values")
                row *= d
            width = max(width, row)
    return width


def halo_sites(gm: torch.fx.GraphModule) -> dict[str, int]:
    """How many times the graph calls each nvalchemi op."""
    counts: dict[str, int] = {}
    for node in gm.graph.nodes:
        if (node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload)
                and node.target.namespace == ops.NAMESPACE):
            counts[node.target._opname] = counts.get(node.target._opname, 0) + 1
    return counts


@contextlib.contextmanager
def python_script_functions() -> Iterator[None]:
    """Module-level `torch.jit.script` functions of non-torch modules run as Python inside.

    TorchScript knows no symbolic sizes: a scripted helper (e3nn's spherical harmonics) called
    under make_fx fixes every size it sees to the example's. Its Python original traces.
    """
    saved = []
    for name, module in list(sys.modules.items()):
        if module is None or name.split(".")[0] in ("torch", "functorch"):
            continue
        try:
            items = list(vars(module).items())
        except TypeError:
            continue
        for attr, value in items:
            if not isinstance(value, torch.jit.ScriptFunction):
                continue
            original = getattr(value, "_torchdynamo_inline", None)
            if callable(original):
                saved.append((module, attr, value))
                setattr(module, attr, original)
    try:
        yield
    finally:
        for module, attr, value in saved:
            setattr(module, attr, value)


def size_oblivious():
    """Sizes in [0, inf) from tracing to compilation.

    By default symbolic sizes are taken to be >= 2 (0 and 1 are specialised away), and
    AOTInductor then rejects a size below 2 when it checks its inputs
    (AOTI_RUNTIME_CHECK_INPUTS=1): an empty `send_index`, an empty rank. torch's
    `backed_size_oblivious` (experimental, for export) traces without that assumption.
    """
    import torch.fx.experimental._config as fx_config  # noqa: PLC0415

    return fx_config.patch(backed_size_oblivious=True)


def trace_symbolic(fn: Callable[..., Any], example: Sequence[torch.Tensor]) -> torch.fx.GraphModule:
    """make_fx with symbolic sizes; model parameters become constants of the graph."""
    with python_script_functions(), size_oblivious():
        return make_fx(fn, tracing_mode="symbolic", _allow_non_fake_inputs=True)(*example)


def trace_forces(energy_fn: EnergyFn, example: Sequence[torch.Tensor],
                 provided: tuple[str, ...] = ()) -> torch.fx.GraphModule:
    """Step 1: the aten graph of (atomic_energies, forces, atomic_virials), placeholders named by the contract;
    `provided`: op namespaces of the accelerator the model was built with (check_graph_ops)."""
    fn = force_function(energy_fn, virials=True)
    with ops.opaque_halo_backward():
        try:
            gm = trace_symbolic(fn, example)
        except Exception as e:  # noqa: BLE001
            raise ExportError(f"tracing energy + autograd.grad with make_fx failed: {type(e).__name__}: {e}\n"
                              "the model's forward must be traceable with symbolic shapes: no data-dependent "
                              "Python control flow, no .item()/.tolist() on tensors that depend on the input "
                              "sizes") from e
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    if len(placeholders) != len(INPUT_NAMES):
        raise ExportError(f"the traced graph has {len(placeholders)} inputs, the contract {len(INPUT_NAMES)}")
    for node, name in zip(placeholders, INPUT_NAMES):
        node.name = name
        node.target = name
    check_row_counts(gm)
    rows.slices_as_splits(gm)
    gm.graph.lint()
    gm.recompile()
    check_graph_ops(gm, provided)
    return gm


def check_row_counts(gm: torch.fx.GraphModule) -> None:
    """Put the check `len(recv_dest) <= N` first in the graph (rows.counts()).

    make_fx evaluates a size check while it traces and keeps no node of it; torch.export, which
    traces the graph again with free sizes, needs it to know that the owned count N - len(recv_dest)
    is not negative (without it, cutting the owned rows makes sizes it cannot relate), and the
    graph raises it where a caller breaks the contract."""
    graph = gm.graph
    n_rows, n_halo = rows.size_nodes(graph)
    with graph.inserting_after(n_halo):
        fits = graph.call_function(operator.le, (n_halo, n_rows))
    with graph.inserting_after(fits):
        graph.call_function(torch.ops.aten._assert_scalar.default, (fits, rows.CONTRACT_MESSAGE))


def dynamic_shapes() -> tuple[Any, ...]:
    from torch.export import Dim  # noqa: PLC0415

    rows, edges, halo, send = (Dim("n_rows", min=0), Dim("n_edges", min=0), Dim("n_halo", min=0),
                               Dim("n_send", min=0))
    return ({0: rows}, {0: rows}, {1: edges}, None, {0: send}, {0: halo}, {0: halo})


def export_program(gm: torch.fx.GraphModule, example: Sequence[torch.Tensor]) -> torch.export.ExportedProgram:
    """Step 2: an ExportedProgram with dynamic row, edge and halo counts (each may be 0)."""
    try:
        with size_oblivious():
            ep = torch.export.export(gm, tuple(example), dynamic_shapes=dynamic_shapes(), strict=False,
                                     prefer_deferred_runtime_asserts_over_guards=True)
        rows.drop_owned_lower_bounds(ep)
        return ep
    except Exception as e:  # noqa: BLE001
        raise ExportError(f"torch.export of the force graph failed: {type(e).__name__}: {e}\n"
                          "the row count (positions, species), edge count and halo count must stay free: "
                          "a model that fixes one of them (e.g. a shape check against a constant) cannot run "
                          "under domain decomposition") from e


QUICK_COMPILE = {
    # No precompiled header and an -O0 wrapper (the kernels keep -O3): 20 s instead of 35 s
    # for a small model on 2 cores. For fixtures compiled at test time.
    "aot_inductor.precompile_headers": False,
    "aot_inductor.compile_wrapper_opt_level": "O0",
}


def compile_aoti(ep: torch.export.ExportedProgram, path: str, metadata: dict[str, str],
                 quick: bool = False) -> float:
    """Step 3a: the `.pt2` package, with `metadata` in it. Returns the seconds it took."""
    # No lower-bound checks of the dynamic sizes: inductor derives bound 2 from guards like
    # "E != 1" that a model's ops add (aten's tensordot in e3nn), although the graph runs on 0,
    # 1 and 2 rows; the exporter's check runs it on such ranks (check.small_ranks()).
    configs: dict[str, Any] = {"aot_inductor.metadata": dict(metadata), "aot_inductor.check_lowerbound": False}
    if quick:
        configs.update(QUICK_COMPILE)
    t0 = time.perf_counter()
    try:
        with size_oblivious():
            torch._inductor.aoti_compile_and_package(ep, package_path=path, inductor_configs=configs)
    except Exception as e:  # noqa: BLE001
        raise ExportError(f"AOTInductor compilation failed: {type(e).__name__}: {e}") from e
    return time.perf_counter() - t0


def follow_positions_device(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """The same graph with every device the trace fixed (`zeros(..., device=cpu)`, `arange`,
    `_to_copy`) replaced by the device of the `positions` input, so that one TorchScript file
    runs wherever its inputs are: on the cpu, and on a GPU once LibTorch moves its constants there."""
    graph = gm.graph
    positions = next(n for n in graph.nodes if n.op == "placeholder")
    with graph.inserting_after(positions):
        device = graph.call_function(getattr, (positions, "device"))

    def follow(value):
        return device if isinstance(value, torch.device) else value

    for node in list(graph.nodes):
        if node.op != "call_function" or node is device:
            continue
        node.args = tuple(follow(a) for a in node.args)
        node.kwargs = {k: follow(v) for k, v in node.kwargs.items()}
    if not device.users:
        graph.erase_node(device)
    gm.recompile()
    return gm


def require(condition: torch.Tensor, message: str = "a check of the exported graph failed") -> None:
    """A model's `torch._assert_async` in TorchScript, which drops that op as unused: the graph
    raises `message` (an AIMNet2 neighbour matrix too narrow), on either device."""
    if not bool(condition):
        raise RuntimeError(message)


ASSERTS = (torch.ops.aten._assert_async.msg, torch.ops.aten._assert_async.default)


def scriptable(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """The same graph with op overloads replaced by their packets, which TorchScript resolves, its
    devices those of its inputs, and its checks kept."""
    follow_positions_device(gm)
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target in ASSERTS:
            node.target = require
        elif node.op == "call_function" and node.target is torch.ops.aten._assert_scalar.default:
            node.target = torch._assert  # a size check (check_row_counts()), which TorchScript knows by this name
        elif node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload):
            if node.target is torch.ops.aten.sym_size.int:
                node.target = torch.ops.aten.size
            else:
                node.target = node.target.overloadpacket
    gm.recompile()
    return gm


def save_torchscript(gm: torch.fx.GraphModule, path: str, metadata: dict[str, str]) -> float:
    """Step 3b: the `.pt` TorchScript module; each `metadata` entry an extra file of that name."""
    import copy  # noqa: PLC0415
    import warnings  # noqa: PLC0415

    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            warnings.simplefilter("ignore", UserWarning)
            module = torch.jit.script(scriptable(copy.deepcopy(gm)))
            torch.jit.save(module, path, _extra_files=dict(metadata))
    except Exception as e:  # noqa: BLE001
        raise ExportError(f"TorchScript of the force graph failed: {type(e).__name__}: {e}\n"
                          "export as --format aoti instead") from e
    return time.perf_counter() - t0


def probe_package(path: str, python_import: str = "", code: str | None = None) -> str:
    """'' where a fresh Python process loads the AOTInductor package at `path` (after
    `python_import`, which registers the ops it calls); else the signal that killed that process,
    or the last line it printed. Loading a package runs its shared object's initialisers: where one
    crashes the process (torch 2.11 with OpenEquivariance's ops in it), the exporter's own process
    must not be the one that dies. `code` replaces the bare load (check.py's load and first call;
    the tests' stand-in for a crash)."""
    import signal  # noqa: PLC0415
    import subprocess  # noqa: PLC0415
    from pathlib import Path  # noqa: PLC0415

    if code is None:
        # The ops every graph may call (the halo ops and their backward), as in the exporter's process.
        code = (f"from distspec_export import ops\nops.import_nvalchemi_ops()\nops.define_backward_op()\n"
                f"{python_import}\nimport torch\ntorch._inductor.aoti_load_package({str(path)!r})\n")
    tools = str(Path(__file__).resolve().parents[1])
    env = dict(os.environ)
    env["PYTHONPATH"] = tools + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    if done.returncode < 0:
        try:
            return signal.Signals(-done.returncode).name
        except ValueError:
            return f"signal {-done.returncode}"
    if done.returncode != 0:
        lines = [line for line in done.stderr.strip().splitlines() if line.strip()]
        return lines[-1][:300] if lines else f"exit status {done.returncode}"
    return ""


def load_graph(path: str, fmt: str, virials: bool = False) -> Callable[[list[torch.Tensor]], Sequence[torch.Tensor]]:
    """Load an exported graph in Python; call it with the contract inputs as a list. It returns
    (atomic_energies, forces), and with `virials` every output the graph has (atomic_virials
    third, where it was exported with them).

    A `.pt2` checks its inputs (dtypes, fixed sizes, bounds of the dynamic ones) at every call,
    as AOTInductor does with AOTI_RUNTIME_CHECK_INPUTS=1.
    """
    if fmt == "aoti":
        runner = torch._inductor.aoti_load_package(path)

        def run(inputs):
            # The package reads the variable once, at its first call.
            saved = os.environ.get("AOTI_RUNTIME_CHECK_INPUTS")
            os.environ["AOTI_RUNTIME_CHECK_INPUTS"] = "1"
            try:
                outputs = runner(*inputs)
                return tuple(outputs) if virials else tuple(outputs[:2])
            finally:
                if saved is None:
                    del os.environ["AOTI_RUNTIME_CHECK_INPUTS"]
                else:
                    os.environ["AOTI_RUNTIME_CHECK_INPUTS"] = saved

        return run
    import warnings  # noqa: PLC0415

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        module = torch.jit.load(path)
    return lambda inputs: tuple(module(*inputs)) if virials else tuple(module(*inputs)[:2])
