"""A small NequIP for Cu and Ni built with nequip's own API (random weights), and nequip's own
evaluation of it on a periodic system.

The reference is the model as nequip runs it outside LAMMPS: nequip's ASE conversion and
neighbour list (images as edge shifts, no halo), its force and stress module on. Needs nequip
(DISTSPEC_PYTHON_NEQUIP's environment).
"""

from __future__ import annotations

import torch

import periodic

TYPE_NAMES = ["Cu", "Ni"]


def build(r_max: float = 4.5, layers: int = 3, seed: int = 0, allegro: bool = False) -> torch.nn.Module:
    """NequIPGNNModel (`layers` interaction blocks, l_max 1, 8 features per irrep), fp64; or, with
    `allegro`, an AllegroModel of 2 layers: nequip's GraphModel either way."""
    from nequip.utils.global_state import set_global_state  # noqa: PLC0415

    set_global_state()
    common = dict(seed=seed, model_dtype="float64", type_names=TYPE_NAMES, r_max=r_max, avg_num_neighbors=20.0,
                  per_type_energy_shifts={"Cu": -0.5, "Ni": -0.6}, per_type_energy_scales={"Cu": 0.3, "Ni": 0.4})
    if allegro:
        from allegro.model import AllegroModel  # noqa: PLC0415

        embed = {"_target_": "allegro.nn.TwoBodyBesselScalarEmbed", "num_bessels": 8}
        return AllegroModel(l_max=1, num_layers=2, num_scalar_features=8, num_tensor_features=4,
                            radial_chemical_embed=embed, radial_chemical_embed_dim=8,
                            allegro_mlp_hidden_layers_depth=1, allegro_mlp_hidden_layers_width=16,
                            readout_mlp_hidden_layers_depth=1, readout_mlp_hidden_layers_width=8, **common).eval()
    from nequip.model import NequIPGNNModel  # noqa: PLC0415

    return NequIPGNNModel(num_layers=layers, l_max=1, num_features=8, radial_mlp_width=16, **common).eval()


def native(model: torch.nn.Module, system: periodic.System, type_elements: list[str]) -> dict:
    """nequip's own periodic evaluation: energy, per-atom energies, forces and virial, by tag, and the
    per-atom virial from nequip's own edge forces (atomic_virials())."""
    from ase import Atoms  # noqa: PLC0415
    from nequip.data import AtomicDataDict, compute_neighborlist_, from_ase  # noqa: PLC0415

    atoms = Atoms(symbols=[type_elements[t - 1] for t in system.types.tolist()],
                  positions=system.positions.numpy(), cell=system.cell.numpy(), pbc=True)
    data = from_ase(atoms)
    data[AtomicDataDict.ATOM_TYPE_KEY] = torch.tensor([TYPE_NAMES.index(s) for s in atoms.get_chemical_symbols()])
    data = compute_neighborlist_(data, r_max=float(model.metadata["r_max"]))
    out = model(AtomicDataDict.with_batch_(data))
    virial = out[AtomicDataDict.VIRIAL_KEY].detach().reshape(3, 3)
    atomic = atomic_virials(model, data)
    return {
        "ops": "nequip's own evaluation (from_ase, compute_neighborlist_, periodic images as edge shifts; no halo)",
        "n_atoms": len(atoms),
        "n_edges": int(out[AtomicDataDict.EDGE_INDEX_KEY].shape[1]),
        "energy": float(out[AtomicDataDict.TOTAL_ENERGY_KEY].detach().sum()),
        "virial": [float(virial[0, 0]), float(virial[1, 1]), float(virial[2, 2]), float(virial[0, 1]),
                   float(virial[0, 2]), float(virial[1, 2])],
        "tags": system.tags.tolist(),
        "atomic_energies": out[AtomicDataDict.PER_ATOM_ENERGY_KEY].detach().reshape(-1).tolist(),
        "forces": out[AtomicDataDict.FORCE_KEY].detach().tolist(),
        "virial_atom": atomic.tolist(),
    }


def atomic_virials(model: torch.nn.Module, data: dict) -> torch.Tensor:
    """Per-atom virial [n, 6] (xx yy zz xy xz yz) from nequip's own edge forces.

    nequip has no per-atom virial of its own; given edge vectors instead of positions (as its
    LAMMPS ML-IAP integration gives them), its ForceStressOutput returns `edge_forces`, dE/d(edge
    vector) of each edge. Each edge's -r (x) dE/dr, symmetrised, goes half to each end: mace's
    partition (compute_atomic_stresses), the one the exported graph gives."""
    from nequip.data import AtomicDataDict  # noqa: PLC0415
    from nequip.nn.utils import with_edge_vectors_  # noqa: PLC0415

    with_vectors = with_edge_vectors_(dict(data), with_lengths=False)
    vectors = with_vectors[AtomicDataDict.EDGE_VECTORS_KEY].detach().clone()
    edge_index = data[AtomicDataDict.EDGE_INDEX_KEY]
    inputs = {AtomicDataDict.EDGE_VECTORS_KEY: vectors, AtomicDataDict.EDGE_INDEX_KEY: edge_index,
              AtomicDataDict.ATOM_TYPE_KEY: data[AtomicDataDict.ATOM_TYPE_KEY]}
    g = model(inputs)[AtomicDataDict.EDGE_FORCE_KEY].detach()
    w = -torch.einsum("ea,eb->eab", vectors, g)
    w = 0.25 * (w + w.transpose(1, 2))
    n = data[AtomicDataDict.ATOM_TYPE_KEY].shape[0]
    atom = torch.zeros(n, 3, 3, dtype=w.dtype).index_add(0, edge_index[0], w).index_add(0, edge_index[1], w)
    return torch.stack([atom[:, 0, 0], atom[:, 1, 1], atom[:, 2, 2], atom[:, 0, 1], atom[:, 0, 2], atom[:, 1, 2]], 1)
