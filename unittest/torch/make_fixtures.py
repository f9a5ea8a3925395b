#!/usr/bin/env python3
"""Write the torch backend's test fixtures into OUT_DIR, with the torch that runs this script.

A `.pt2` runs only with the libtorch that compiled it, so these are made at test time:

  toy_mpnn_L2.{pt2,json,spec.json}     toy model, 2 layers, AOTInductor
  toy_mpnn_L4.{pt2,json,spec.json}     toy model, 4 layers, AOTInductor
  toy_mpnn_L2_ts.{pt,json,spec.json}   toy model, 2 layers, TorchScript
  cuni_fcc.data                        108-atom Cu/Ni fcc crystal, rattled (LAMMPS data file)
  ref_toy_mpnn_L2.json, ref_toy_mpnn_L4.json   eager references on it (reference.py)
  fixtures.json                        what is where, and the seconds each step took

Elements Cu Ni (type 1 Cu, type 2 Ni: `pair_coeff * * toy_mpnn_L2.json Cu Ni`), cutoff 4.5,
units metal. The spec is nvalchemi's own SPEC_MPNN_HALO, as its `save()` writes it.

  make_fixtures.py OUT_DIR [--force] [--only NAME ...] [--python PYTHON]

OUT_DIR is left as it is when its fixtures.json was written from the same sources (this folder,
tools/distspec_export) and the same torch and nvalchemi; --force writes them anyway.

Started by another Python, it re-runs itself in the environment DISTSPEC_PYTHON (or --python)
names (in_env.py).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1] / "tools"))

import in_env  # noqa: E402

ELEMENTS = ["Cu", "Ni"]
CUTOFF = 4.5
UNITS = "metal"
DATA = "cuni_fcc.data"
MODELS = {  # name: (layers, format)
    "toy_mpnn_L2": (2, "aoti"),
    "toy_mpnn_L4": (4, "aoti"),
    "toy_mpnn_L2_ts": (2, "torchscript"),
}


def crystal():
    """3x3x3 fcc cells at Cu/Ni's mean lattice constant, half Cu half Ni at random, rattled 0.1 A."""
    import periodic  # noqa: PLC0415

    return periodic.fcc(3.565, (3, 3, 3), n_types=2, masses={1: 63.546, 2: 58.6934}, rattle=0.1, seed=2026)


def sources_hash(torch_version: str, nvalchemi_version: str) -> str:
    """What the fixtures are made from: the sources that make them and the library versions."""
    h = hashlib.sha256(f"{torch_version} {nvalchemi_version}".encode())
    files = sorted(HERE.glob("*.py")) + sorted((HERE.parents[1] / "tools" / "distspec_export").glob("*.py"))
    for f in files:
        h.update(f.name.encode() + b"\0" + f.read_bytes())
    return h.hexdigest()


def up_to_date(out: Path, digest: str) -> bool:
    try:
        manifest = json.loads((out / "fixtures.json").read_text())
    except (OSError, ValueError):
        return False
    names = [DATA] + [m[k] for m in manifest.get("models", {}).values() for k in ("model_file", "graph", "reference")]
    return manifest.get("sources") == digest and set(manifest.get("models", {})) == set(MODELS) \
        and all((out / n).is_file() for n in names)


def main(argv: list[str] | None = None) -> int:
    argv = in_env.ensure(sys.argv[1:] if argv is None else argv, "make_fixtures.py")
    import torch  # noqa: PLC0415

    import periodic  # noqa: PLC0415
    import reference  # noqa: PLC0415
    import toy_mpnn  # noqa: PLC0415

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out_dir")
    p.add_argument("--only", nargs="+", choices=list(MODELS), help="export only these models")
    p.add_argument("--force", action="store_true", help="write the fixtures even when they are up to date")
    args = p.parse_args(argv)
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)

    import nvalchemi  # noqa: PLC0415
    from distspec_export import export  # noqa: PLC0415

    digest = sources_hash(torch.__version__, getattr(nvalchemi, "__version__", "?"))
    if not args.force and not args.only and up_to_date(out, digest):
        print(f"fixtures in {out} are up to date (same sources, torch {torch.__version__}); --force remakes them")
        return 0
    from nvalchemi.distributed.spec import SPEC_MPNN_HALO  # noqa: PLC0415

    t_all = time.perf_counter()
    seconds: dict[str, dict[str, float] | float] = {}
    manifest: dict = {"elements": ELEMENTS, "cutoff": CUTOFF, "units": UNITS, "data": DATA,
                      "torch_version": torch.__version__, "sources": digest if not args.only else "", "models": {}}
    for name, (layers, fmt) in MODELS.items():
        if args.only and name not in args.only:
            continue
        model = toy_mpnn.build(layers=layers, n_species=len(ELEMENTS), cutoff=CUTOFF)
        result = export(model, SPEC_MPNN_HALO, ELEMENTS, CUTOFF, UNITS, out, name, format=fmt,
                        description=f"TEST model with random weights: toy_mpnn ({layers} layers, 12 features) "
                                    "on a Morse baseline. It predicts nothing.",
                        source=f"unittest/torch/toy_mpnn.py build(layers={layers}, seed=0)", license="CC0-1.0",
                        quick_compile=True, log=lambda line: None)
        seconds[name] = {k: round(v, 2) for k, v in result.seconds.items()}
        manifest["models"][name] = {"model_file": result.model_file.name, "graph": result.graph_file.name,
                                    "format": fmt, "layers": layers, "reference": f"ref_toy_mpnn_L{layers}.json",
                                    "halo_sites": result.halo_sites, "comm_width": result.comm_width,
                                    "export_check": result.deviations}
        print(f"{name}: {result.graph_file.name} ({', '.join(f'{k} {v:.1f} s' for k, v in result.seconds.items())}); "
              f"eager check: energies {result.deviations['atomic_energies']:.1e}, "
              f"forces {result.deviations['forces']:.1e}", flush=True)

    t0 = time.perf_counter()
    periodic.write_data(crystal(), out / DATA, "TEST crystal: 108 Cu/Ni atoms, fcc 3x3x3, rattled (make_fixtures.py)")
    for layers in sorted({layers for layers, _ in MODELS.values()}):
        ref = reference.reference(out / DATA, ELEMENTS, layers, cutoff=CUTOFF)
        (out / f"ref_toy_mpnn_L{layers}.json").write_text(json.dumps(ref, indent=1) + "\n")
        print(f"ref_toy_mpnn_L{layers}.json: energy {ref['energy']:.10f} eV, {ref['n_atoms']} atoms, "
              f"{ref['n_halo']} halo rows, {ref['n_edges']} edges ({ref['ops']})", flush=True)
    seconds["data_and_references"] = round(time.perf_counter() - t0, 2)
    seconds["total"] = round(time.perf_counter() - t_all, 2)
    manifest["seconds"] = seconds
    (out / "fixtures.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"fixtures in {out}: {seconds['total']:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
