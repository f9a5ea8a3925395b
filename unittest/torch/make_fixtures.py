#!/usr/bin/env python3
"""Write the torch backend's test fixtures into OUT_DIR, with the torch that runs this script.

A `.pt2` runs only with the libtorch that compiled it, so these are made at test time. The
`toy` set (the default; DISTSPEC_PYTHON's environment):

  toy_mpnn_L2.{pt2,json,spec.json}     toy model, 2 layers, AOTInductor
  toy_mpnn_L4.{pt2,json,spec.json}     toy model, 4 layers, AOTInductor
  toy_mpnn_L2_ts.{pt,json,spec.json}   toy model, 2 layers, TorchScript
  ref_toy_mpnn_L2.json, ref_toy_mpnn_L4.json   eager references (reference.py)
  fixtures.json                        what is where, and the seconds each step took

The `mace` set (`--set mace`; DISTSPEC_PYTHON_MACE's environment, with mace-torch):

  mace_L2.{pt2,json,spec.json}         a 2-interaction MACE with random weights, AOTInductor,
                                       its spec nvalchemi's MACEWrapper.distribution_spec()
  ref_mace_L2.json                     MACE's own periodic evaluation (mace_model.py)
  fixtures_mace.json

Both write cuni_fcc.data, a 108-atom Cu/Ni fcc crystal, rattled (LAMMPS data file, atom style
atomic), and the references are on it. Elements Cu Ni (type 1 Cu, type 2 Ni:
`pair_coeff * * toy_mpnn_L2.json Cu Ni`), cutoff 4.5, units metal. The toy models' spec is
nvalchemi's own SPEC_MPNN_HALO, as its `save()` writes it.

  make_fixtures.py OUT_DIR [--set toy|mace] [--force] [--only NAME ...] [--python PYTHON]

OUT_DIR is left as it is when its fixtures.json was written from the same sources (this folder,
tools/distspec_export) and the same torch and nvalchemi; --force writes them anyway.

Started by another Python, it re-runs itself in the environment DISTSPEC_PYTHON (or --python)
names (in_env.py; `--set mace` reads DISTSPEC_PYTHON_MACE).
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
SETS = {  # set: {name: (layers, format)}
    "toy": {"toy_mpnn_L2": (2, "aoti"), "toy_mpnn_L4": (4, "aoti"), "toy_mpnn_L2_ts": (2, "torchscript")},
    "mace": {"mace_L2": (2, "aoti")},
}
MANIFEST = {"toy": "fixtures.json", "mace": "fixtures_mace.json"}
PYTHON_VAR = {"toy": "DISTSPEC_PYTHON", "mace": "DISTSPEC_PYTHON_MACE"}


def crystal():
    """3x3x3 fcc cells at Cu/Ni's mean lattice constant, half Cu half Ni at random, rattled 0.1 A."""
    import periodic  # noqa: PLC0415

    return periodic.fcc(3.565, (3, 3, 3), n_types=2, masses={1: 63.546, 2: 58.6934}, rattle=0.1, seed=2026)


def sources_hash(versions: str) -> str:
    """What the fixtures are made from: the sources that make them and the library versions."""
    h = hashlib.sha256(versions.encode())
    files = [HERE / f for f in ("make_fixtures.py", "periodic.py", "reference.py", "toy_mpnn.py", "mace_model.py")]
    files += sorted((HERE.parents[1] / "tools" / "distspec_export").glob("*.py"))
    for f in files:
        h.update(f.name.encode() + b"\0" + f.read_bytes())
    return h.hexdigest()


def up_to_date(out: Path, which: str, digest: str) -> bool:
    try:
        manifest = json.loads((out / MANIFEST[which]).read_text())
    except (OSError, ValueError):
        return False
    models = manifest.get("models", {})
    names = [DATA] + [m[k] for m in models.values() for k in ("model_file", "graph", "reference")]
    return manifest.get("sources") == digest and set(models) == set(SETS[which]) \
        and all((out / n).is_file() for n in names)


def toy_models():
    """(name, model, spec, layers, format, description, source) of the toy set."""
    import toy_mpnn  # noqa: PLC0415
    from nvalchemi.distributed.spec import SPEC_MPNN_HALO  # noqa: PLC0415

    for name, (layers, fmt) in SETS["toy"].items():
        yield (name, toy_mpnn.build(layers=layers, n_species=len(ELEMENTS), cutoff=CUTOFF), SPEC_MPNN_HALO, fmt,
               f"TEST model with random weights: toy_mpnn ({layers} layers, 12 features) on a Morse baseline. "
               "It predicts nothing.", f"unittest/torch/toy_mpnn.py build(layers={layers}, seed=0)")


def mace_models():
    import mace_model  # noqa: PLC0415

    for name, (layers, fmt) in SETS["mace"].items():
        yield (name, mace_model.build(r_max=CUTOFF, interactions=layers), None, fmt,
               f"TEST model with random weights: ScaleShiftMACE ({layers} interactions, 8x0e+8x1o). "
               "It predicts nothing.", f"unittest/torch/mace_model.py build(interactions={layers}, seed=0)")


