"""An Allegro of Allegro-OAM-L's size with random weights, seeded, as a nequip checkpoint.

Allegro-OAM-L's weights are downloaded at run time, which this project cannot do; its size is
that of its published training config (`models/allegro/allegro-OAM-L-0.1/allegro_Omat.yaml` of
the matbench-discovery repository, janosh/matbench-discovery; trained with nequip 0.13.0 and allegro
0.7.1): AllegroModel, 89 elements (H to Bi, Ac to Pu), r_max 7 A,
4 Allegro layers, l_max 3 without parity, 256 scalar and 64 tensor features, path-channel
coupled tensor products, Allegro MLPs 2 x 1024, readout MLP 1 x 128, a two-body Bessel
embedding of 12 trainable Bessel functions (polynomial cutoff p = 8) into 512 features with a
512-wide scalar embedding MLP, avg_num_neighbors 9986 (the config's own value), fp32. It was
trained with cuEquivariance's contracter; nequip-allegro's AOTInductor route takes its own Triton
tensor-product kernel instead (`enable_TritonContracter`, nequip_model_call.py). Here the
per-element energy shifts are random and every per-element scale is `energy_scale`: at 100 the
random model's largest force on 64 rattled Si atoms is about 0.7 eV/A, as a trained potential's
(at 1, 7e-3), so that an absolute bound on force differences means what it says.

config(seed=0, energy_scale=100, tiny=False) is the model config (nequip's `_target_` form);
`python allegro_published.py save OUT.ckpt [--args JSON]` writes its checkpoint (nequip_checkpoint.main).
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nequip_checkpoint  # noqa: E402

R_MAX = 7.0


def config(seed: int = 0, energy_scale: float = 100.0, tiny: bool = False) -> dict:
    """tiny: 1 layer of 8 scalar and 4 tensor features, 16-wide MLPs (the same modules and
    elements, for a dry run of the benchmark on a CPU in seconds)."""
    types = nequip_checkpoint.OAM_TYPES
    size = (dict(num_layers=1, num_scalar_features=8, num_tensor_features=4, allegro_mlp_hidden_layers_width=16,
                 readout_mlp_hidden_layers_width=16, radial_chemical_embed_dim=8, scalar_embed_mlp_hidden_layers_width=16)
            if tiny else
            dict(num_layers=4, num_scalar_features=256, num_tensor_features=64, allegro_mlp_hidden_layers_width=1024,
                 readout_mlp_hidden_layers_width=128, radial_chemical_embed_dim=512,
                 scalar_embed_mlp_hidden_layers_width=512))
    return {
        "_target_": "allegro.model.AllegroModel",
        "seed": seed,
        "model_dtype": "float32",
        "type_names": types,
        "r_max": R_MAX,
        "l_max": 3,
        "parity": False,
        "tp_path_channel_coupling": True,
        "allegro_mlp_hidden_layers_depth": 2,
        "readout_mlp_hidden_layers_depth": 1,
        "radial_chemical_embed": {"_target_": "allegro.nn.TwoBodyBesselScalarEmbed", "num_bessels": 12,
                                  "bessel_trainable": True, "polynomial_cutoff_p": 8},
        "per_type_energy_shifts": nequip_checkpoint.per_type_shifts(seed),
        "per_type_energy_shifts_trainable": False,
        "per_type_energy_scales": dict.fromkeys(types, float(energy_scale)),
        "per_type_energy_scales_trainable": True,
        "avg_num_neighbors": 9986.0,
        **size,
    }


if __name__ == "__main__":
    sys.exit(nequip_checkpoint.main(config, sys.argv[1:], __doc__))
