"""Run an exported graph in Python the way DISTSPEC will, and compare it with the model as given:
the package's own evaluation of it where the exporter rebuilt or rewired it (MACE, NequIP), the
eager model itself otherwise."""

from __future__ import annotations

import torch

from . import example as ex
from . import ops, trace
from .adapted import Reference
from .host_ops import HostExchange
from .trace import ExportError

# Relative to max(1, the reference's largest value). fp64: the same numbers summed in another order
# (a halo rather than edge shifts) differ by ~1e-15, a weight rounded to fp32 by ~1e-8. fp32: its
# rounding, 2^-23 = 1.2e-7 per operation, over sums of a few hundred terms in another order.
TOLERANCE = {torch.float64: 1e-12, torch.float32: 1e-5}


def examples(n_species: int, cutoff: float, dtype: torch.dtype) -> list[ex.Example]:
    """The tracing example, and a smaller crystal of other sizes (checks the dynamic shapes)."""
    return [ex.tracing_example(n_species, cutoff, dtype),
            ex.crystal(n_species, cutoff, dtype, cells=2, spacing=0.6, seed=7)]


def small_ranks(dtype: torch.dtype, cutoff: float = 2.0) -> list[tuple[str, tuple[torch.Tensor, ...], torch.Tensor]]:
    """(what, contract inputs, owner map) of the smallest ranks LAMMPS can hand a graph: no atom;
    one atom without neighbours; one atom whose only neighbour is its own periodic image."""
    i64 = torch.int64

    def rank(positions, edges, n_owned, owner):
        n_rows = positions.shape[0]
        inputs = (positions.to(dtype), torch.zeros(n_rows, dtype=i64), torch.tensor(edges, dtype=i64).reshape(2, -1),
                  torch.tensor(n_owned, dtype=i64), torch.zeros(0, dtype=i64), torch.arange(n_owned, n_rows),
                  torch.ones(n_rows - n_owned, dtype=torch.bool))
        return inputs, torch.tensor(owner, dtype=i64)

    pair = torch.tensor([[0.0, 0.0, 0.0], [0.5 * cutoff, 0.0, 0.0]], dtype=torch.float64)
    return [("0 atoms", *rank(torch.zeros(0, 3), [[], []], 0, [])),
            ("1 atom", *rank(pair[:1], [[], []], 1, [0])),
            ("1 atom + its image, 1 edge", *rank(pair, [[1], [0]], 1, [0, 0]))]


def on_device(tensors, device: str) -> tuple[torch.Tensor, ...]:
    """The contract's inputs where the graph runs: a package compiled for the GPU takes device
    tensors only, and the model it was traced from lives there too."""
    return tuple(t.to(device) for t in tensors)


def small_ranks_fail(run, dtype: torch.dtype, energy_fn=None, cutoff: float = 2.0, skip_empty: bool = False,
                     device: str = "cpu") -> str:
    """Why the graph fails on the smallest ranks ('' if it runs, and equals the eager model
    where that runs). skip_empty: not on a rank of no atom, where the plugin calls no graph.
    device: where the graph and the eager model run (the export's device)."""
    force_fn = trace.force_function(energy_fn) if energy_fn is not None else None
    for what, inputs, owner in small_ranks(dtype, cutoff):
        n_owned = int(inputs[3])
        if skip_empty and n_owned == 0:
            continue
        host = HostExchange(owner, n_owned)
        inputs = on_device(inputs, device)
        try:
            with host.install(device):
                energies, forces = run(inputs)
        except Exception as e:  # noqa: BLE001
            return f"{what}: {type(e).__name__}: {str(e).strip()[:200]}"
        n_rows = inputs[0].shape[0]
        if energies.shape != (n_rows,) or forces.shape != (n_rows, 3):
            return f"{what}: outputs {tuple(energies.shape)}, {tuple(forces.shape)}"
        if force_fn is None or n_rows == 0:
            continue
        try:
            with host.install(device), ops.opaque_halo_backward():
                energies_ref, forces_ref = force_fn(*inputs[:4], owner[n_owned:].clone().to(device), *inputs[5:])
        except Exception:  # noqa: BLE001 (the eager model need not run there: MACE does not on 0 atoms)
            continue
        deviation = max(_relative(energies[:n_owned], energies_ref[:n_owned]), _relative(forces, forces_ref))
        if deviation > TOLERANCE[dtype]:
            return f"{what}: differs from the eager model by {deviation:.1e}"
    return ""


def _relative(a: torch.Tensor, b: torch.Tensor) -> float:
    if a.numel() == 0:
        return 0.0
    scale = max(1.0, float(b.abs().max()))
    return float((a.double() - b.double()).abs().max()) / scale


def package_load_failure(path: str, why: str, python_import: str = "") -> ExportError:
    """The error of a package that a fresh Python process could not load (trace.probe_package):
    killed by a signal, or stopped with `why` as its last line."""
    ops_note = f" after `{python_import}`" if python_import else ""
    if why.startswith("SIG") or why.startswith("signal"):
        what = f"a fresh Python process that loaded it{ops_note} and called it once was killed by {why}"
    else:
        what = f"loading and calling it in a fresh Python process{ops_note} failed: {why}"
    return ExportError(
        f"{path}: the check cannot run the AOTInductor package in Python: {what} (torch {torch.__version__}). "
        "The graph, its spec and the model file are written, and pair_style distspec loads packages in C++, not "
        "through Python: check the model under LAMMPS against the model's own evaluation (bench/accelerators/run.sh "
        "compares the forces of 512 atoms on 1 and 2 ranks), or export again with --no-check to skip this check")


