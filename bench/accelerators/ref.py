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


def main():
    from ase import Atoms  # noqa: PLC0415
    from sevenn.calculator import SevenNetCalculator  # noqa: PLC0415

    box, rows = read_dump(sys.argv[1])
    lo = np.array(box[0::2])
    cell = np.diag(np.array(box[1::2]) - lo)
    atoms = Atoms("Si%d" % len(rows), positions=rows[:, 1:4] - lo, cell=cell, pbc=True)
    atoms.calc = SevenNetCalculator("7net-0", device="cpu")
    energy, forces = atoms.get_potential_energy(), atoms.get_forces()
    with open(sys.argv[2], "w") as f:
        f.write("ENERGY %.10f\n" % energy)
        for i, row in zip(rows[:, 0].astype(int), forces):
            f.write("%d %.10g %.10g %.10g\n" % (i, *row))


if __name__ == "__main__":
    main()
