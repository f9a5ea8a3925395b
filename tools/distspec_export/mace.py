"""nvalchemi's MACE (`nvalchemi.models.mace.MACEWrapper`) or a `mace.modules.MACE` model.

MACE calls no halo op itself: under nvalchemi's compiled domain decomposition its graph pass
`compile_refresh.insert_halo_refresh` puts `halo_scatter_correct_static` after every
message-passing scatter (one per interaction: the scatter whose index comes from
`edge_index`). The same is done here:

1. the model is rebuilt without e3nn's TorchScript code generation (mace's own
   `extract_model` under `disable_e3nn_codegen`), since TorchScript knows no symbolic sizes;
2. an energy-only graph of the contract's inputs is traced with make_fx: node attributes are
   the one-hot rows of MACE's atomic-number table for each species, every halo row carries
   its image coordinates (so the edge shifts are zero), one system; the output is MACE's
   `node_energy`, the per-atom energy nvalchemi's wrapper calls `atomic_energies`;
3. nvalchemi's pass inserts the corrections, with the routing inputs named as it expects
   (`_halo_si`, `_halo_rd`, `_halo_rr`, `_halo_no`) and `world_size` 1 (DISTSPEC's kernels
   ignore it).

The exporter then differentiates that graph like any other energy function. The spec, when
none is given, is the wrapper's own `distribution_spec()`.
"""

from __future__ import annotations

import os
from typing import Any

import torch

from .adapters import Adapted
from .trace import ExportError, trace_symbolic


def _mace_model(model: Any) -> tuple[torch.nn.Module, Any]:
    """(the MACE module, nvalchemi's wrapper or None)."""
    inner = getattr(model, "model", None)
    if type(model).__name__ == "MACEWrapper" and isinstance(inner, torch.nn.Module):
        return inner, model
    return model, None


def _rebuild_without_codegen(model: torch.nn.Module) -> torch.nn.Module:
    from mace.tools.compile import disable_e3nn_codegen  # noqa: PLC0415
    from mace.tools.scripts_utils import extract_model  # noqa: PLC0415

    try:
        with disable_e3nn_codegen():
            return extract_model(model)
    except Exception as e:  # noqa: BLE001
        raise ExportError(f"cannot rebuild the MACE model {type(model).__name__} without e3nn's TorchScript code "
                          f"generation (mace.tools.scripts_utils.extract_model): {type(e).__name__}: {e}") from e


def adapt(model: Any, elements: list[str], cutoff: float, dtype: torch.dtype, example) -> Adapted:
    os.environ.setdefault("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")  # mace-torch under torch >= 2.6
    try:
        from ase.data import atomic_numbers as z_of  # noqa: PLC0415 (mace-torch depends on ase)
        from nvalchemi.distributed.compile_refresh import insert_halo_refresh  # noqa: PLC0415
    except ImportError as e:
        raise ExportError(f"exporting MACE needs mace-torch in this Python environment: {e}") from e
    mace_model, wrapper = _mace_model(model)
    if not hasattr(mace_model, "atomic_numbers") or not hasattr(mace_model, "interactions"):
        raise ExportError(f"{type(model).__name__} is not a MACE model (no atomic_numbers / interactions)")
    r_max = float(mace_model.r_max)
    if cutoff < r_max - 1e-9:
        raise ExportError(f"cutoff {cutoff} is below the MACE model's r_max {r_max}; use --cutoff {r_max:g}")
    table_z = [int(z) for z in mace_model.atomic_numbers.tolist()]
    unknown = [e for e in elements if z_of.get(e) not in table_z]
    if unknown:
        names = [k for k, v in z_of.items() if v in table_z]
        raise ExportError(f"elements {unknown} are not in the MACE model's table of atomic numbers {table_z} "
                          f"({', '.join(names)})")
    spec = wrapper.distribution_spec() if wrapper is not None else None
    if spec is None:
        from nvalchemi.models.mace import MACEWrapper  # noqa: PLC0415

        spec = MACEWrapper(mace_model).distribution_spec()

    # Rebuilt from its configuration, the model is on the cpu: it and its element table go where
    # the graph runs (the example inputs' device, --device).
    device = example.inputs[0].device
    rebuilt = _rebuild_without_codegen(mace_model).to(device=device, dtype=dtype).eval()
    for p in rebuilt.parameters():
        p.requires_grad_(False)
    one_hot = torch.zeros(len(elements), len(table_z), dtype=dtype, device=device)
    for species, element in enumerate(elements):
        one_hot[species, table_z.index(z_of[element])] = 1.0

    def energy(positions, species, edge_index, _halo_no, _halo_si, _halo_rd, _halo_rr):
        n_rows = positions.shape[0]
        data = {
            "positions": positions,
            "node_attrs": one_hot.index_select(0, species),
            "edge_index": edge_index,
            "shifts": torch.zeros(edge_index.shape[1], 3, dtype=positions.dtype, device=positions.device),
            "batch": torch.zeros(n_rows, dtype=torch.int64, device=positions.device),
            "ptr": torch.arange(2, device=positions.device) * n_rows,
            "cell": torch.zeros(1, 3, 3, dtype=positions.dtype, device=positions.device),
        }
        return rebuilt(data, compute_force=False)["node_energy"].to(positions.dtype)

    try:
        energy_graph = trace_symbolic(energy, example.inputs)
    except Exception as e:  # noqa: BLE001
        raise ExportError(f"tracing the MACE energy failed: {type(e).__name__}: {e}") from e
    report = insert_halo_refresh(energy_graph,
                                 correction_op=torch.ops.nvalchemi.halo_scatter_correct_static.default, world_size=1)
    layers = len(mace_model.interactions)
    if report.n_sites != layers:
        raise ExportError(f"nvalchemi's halo-refresh pass found {report.n_sites} message-passing scatters in the "
                          f"MACE graph, expected one per interaction ({layers}): {report}")
    return Adapted(energy_graph, "mace",
                   f"MACE ({type(mace_model).__name__}, {layers} interactions, r_max {r_max:g})",
                   f"{type(mace_model).__module__}.{type(mace_model).__qualname__}", spec=spec,
                   message_passing_layers=layers)
