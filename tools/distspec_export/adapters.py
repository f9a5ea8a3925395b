"""Model kinds: how a model is called with the contract's inputs.

Each adapter returns an `Adapted`: `energy_fn(positions, species, edge_index, n_owned,
send_index, recv_dest, recv_real) -> atomic_energies [N]` (or of the owned rows, [n_owned]),
plus what the kind knows about itself (its own spec, layer count, a description).

- `plain`: a module whose forward already has that signature and calls nvalchemi's halo ops
  (`torch.ops.nvalchemi.halo_forward_static` before a gather of node rows,
  `torch.ops.nvalchemi.halo_scatter_correct_static` after a scatter into them).
- `mace`: nvalchemi's `MACEWrapper` or a `mace.modules.MACE` model (mace.py).
- `aimnet`: nvalchemi's `AIMNet2Wrapper` or an `aimnet.models.AIMNet2` model (aimnet.py).
- `sevennet`: a SevenNet `AtomGraphSequential`, e.g. SevenNet-0 (sevennet.py).
- `nequip`: a NequIP or Allegro model, the `nequip` framework's `GraphModel` (nequip.py).
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

import torch

from .adapted import Adapted
from .trace import EDGE_SHIFT, INPUT_NAMES, UNITS, ExportError

KINDS = ("auto", "plain", "mace", "aimnet", "sevennet", "nequip")
# The kinds whose adapter rebuilds (MACE) or rewires (NequIP) the model: the export's check compares
# with the package's own evaluation of the model as given, not with the adapted one.
REBUILT = ("mace", "nequip")


def _prepare(module: torch.nn.Module, dtype: torch.dtype) -> torch.nn.Module:
    module = module.to(dtype).eval()
    for p in module.parameters():
        p.requires_grad_(False)
    return module


def plain(module: Any, dtype: torch.dtype) -> Adapted:
    if not isinstance(module, torch.nn.Module):
        raise ExportError(f"the model is a {type(module).__name__}, not a torch.nn.Module")
    try:
        params = [p for p in inspect.signature(module.forward).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = None
    # The contract's inputs, and optionally edge_shift (trace.EDGE_SHIFT: the per-atom virial).
    if params is not None and (len(params) < len(INPUT_NAMES)
                               or [p.name for p in params[len(INPUT_NAMES):]] not in ([], [EDGE_SHIFT])):
        raise ExportError(
            f"{type(module).__name__}.forward takes {len(params)} positional arguments "
            f"({', '.join(p.name for p in params)}); a plain module's forward takes "
            f"({', '.join(INPUT_NAMES)}[, {EDGE_SHIFT}]) and returns atomic energies [N] (or [n_owned])")
    module = _prepare(module, dtype)
    layers = getattr(module, "message_passing_layers", None)
    # What the module declares of itself (attributes `units`, `cutoff`) is checked against the
    # command line; a module that declares nothing is taken at its word.
    units = getattr(module, "units", None)
    if units is not None and units not in UNITS:
        raise ExportError(f"{type(module).__name__}.units is {units!r}, not a LAMMPS units style {list(UNITS)}")
    cutoff = getattr(module, "cutoff", None)
    cutoff = float(cutoff) if isinstance(cutoff, (int, float)) and not isinstance(cutoff, bool) else None
    return Adapted(module, "plain", f"{type(module).__name__} (PyTorch module)",
                   f"{type(module).__module__}.{type(module).__qualname__}",
                   message_passing_layers=int(layers) if isinstance(layers, int) else None, units=units, cutoff=cutoff)


def detect(model: Any) -> str:
    for cls in type(model).__mro__:
        if cls.__module__.startswith(("nvalchemi.models.mace", "mace.modules")):
            return "mace"
        if cls.__module__.startswith(("nvalchemi.models.aimnet2", "aimnet.models")):
            return "aimnet"
        if cls.__module__.startswith("sevenn."):
            return "sevennet"
        if cls.__module__.startswith(("nequip.", "allegro.")):
            return "nequip"
    return "plain"


def adapt(model: Any, kind: str, elements: list[str], cutoff: float, dtype: torch.dtype, example,
          accelerator: Any = None, head: str | None = None, original: Callable[[], Any] | None = None,
          accelerator_optional: bool = False) -> Adapted:
    """The model as an energy function of the contract's inputs (`example`: an example.Example).
    original: the model as the user gave it, loaded afresh (the check's reference for the kinds
    that rebuild or rewire the model: mace, nequip); None: `model` itself, which is left as it is.
    accelerator_optional: the accelerator is the kind's default (--accelerate auto), which an adapter
    may decline, saying why (Adapted.declined_accelerator)."""
    if kind not in KINDS:
        raise ExportError(f"model kind '{kind}' is not one of {list(KINDS)}")
    if kind == "auto":
        kind = detect(model)
    if kind == "mace":
        from . import mace  # noqa: PLC0415

        return mace.adapt(model, elements, cutoff, dtype, example, accelerator, head, original, accelerator_optional)
    if kind == "aimnet":
        from . import aimnet  # noqa: PLC0415

        return aimnet.adapt(model, elements, cutoff, dtype, example)
    if kind == "sevennet":
        from . import sevennet  # noqa: PLC0415

        return sevennet.adapt(model, elements, cutoff, dtype, example)
    if kind == "nequip":
        from . import nequip  # noqa: PLC0415

        return nequip.adapt(model, elements, cutoff, dtype, example, original, accelerator)
    return plain(model, dtype)
