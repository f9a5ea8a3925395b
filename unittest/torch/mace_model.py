"""A small MACE with random weights for Cu and Ni, and its native evaluation on a periodic system.

The reference is MACE's own periodic evaluation, which knows nothing of halos: owned atoms
only, every edge to an image carrying its shift vector (MACE's `shifts`, with `unit_shifts`
and the cell so that MACE's own displacement trick gives the virial). Needs mace-torch
(DISTSPEC_PYTHON_MACE's environment).
"""

from __future__ import annotations

import os

import torch

import periodic

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


def native(model: torch.nn.Module, system: periodic.System, type_elements: list[str], skin: float = 1.0,
           head: int | None = None) -> dict:
    """MACE's own periodic evaluation: energy, per-atom energies, forces and virial, by tag (of
    head `head` of a multi-head model)."""
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
    out = model(data, compute_force=True, compute_virials=True)
    w = out["virials"][0].detach()
    return {
        "ops": "native MACE, periodic images as edge shifts (no halo)",
        "n_atoms": n,
        "n_edges": int(rows.edge_index.shape[1]),
        "energy": float(out["energy"].detach().sum()),
        "virial": [float(w[0, 0]), float(w[1, 1]), float(w[2, 2]), float(w[0, 1]), float(w[0, 2]), float(w[1, 2])],
        "tags": system.tags.tolist(),
        "atomic_energies": out["node_energy"].detach().tolist(),
        "forces": out["forces"].detach().tolist(),
    }