def _first_call(path: str, python_import: str, n_species: int, cutoff: float, dtype: torch.dtype, device: str) -> str:
    """Python that loads the package and calls it once on the tracing example, as check_graph
    does, in a fresh process (trace.probe_package)."""
    return (f"from distspec_export import check, ops, trace\n"
            f"from distspec_export.host_ops import HostExchange\n"
            f"ops.import_nvalchemi_ops()\nops.define_backward_op()\n{python_import}\nimport torch\n"
            f"run = trace.load_graph({str(path)!r}, 'aoti')\n"
            f"example = check.examples({int(n_species)}, {float(cutoff)!r}, {dtype})[0]\n"
            f"with HostExchange(example.owner, example.n_owned).install({device!r}), ops.opaque_halo_backward():\n"
            f"    run(check.on_device(example.contract_inputs(), {device!r}))\n")


def check_graph(path: str, fmt: str, energy_fn, n_species: int, cutoff: float, dtype: torch.dtype,
                reference: Reference | None = None, device: str = "cpu", python_import: str = "") -> dict:
    """Largest deviation of the graph from the model as given, relative to max(1, |reference|);
    an ExportError above TOLERANCE[dtype].

    The graph gets the contract's inputs (`send_index` empty) and runs DISTSPEC's op semantics for
    one process. `reference` (the package's own evaluation of the model as given, adapted.py)
    gets the example's periodic crystal; the graph's forces on halo rows are folded to their
    owners. Without one, the eager model gets the same rows as the graph with nvalchemi's
    routing, and its forces take the same opaque backward the graph was traced with.
    `small_ranks_ok` says whether the graph also runs on the smallest ranks (small_ranks()).
    device: where the graph was compiled to run (the export's --device), and where the eager model
    lives: both get the inputs there; the package's own evaluation (`reference`) gets them on
    the cpu, and every comparison is made there. A graph that fails to run is an ExportError
    saying where and why. An AOTInductor package is first loaded and called once in a child
    process (trace.probe_package, after `python_import`, the accelerator's ops): where that process
    is killed by a signal, the check says so instead of taking the exporter down with it.
    """
    if fmt == "aoti":
        # Only a crash stops here: an error the child raised, this process raises below by itself.
        why = trace.probe_package(path, code=_first_call(path, python_import, n_species, cutoff, dtype, device))
        if why.startswith("SIG") or why.startswith("signal"):
            raise package_load_failure(path, why, python_import)
    try:
        run = trace.load_graph(path, fmt)
    except Exception as e:  # noqa: BLE001 (whatever the loader raises, the user hears which file and why)
        raise ExportError(f"{path}: the check cannot load the graph it wrote: {type(e).__name__}: "
                          f"{str(e).strip().splitlines()[0][:300]}; export again with --no-check to keep it "
                          "unchecked, and please report it") from e
    force_fn = trace.force_function(energy_fn)
    name = reference.name if reference is not None else "the eager model"
    worst = {"atomic_energies": 0.0, "forces": 0.0}
    for example in examples(n_species, cutoff, dtype):
        n, n_rows = example.n_owned, example.inputs[0].shape[0]
        host = HostExchange(example.owner, n)
        with host.install(device), ops.opaque_halo_backward():
            try:
                energies, forces = (t.cpu() for t in run(on_device(example.contract_inputs(), device)))
            except Exception as e:  # noqa: BLE001 (whatever the runtime raises, the user hears which graph, where)
                raise ExportError(f"{path}: the check ran the graph on {device} with the contract's inputs there, and "
                                  f"it failed: {type(e).__name__}: {str(e).strip().splitlines()[0][:300]}; export "
                                  "again with --no-check to keep the graph unchecked, and please report it") from e
            if reference is None:
                energies_ref, forces_ref = (t.cpu() for t in force_fn(*on_device(example.inputs, device)))
        if energies.shape != (n_rows,) or forces.shape != (n_rows, 3) or forces.dtype != dtype:
            raise ExportError(f"{path}: outputs {tuple(energies.shape)}, {tuple(forces.shape)} {forces.dtype}; "
                              f"expected ({n_rows},), ({n_rows}, 3) {dtype}")
        if reference is not None:
            energies_ref, forces_ref = reference.evaluate(example)
            forces = torch.zeros(n, 3, dtype=torch.float64).index_add(0, example.owner, forces.double())
        worst["atomic_energies"] = max(worst["atomic_energies"], _relative(energies[:n], energies_ref[:n]))
        worst["forces"] = max(worst["forces"], _relative(forces, forces_ref))
    # A graph that approximates the model on purpose (its reference says by how much) is held to that.
    tolerance = max(TOLERANCE[dtype], reference.tolerance) if reference is not None and reference.tolerance \
        else TOLERANCE[dtype]
    if max(worst.values()) > tolerance:
        raise ExportError(f"{path} differs from {name} by {worst['atomic_energies']:.1e} in atomic energies and "
                          f"{worst['forces']:.1e} in forces (relative; the tolerance in {dtype} is {tolerance:g}): "
                          "the graph is not the model given (a weight rounded or a term lost on the way); "
                          "please report it with the model")
    worst["reference"] = name
    # A rank may own nothing at all (LAMMPS' empty subdomains), or a lone atom.
    why = small_ranks_fail(run, dtype, energy_fn, cutoff, device=device)
    worst["small_ranks_ok"] = not why
    if why:
        worst["small_ranks_failure"] = why.splitlines()[0]
    return worst
