"""A nequip training checkpoint (*.ckpt) of a model config at its seeded initial weights, without
training: what `nequip-train` would write before its first step, and what nequip's own loaders
(`load_saved_model`, `nequip-compile`, `NequIPCalculator._from_saved_model`) and
`distspec-export --from nequip` read.

nequip builds a model from a checkpoint by instantiating the checkpoint's LightningModule from
its saved hyperparameters (the model config) and loading its state dict; the weights written
here are the ones the config's `seed` gives, so every reader gets the same model.

  write(model_config, path)    model_config: a nequip model config (`_target_` and its arguments)
  OAM_TYPES                    the 89 elements of the OAM foundation models (H to Bi, Ac to Pu)
  per_type_shifts(seed)        seeded per-element energy shifts (eV) for a random-weight model, by element
  main(config, argv, doc)      the command line of a model file: `save OUT.ckpt [--args JSON]`
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Callable

TRAINING_MODULE = "nequip.train.NequIPLightningModule"


def write(model_config: dict, path: str | Path) -> Path:
    import lightning  # noqa: PLC0415 (nequip depends on it)
    import torch  # noqa: PLC0415
    from nequip.train import NequIPLightningModule  # noqa: PLC0415
    from nequip.utils import get_current_code_versions  # noqa: PLC0415
    from nequip.utils.global_state import set_global_state  # noqa: PLC0415

    set_global_state()
    info = {
        "versions": get_current_code_versions(verbose=False),
        "training_module": {"_target_": TRAINING_MODULE},
        # No data set: nequip-compile is given a --data-path instead (nequip_model_call.py).
        "data": {},
    }
    module = NequIPLightningModule(model=dict(model_config), num_datasets={"train": 1, "val": 0, "test": 0},
                                   info_dict=info)
    checkpoint = {
        "pytorch-lightning_version": lightning.__version__,
        "epoch": 0,
        "global_step": 0,
        "state_dict": module.state_dict(),
        "hyper_parameters": dict(module.hparams),
    }
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(checkpoint, path)
    return path


def _oam_types() -> list[str]:
    from ase.data import chemical_symbols  # noqa: PLC0415 (nequip depends on ase)

    # The OAM models' `chemical_symbols`: Z 1-83 and 89-94 (no Po to Ra).
    return [chemical_symbols[z] for z in (*range(1, 84), *range(89, 95))]


OAM_TYPES = _oam_types()


def per_type_shifts(seed: int) -> dict[str, float]:
    """Per-element energy shifts in the range of the OAM models' isolated-atom energies (-9.6 to
    0 eV): they move energies, not forces, so random ones serve."""
    import numpy as np  # noqa: PLC0415

    return dict(zip(OAM_TYPES, (-np.random.default_rng(seed).uniform(0.0, 5.0, len(OAM_TYPES))).tolist()))


SAVE_USAGE = """save OUT.ckpt [--args JSON]: the checkpoint `distspec-export --from nequip OUT.ckpt`,
`nequip-compile` and nequip's calculator read; JSON: config()'s arguments"""


def main(config: Callable[..., dict], argv: list[str], doc: str) -> int:
    """`save OUT.ckpt [--args JSON]`: the checkpoint of config(**JSON); else the usage (`doc`, then
    SAVE_USAGE)."""
    if argv[:1] == ["save"] and len(argv) in (2, 4) and (len(argv) == 2 or argv[2] == "--args"):
        kwargs = json.loads(argv[3]) if len(argv) == 4 else {}
        print(f"wrote {write(config(**kwargs), argv[1])}")
        return 0
    print(doc + "\n" + SAVE_USAGE, file=sys.stderr)
    return 2
