"""Periodic systems for the torch tests: LAMMPS data files, fcc crystals, halos and edges.

A `System` is a periodic box (LAMMPS' xlo/xhi..., tilts xy xz yz) with atoms by tag and type.
`rows()` lays it out as one process of `pair_style distspec` sees it with every atom owned:
rows `[owned | halo]`, the halo being the periodic images within a ghost cutoff of the box
(LAMMPS' criterion: the distance to each pair of box faces), each with its owner's row.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from pathlib import Path

import torch


@dataclasses.dataclass
class System:
    lo: tuple[float, float, float]
    hi: tuple[float, float, float]
    tilt: tuple[float, float, float]   # xy, xz, yz
    tags: torch.Tensor                 # int64 [n]
    types: torch.Tensor                # int64 [n], 1-based LAMMPS types
    positions: torch.Tensor            # float64 [n, 3]
    masses: dict[int, float]

    @property
    def cell(self) -> torch.Tensor:
        """Rows are the lattice vectors a, b, c."""
        (xlo, ylo, zlo), (xhi, yhi, zhi), (xy, xz, yz) = self.lo, self.hi, self.tilt
        return torch.tensor([[xhi - xlo, 0.0, 0.0], [xy, yhi - ylo, 0.0], [xz, yz, zhi - zlo]], dtype=torch.float64)

    @property
    def n_types(self) -> int:
        return max(len(self.masses), int(self.types.max()))


@dataclasses.dataclass
class Rows:
    """One process's rows with every atom owned."""
    positions: torch.Tensor   # [N, 3]
    owner: torch.Tensor       # [N] owned row each row copies (itself for owned rows)
    n_owned: int
    edge_index: torch.Tensor  # [2, E]: sender (any row), receiver (owned row)


def fcc(a: float, cells: tuple[int, int, int], n_types: int, masses: dict[int, float], rattle: float,
        seed: int) -> System:
    """An fcc crystal of `cells` cubic cells, types drawn at random, positions rattled (uniform)."""
    gen = torch.Generator().manual_seed(seed)
    basis = torch.tensor([[0, 0, 0], [0.5, 0.5, 0], [0.5, 0, 0.5], [0, 0.5, 0.5]], dtype=torch.float64)
    corners = torch.tensor(list(itertools.product(*(range(c) for c in cells))), dtype=torch.float64)
    pos = ((corners[:, None, :] + basis[None, :, :]).reshape(-1, 3)) * a
    pos = pos + (torch.rand(pos.shape, generator=gen, dtype=torch.float64) * 2 - 1) * rattle
    n = pos.shape[0]
    types = torch.randint(1, n_types + 1, (n,), generator=gen)
    hi = tuple(float(c * a) for c in cells)
    return System((0.0, 0.0, 0.0), hi, (0.0, 0.0, 0.0), torch.arange(1, n + 1), types, pos, masses)


def write_data(system: System, path: str | Path, title: str) -> None:
    """A LAMMPS data file, atom style atomic, positions to the last bit (%.17g)."""
    lines = [title, "", f"{len(system.tags)} atoms", f"{system.n_types} atom types", ""]
    for axis, lo, hi in zip("xyz", system.lo, system.hi):
        lines.append(f"{lo:.17g} {hi:.17g} {axis}lo {axis}hi")
    if any(system.tilt):
        lines.append("{:.17g} {:.17g} {:.17g} xy xz yz".format(*system.tilt))
    lines += ["", "Masses", ""] + [f"{t} {m:.17g}" for t, m in sorted(system.masses.items())]
    lines += ["", "Atoms # atomic", ""]
    for tag, typ, (x, y, z) in zip(system.tags.tolist(), system.types.tolist(), system.positions.tolist()):
        lines.append(f"{tag} {typ} {x:.17g} {y:.17g} {z:.17g}")
    Path(path).write_text("\n".join(lines) + "\n")


