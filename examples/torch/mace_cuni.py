"""A small MACE for Cu/Ni with random weights, and MACE's own evaluation of a LAMMPS dump.

The model stands in for one you trained: `distspec-export` takes any `mace.modules` model the
same way (a checkpoint would be `torch.load`ed in `build()` instead). Its weights are random,
so it predicts nothing; it is deterministic (seeded), so the export and the check below build
the same model.

  build()                         the model, for `distspec-export --module mace_cuni.py:build`
  python mace_cuni.py DUMP        evaluate the model with MACE's own tools (ASE's periodic
                                  neighbour list, edge shifts, no halo) on the configuration of a
                                  LAMMPS dump (`id type x y z fx fy fz c_pe`), and print how far
                                  LAMMPS' forces and energy are from it

Needs mace-torch (the bootstrap's DISTSPEC_PYTHON_MACE environment).
"""

from __future__ import annotations

import os
import sys
import warnings

os.environ.setdefault("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")  # mace-torch under torch >= 2.6

import torch  # noqa: E402

ELEMENTS = ["Cu", "Ni"]  # LAMMPS types 1, 2
Z = {"Cu": 29, "Ni": 28}
R_MAX = 4.5


def build(seed: int = 0) -> torch.nn.Module:
    """ScaleShiftMACE: 2 residual interactions, 8x0e + 8x1o hidden, l_max 2, fp64."""
    import numpy as np  # noqa: PLC0415
    from e3nn import o3  # noqa: PLC0415
    from mace import modules  # noqa: PLC0415

    torch.manual_seed(seed)
    block = modules.interaction_classes["RealAgnosticResidualInteractionBlock"]
    model = modules.ScaleShiftMACE(
        r_max=R_MAX, num_bessel=6, num_polynomial_cutoff=5, max_ell=2, interaction_cls=block,
        interaction_cls_first=block, num_interactions=2, num_elements=2,
        hidden_irreps=o3.Irreps("8x0e + 8x1o"), MLP_irreps=o3.Irreps("8x0e"), gate=torch.nn.functional.silu,
        atomic_energies=np.array([-0.5, -0.6]), avg_num_neighbors=42.0, atomic_numbers=sorted(Z.values()),
        correlation=2, radial_type="bessel", atomic_inter_scale=0.1, atomic_inter_shift=0.0,
    )
    return model.to(torch.float64).eval()


def read_dump(path: str):
    """(cell [3x3] rows a, b, c; origin; ids, types, positions, forces, per-atom energies) of a
    LAMMPS `dump custom` file's first frame (orthogonal or triclinic box)."""
    with open(path) as f:
        lines = f.read().splitlines()
    n = int(lines[lines.index("ITEM: NUMBER OF ATOMS") + 1])
    b = next(i for i, line in enumerate(lines) if line.startswith("ITEM: BOX BOUNDS"))
    bounds = [[float(v) for v in lines[b + 1 + k].split()] for k in range(3)]
    xy = xz = yz = 0.0
    if "xy" in lines[b]:  # LAMMPS writes the bounding box of a triclinic cell
        xy, xz, yz = bounds[0][2], bounds[1][2], bounds[2][2]
        bounds[0][0] -= min(0.0, xy, xz, xy + xz)
        bounds[0][1] -= max(0.0, xy, xz, xy + xz)
        bounds[1][0] -= min(0.0, yz)
        bounds[1][1] -= max(0.0, yz)
    lx, ly, lz = (bounds[k][1] - bounds[k][0] for k in range(3))
    cell = torch.tensor([[lx, 0.0, 0.0], [xy, ly, 0.0], [xz, yz, lz]], dtype=torch.float64)
    a = lines.index(next(line for line in lines if line.startswith("ITEM: ATOMS")))
    columns = lines[a].split()[2:]
    rows = sorted((line.split() for line in lines[a + 1:a + 1 + n]), key=lambda r: int(r[0]))
    col = {name: k for k, name in enumerate(columns)}

    def pick(*names):
        return torch.tensor([[float(r[col[c]]) for c in names] for r in rows], dtype=torch.float64)

    origin = torch.tensor([bounds[k][0] for k in range(3)], dtype=torch.float64)
    return (cell, origin, pick("id")[:, 0].long(), pick("type")[:, 0].long(), pick("x", "y", "z"),
            pick("fx", "fy", "fz"), pick("c_pe")[:, 0])


def mace_evaluate(model: torch.nn.Module, cell, origin, types, positions) -> dict:
    """MACE's own periodic evaluation: ASE's neighbour list within r_max, images as edge shifts."""
    from mace.data.neighborhood import get_neighborhood  # noqa: PLC0415

    pos = (positions - origin).numpy()
    edge_index, shifts, unit_shifts, _ = get_neighborhood(pos, cutoff=R_MAX, pbc=(True, True, True),
                                                          cell=cell.numpy())
    z_table = model.atomic_numbers.tolist()
    species = torch.tensor([z_table.index(Z[ELEMENTS[t - 1]]) for t in types.tolist()])
    n = len(species)
    data = {
        "positions": torch.tensor(pos, dtype=torch.float64),
        "node_attrs": torch.nn.functional.one_hot(species, len(z_table)).to(torch.float64),
        "edge_index": torch.tensor(edge_index, dtype=torch.int64),
        "shifts": torch.tensor(shifts, dtype=torch.float64),
        "unit_shifts": torch.tensor(unit_shifts, dtype=torch.float64),
        "cell": cell.unsqueeze(0),
        "batch": torch.zeros(n, dtype=torch.int64),
        "ptr": torch.tensor([0, n]),
    }
    out = model(data, compute_force=True)
    return {"energy": float(out["energy"].detach().sum()), "atomic_energies": out["node_energy"].detach(),
            "forces": out["forces"].detach()}


def main(argv: list[str]) -> int:
    warnings.filterwarnings("ignore")  # e3nn's and TorchScript's deprecation notes
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    cell, origin, ids, types, positions, forces, pe = read_dump(argv[0])
    ref = mace_evaluate(build(), cell, origin, types, positions)
    df = (forces - ref["forces"]).abs().max().item()
    de = (pe - ref["atomic_energies"]).abs().max().item()
    e_lammps = float(pe.sum())
    print(f"{len(ids)} atoms of {argv[0]} against MACE's own evaluation (ASE neighbour list, no halo):")
    print(f"  energy      LAMMPS {e_lammps:.12f}  MACE {ref['energy']:.12f} eV  |diff| {abs(e_lammps - ref['energy']):.1e}")
    print(f"  per-atom energies  max |diff| {de:.1e} eV")
    print(f"  forces      max |diff| {df:.1e} eV/A  (largest component {ref['forces'].abs().max().item():.2e})")
    ok = df <= 1e-8 and de <= 1e-8
    print("  agree" if ok else "  DIFFER")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
