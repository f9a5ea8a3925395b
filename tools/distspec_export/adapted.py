"""What a model kind's adapter returns (adapters.py): the model as an energy function of the
contract's inputs, and what the kind knows about itself."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import torch


@dataclasses.dataclass
class Adapted:
    energy_fn: Callable[..., torch.Tensor]
    kind: str
    description: str
    source: str
    spec: Any = None                      # the model kind's own MLIPSpec (or a function giving it), if any
    message_passing_layers: int | None = None
    units: str | None = None              # the LAMMPS units of its energies and lengths, where it says
    cutoff: float | None = None           # its own neighbour cutoff, where it declares one
