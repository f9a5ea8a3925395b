"""Seconds per energy+forces evaluation of SevenNet's own ASE calculator (SevenNetCalculator,
'7net-0') on the structure of in.bench, with THREADS torch threads.

  ase_calculator.py N STEPS THREADS      prints "BENCH ase <seconds per evaluation>"
"""

import sys
import time
import warnings

import numpy as np
import torch
from ase.build import bulk

warnings.filterwarnings("ignore")


def main() -> int:
    n, steps, threads = (int(a) for a in sys.argv[1:4])
    torch.set_num_threads(threads)
    from sevenn.calculator import SevenNetCalculator  # noqa: PLC0415

    atoms = bulk("Si", "diamond", a=5.431, cubic=True).repeat((n, n, n))
    rng = np.random.default_rng(2026)
    atoms.calc = SevenNetCalculator("7net-0", device="cpu")
    atoms.rattle(0.05, rng=rng)
    atoms.get_forces()  # warm-up
    t0 = time.perf_counter()
    for _ in range(steps):
        atoms.positions += rng.normal(scale=1e-3, size=atoms.positions.shape)  # a new configuration
        atoms.get_forces()
    print(f"BENCH ase {(time.perf_counter() - t0) / steps:.6f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
