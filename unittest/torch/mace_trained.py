"""A small MACE trained here by mace's own trainer, as a user gets one: `mace_run_train` on rattled
Cu/Ni fcc cells labelled by ASE's EMT, fp64, on the cpu, then the `.model` file it saved.

`train(work)` writes the training set (extxyz, mace's default keys REF_energy / REF_forces) and
runs mace_run_train beside this Python (its environment's console script) in `work`; returns the
saved model file. TRAINING says what is trained and how long: a MACE of MACE-MP-0's shape, scaled
down (two RealAgnosticResidualInteractionBlocks, 16x0e + 16x1o, spherical harmonics to l = 3,
correlation 3), 6 epochs of 24 cells: about 2 minutes on 2 idle cores (12 on a loaded machine).
Needs mace-torch (DISTSPEC_PYTHON_MACE's environment).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import periodic

NAME = "mace_trained"
ELEMENTS = ["Cu", "Ni"]
R_MAX = 4.5
DATA = {"structures": 24, "cells": (2, 2, 1), "rattle": 0.15, "seed": 300}
TRAINING = ["--model", "MACE", "--interaction_first", "RealAgnosticResidualInteractionBlock",
            "--interaction", "RealAgnosticResidualInteractionBlock", "--hidden_irreps", "16x0e + 16x1o",
            "--max_L", "1", "--correlation", "3", "--num_interactions", "2", "--r_max", str(R_MAX),
            "--num_radial_basis", "8", "--radial_MLP", "[32, 32]", "--MLP_irreps", "16x0e",
            "--E0s", "average", "--loss", "weighted", "--energy_weight", "1.0", "--forces_weight", "10.0",
            "--batch_size", "4", "--valid_batch_size", "4", "--valid_fraction", "0.2", "--max_num_epochs", "6",
            "--lr", "0.01", "--seed", "1", "--device", "cpu", "--default_dtype", "float64",
            "--eval_interval", "3", "--num_workers", "0", "--save_cpu"]


def training_set(path: Path) -> None:
    """DATA's rattled fcc cells (16 atoms, Cu and Ni at random) with EMT's energy and forces."""
    from ase import Atoms  # noqa: PLC0415 (mace-torch depends on ase)
    from ase.calculators.emt import EMT  # noqa: PLC0415
    from ase.io import write  # noqa: PLC0415

    frames = []
    for k in range(DATA["structures"]):
        system = periodic.fcc(3.6, DATA["cells"], n_types=2, masses={}, rattle=DATA["rattle"], seed=DATA["seed"] + k)
        atoms = Atoms(symbols=[ELEMENTS[t - 1] for t in system.types.tolist()], positions=system.positions.numpy(),
                      cell=[h - lo for h, lo in zip(system.hi, system.lo)], pbc=True)
        atoms.calc = EMT()
        energy, forces = atoms.get_potential_energy(), atoms.get_forces()
        atoms.calc = None
        atoms.info["REF_energy"] = energy
        atoms.arrays["REF_forces"] = forces
        frames.append(atoms)
    write(str(path), frames, format="extxyz")


def train(work: Path) -> Path:
    """The model file mace_run_train saved, trained in `work` (made if missing)."""
    work.mkdir(parents=True, exist_ok=True)
    data = work / "train.xyz"
    training_set(data)
    command = [str(Path(sys.executable).parent / "mace_run_train"), "--name", NAME, "--work_dir", str(work),
               "--train_file", str(data), *TRAINING]
    done = subprocess.run(command, capture_output=True, text=True)
    model = work / f"{NAME}.model"
    if done.returncode != 0 or not model.is_file():
        tail = "\n".join((done.stdout + done.stderr).splitlines()[-20:])
        raise RuntimeError(f"mace_run_train failed (exit {done.returncode}) or saved no {model.name}:\n{tail}")
    return model
