"""nvalchemi's AIMNet2 (`nvalchemi.models.aimnet2.AIMNet2Wrapper`) or an `aimnet.models.AIMNet2`.

AIMNet2 calls no halo op itself; nvalchemi's halo spec adapts two of its helpers, and the
same is done here, with the contract's inputs:

- `ConvSV.forward` (each message-passing convolution): its input features refreshed first,
  `halo_forward_static` on the rows `[owned | halo]` (AIMNet2's trailing padding row kept);
- `aimnet.nbops.mol_sum` (the per-molecule sums of its charge equilibration, every pass):
  `per_system_reduce` of the owned rows, a sum over all ranks, whose gradient the exporter
  traces as the opaque `per_system_reduce_backward` (ops.py).

The model runs in AIMNet2's neighbour-matrix mode (mode 1): `nbmat` [rows + 1, K] is built in
the graph from `edge_index`, K a fixed width (the wrapper's `neighbor_config.max_neighbors`, a
model's `max_neighbors` attribute, or 96; a row with more neighbours fails the graph's check);
every halo row carries its image coordinates (no shifts, no cell); one molecule of charge 0. The output is AIMNet2's per-atom energy (its `Output` and
`AtomicShift` heads), the heads that sum it (`AtomicSum`) left out: the host sums atomic
energies over ranks. Long-range heads (Coulomb, D3) are refused.

Node updates run on every row: AIMNet2's passes, their MLPs and its charge equilibration run in
one forward of its own (`forward_prepared`) over rows padded by one for the neighbour matrix;
cutting them to the owned rows would mean writing that forward again here. The owned rows of the
per-molecule sums are taken by shape (N - len(recv_dest), tools/distspec_export/rows.py).
"""

from __future__ import annotations

import contextlib
import copy
from typing import Any, Iterator

import torch

from . import packages
from .adapted import Adapted
from .trace import ExportError

MAX_NEIGHBORS = 96  # neighbour-matrix width unless the wrapper's neighbor_config says otherwise
# Elements by atomic number, up to the 63 of AIMNet2's embedding table (64 rows, row 0 padding).
SYMBOLS = ("X H He Li Be B C N O F Ne Na Mg Al Si P S Cl Ar K Ca Sc Ti V Cr Mn Fe Co Ni Cu Zn Ga Ge As Se Br Kr "
           "Rb Sr Y Zr Nb Mo Tc Ru Rh Pd Ag Cd In Sn Sb Te I Xe Cs Ba La Ce Pr Nd Pm Sm Eu").split()


def _aimnet_model(model: Any) -> tuple[torch.nn.Module, int]:
    """(the AIMNet2 module, the neighbour-matrix width)."""
    inner = getattr(model, "model", None)
    if type(model).__name__ == "AIMNet2Wrapper" and isinstance(inner, torch.nn.Module):
        width = getattr(getattr(getattr(model, "model_config", None), "neighbor_config", None), "max_neighbors", None)
        return getattr(inner, "_orig_mod", inner), int(width or MAX_NEIGHBORS)
    return model, int(getattr(model, "max_neighbors", None) or MAX_NEIGHBORS)


def _atomic_heads(model: torch.nn.Module) -> list[torch.nn.Module]:
    """The output heads up to the per-atom energy; AtomicSum dropped, long-range heads refused."""
    from aimnet.modules.core import AtomicShift, AtomicSum, Output  # noqa: PLC0415

    kept = []
    for head in model.outputs.children():
        if isinstance(head, AtomicSum):
            continue
        if not isinstance(head, (Output, AtomicShift)):
            raise ExportError(f"AIMNet2 output head {type(head).__name__} is not supported: the exporter takes "
                              "per-atom energies from Output and AtomicShift heads only (long-range Coulomb and "
                              "D3 heads need all atoms, not a halo)")
        kept.append(head)
    if not any(getattr(h, "key_out", None) == "energy" for h in kept):
        raise ExportError("the AIMNet2 model has no head writing 'energy'")
    return kept


