"""A small MACE with random weights for Cu and Ni, and its native evaluation on a periodic system.

The reference is MACE's own periodic evaluation, which knows nothing of halos: owned atoms
only, every edge to an image carrying its shift vector (MACE's `shifts`, with `unit_shifts`
and the cell so that MACE's own displacement trick gives the virial). Needs mace-torch
(DISTSPEC_PYTHON_MACE's environment).

`trained_fp64()` is a MACE as a user trains one in fp64: built with float64 as torch's default
dtype (mace_run_train's `--default_dtype float64`), trained a few steps, saved by torch.save; its
reference is mace's own calculator (`calculator()`), which loads the file itself.
"""

from __future__ import annotations

import os

import torch

import periodic
# torch's default dtype inside a `with`: mace's calculator and mace_run_train set it globally.
from distspec_export.precision import default_dtype

os.environ.setdefault("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")  # mace-torch under torch >= 2.6

Z = {"Cu": 29, "Ni": 28}


def build(r_max: float = 4.5, interactions: int = 2, seed: int = 0, heads: list[str] | None = None) -> torch.nn.Module:
    """ScaleShiftMACE, `interactions` residual interaction blocks, 8x0e + 8x1o, l_max 2, fp64;
    with `heads`, a multi-head model as mace's multihead fine-tuning makes: a readout, E0s and a
    scale and shift per head (each head's its own, so that heads differ)."""
    import numpy as np  # noqa: PLC0415
    from e3nn import o3  # noqa: PLC0415
    from mace import modules  # noqa: PLC0415

    torch.manual_seed(seed)
    block = modules.interaction_classes["RealAgnosticResidualInteractionBlock"]
    model = modules.ScaleShiftMACE(
        r_max=r_max, num_bessel=6, num_polynomial_cutoff=5, max_ell=2, interaction_cls=block,
        interaction_cls_first=block, num_interactions=interactions, num_elements=2,
        hidden_irreps=o3.Irreps("8x0e + 8x1o"), MLP_irreps=o3.Irreps("8x0e"), gate=torch.nn.functional.silu,
        atomic_energies=np.array([[-0.5 - 0.3 * h, -0.6 + 0.2 * h] for h in range(len(heads))]) if heads
        else np.array([-0.5, -0.6]),
        avg_num_neighbors=42.0, atomic_numbers=sorted(Z.values()), correlation=2, radial_type="bessel",
        atomic_inter_scale=[0.1 + 0.15 * h for h in range(len(heads))] if heads else 0.1,
        atomic_inter_shift=[0.02 * h for h in range(len(heads))] if heads else 0.0,
        **({"heads": list(heads)} if heads else {}),
    )
    return model.to(torch.float64).eval()


TRAINING = {"structures": 4, "cells": (2, 1, 1), "rattle": 0.2, "steps": 6, "lr": 0.01}


def _training_set() -> list:
    """A handful of small rattled Cu/Ni fcc cells (8 atoms) with ASE's EMT energies and forces."""
    from ase import Atoms  # noqa: PLC0415 (mace-torch depends on ase)
    from ase.calculators.emt import EMT  # noqa: PLC0415

    frames = []
    for k in range(TRAINING["structures"]):
        system = periodic.fcc(3.565, TRAINING["cells"], n_types=2, masses={}, rattle=TRAINING["rattle"], seed=100 + k)
        atoms = Atoms(symbols=[["Cu", "Ni"][t - 1] for t in system.types.tolist()],
                      positions=system.positions.numpy(), cell=list(system.hi), pbc=True)
        atoms.calc = EMT()
        frames.append((atoms, atoms.get_potential_energy(), torch.tensor(atoms.get_forces())))
    return frames


def _inputs(model: torch.nn.Module, atoms) -> dict:
    """MACE's inputs for `atoms` as its calculator makes them (mace's neighbour list), in fp64."""
    from mace.data.neighborhood import get_neighborhood  # noqa: PLC0415

    edge_index, shifts, unit_shifts, cell = get_neighborhood(atoms.get_positions(), cutoff=float(model.r_max),
                                                             pbc=(True, True, True), cell=atoms.get_cell()[:])
    z_table = model.atomic_numbers.tolist()
    index = torch.tensor([z_table.index(z) for z in atoms.get_atomic_numbers().tolist()])
    n = len(atoms)
    return {
        "positions": torch.tensor(atoms.get_positions(), dtype=torch.float64),
        "node_attrs": torch.nn.functional.one_hot(index, len(z_table)).to(torch.float64),
        "edge_index": torch.as_tensor(edge_index, dtype=torch.int64),
        "shifts": torch.as_tensor(shifts, dtype=torch.float64),
        "unit_shifts": torch.as_tensor(unit_shifts, dtype=torch.float64),
        "cell": torch.as_tensor(cell, dtype=torch.float64).reshape(1, 3, 3),
        "batch": torch.zeros(n, dtype=torch.int64),
        "ptr": torch.tensor([0, n]),
    }


