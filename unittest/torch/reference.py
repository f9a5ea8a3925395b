#!/usr/bin/env python3
"""Eager reference of the toy model (toy_mpnn.py) on a whole periodic system, in one process.

Independent of the exporter: the model runs eagerly, not traced, with nvalchemi's own halo ops
and their own backward formulas, on nvalchemi's routing for world size 1. Every atom is owned;
the halo rows are the periodic images within cutoff + skin of the box (periodic.py), each
routed from its owner (`send_index` = owner row of each image, `recv_dest` = the image rows,
`recv_real` = true); edges run from any row to an owned row within the cutoff. nvalchemi's
eager ops need a process group even at world size 1: a gloo group on a FileStore. Should that
fail, its exchange (`halo_exchange_fixed`, an all_to_all) is replaced by the identity, which is
what an all_to_all over one rank is; the JSON's "ops" says which ran.

Writes JSON: energy (sum of owned atomic energies), virial (sum over all rows of r (x) F, in
LAMMPS' order xx yy zz xy xz yz, energy units), and by atom tag the atomic energies, the
forces folded to their owners and the per-atom virial, for comparison with LAMMPS' per-atom
output. The per-atom virial is mace's partition (`get_atomic_virials_stresses`), computed here
from the eager model's own autograd with respect to its edge vectors (the model's `edge_shift`,
a zero added to each): each edge's -r (x) dE/dr, symmetrised, half to each end's owner.

  reference.py --data cuni.data --type-elements Cu Ni --layers 2 --out ref.json
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Iterator

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import periodic  # noqa: E402
import toy_mpnn  # noqa: E402

SKIN = 1.0


@contextlib.contextmanager
def world_of_one() -> Iterator[str]:
    """A default process group of one rank for nvalchemi's eager ops; says how it was made."""
    import torch.distributed as dist  # noqa: PLC0415

    from nvalchemi.distributed._core import particle_halo  # noqa: PLC0415

    if dist.is_initialized():
        yield f"nvalchemi ops, {dist.get_backend()} group of {dist.get_world_size()}"
        return
    with tempfile.TemporaryDirectory() as tmp:
        try:
            dist.init_process_group("gloo", store=dist.FileStore(os.path.join(tmp, "store"), 1), rank=0, world_size=1)
        except Exception as e:  # noqa: BLE001
            saved = particle_halo.halo_exchange_fixed
            particle_halo.halo_exchange_fixed = lambda rows, world_size, group=None: rows
            try:
                yield f"nvalchemi ops, exchange replaced by the identity (no gloo group: {e})"
            finally:
                particle_halo.halo_exchange_fixed = saved
            return
        try:
            yield "nvalchemi ops, gloo group of 1 on a FileStore"
        finally:
            dist.destroy_process_group()


def evaluate(model: torch.nn.Module, system: periodic.System, type_elements: list[str],
             model_elements: list[str], cutoff: float, skin: float = SKIN) -> dict:
    rows = periodic.rows(system, cutoff + skin, cutoff)
    n, n_rows = rows.n_owned, rows.positions.shape[0]
    species = periodic.species_of(system, type_elements, model_elements)[rows.owner]
    positions = rows.positions.clone().requires_grad_(True)
    shift = torch.zeros(rows.edge_index.shape[1], 3, dtype=torch.float64, requires_grad=True)
    inputs = (positions, species, rows.edge_index, torch.tensor(n), rows.owner[n:].clone(),
              torch.arange(n, n_rows), torch.ones(n_rows - n, dtype=torch.bool), shift)
    with world_of_one() as ops:
        energies = model(*inputs)
        energy = energies[:n].sum()
        grad, edge_grad = torch.autograd.grad(energy, [positions, shift])
    row_forces = -grad
    forces = torch.zeros(n, 3, dtype=torch.float64).index_add(0, rows.owner, row_forces)
    w = rows.positions.T @ row_forces
    sender, receiver = rows.edge_index
    vec = rows.positions[sender] - rows.positions[receiver]
    edge_w = -torch.einsum("ea,eb->eab", vec, edge_grad)
    edge_w = 0.25 * (edge_w + edge_w.transpose(1, 2))  # symmetrised, half to each end
    atom_w = torch.zeros(n, 3, 3, dtype=torch.float64).index_add(0, rows.owner[sender], edge_w).index_add(
        0, receiver, edge_w)
    if not torch.allclose(atom_w.sum(0), 0.5 * (w + w.T), rtol=1e-10, atol=1e-10):
        raise RuntimeError("the per-atom virial does not sum to the virial: the model's energy is not a function of "
                           "its edge vectors")
    return {
        "ops": ops,
        "n_atoms": n,
        "n_halo": n_rows - n,
        "n_edges": int(rows.edge_index.shape[1]),
        "energy": float(energy.detach()),
        "virial": [float(w[0, 0]), float(w[1, 1]), float(w[2, 2]), float(w[0, 1]), float(w[0, 2]), float(w[1, 2])],
        "tags": system.tags.tolist(),
        "atomic_energies": energies[:n].detach().tolist(),
        "forces": forces.tolist(),
        "virial_atom": [[float(a[0, 0]), float(a[1, 1]), float(a[2, 2]), float(a[0, 1]), float(a[0, 2]), float(a[1, 2])]
                        for a in atom_w],
    }


def reference(data_file: str | Path, type_elements: list[str], layers: int, model_elements: list[str] | None = None,
              cutoff: float = 4.5, seed: int = 0, skin: float = SKIN) -> dict:
    model_elements = model_elements or type_elements
    # Every node update on every row: the model as written before the export cut it down to owned rows.
    model = toy_mpnn.build(layers=layers, n_species=len(model_elements), cutoff=cutoff, seed=seed, owned_rows=False)
    system = periodic.read_data(data_file)
    result = {
        "model": {"module": "toy_mpnn.build", "layers": layers, "n_species": len(model_elements),
                  "cutoff": cutoff, "seed": seed, "elements": model_elements},
        "data_file": Path(data_file).name,
        "type_elements": type_elements,
        "units": "metal",
        "skin": skin,
    }
    result.update(evaluate(model, system, type_elements, model_elements, cutoff, skin))
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", required=True, help="LAMMPS data file, atom style atomic")
    p.add_argument("--type-elements", nargs="+", required=True, help="element of LAMMPS type 1, 2, ...")
    p.add_argument("--model-elements", nargs="+", help="the model's elements (default: --type-elements)")
    p.add_argument("--layers", type=int, choices=(2, 4), required=True)
    p.add_argument("--cutoff", type=float, default=4.5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--skin", type=float, default=SKIN)
    p.add_argument("--out", required=True, help="JSON file to write")
    args = p.parse_args(argv)
    result = reference(args.data, args.type_elements, args.layers, args.model_elements, args.cutoff, args.seed,
                       args.skin)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(f"{args.out}: energy {result['energy']:.12f} over {result['n_atoms']} atoms "
          f"({result['n_halo']} halo rows, {result['n_edges']} edges; {result['ops']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
