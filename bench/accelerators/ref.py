"""SevenNet's own calculator (sevenn's SevenNetCalculator, e3nn, on the cpu) on the atoms of a
forces dump that bench/accelerators/in.forces wrote: energy and every force, the reference of
the accelerated runs.

  python ref.py DUMP OUT       (DUMP: forces.TAG with id x y z fx fy fz; OUT: id fx fy fz lines)
"""

import sys

import numpy as np


def read_dump(path):
    lines = open(path).read().splitlines()
    box = [float(v) for line in lines[lines.index("ITEM: BOX BOUNDS pp pp pp") + 1:][:3] for v in line.split()]
    start = next(i for i, line in enumerate(lines) if line.startswith("ITEM: ATOMS")) + 1
    rows = np.array([[float(v) for v in line.split()] for line in lines[start:]])
    return box, rows


def atoms_of(dump):
    """(ASE Atoms of the dump's silicon atoms in its periodic box, their atom IDs)."""
    from ase import Atoms  # noqa: PLC0415

    box, rows = read_dump(dump)
    lo = np.array(box[0::2])
    cell = np.diag(np.array(box[1::2]) - lo)
    return Atoms("Si%d" % len(rows), positions=rows[:, 1:4] - lo, cell=cell, pbc=True), rows[:, 0].astype(int)


def write_reference(atoms, ids, out):
    """The energy and every force of `atoms` under its calculator, in the form report.py reads."""
    energy, forces = atoms.get_potential_energy(), atoms.get_forces()
    with open(out, "w") as f:
        f.write("ENERGY %.10f\n" % energy)
        for i, row in zip(ids, forces):
            f.write("%d %.10g %.10g %.10g\n" % (i, *row))


def main():
    from sevenn.calculator import SevenNetCalculator  # noqa: PLC0415

    atoms, ids = atoms_of(sys.argv[1])
    atoms.calc = SevenNetCalculator("7net-0", device="cpu")
    write_reference(atoms, ids, sys.argv[2])


if __name__ == "__main__":
    main()
