"""SevenNet-0 test structures and references: SevenNet's own ASE calculator on each.

`STRUCTURES` are four small periodic crystals (LAMMPS boxes, atoms by tag), each written as a
data file whose types are its own elements; `native()` is `sevenn.calculator.SevenNetCalculator`
('7net-0') on one of them: energy, per-atom energies, forces and virial, by tag. sevenn is
GPL-3.0: its model files are made at test time, never kept in the repository.
"""

from __future__ import annotations

import functools
import itertools

import torch

import periodic

# Atomic masses (g/mol) of the elements used here, for the data files.
MASSES = {"Si": 28.0855, "Cu": 63.546, "Na": 22.98977, "Cl": 35.453, "Ba": 137.327, "Sr": 87.62, "Ti": 47.867,
          "O": 15.9994}


def crystal(basis: list[tuple[str, tuple[float, float, float]]], cell: list[list[float]], cells: int,
            elements: list[str], rattle: float, seed: int, swap: tuple[str, str, float] | None = None
            ) -> periodic.System:
    """`cells`^3 copies of a unit cell (rows a, b, c, LAMMPS' lower-triangular form), rattled.

    swap (from, to, fraction): that fraction of the `from` atoms, at random, become `to`.
    """
    gen = torch.Generator().manual_seed(seed)
    unit = torch.tensor(cell, dtype=torch.float64)
    frac, names = [], []
    for corner in itertools.product(range(cells), repeat=3):
        for name, f in basis:
            frac.append([(c + x) / cells for c, x in zip(corner, f)])
            names.append(name)
    if swap is not None:
        which = [i for i, n in enumerate(names) if n == swap[0]]
        for k in torch.randperm(len(which), generator=gen)[: round(swap[2] * len(which))].tolist():
            names[which[k]] = swap[1]
    box = unit * cells
    pos = torch.tensor(frac, dtype=torch.float64) @ box
    pos = pos + (torch.rand(pos.shape, generator=gen, dtype=torch.float64) * 2 - 1) * rattle
    n = pos.shape[0]
    types = torch.tensor([elements.index(name) + 1 for name in names])
    return periodic.System((0.0, 0.0, 0.0), (float(box[0, 0]), float(box[1, 1]), float(box[2, 2])),
                           (float(box[1, 0]), float(box[2, 0]), float(box[2, 1])), torch.arange(1, n + 1), types, pos,
                           {k + 1: MASSES[e] for k, e in enumerate(elements)})


def _cubic(a: float) -> list[list[float]]:
    return [[a, 0.0, 0.0], [0.0, a, 0.0], [0.0, 0.0, a]]


FCC = [(0.0, 0.0, 0.0), (0.5, 0.5, 0.0), (0.5, 0.0, 0.5), (0.0, 0.5, 0.5)]
# name: (elements of types 1, 2, ..., the System, a title)
STRUCTURES = {
    "si_diamond": (["Si"], lambda: crystal([("Si", f) for f in FCC] + [("Si", tuple(x + 0.25 for x in f)) for f in FCC],
                                           _cubic(5.43), 2, ["Si"], 0.1, 1),
                   "64 Si atoms, diamond 2x2x2, rattled 0.1 A"),
    "cu_fcc": (["Cu"], lambda: crystal([("Cu", f) for f in FCC], _cubic(3.615), 2, ["Cu"], 0.1, 2),
               "32 Cu atoms, fcc 2x2x2, rattled 0.1 A"),
    # Rock salt sheared: the cubic cell's b and c tilted along x and y (xy 0.6, xz 0.4, yz -0.5 A).
    "nacl_triclinic": (["Na", "Cl"], lambda: crystal([("Na", f) for f in FCC] +
                                                     [("Cl", (f[0] + 0.5, f[1], f[2])) for f in FCC],
                                                     [[5.64, 0.0, 0.0], [0.6, 5.64, 0.0], [0.4, -0.5, 5.64]], 2,
                                                     ["Na", "Cl"], 0.1, 3),
                       "64 Na/Cl atoms, rock salt 2x2x2 sheared (triclinic), rattled 0.1 A"),
    "basrtio3": (["Ba", "Sr", "Ti", "O"], lambda: crystal([("Ba", (0.0, 0.0, 0.0)), ("Ti", (0.5, 0.5, 0.5)),
                                                           ("O", (0.5, 0.5, 0.0)), ("O", (0.5, 0.0, 0.5)),
                                                           ("O", (0.0, 0.5, 0.5))], _cubic(3.95), 2,
                                                          ["Ba", "Sr", "Ti", "O"], 0.1, 4, swap=("Ba", "Sr", 0.5)),
                 "40 atoms of (Ba,Sr)TiO3, perovskite 2x2x2, half the Ba turned Sr, rattled 0.1 A"),
}
ELEMENTS = sorted({e for elements, _, _ in STRUCTURES.values() for e in elements})


@functools.cache
def calculator(name: str, modal: str | None = None):
    """SevenNet's ASE calculator of a pretrained model, of `modal` for a multi-fidelity one
    (loading it takes seconds: once)."""
    from sevenn.calculator import SevenNetCalculator  # noqa: PLC0415

    # compute_atomic_virial: SevenNet's own per-atom virial (results["stresses"]) beside the rest.
    return SevenNetCalculator(name, device="cpu", compute_atomic_virial=True, **({"modal": modal} if modal else {}))


def native(system: periodic.System, type_elements: list[str], name: str = "7net-0", modal: str | None = None) -> dict:
    """SevenNetCalculator on the system: energy, virial (xx yy zz xy xz yz), per atom by tag (with
    SevenNet's own per-atom virial)."""
    from ase import Atoms  # noqa: PLC0415

    atoms = Atoms(symbols=[type_elements[t - 1] for t in system.types.tolist()],
                  positions=system.positions.numpy(), cell=system.cell.numpy(), pbc=True)
    atoms.calc = calculator(name, modal)
    energy = float(atoms.get_potential_energy())
    # ASE's stress is dE/d(strain) / V, in Voigt order xx yy zz yz xz xy; LAMMPS' virial is -V times it.
    s = -atoms.get_stress() * atoms.get_volume()
    # SevenNet's per-atom virial, its order xx yy zz xy yz zx (xy = r_x f_y, yz = r_y f_z, zx = r_z
    # f_x), in energy units and LAMMPS' sign; into LAMMPS' order as its pair_style e3gnn does.
    atomic = atoms.calc.results["stresses"]
    return {
        "ops": f"sevenn.calculator.SevenNetCalculator('{name}'{f', modal={modal!r}' if modal else ''}), periodic images "
               "as edge shifts (no halo)",
        "n_atoms": len(atoms),
        "energy": energy,
        "virial": [float(s[0]), float(s[1]), float(s[2]), float(s[5]), float(s[4]), float(s[3])],
        "tags": system.tags.tolist(),
        "atomic_energies": [float(e) for e in atoms.get_potential_energies()],
        "forces": atoms.get_forces().tolist(),
        "virial_atom": [[float(a[0]), float(a[1]), float(a[2]), float(a[3]), float(a[5]), float(a[4])] for a in atomic],
    }
