"""The model's own precision, kept through the exporter's copies and rebuilds.

A model rebuilt from its configuration (MACE's `extract_model`) is constructed in torch's default
dtype, float32 unless set: its weights are allocated in float32, so an fp64 state dict loaded
into them is rounded (by up to 1.5e-7 for a MACE trained in fp64) and no later `.to(float64)`
restores it. Constants computed at construction (e3nn's coefficients, radial bases) are rounded
alike. Hence: build under the model's own dtype, and check that every weight came through exactly.
"""

from __future__ import annotations

import contextlib
from typing import Iterator

import torch

from .trace import ExportError


def model_dtype(model: torch.nn.Module) -> torch.dtype:
    """The floating dtype of the model's parameters (of its buffers, where it has none); the widest
    where they mix, so that a rebuild in it rounds none of them."""
    tensors = list(model.parameters()) or list(model.buffers())
    dtypes = {t.dtype for t in tensors if t.is_floating_point()}
    if not dtypes:
        return torch.get_default_dtype()
    return max(dtypes, key=lambda d: torch.finfo(d).bits)


@contextlib.contextmanager
def default_dtype(dtype: torch.dtype) -> Iterator[None]:
    """torch's default dtype set to `dtype` inside, restored on leaving, an error included."""
    saved = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        yield
    finally:
        torch.set_default_dtype(saved)


def changed_weights(original: torch.nn.Module, copy: torch.nn.Module) -> dict[str, float]:
    """{state dict key: largest change} of each floating entry of `original` that `copy` does not
    hold exactly (missing, another shape, or another value); empty when every weight came through."""
    theirs = copy.state_dict()
    changed: dict[str, float] = {}
    for key, value in original.state_dict().items():
        if not value.is_floating_point():
            continue
        other = theirs.get(key)
        if other is None or other.shape != value.shape:
            changed[key] = float("inf")
            continue
        # Compared in float64 on the cpu, where every float32 and float64 value is exact.
        delta = (other.detach().to("cpu", torch.float64) - value.detach().to("cpu", torch.float64)).abs()
        if delta.numel() and float(delta.max()) != 0.0:
            changed[key] = float(delta.max())
    return changed


def require_same_weights(original: torch.nn.Module, copy: torch.nn.Module, what: str) -> None:
    """ExportError naming the weights `copy` (`what`: how it was made) does not hold exactly."""
    changed = changed_weights(original, copy)
    if changed:
        worst = sorted(changed.items(), key=lambda kv: -kv[1])[:3]
        raise ExportError(f"{what} changed {len(changed)} of the model's weights ("
                          + ", ".join(f"{k} by {v:.1e}" for k, v in worst)
                          + f"; the model is {model_dtype(original)}): the export would not be the model given; "
                          "please report it with the model")
