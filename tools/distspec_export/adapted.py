"""What a model kind's adapter returns (adapters.py): the model as an energy function of the
contract's inputs, and what the kind knows about itself."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import torch


@dataclasses.dataclass
class Reference:
    """The package's own evaluation of the model as the user gave it (its file loaded afresh, or a
    copy taken before the exporter touched it), in the export's dtype: what the export's check
    compares the graph with. `evaluate(example)` -> (atomic energies [n_owned], forces
    [n_owned, 3]) of an example crystal's owned atoms (example.py)."""

    name: str
    evaluate: Callable[[Any], tuple[torch.Tensor, torch.Tensor]]
    # The check's bound relative to max(1, |reference|), where the graph approximates the model on
    # purpose (MACE's radial MLP as splines); None: check.TOLERANCE, the same arithmetic's.
    tolerance: float | None = None


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
    # Where the exporter rebuilds or rewires the model (MACE, NequIP): the package's own evaluation
    # of the model as given. None: energy_fn calls the model as given, and is the reference itself.
    reference: Reference | None = None
    # What the adapter chose and why (MACE's fast forward: its kernels, the spline resolution),
    # recorded in the graph's metadata.
    choices: dict = dataclasses.field(default_factory=dict)
    # Why the accelerator the export was given is not used ('' where it is, or none was given): set
    # only where the accelerator was the kind's default (--accelerate auto), which the model may decline.
    declined_accelerator: str = ""