def neighbor_matrix(edge_index: torch.Tensor, n_rows, width: int) -> torch.Tensor:
    """AIMNet2's `nbmat` [n_rows + 1, width] of the edges (sender, receiver): row i lists the
    senders of edges into i, then the padding row's index n_rows."""
    sender, receiver = edge_index[0], edge_index[1]
    order = torch.argsort(receiver, stable=True)
    receiver, sender = receiver.index_select(0, order), sender.index_select(0, order)
    counts = torch.zeros(n_rows + 1, dtype=torch.int64, device=edge_index.device)
    counts = counts.index_add(0, receiver, torch.ones_like(receiver))
    first = torch.cumsum(counts, 0) - counts
    slot = torch.arange(receiver.shape[0], device=edge_index.device) - first.index_select(0, receiver)
    torch._assert_async((counts <= width).all(), "an atom has more neighbours than the AIMNet2 graph's "
                        "max_neighbors; export it with a wider neighbour matrix (AIMNet2Wrapper's "
                        "neighbor_config.max_neighbors, or a max_neighbors attribute on the model)")
    nbmat = torch.full((n_rows + 1, width), n_rows, dtype=torch.int64, device=edge_index.device)
    return nbmat.index_put((receiver, slot.clamp(max=width - 1)), sender)


def shift_matrix(edge_index: torch.Tensor, edge_shift: torch.Tensor, n_rows, width: int) -> torch.Tensor:
    """The exporter's `edge_shift` [E, 3] in the slots of neighbor_matrix() [n_rows + 1, width, 3]
    (zero elsewhere): AIMNet2's `shifts`, which with a unit `cell` it adds to each neighbour's
    coordinates, so that dE/d(edge_shift) is dE/d(edge vector), the per-atom virial."""
    receiver = edge_index[1]
    order = torch.argsort(receiver, stable=True)
    receiver = receiver.index_select(0, order)
    counts = torch.zeros(n_rows + 1, dtype=torch.int64, device=edge_index.device)
    counts = counts.index_add(0, receiver, torch.ones_like(receiver))
    first = torch.cumsum(counts, 0) - counts
    slot = torch.arange(receiver.shape[0], device=edge_index.device) - first.index_select(0, receiver)
    shifts = edge_shift.new_zeros(n_rows + 1, width, 3)
    return shifts.index_put((receiver, slot.clamp(max=width - 1)), edge_shift.index_select(0, order))


@contextlib.contextmanager
def _halo_helpers(routing: list) -> Iterator[None]:
    """ConvSV.forward and nbops.mol_sum through the halo ops, with the routing of `routing[0]`."""
    from aimnet import nbops  # noqa: PLC0415
    from aimnet.modules.aev import ConvSV  # noqa: PLC0415

    conv_forward, mol_sum = ConvSV.forward, nbops.mol_sum

    def refreshed_conv(self, data, a):
        # Rows by index_select, not slices: inductor cannot lower the backward of a[-1:]
        # (a slice_scatter from -1) with dynamic row counts.
        si, rd, rr, no = routing[0]
        n_rows = a.shape[0] - 1
        rows = torch.arange(n_rows, device=a.device)
        fresh = torch.ops.nvalchemi.halo_forward_static(a.index_select(0, rows), si, rd, rr, no, 1)
        pad = a.index_select(0, torch.arange(n_rows, n_rows + 1, device=a.device))
        return conv_forward(self, data, torch.cat([fresh, pad]))

    def owned_mol_sum(x, data):
        # The owned count by shape (rows.py), not by the value of n_owned: x has AIMNet2's
        # padding row below the rows [owned | halo].
        _, rd, _, _ = routing[0]
        owned = torch.arange(x.shape[0], device=x.device) < x.shape[0] - 1 - rd.shape[0]
        masked = x * owned.reshape((-1,) + (1,) * (x.dim() - 1)).to(x.dtype)
        return torch.ops.nvalchemi.per_system_reduce(masked, data["mol_idx"].to(torch.int64),
                                                     data["charge"].shape[0])

    ConvSV.forward, nbops.mol_sum = refreshed_conv, owned_mol_sum
    try:
        yield
    finally:
        ConvSV.forward, nbops.mol_sum = conv_forward, mol_sum


