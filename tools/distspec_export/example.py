"""Example inputs for tracing and checking an export: a jittered cubic crystal in a periodic box.

Rows are `[owned | halo]` as DISTSPEC hands them to a graph: owned atoms first, then the
periodic images within the cutoff of the box, each a copy of its owner; edges run from any row
to an owned row within the cutoff. The routing tensors are nvalchemi's for one process
(`send_index` names the owner of each halo row), which DISTSPEC's ops and nvalchemi's agree on.
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import torch


@dataclasses.dataclass
class Example:
    inputs: tuple[torch.Tensor, ...]  # the contract inputs, nvalchemi routing
    owner: torch.Tensor               # owner row of every row
    cell: torch.Tensor | None = None  # the periodic box [3, 3] (float64, rows the box vectors)

    @property
    def n_owned(self) -> int:
        return int(self.inputs[3])

    def contract_inputs(self) -> tuple[torch.Tensor, ...]:
        """The inputs as DISTSPEC passes them: `send_index` empty."""
        pos, species, edges, n_owned, _, recv_dest, recv_real = self.inputs
        return pos, species, edges, n_owned, torch.zeros(0, dtype=torch.int64), recv_dest, recv_real


def crystal(n_species: int, cutoff: float, dtype: torch.dtype, cells: int = 3, spacing: float = 0.5,
            seed: int = 0) -> Example:
    """`cells`^3 atoms `spacing * cutoff` apart, jittered, with their images within `cutoff`."""
    gen = torch.Generator().manual_seed(seed)
    a = spacing * cutoff
    box = cells * a
    grid = torch.tensor(list(itertools.product(range(cells), repeat=3)), dtype=torch.float64) * a
    owned = grid + (torch.rand(grid.shape, generator=gen, dtype=torch.float64) - 0.5) * 0.2 * a
    owned = owned.remainder(box)
    n_owned = owned.shape[0]
    species_owned = torch.randint(0, n_species, (n_owned,), generator=gen)

    reach = math.ceil(cutoff / box)
    halo, halo_owner = [], []
    for shift in itertools.product(range(-reach, reach + 1), repeat=3):
        if shift == (0, 0, 0):
            continue
        image = owned + torch.tensor(shift, dtype=torch.float64) * box
        inside = ((image > -cutoff) & (image < box + cutoff)).all(dim=1)
        halo.append(image[inside])
        halo_owner.append(torch.nonzero(inside).flatten())
    halo_pos = torch.cat(halo)
    owner = torch.cat([torch.arange(n_owned), torch.cat(halo_owner)])
    pos = torch.cat([owned, halo_pos])
    n_rows = pos.shape[0]

    dist = torch.cdist(pos[:n_owned], pos, compute_mode="donot_use_mm_for_euclid_dist")
    dist[torch.arange(n_owned), torch.arange(n_owned)] = math.inf
    receiver, sender = torch.nonzero(dist < cutoff, as_tuple=True)
    edge_index = torch.stack([sender, receiver])

    inputs = (
        pos.to(dtype),
        species_owned[owner],
        edge_index,
        torch.tensor(n_owned, dtype=torch.int64),
        owner[n_owned:].clone(),
        torch.arange(n_owned, n_rows, dtype=torch.int64),
        torch.ones(n_rows - n_owned, dtype=torch.bool),
    )
    return Example(inputs, owner, torch.eye(3, dtype=torch.float64) * box)


def tracing_example(n_species: int, cutoff: float, dtype: torch.dtype) -> Example:
    """A crystal whose row, owned, halo and edge counts all differ and exceed 1.

    make_fx gives equal sizes one symbol, and export treats sizes 0 and 1 as constants, so
    the tracing example must not have such coincidences.
    """
    for seed in range(10):
        ex = crystal(n_species, cutoff, dtype, seed=seed)
        sizes = [ex.inputs[0].shape[0], ex.n_owned, ex.inputs[5].shape[0], ex.inputs[2].shape[1]]
        if len(set(sizes)) == len(sizes) and min(sizes) > 1 and 3 not in sizes:
            return ex
    raise RuntimeError("no tracing example with distinct sizes")  # not reached for a sane cutoff
