"""Run an exported graph in Python the way DISTSPEC will, and compare it with the eager model."""

from __future__ import annotations

import torch

from . import example as ex
from . import ops, trace
from .host_ops import HostExchange
from .trace import ExportError

TOLERANCE = {torch.float64: 1e-10, torch.float32: 1e-4}


def examples(n_species: int, cutoff: float, dtype: torch.dtype) -> list[ex.Example]:
    """The tracing example, and a smaller crystal of other sizes (checks the dynamic shapes)."""
    return [ex.tracing_example(n_species, cutoff, dtype),
            ex.crystal(n_species, cutoff, dtype, cells=2, spacing=0.6, seed=7)]


def empty_inputs(dtype: torch.dtype) -> tuple[torch.Tensor, ...]:
    """A rank that owns no atom and has no halo and no edge."""
    i64 = torch.int64
    return (torch.zeros(0, 3, dtype=dtype), torch.zeros(0, dtype=i64), torch.zeros(2, 0, dtype=i64),
            torch.tensor(0, dtype=i64), torch.zeros(0, dtype=i64), torch.zeros(0, dtype=i64),
            torch.zeros(0, dtype=torch.bool))


def _relative(a: torch.Tensor, b: torch.Tensor) -> float:
    if a.numel() == 0:
        return 0.0
    scale = max(1.0, float(b.abs().max()))
    return float((a.double() - b.double()).abs().max()) / scale


def check_graph(path: str, fmt: str, energy_fn, n_species: int, cutoff: float, dtype: torch.dtype) -> dict:
    """Largest deviation of the graph from the eager model, relative to max(1, |eager|).

    The graph gets the contract's inputs (`send_index` empty); the eager model gets the same
    rows with nvalchemi's routing. Both run DISTSPEC's op semantics for one process, and the
    eager forces take the same opaque backward the graph was traced with. `empty_rank_ok`
    says whether the graph also runs on a rank that owns nothing.
    """
    run = trace.load_graph(path, fmt)
    force_fn = trace.force_function(energy_fn)
    worst = {"atomic_energies": 0.0, "forces": 0.0}
    for example in examples(n_species, cutoff, dtype):
        host = HostExchange(example.owner, example.n_owned)
        with host.install(), ops.opaque_halo_backward():
            energies_ref, forces_ref = force_fn(*example.inputs)
            energies, forces = run(example.contract_inputs())
        if energies.shape != energies_ref.shape or forces.shape != forces_ref.shape or forces.dtype != dtype:
            raise ExportError(f"{path}: outputs {tuple(energies.shape)}, {tuple(forces.shape)} {forces.dtype}; "
                              f"expected {tuple(energies_ref.shape)}, {tuple(forces_ref.shape)} {dtype}")
        n = example.n_owned
        worst["atomic_energies"] = max(worst["atomic_energies"], _relative(energies[:n], energies_ref[:n]))
        worst["forces"] = max(worst["forces"], _relative(forces, forces_ref))
    tolerance = TOLERANCE[dtype]
    if max(worst.values()) > tolerance:
        raise ExportError(f"{path} differs from the eager model: {worst} (tolerance {tolerance:g}); "
                          "the export is wrong, please report it with the model")
    # A rank may own nothing at all (LAMMPS' empty subdomains).
    host = HostExchange(torch.zeros(0, dtype=torch.int64), 0)
    with host.install():
        try:
            energies, forces = run(empty_inputs(dtype))
            worst["empty_rank_ok"] = energies.shape == (0,) and forces.shape == (0, 3)
        except Exception:  # noqa: BLE001
            worst["empty_rank_ok"] = False
    return worst