def adapt(model: Any, elements: list[str], cutoff: float, dtype: torch.dtype, example) -> Adapted:
    try:
        from aimnet import nbops  # noqa: PLC0415
        from nvalchemi.models.aimnet2 import _aimnet2_halo_spec  # noqa: PLC0415
    except ImportError as e:
        raise packages.missing("exporting AIMNet2", "aimnet", e) from e
    core, max_neighbors = _aimnet_model(model)
    if not hasattr(core, "aev") or not hasattr(core, "conv_a") or not hasattr(core, "outputs"):
        raise ExportError(f"{type(model).__name__} is not an AIMNet2 model (no aev / conv_a / outputs)")
    if getattr(core, "num_charge_channels", 1) != 1:
        raise ExportError("open-shell AIMNet2 models (num_charge_channels 2, NSE) are not supported")
    rc = max(float(v) for v in (core.aev.rc_s, getattr(core.aev, "rc_v", None) or core.aev.rc_s))
    if cutoff < rc - 1e-6:
        raise ExportError(f"cutoff {cutoff} is below the AIMNet2 model's AEV cutoff {rc:g}; use --cutoff {rc:g}")
    unknown = [e for e in elements if e not in SYMBOLS[1:]]
    if unknown:
        raise ExportError(f"elements {unknown} are not among AIMNet2's (H to {SYMBOLS[-1]})")

    # A copy with the per-atom heads only: `.to` casts in place, and the model given is the user's.
    local = copy.deepcopy(core)
    local.outputs = torch.nn.ModuleList(_atomic_heads(local))
    local = local.to(dtype).eval()
    for p in local.parameters():
        p.requires_grad_(False)
    # AIMNet2 casts its inputs to the dtype it was defined with (float32); the export's instead.
    local._required_keys_dtype = [dtype if d.is_floating_point else d for d in core._required_keys_dtype]
    local._optional_keys_dtype = [dtype if d.is_floating_point else d for d in core._optional_keys_dtype]
    numbers = torch.tensor([SYMBOLS.index(e) for e in elements], dtype=torch.int64)
    routing: list = [None]

    def energy(positions, species, edge_index, n_owned, send_index, recv_dest, recv_real, edge_shift):
        n_rows = positions.shape[0]
        routing[0] = (send_index, recv_dest, recv_real, n_owned)
        zero = positions.new_zeros(1, 3)
        data = {
            "coord": torch.cat([positions, zero]),
            "numbers": torch.cat([numbers.index_select(0, species), species.new_zeros(1)]),
            "mol_idx": torch.zeros(n_rows + 1, dtype=torch.int64, device=positions.device),
            "charge": positions.new_zeros(1),
            "nbmat": neighbor_matrix(edge_index, n_rows, max_neighbors),
            # The exporter's zero edge_shift as AIMNet2's cell shifts of a unit cell.
            "shifts": shift_matrix(edge_index, edge_shift, n_rows, max_neighbors),
            "cell": torch.eye(3, dtype=positions.dtype, device=positions.device),
        }
        with nbops._symbolic_trace_context(), _halo_helpers(routing):
            out = local(data)
        rows = torch.arange(n_rows, device=positions.device)  # not [:-1]: see refreshed_conv
        return out["energy"].reshape(n_rows + 1, -1)[:, 0].index_select(0, rows).to(positions.dtype)

    return Adapted(energy, "aimnet",
                   f"AIMNet2 ({type(core).__name__}, {len(core.mlps)} passes, AEV cutoff {rc:g}, "
                   f"max_neighbors {max_neighbors})",
                   f"{type(core).__module__}.{type(core).__qualname__}", spec=_halo_spec(_aimnet2_halo_spec()),
                   message_passing_layers=len(core.mlps), units="metal")


def _halo_spec(spec: Any) -> Any:
    """nvalchemi's AIMNet2 halo spec, with atomic numbers sharded like positions.

    nvalchemi keeps them plain (they feed an embedding whose backward would mix its distributed
    tensor types); the graph's `species` input has a row for every row, halo rows included,
    which is what DISTSPEC requires of a torch model.
    """
    import dataclasses  # noqa: PLC0415

    fields = tuple(spec.distribution.shard_fields)
    if "atomic_numbers" in fields:
        return spec
    return dataclasses.replace(spec, distribution=dataclasses.replace(spec.distribution,
                                                                      shard_fields=fields + ("atomic_numbers",)))