def references(which: str, out: Path) -> list[tuple[str, dict]]:
    """(file name, reference) of each model of the set, on the data file."""
    if which == "toy":
        import reference  # noqa: PLC0415

        return [(f"ref_toy_mpnn_L{layers}.json", reference.reference(out / DATA, ELEMENTS, layers, cutoff=CUTOFF))
                for layers in sorted({layers for layers, _ in SETS["toy"].values()})]
    import mace_model  # noqa: PLC0415
    import periodic  # noqa: PLC0415

    refs = []
    for name, (layers, _) in SETS["mace"].items():
        ref = {"model": {"module": "mace_model.build", "interactions": layers, "r_max": CUTOFF, "seed": 0},
               "data_file": DATA, "type_elements": ELEMENTS, "units": UNITS}
        model = mace_model.build(r_max=CUTOFF, interactions=layers)
        ref.update(mace_model.native(model, periodic.read_data(out / DATA), ELEMENTS))
        refs.append((f"ref_{name}.json", ref))
    return refs


def set_of(argv: list[str]) -> str:
    """The --set argument (before argparse: it decides which environment to run in)."""
    for i, arg in enumerate(argv):
        if arg == "--set" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--set="):
            return arg.split("=", 1)[1]
    return "toy"


def environment(argv: list[str], what: str) -> list[str]:
    """Re-run in the Python environment the set needs (in_env.py); argv without --python."""
    which = set_of(argv)
    need = ("mace",) if which == "mace" else ()
    return in_env.ensure(argv, what, PYTHON_VAR.get(which, "DISTSPEC_PYTHON"), need=need)


def main(argv: list[str] | None = None) -> int:
    argv = environment(sys.argv[1:] if argv is None else argv, "make_fixtures.py")
    import torch  # noqa: PLC0415

    import periodic  # noqa: PLC0415

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out_dir")
    p.add_argument("--set", choices=list(SETS), default="toy", help="which fixtures (default toy)")
    p.add_argument("--only", nargs="+", help="export only these models of the set")
    p.add_argument("--force", action="store_true", help="write the fixtures even when they are up to date")
    args = p.parse_args(argv)
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)

    import nvalchemi  # noqa: PLC0415
    from distspec_export import export  # noqa: PLC0415

    versions = f"{args.set} torch {torch.__version__} nvalchemi {getattr(nvalchemi, '__version__', '?')}"
    if args.set == "mace":
        import mace  # noqa: PLC0415

        versions += f" mace {getattr(mace, '__version__', '?')}"
    digest = sources_hash(versions)
    if not args.force and not args.only and up_to_date(out, args.set, digest):
        print(f"{args.set} fixtures in {out} are up to date ({versions}); --force remakes them")
        return 0

    t_all = time.perf_counter()
    seconds: dict[str, dict[str, float] | float] = {}
    manifest: dict = {"elements": ELEMENTS, "cutoff": CUTOFF, "units": UNITS, "data": DATA, "versions": versions,
                      "sources": digest if not args.only else "", "models": {}}
    for name, model, spec, fmt, description, source in (toy_models() if args.set == "toy" else mace_models()):
        if args.only and name not in args.only:
            continue
        result = export(model, spec, ELEMENTS, CUTOFF, UNITS, out, name, format=fmt, description=description,
                        source=source, license="CC0-1.0", quick_compile=True, log=lambda line: None)
        seconds[name] = {k: round(v, 2) for k, v in result.seconds.items()}
        layers = result.message_passing_layers
        manifest["models"][name] = {"model_file": result.model_file.name, "graph": result.graph_file.name,
                                    "format": fmt, "layers": layers,
                                    "reference": f"ref_toy_mpnn_L{layers}.json" if args.set == "toy"
                                    else f"ref_{name}.json",
                                    "halo_sites": result.halo_sites, "comm_width": result.comm_width,
                                    "export_check": result.deviations}
        print(f"{name}: {result.graph_file.name} ({', '.join(f'{k} {v:.1f} s' for k, v in result.seconds.items())}); "
              f"eager check: energies {result.deviations['atomic_energies']:.1e}, "
              f"forces {result.deviations['forces']:.1e}", flush=True)

    t0 = time.perf_counter()
    # The other set may be reading it: write beside it, then rename.
    periodic.write_data(crystal(), out / (DATA + ".tmp"),
                        "TEST crystal: 108 Cu/Ni atoms, fcc 3x3x3, rattled (make_fixtures.py)")
    (out / (DATA + ".tmp")).replace(out / DATA)
    for file_name, ref in references(args.set, out):
        (out / file_name).write_text(json.dumps(ref, indent=1) + "\n")
        print(f"{file_name}: energy {ref['energy']:.10f} eV, {ref['n_atoms']} atoms, {ref['n_edges']} edges "
              f"({ref['ops']})", flush=True)
    seconds["data_and_references"] = round(time.perf_counter() - t0, 2)
    seconds["total"] = round(time.perf_counter() - t_all, 2)
    manifest["seconds"] = seconds
    (out / MANIFEST[args.set]).write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"{args.set} fixtures in {out}: {seconds['total']:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