def read_data(path: str | Path) -> System:
    """A LAMMPS data file of atom style atomic (image flags and other sections ignored)."""
    text = [line.split("#")[0].strip() for line in Path(path).read_text().splitlines()[1:]]
    lo, hi, tilt, masses = [0.0] * 3, [0.0] * 3, (0.0, 0.0, 0.0), {}
    n_atoms, atoms, section = 0, [], None
    for line in text:
        if not line:
            continue
        words = line.split()
        if words[-1] == "atoms" and len(words) == 2:
            n_atoms = int(words[0])
        elif len(words) == 4 and words[2].endswith("lo") and words[3].endswith("hi"):
            k = "xyz".index(words[2][0])
            lo[k], hi[k] = float(words[0]), float(words[1])
        elif words[-3:] == ["xy", "xz", "yz"]:
            tilt = tuple(float(w) for w in words[:3])
        elif words[0][0].isalpha():
            section = words[0]
        elif section == "Masses":
            masses[int(words[0])] = float(words[1])
        elif section == "Atoms":
            atoms.append((int(words[0]), int(words[1]), *map(float, words[2:5])))
    if len(atoms) != n_atoms:
        raise ValueError(f"{path}: {len(atoms)} atoms in the Atoms section, the header says {n_atoms}")
    atoms.sort()
    return System(tuple(lo), tuple(hi), tilt, torch.tensor([a[0] for a in atoms]), torch.tensor([a[1] for a in atoms]),
                  torch.tensor([a[2:] for a in atoms], dtype=torch.float64), masses)


def rows(system: System, ghost_cutoff: float, edge_cutoff: float, shuffle_seed: int | None = None) -> Rows:
    """Owned rows (all atoms, wrapped into the box), then their images within `ghost_cutoff` of it.

    Edges: every (sender row, owned receiver row) pair closer than `edge_cutoff`. With
    `shuffle_seed`, the halo rows and the edges come in a random order (as LAMMPS' may).
    """
    cell = system.cell
    origin = torch.tensor(system.lo, dtype=torch.float64)
    frac = torch.linalg.solve(cell.T, (system.positions - origin).T).T
    wrap = torch.floor(frac)
    owned = system.positions - wrap @ cell          # as given when inside the box (LAMMPS' remap)
    frac = frac - wrap
    n = frac.shape[0]
    volume = float(torch.linalg.det(cell))
    spacing = [volume / float(torch.linalg.norm(torch.linalg.cross(cell[(k + 1) % 3], cell[(k + 2) % 3])))
               for k in range(3)]
    margin = torch.tensor([ghost_cutoff / h for h in spacing], dtype=torch.float64)
    reach = [math.ceil(float(m)) for m in margin]
    images, owners = [], []
    for shift in itertools.product(*(range(-r, r + 1) for r in reach)):
        if shift == (0, 0, 0):
            continue
        s = torch.tensor(shift, dtype=torch.float64)
        keep = ((frac + s >= -margin) & (frac + s < 1.0 + margin)).all(dim=1)
        images.append(owned[keep] + s @ cell)
        owners.append(torch.nonzero(keep).flatten())
    halo_pos, halo_owner = torch.cat(images), torch.cat(owners)
    if shuffle_seed is not None:
        perm = torch.randperm(halo_owner.shape[0], generator=torch.Generator().manual_seed(shuffle_seed))
        halo_pos, halo_owner = halo_pos[perm], halo_owner[perm]
    positions = torch.cat([owned, halo_pos])
    owner = torch.cat([torch.arange(n), halo_owner])
    dist = torch.cdist(positions[:n], positions, compute_mode="donot_use_mm_for_euclid_dist")
    dist[torch.arange(n), torch.arange(n)] = math.inf
    receiver, sender = torch.nonzero(dist < edge_cutoff, as_tuple=True)
    edge_index = torch.stack([sender, receiver])
    if shuffle_seed is not None:
        edge_index = edge_index[:, torch.randperm(edge_index.shape[1],
                                                  generator=torch.Generator().manual_seed(shuffle_seed + 1))]
    return Rows(positions, owner, n, edge_index)


def species_of(system: System, type_elements: list[str], model_elements: list[str]) -> torch.Tensor:
    """Species index (into the model's elements) of every atom, as `pair_coeff * * FILE el...` maps types."""
    if len(type_elements) < system.n_types:
        raise ValueError(f"{system.n_types} atom types but only {len(type_elements)} elements given")
    table = torch.tensor([model_elements.index(e) for e in type_elements])
    return table[system.types - 1]
