"""A small AIMNet2 with random weights for H, C, N and O, a periodic box of small molecules, and
AIMNet2's own evaluation of it.

The reference is AIMNet2's own periodic evaluation, which knows nothing of halos or of
DISTSPEC's ops: owned atoms only, its neighbour matrix (mode 1) with each image's cell shift
(`shifts`, `cell`), its own `mol_sum` for the charge equilibration and the total energy. The
virial is -dE/d(strain), positions and cell strained together.
"""

from __future__ import annotations

import math

import torch

import periodic

ELEMENTS = ["H", "C", "N", "O"]
Z = {"H": 1, "C": 6, "N": 7, "O": 8}
MASSES = {1: 1.008, 2: 12.011, 3: 14.007, 4: 15.999}
# Small molecules, atoms as (element, x, y, z) in Angstrom about their centre.
MOLECULES = {
    "CH4": [("C", 0, 0, 0), ("H", 0.63, 0.63, 0.63), ("H", -0.63, -0.63, 0.63), ("H", -0.63, 0.63, -0.63),
            ("H", 0.63, -0.63, -0.63)],
    "NH3": [("N", 0, 0, 0.1), ("H", 0.94, 0, -0.27), ("H", -0.47, 0.81, -0.27), ("H", -0.47, -0.81, -0.27)],
    "H2O": [("O", 0, 0, 0), ("H", 0.76, 0.59, 0), ("H", -0.76, 0.59, 0)],
    "CO2": [("C", 0, 0, 0), ("O", 1.16, 0, 0), ("O", -1.16, 0, 0)],
}


def build(rc: float = 4.0, passes: int = 3, seed: int = 0, dtype: torch.dtype = torch.float64) -> torch.nn.Module:
    """AIMNet2 of aimnet2.yaml's shape, scaled down: 8 features x 8 shifts, `passes` passes,
    per-atom energy head, atomic shifts and their sum; no Coulomb head."""
    from aimnet.models import AIMNet2  # noqa: PLC0415
    from aimnet.modules.core import AtomicShift, AtomicSum, Output  # noqa: PLC0415

    torch.manual_seed(seed)
    mlp = {"activation_fn": torch.nn.GELU(), "last_linear": True, "hidden": [16]}
    outputs = {
        "energy_mlp": Output(mlp=mlp, n_in=32, n_out=1, key_in="aim", key_out="energy"),
        "atomic_shift": AtomicShift(key_in="energy", key_out="energy"),
        "atomic_sum": AtomicSum(key_in="energy", key_out="energy"),
    }
    model = AIMNet2(aev={"rc_s": rc, "nshifts_s": 8}, nfeature=8, d2features=True, ncomb_v=8,
                    hidden=tuple([32, 24] for _ in range(passes)), aim_size=32, outputs=outputs)
    with torch.no_grad():  # random atomic shifts (the default is zero)
        outputs["atomic_shift"].shifts.weight[1:].uniform_(-1.0, 1.0)
    model = model.to(dtype).eval()
    model._required_keys_dtype = [dtype if d.is_floating_point else d for d in model._required_keys_dtype]
    model._optional_keys_dtype = [dtype if d.is_floating_point else d for d in model._optional_keys_dtype]
    return model


def molecular_box(cells: int = 3, spacing: float = 3.3, seed: int = 2026) -> periodic.System:
    """`cells`^3 molecules drawn from MOLECULES on a cubic grid, each turned at random."""
    gen = torch.Generator().manual_seed(seed)
    names = list(MOLECULES)
    positions, types = [], []
    for i in range(cells ** 3):
        centre = torch.tensor([i % cells, (i // cells) % cells, i // cells ** 2], dtype=torch.float64) * spacing
        atoms = MOLECULES[names[int(torch.randint(len(names), (1,), generator=gen))]]
        q, _ = torch.linalg.qr(torch.randn(3, 3, generator=gen, dtype=torch.float64))
        for element, *xyz in atoms:
            positions.append(centre + q @ torch.tensor(xyz, dtype=torch.float64))
            types.append(ELEMENTS.index(element) + 1)
    box = cells * spacing
    pos = torch.stack(positions).remainder(box)
    n = pos.shape[0]
    return periodic.System((0.0, 0.0, 0.0), (box,) * 3, (0.0, 0.0, 0.0), torch.arange(1, n + 1),
                           torch.tensor(types), pos, dict(MASSES))


def native(model: torch.nn.Module, system: periodic.System, type_elements: list[str], rc: float) -> dict:
    """AIMNet2's own periodic evaluation: energy, per-atom energies, forces and virial, by tag."""
    rows = periodic.rows(system, rc + 1.0, rc)
    n = rows.n_owned
    sender, receiver = rows.edge_index
    owner = rows.owner[sender]
    cell = system.cell
    # The image's shift in cell vectors: image = owner + shift @ cell.
    unit_shifts = torch.round(torch.linalg.solve(cell.T, (rows.positions[sender] - rows.positions[owner]).T).T)
    order = torch.argsort(receiver, stable=True)
    receiver, owner, unit_shifts = receiver[order], owner[order], unit_shifts[order]
    counts = torch.bincount(receiver, minlength=n)
    width = int(counts.max())
    slot = torch.arange(receiver.shape[0]) - (torch.cumsum(counts, 0) - counts)[receiver]
    nbmat = torch.full((n + 1, width), n, dtype=torch.int64)
    nbmat[receiver, slot] = owner
    shifts = torch.zeros(n + 1, width, 3, dtype=torch.float64)
    shifts[receiver, slot] = unit_shifts

    strain = torch.zeros(3, 3, dtype=torch.float64, requires_grad=True)
    pos = rows.positions[:n].clone().requires_grad_(True)
    deform = torch.eye(3, dtype=torch.float64) + strain
    numbers = torch.tensor([Z[type_elements[t - 1]] for t in system.types.tolist()] + [0])
    data = {"coord": torch.cat([pos @ deform, torch.zeros(1, 3, dtype=torch.float64)]), "numbers": numbers,
            "mol_idx": torch.zeros(n + 1, dtype=torch.int64), "charge": torch.zeros(1, dtype=torch.float64),
            "nbmat": nbmat, "shifts": shifts, "cell": (cell @ deform).unsqueeze(0)}
    atomic = {}

    def keep_atomic(module, args):  # the per-atom energies AtomicSum is about to sum
        atomic["energy"] = args[0]["energy"].detach().clone()

    hook = model.outputs["atomic_sum"].register_forward_pre_hook(keep_atomic)
    try:
        energy = model(data)["energy"].sum()
    finally:
        hook.remove()
    grad_pos, grad_strain = torch.autograd.grad(energy, (pos, strain))
    w = -grad_strain
    w = 0.5 * (w + w.T)
    assert math.isfinite(float(energy.detach()))
    return {
        "ops": "native AIMNet2, neighbour matrix with cell shifts (no halo), its own mol_sum",
        "n_atoms": n,
        "n_edges": int(rows.edge_index.shape[1]),
        "max_neighbors": width,
        "energy": float(energy.detach()),
        "virial": [float(w[0, 0]), float(w[1, 1]), float(w[2, 2]), float(w[0, 1]), float(w[0, 2]), float(w[1, 2])],
        "tags": system.tags.tolist(),
        "atomic_energies": atomic["energy"].reshape(n + 1, -1)[:n, 0].tolist(),
        "forces": (-grad_pos).tolist(),
    }
