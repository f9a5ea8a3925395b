"""`--from KIND SOURCE`: a model as its own package saves or names it, and what it declares.

- `mace FILE.model`: a model file as mace-torch saves it (`torch.save(model, ...)`, what
  `mace_run_train` writes), read with `torch.load`; `--head NAME` picks the head of a
  multi-head model.
- `sevennet NAME|CHECKPOINT`: a pretrained SevenNet name (7net-0, 7net-l3i5, 7net-mf-0, ...) or
  a checkpoint sevenn wrote; `--modal NAME` picks the fidelity of a multi-fidelity model.
- `nequip FILE`: a NequIP or Allegro model as nequip saves it, a training checkpoint (*.ckpt) or
  a package (`nequip-package`, *.nequip.zip), loaded eager.

Each gives the model and what it says of itself, which fills --elements, --cutoff and --units
where they are left out: the elements of its table (in the order of their atomic numbers), its
cutoff, metal units.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any, Callable

from . import packages, sniff
from .trace import ExportError

SOURCES = ("mace", "sevennet", "nequip")


@dataclasses.dataclass
class Source:
    model: Any
    kind: str
    elements: list[str]
    cutoff: float
    units: str
    description: str
    source: str
    license: str | None = None  # noqa: A003
    # Loads the model afresh, as its package does: the export's check compares with it (export()).
    reload: Callable[[], Any] | None = None


def _symbols(numbers: list[int]) -> list[str]:
    from ase.data import chemical_symbols  # noqa: PLC0415 (mace-torch and sevenn depend on ase)

    return [chemical_symbols[z] for z in sorted(numbers)]


def _mace(path: str, head: str | None) -> Source:
    import torch  # noqa: PLC0415

    file = Path(path)
    if not file.is_file():
        raise ExportError(f"--from mace {path}: no such file (a model file as mace-torch saves it, e.g. "
                          "MACE_model.model)")
    sniff.require("mace", path)  # before unpickling runs another package's code, or fails in it
    os.environ.setdefault("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")  # mace-torch under torch >= 2.6
    try:
        import mace.modules  # noqa: F401, PLC0415 (its classes must be importable to unpickle)
    except ImportError as e:
        raise packages.missing("--from mace", "mace-torch", e) from e
    def reload():
        return torch.load(str(file), map_location="cpu", weights_only=False)

    try:
        model = reload()
    except Exception as e:  # noqa: BLE001
        raise ExportError(f"--from mace {path}: torch.load cannot read it ({type(e).__name__}: {e}); give a model "
                          "file mace-torch saved (torch.save of the model, not a checkpoint of its state)") from e
    if not isinstance(model, torch.nn.Module) or not hasattr(model, "atomic_numbers") \
            or not hasattr(model, "interactions"):
        raise ExportError(f"--from mace {path}: holds a {type(model).__name__}, not a MACE model")
    heads = [str(h) for h in getattr(model, "heads", None) or ["Default"]]
    note = f", head {head}" if head is not None and len(heads) > 1 else ""
    return Source(model, "mace", _symbols([int(z) for z in model.atomic_numbers.tolist()]), float(model.r_max),
                  "metal", f"MACE {file.name} ({type(model).__name__}, {len(model.interactions)} interactions{note}), "
                  "exported by distspec-export", file.name, reload=reload)


def _sevennet(name: str, modal: str | None, accelerate: str) -> Source:
    from . import sevennet  # noqa: PLC0415

    if Path(name).exists():  # else a pretrained name, which sevenn knows
        sniff.require("sevennet", name)
    model = sevennet.checkpoint(name, accelerate, modal)
    note = f", modal {modal}" if modal is not None else ""
    return Source(model, "sevennet", _symbols(list(dict(model.type_map or {}))), float(model.cutoff), "metal",
                  f"SevenNet {name}{note}, exported by distspec-export", f"sevenn checkpoint {name}",
                  "GPL-3.0-only (sevenn)")


def _nequip(path: str) -> Source:
    from . import nequip  # noqa: PLC0415

    if not Path(path).is_file():
        raise ExportError(f"--from nequip {path}: no such file (a checkpoint *.ckpt or a package *.nequip.zip)")
    sniff.require("nequip", path)
    model = nequip.load(path)
    return Source(model, "nequip", list(model.type_names), float(model.metadata["r_max"]), "metal",
                  f"nequip model {Path(path).name}, exported by distspec-export", Path(path).name,
                  reload=lambda: nequip.load(path))


def load(kind: str, source: str, head: str | None = None, modal: str | None = None,
         accelerate: str = "none") -> Source:
    if kind not in SOURCES:
        raise ExportError(f"--from {kind}: the model sources are {', '.join(SOURCES)} (a plain module: --module)")
    if head is not None and kind != "mace":
        raise ExportError(f"--head {head}: heads are MACE's (--from mace FILE --head NAME)")
    if modal is not None and kind != "sevennet":
        raise ExportError(f"--modal {modal}: modals are SevenNet's (--from sevennet NAME --modal NAME)")
    if kind == "nequip":
        return _nequip(source)
    return _mace(source, head) if kind == "mace" else _sevennet(source, modal, accelerate)