def trained_fp64(r_max: float = 4.5, interactions: int = 2, seed: int = 1) -> torch.nn.Module:
    """A ScaleShiftMACE built in fp64 (float64 the default dtype while it is built, as mace_run_train
    --default_dtype float64 does) and trained TRAINING["steps"] Adam steps on energies and forces of
    a handful of small Cu/Ni cells; every weight has moved off its initial value (checked)."""
    with default_dtype(torch.float64):
        model = build(r_max=r_max, interactions=interactions, seed=seed)
    initial = {k: v.detach().clone() for k, v in model.named_parameters()}
    frames = [(_inputs(model, atoms), energy, forces) for atoms, energy, forces in _training_set()]
    optimizer = torch.optim.Adam(model.parameters(), lr=TRAINING["lr"])
    model.train()
    for _ in range(TRAINING["steps"]):
        optimizer.zero_grad()
        loss = torch.zeros((), dtype=torch.float64)
        for data, energy, forces in frames:
            out = model(dict(data), training=True, compute_force=True)
            n = data["positions"].shape[0]
            loss = loss + ((out["energy"].sum() - energy) / n) ** 2 + ((out["forces"] - forces) ** 2).mean()
        loss.backward()
        optimizer.step()
    model.eval()
    unmoved = [k for k, v in model.named_parameters() if torch.equal(v.detach(), initial[k])]
    if unmoved or any(v.dtype != torch.float64 for v in model.parameters()):
        raise RuntimeError(f"training left {len(unmoved)} weights at their initial values ({unmoved[:3]}), or a "
                           "weight not in fp64")
    return model


def calculator(model_file: str, system: periodic.System, type_elements: list[str]) -> dict:
    """mace's own calculator (`MACECalculator`, default_dtype float64) on the model file: energy,
    per-atom energies, forces and virial (-stress x volume), by tag."""
    from ase import Atoms  # noqa: PLC0415
    from mace.calculators import MACECalculator  # noqa: PLC0415

    if any(t != 0.0 for t in system.tilt):
        raise ValueError("calculator(): an orthogonal box only")
    atoms = Atoms(symbols=[type_elements[t - 1] for t in system.types.tolist()],
                  positions=system.positions.numpy(),
                  cell=[h - lo for h, lo in zip(system.hi, system.lo)], pbc=True)
    with default_dtype(torch.get_default_dtype()):  # the calculator sets it for the process
        atoms.calc = MACECalculator(model_paths=model_file, device="cpu", default_dtype="float64")
        energy = atoms.get_potential_energy()
        forces = atoms.get_forces()
        stress = atoms.get_stress(voigt=True)  # xx yy zz yz xz xy
        node_energy = atoms.calc.results["energies"]  # its "node_energy" has the E0s taken off
    volume = atoms.get_volume()
    w = [-volume * stress[i] for i in (0, 1, 2, 5, 4, 3)]
    return {
        "ops": "mace's MACECalculator on the model file (default_dtype float64): its neighbour list, no halo",
        "n_atoms": len(atoms),
        "energy": float(energy),
        "virial": [float(v) for v in w],
        "tags": system.tags.tolist(),
        "atomic_energies": [float(e) for e in node_energy],
        "forces": forces.tolist(),
    }


def native(model: torch.nn.Module, system: periodic.System, type_elements: list[str], skin: float = 1.0,
           head: int | None = None) -> dict:
    """MACE's own periodic evaluation: energy, per-atom energies, forces, virial and mace's atomic
    virials (`compute_atomic_stresses`), by tag (of head `head` of a multi-head model)."""
    r_max = float(model.r_max)
    rows = periodic.rows(system, r_max + skin, r_max)
    n = rows.n_owned
    sender, receiver = rows.edge_index
    owner = rows.owner[sender]
    # MACE: vector = r[receiver] - r[sender] + shift, the shift belonging to the receiver's side.
    shifts = rows.positions[owner] - rows.positions[sender]
    cell = system.cell
    unit_shifts = torch.round(torch.linalg.solve(cell.T, shifts.T).T)
    z_table = model.atomic_numbers.tolist()
    z = torch.tensor([Z[type_elements[t - 1]] for t in system.types.tolist()])
    node_attrs = torch.nn.functional.one_hot(torch.tensor([z_table.index(v) for v in z.tolist()]),
                                             len(z_table)).to(torch.float64)
    data = {
        "positions": rows.positions[:n].clone(),
        "node_attrs": node_attrs,
        "edge_index": torch.stack([owner, receiver]),
        "shifts": unit_shifts @ cell,
        "unit_shifts": unit_shifts,
        "cell": cell.unsqueeze(0),
        "batch": torch.zeros(n, dtype=torch.int64),
        "ptr": torch.tensor([0, n]),
    }
    if head is not None:
        data["head"] = torch.tensor([head])
    # mace's own atomic virials (compute_atomic_stresses: -dE/d(edge vector) (x) edge vector,
    # symmetrised, half to each end), in LAMMPS' sign as its virials are.
    out = model(data, compute_force=True, compute_virials=True, compute_edge_forces=True, compute_atomic_stresses=True)
    w = out["virials"][0].detach()
    atomic = out["atomic_virials"].detach()
    return {
        "ops": "native MACE, periodic images as edge shifts (no halo)",
        "n_atoms": n,
        "n_edges": int(rows.edge_index.shape[1]),
        "energy": float(out["energy"].detach().sum()),
        "virial": [float(w[0, 0]), float(w[1, 1]), float(w[2, 2]), float(w[0, 1]), float(w[0, 2]), float(w[1, 2])],
        "tags": system.tags.tolist(),
        "atomic_energies": out["node_energy"].detach().tolist(),
        "forces": out["forces"].detach().tolist(),
        "virial_atom": [[float(a[0, 0]), float(a[1, 1]), float(a[2, 2]), float(a[0, 1]), float(a[0, 2]), float(a[1, 2])]
                        for a in atomic],
    }
