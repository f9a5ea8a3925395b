"""A MACE of MACE-MP-0 medium's architecture with random weights, and MACE's own evaluations.

MACE-MP-0's weights are downloaded at run time, which this project cannot do; the architecture
is what sets speed and memory: ScaleShiftMACE, 89 elements, 128x0e + 128x1o hidden features
(L = 1), spherical harmonics to l = 3, correlation 3, 2 interactions (the first a plain, the
second a residual interaction block), 8 Bessel functions, radial MLP [64, 64, 64], r_max 6 A.
Seeded: the export and the references build the same model.

  build()                       the model (fp32), for `distspec-export --module mace_mp0_medium.py:build`
  python mace_mp0_medium.py save FILE
                                the model as mace-torch saves one (torch.save), for its calculator
  python mace_mp0_medium.py ref DUMP OUT [--args JSON]
                                MACE's own evaluation (its neighbour list, images as edge shifts,
                                e3nn, fp64 on the cpu) of the atoms of a forces dump that
                                bench/accelerators/in.forces wrote: energy and every force;
                                JSON: build()'s arguments, as the export was given them
"""

from __future__ import annotations

import json
import os
import sys

os.environ.setdefault("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")  # mace-torch under torch >= 2.6

import numpy as np  # noqa: E402
import torch  # noqa: E402

R_MAX = 6.0
ELEMENTS = list(range(1, 90))  # MACE-MP-0's table: H .. Ac


def build(seed: int = 0, dtype: str = "float32", inter_scale: float = 0.8) -> torch.nn.Module:
    """inter_scale: the scale of the interaction energy, to which forces are proportional. At 0.8
    the random model's largest force on rattled Si is 2.5e-4 eV/A; at 3000 about 1 eV/A, as a
    trained potential's, so that an absolute bound on force differences means what it says."""
    from e3nn import o3  # noqa: PLC0415
    from mace import modules  # noqa: PLC0415

    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    model = modules.ScaleShiftMACE(
        r_max=R_MAX, num_bessel=8, num_polynomial_cutoff=5, max_ell=3,
        interaction_cls=modules.interaction_classes["RealAgnosticResidualInteractionBlock"],
        interaction_cls_first=modules.interaction_classes["RealAgnosticInteractionBlock"],
        num_interactions=2, num_elements=len(ELEMENTS), hidden_irreps=o3.Irreps("128x0e + 128x1o"),
        MLP_irreps=o3.Irreps("16x0e"), gate=torch.nn.functional.silu,
        atomic_energies=-rng.uniform(1.0, 5.0, len(ELEMENTS)), avg_num_neighbors=61.0,
        atomic_numbers=ELEMENTS, correlation=3, radial_type="bessel", radial_MLP=[64, 64, 64],
        atomic_inter_scale=inter_scale, atomic_inter_shift=0.0,
    )
    return model.to(getattr(torch, dtype)).eval()


def reference(dump: str, out: str, args: dict) -> None:
    from mace.calculators import MACECalculator  # noqa: PLC0415

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from ref import atoms_of, write_reference  # noqa: PLC0415

    atoms, ids = atoms_of(dump)
    path = out + ".model"
    torch.save(build(**args).double(), path)
    atoms.calc = MACECalculator(model_paths=path, device="cpu", default_dtype="float64")
    write_reference(atoms, ids, out)


def main(argv: list[str]) -> int:
    if argv[:1] == ["save"] and len(argv) == 2:
        torch.save(build(), argv[1])
        return 0
    if argv[:1] == ["ref"] and len(argv) in (3, 5) and (len(argv) == 3 or argv[3] == "--args"):
        reference(argv[1], argv[2], json.loads(argv[4]) if len(argv) == 5 else {})
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
