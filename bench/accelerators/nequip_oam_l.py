"""A NequIP of NequIP-OAM-L's architecture with random weights, seeded, as a nequip checkpoint.

NequIP-OAM-L's weights are downloaded at run time (nequip.net), which this project cannot do; the
architecture is what sets speed and memory. Its hyperparameters are those of its published
training config (`models/nequip/nequip-OAM-L-0.1/nequip_Omat.yaml` of the matbench-discovery
repository, janosh/matbench-discovery; trained with nequip 0.13.0):
FullNequIPGNNModel, 89 elements (H to Bi, Ac to Pu), r_max 6 A, 6 interaction blocks with
hidden features 128x0e + 64x1o + 32x2e + 32x3o (the last 128x0e), edge spherical harmonics to
l = 3, type embedding 48, radial MLP 1 x 128 per block, 8 trainable Bessel functions,
polynomial cutoff p = 5, avg_num_neighbors 62.01, a ZBL pair potential, fp32. Trained with
`enable_OpenEquivariance`, and nequip documents OpenEquivariance with AOTInductor as its
fastest inference (nequip_model_call.py). Here the per-element energy shifts are random
(they move energies, not forces) and every per-element scale is `energy_scale`.

config(seed=0, energy_scale=1.0, tiny=False) is the model config (nequip's `_target_` form);
`python nequip_oam_l.py save OUT.ckpt [--args JSON]` writes its checkpoint (nequip_checkpoint.main).
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nequip_checkpoint  # noqa: E402

R_MAX = 6.0
HIDDEN = "128x0e+64x1o+32x2e+32x3o"
LAYERS = 6


def config(seed: int = 0, energy_scale: float = 1.0, tiny: bool = False) -> dict:
    """tiny: 2 blocks of 8x0e + 4x1o + 2x2e + 2x3o, radial MLP 1 x 16 (the same modules and
    elements, for a dry run of the benchmark on a CPU in seconds)."""
    types = nequip_checkpoint.OAM_TYPES
    layers, hidden, width = (2, "8x0e+4x1o+2x2e+2x3o", 16) if tiny else (LAYERS, HIDDEN, 128)
    return {
        "_target_": "nequip.model.FullNequIPGNNModel",
        "seed": seed,
        "model_dtype": "float32",
        "type_names": types,
        "r_max": R_MAX,
        "irreps_edge_sh": "1x0e+1x1o+1x2e+1x3o",
        "type_embed_num_features": 8 if tiny else 48,
        "feature_irreps_hidden": [hidden] * (layers - 1) + ["8x0e" if tiny else "128x0e"],
        "radial_mlp_depth": [1] * layers,
        "radial_mlp_width": [width] * layers,
        "num_bessels": 8,
        "bessel_trainable": True,
        "polynomial_cutoff_p": 5,
        "per_type_energy_shifts": nequip_checkpoint.per_type_shifts(seed),
        "per_type_energy_shifts_trainable": False,
        "per_type_energy_scales": dict.fromkeys(types, float(energy_scale)),
        "per_type_energy_scales_trainable": True,
        "avg_num_neighbors": 62.012104256525795,
        "pair_potential": {"_target_": "nequip.nn.pair_potential.ZBL", "units": "metal", "chemical_species": types},
    }


if __name__ == "__main__":
    sys.exit(nequip_checkpoint.main(config, sys.argv[1:], __doc__))
