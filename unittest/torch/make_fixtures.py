#!/usr/bin/env python3
"""Write the torch backend's test fixtures into OUT_DIR, with the torch that runs this script.

A `.pt2` runs only with the libtorch that compiled it, so these are made at test time. The
`toy` set (the default; DISTSPEC_PYTHON's environment):

  toy_mpnn_L2.{pt2,json,spec.json}     toy model, 2 layers, AOTInductor
  toy_mpnn_L4.{pt2,json,spec.json}     toy model, 4 layers, AOTInductor
  toy_mpnn_L2_ts.{pt,json,spec.json}   toy model, 2 layers, TorchScript
  ref_toy_mpnn_L2.json, ref_toy_mpnn_L4.json   eager references (reference.py)
  oeq_call.pt                          a TorchScript graph calling OpenEquivariance's
                                       jit_conv_forward, for the plugin's refusal where the
                                       accelerator's library is missing (accelerated_call())
  toy_mpnn_L2_no_virial.pt             the L2 toy traced from a forward without edge_shift: a
                                       graph that gives no per-atom virial
                                       (without_atomic_virials())
  fixtures.json                        what is where, and the seconds each step took

The `mace` set (`--set mace`; DISTSPEC_PYTHON_MACE's environment, with mace-torch):

  mace_L2.{pt2,json,spec.json}         a 2-interaction MACE with random weights, AOTInductor,
                                       its spec nvalchemi's MACEWrapper.distribution_spec()
  ref_mace_L2.json                     MACE's own periodic evaluation (mace_model.py)
  mace_heads_L2.model                  a 2-head MACE (heads pbe, mp) saved by torch.save, as
                                       mace_run_train saves its models
  mace_heads_L2.{pt,json,spec.json}    exported from it by `distspec-export --from mace
                                       mace_heads_L2.model --head mp` (TorchScript)
  ref_mace_heads_L2.json               MACE's own evaluation of head mp
  mace_fp64_L2.model                   a 2-interaction MACE built in fp64 and trained a few Adam steps on
                                       EMT Cu/Ni cells (mace_model.trained_fp64), saved by torch.save;
  mace_fp64_L2.{pt,json,spec.json}     exported from it by `distspec-export --from mace
                                       mace_fp64_L2.model` (fp64, TorchScript)
  ref_mace_fp64_L2.json                mace's own MACECalculator on the saved file, fp64
  fixtures_mace.json

The `twin` set (`--set twin`; DISTSPEC_PYTHON's environment): the built-in `mpnn` of
potentials/cu_mpnn_L2.json rewritten in PyTorch (native_mpnn.py), which LAMMPS runs beside the
native model on the same deck (no reference file: each backend is the other's):

  native_mpnn_L2.{pt2,json,spec.json}     AOTInductor, elements/cutoff/units of the native file
  native_mpnn_L2_ts.{pt,json,spec.json}   TorchScript
  fixtures_twin.json                      as above; each model's "native" is its native file

The `aimnet` set (`--set aimnet`; DISTSPEC_PYTHON's environment, with aimnet):

  aimnet_P3.{pt2,json,spec.json}       a 3-pass AIMNet2 with random weights, fp64, AOTInductor,
                                       its spec nvalchemi's AIMNet2 halo spec, atomic numbers sharded
  aimnet_P3_ts.{pt,json,spec.json}     the same model as TorchScript, which runs on either device
                                       (the GPU machine's kk_gpu cases run it from here)
  ref_aimnet_P3.json, ref_aimnet_P3_ts.json   AIMNet2's own periodic evaluation (aimnet_model.py)
  molecules.data                       108 atoms of 27 small H/C/N/O molecules in a 9.9 A box
  fixtures_aimnet.json                 elements H C N O, cutoff 4.0, units metal

The `sevennet` set (`--set sevennet`; DISTSPEC_PYTHON_SEVENN's environment, with sevenn, GPL-3.0:
made at test time, never committed):

  7net0.{pt2,json,spec.json}           SevenNet-0 (sevenn's '7net-0'), fp32, AOTInductor, the elements
                                       of all four structures; its spec the sevennet kind's own
  si_diamond.data, cu_fcc.data, nacl_triclinic.data, basrtio3.data
                                       small crystals, rattled (sevennet_model.py), types = own elements
  ref_7net0_<structure>.json           SevenNet's own SevenNetCalculator on each
  7net_l3i5.{pt,json,spec.json}        `distspec-export --from sevennet 7net-l3i5` (TorchScript, fp32, the
                                       model's own 89 elements), ref_7net_l3i5_si_diamond.json
  7net_mf0_pbe.{pt,json,spec.json}     `distspec-export --from sevennet CHECKPOINT --modal PBE` on the file
                                       of 7net-mf-0 (multi-fidelity), ref_7net_mf0_pbe_si_diamond.json
                                       SevenNetCalculator('7net-mf-0', modal='PBE')
  7net0_serial.{pt,json,spec.json}     SevenNet-0 as SevenNet deploys it for its own serial pair
                                       style (sevenn_get_model), run by the plugin on one rank
  fixtures_sevennet.json               "structures": data file, type elements, reference of each

The `fastmace` set (`--set fastmace`; DISTSPEC_PYTHON_MACE's environment): a MACE as a user trains
one (mace_trained.py: mace_run_train on EMT Cu/Ni cells, fp64), exported by `distspec-export --from
mace` with its defaults, the fast MACE forward (doc/mace_kernels.md):

  mace_trained_train/mace_trained.model   the file mace_run_train saved (its training folder beside)
  mace_trained.{pt,json,spec.json}     exported from it (TorchScript)
  mace_trained_aoti.{pt2,json,spec.json}   exported from it as AOTInductor (the default format): the
                                       distspec_mace ops run through the package's proxy executor,
                                       which finds them by name when the plugin loads the package
  ref_mace_trained.json, ref_mace_trained_aoti.json   mace's own MACECalculator on the saved file,
                                       fp64 (one evaluation, written for each model)
  fixtures_fastmace.json

The `nequip` set (`--set nequip`; DISTSPEC_PYTHON_NEQUIP's environment, with nequip and
nequip-allegro):

  nequip_L3.{pt,json,spec.json}        a 3-layer NequIP with random weights, built with nequip's API
                                       (nequip_model.py), TorchScript
  nequip_allegro.{pt,json,spec.json}   a 2-layer Allegro (strictly local), likewise
  nequip_tiny.nequip.zip               a NequIP nequip-train trained (nequip_tiny.yaml) and nequip-package
                                       packaged; nequip_packaged.{pt,json,spec.json} exported from it by
                                       `distspec-export --from nequip nequip_tiny.nequip.zip`
  ref_nequip_L3.json, ref_nequip_allegro.json, ref_nequip_packaged.json   nequip's own evaluation
  fixtures_nequip.json

The other sets write cuni_fcc.data, a 108-atom Cu/Ni fcc crystal, rattled (LAMMPS data file, atom style
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
    "mace": {"mace_L2": (2, "aoti"), "mace_heads_L2": (2, "torchscript"), "mace_fp64_L2": (2, "torchscript")},
    "twin": {"native_mpnn_L2": (2, "aoti"), "native_mpnn_L2_ts": (2, "torchscript")},
    "aimnet": {"aimnet_P3": (3, "aoti"), "aimnet_P3_ts": (3, "torchscript")},
    "sevennet": {"7net0": (5, "aoti"), "7net_l3i5": (5, "torchscript"), "7net_mf0_pbe": (5, "torchscript")},
    "nequip": {"nequip_L3": (3, "torchscript"), "nequip_allegro": (1, "torchscript")},
    "fastmace": {"mace_trained": (2, "torchscript"), "mace_trained_aoti": (2, "aoti")},
}
MANIFEST = {"toy": "fixtures.json", "mace": "fixtures_mace.json", "twin": "fixtures_twin.json",
            "aimnet": "fixtures_aimnet.json", "sevennet": "fixtures_sevennet.json", "nequip": "fixtures_nequip.json",
            "fastmace": "fixtures_fastmace.json"}
PYTHON_VAR = {"toy": "DISTSPEC_PYTHON", "mace": "DISTSPEC_PYTHON_MACE", "twin": "DISTSPEC_PYTHON",
              "aimnet": "DISTSPEC_PYTHON", "sevennet": "DISTSPEC_PYTHON_SEVENN", "nequip": "DISTSPEC_PYTHON_NEQUIP",
              "fastmace": "DISTSPEC_PYTHON_MACE"}
# The nequip set's model that nequip itself trained and packaged (not in SETS: its elements are
# Cu alone, run with both types of the Cu/Ni data file as Cu).
NEQUIP_PACKAGED = {"name": "nequip_packaged", "config": "nequip_tiny.yaml", "package": "nequip_tiny.nequip.zip",
                   "type_elements": ["Cu", "Cu"]}
NATIVE = {2: "potentials/cu_mpnn_L2.json"}  # the twin set's native model files, by layers (repository paths)
REPO = HERE.parents[1]
# The aimnet set's; its graph's neighbour matrix (96 wide) holds neighbour lists up to cutoff + 1.0.
AIMNET = {"elements": ["H", "C", "N", "O"], "cutoff": 4.0, "data": "molecules.data", "max_skin": 1.0}
# Exported by the documented command, `distspec-export --from KIND SOURCE ...`: name -> (kind,
# source, the arguments after it); a mace source is the file the set's model is saved to, a
# sevennet one a pretrained name or a checkpoint file (None: the file of SEVENNET_CHECKPOINT).
MACE_HEADS = {"heads": ["pbe", "mp"], "head": "mp"}
# The MACE trained and saved in fp64 (mace_model.trained_fp64); its reference is mace's own
# calculator on the saved file, so a weight the export rounds shows (cases/mace_fp64_L2.json).
MACE_FP64 = "mace_fp64_L2"
SEVENNET_CHECKPOINT = "7net-mf-0"  # its checkpoint file, as a user's fine-tuned one is given
SEVENNET_MODAL = "PBE"
# The mace set's command lines keep mace's module traced whole (--accelerate none), held to 1e-12 by
# their cases; the fastmace set's model takes the default, the fast MACE forward.
COMMAND_LINE = {
    "mace_heads_L2": ("mace", "mace_heads_L2.model", ["--head", MACE_HEADS["head"], "--elements", *ELEMENTS,
                                                      "--accelerate", "none"]),
    "mace_fp64_L2": ("mace", "mace_fp64_L2.model", ["--elements", *ELEMENTS, "--accelerate", "none"]),
    "mace_trained": ("mace", "mace_trained.model", ["--elements", *ELEMENTS]),
    "mace_trained_aoti": ("mace", "mace_trained.model", ["--elements", *ELEMENTS]),
    "7net_l3i5": ("sevennet", "7net-l3i5", ["--precision", "fp32"]),
    "7net_mf0_pbe": ("sevennet", None, ["--modal", SEVENNET_MODAL, "--precision", "fp32", "--elements", "Si"]),
}
# The sevennet models of COMMAND_LINE: their SevenNetCalculator arguments, and the one structure
# they are checked on.
FASTMACE_TRAINING = "mace_trained_train"  # the fastmace set's training folder in OUT_DIR
SEVENNET_REFERENCE = {"7net_l3i5": ("7net-l3i5", None), "7net_mf0_pbe": ("7net-mf-0", SEVENNET_MODAL)}
SEVENNET_EXTRA_STRUCTURE = "si_diamond"
SEVENNET = {"cutoff": 5.0, "precision": "fp32", "license": "GPL-3.0-only (sevenn 0.13.0, SevenNet-0)"}


def crystal():
    """3x3x3 fcc cells at Cu/Ni's mean lattice constant, half Cu half Ni at random, rattled 0.1 A."""
    import periodic  # noqa: PLC0415

    return periodic.fcc(3.565, (3, 3, 3), n_types=2, masses={1: 63.546, 2: 58.6934}, rattle=0.1, seed=2026)


def sources_hash(versions: str) -> str:
    """What the fixtures are made from: the sources that make them and the library versions."""
    h = hashlib.sha256(versions.encode())
    files = [HERE / f for f in ("make_fixtures.py", "periodic.py", "reference.py", "toy_mpnn.py", "mace_model.py",
                                "mace_trained.py",
                                "native_mpnn.py", "aimnet_model.py", "sevennet_model.py", "nequip_model.py",
                                "nequip_tiny.yaml")]
    files += [REPO / f for f in NATIVE.values()]
    exporter = HERE.parents[1] / "tools" / "distspec_export"
    files += sorted(exporter.rglob("*.py"))
    for f in files:
        name = f.relative_to(exporter) if f.is_relative_to(exporter) else Path(f.name)
        h.update(str(name).encode() + b"\0" + f.read_bytes())
    return h.hexdigest()


def up_to_date(out: Path, which: str, digest: str) -> bool:
    try:
        manifest = json.loads((out / MANIFEST[which]).read_text())
    except (OSError, ValueError):
        return False
    models = manifest.get("models", {})
    names = [manifest["data"]] if "data" in manifest else []  # the sevennet set has one per structure
    names += [m[k] for m in models.values() for k in ("model_file", "graph", "reference") if k in m]
    names += [s[k] for s in manifest.get("structures", {}).values() for k in ("data", "reference")]
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


def mace_build(name: str, layers: int):
    import mace_model  # noqa: PLC0415

    if name == MACE_FP64:
        return mace_model.trained_fp64(r_max=CUTOFF, interactions=layers)
    heads = MACE_HEADS["heads"] if name in COMMAND_LINE else None
    return mace_model.build(r_max=CUTOFF, interactions=layers, heads=heads)


def mace_models():
    for name, (layers, fmt) in SETS["mace"].items():
        yield (name, mace_build(name, layers), None, fmt,
               f"TEST model with random weights: ScaleShiftMACE ({layers} interactions, 8x0e+8x1o). "
               "It predicts nothing.", f"unittest/torch/mace_model.py build(interactions={layers}, seed=0)")


def sevennet_checkpoint_file(name: str) -> str:
    """The checkpoint file sevenn keeps for a pretrained name."""
    from sevenn.util import pretrained_name_to_path  # noqa: PLC0415

    return str(pretrained_name_to_path(name))


def export_from_command_line(out: Path, name: str, model, fmt: str):
    """Exported by the documented command, `distspec-export --from KIND SOURCE ...`: a MACE model
    saved first as its package saves it (torch.save, as mace_run_train does), a SevenNet one by
    its pretrained name or its checkpoint file. The ExportResult and the command's arguments."""
    import torch  # noqa: PLC0415

    from distspec_export import cli  # noqa: PLC0415

    kind, source, extra = COMMAND_LINE[name]
    if kind == "mace" and isinstance(model, Path):  # the file mace's trainer saved
        source = str(model)
    elif kind == "mace":
        torch.save(model, out / source)
        source = str(out / source)
    elif source is None:
        source = sevennet_checkpoint_file(SEVENNET_CHECKPOINT)
    argv = ["--from", kind, source, *extra, "--format", fmt, "--out", str(out), "--name", name, "--quick-compile"]
    if kind == "mace":
        argv += ["--license", "CC0-1.0"]
    return cli.export_from_args(cli.parse_args(argv), log=lambda line: None), argv


def fastmace_models(out: Path):
    """The MACE mace_run_train trains here (mace_trained.py), as the file it saved, once for
    every format the set exports it in."""
    import mace_trained  # noqa: PLC0415

    model_file = mace_trained.train(out / FASTMACE_TRAINING)
    for name, (_, fmt) in SETS["fastmace"].items():
        yield name, model_file, None, fmt, None, None


def twin_models():
    """The native mpnn's twin, with the native model file's elements, cutoff and units."""
    import native_mpnn  # noqa: PLC0415

    for name, (layers, fmt) in SETS["twin"].items():
        native = REPO / NATIVE[layers]
        model = native_mpnn.build(str(native))
        yield (name, model, str(native.parent / json.loads(native.read_text())["spec"]), fmt,
               f"TEST model: the built-in mpnn of {NATIVE[layers]} rewritten in PyTorch. It predicts nothing.",
               f"unittest/torch/native_mpnn.py build('{NATIVE[layers]}')")


def aimnet_models():
    import aimnet_model  # noqa: PLC0415

    for name, (passes, fmt) in SETS["aimnet"].items():
        yield (name, aimnet_model.build(rc=AIMNET["cutoff"], passes=passes), None, fmt,
               f"TEST model with random weights: AIMNet2 ({passes} passes, 8 features x 8 shifts). "
               "It predicts nothing.", f"unittest/torch/aimnet_model.py build(passes={passes}, seed=0)")


def sevennet_models():
    from distspec_export import sevennet  # noqa: PLC0415

    for name, (blocks, fmt) in SETS["sevennet"].items():
        if name in COMMAND_LINE:  # loaded by the command line itself
            yield name, None, None, fmt, None, None
            continue
        yield (name, sevennet.checkpoint("7net-0"), None, fmt,
               f"SevenNet-0 (11Jul2024, {blocks} interaction blocks), exported for the tests",
               "sevenn 0.13.0 (PyPI), sevenn.util.load_checkpoint('7net-0')")


def nequip_models():
    import nequip_model  # noqa: PLC0415

    for name, (layers, fmt) in SETS["nequip"].items():
        allegro = name.endswith("allegro")
        yield (name, nequip_model.build(r_max=CUTOFF, layers=layers, allegro=allegro), None, fmt,
               f"TEST model with random weights: {'Allegro (2 layers)' if allegro else f'NequIP ({layers} layers)'}, "
               "built with nequip's API. It predicts nothing.",
               f"unittest/torch/nequip_model.py build(layers={layers}, allegro={allegro}, seed=0)")


def nequip_packaged(out: Path) -> dict:
    """A NequIP as its users get one: trained by nequip-train (two epochs of nequip's EMT copper),
    packaged by nequip-package, exported by `distspec-export --from nequip PACKAGE`."""
    import subprocess  # noqa: PLC0415

    from distspec_export import cli  # noqa: PLC0415

    bin_dir = Path(sys.executable).parent
    train = out / "nequip_train"
    subprocess.run([str(bin_dir / "nequip-train"), "-cp", str(HERE), "-cn", Path(NEQUIP_PACKAGED["config"]).stem,
                    f"hydra.run.dir={train}"], check=True, capture_output=True, text=True)
    package = out / NEQUIP_PACKAGED["package"]
    subprocess.run([str(bin_dir / "nequip-package"), "build", str(train / "last.ckpt"), str(package)], check=True,
                   capture_output=True, text=True)
    name = NEQUIP_PACKAGED["name"]
    argv = ["--from", "nequip", str(package), "--format", "torchscript", "--out", str(out), "--name", name,
            "--license", "CC0-1.0"]
    result = cli.export_from_args(cli.parse_args(argv), log=lambda line: None)
    return {"model_file": result.model_file.name, "graph": result.graph_file.name, "package": package.name,
            "command": ["distspec-export", *argv], "layers": result.message_passing_layers,
            "type_elements": NEQUIP_PACKAGED["type_elements"], "reference": f"ref_{name}.json",
            "export_check": result.deviations}


def sevennet_serial(out: Path, elements: list[str]) -> dict:
    """SevenNet-0 as SevenNet deploys it for its own serial pair style (`sevenn_get_model 7net-0`),
    with its model file (distspec-export --deployed): {"model_file", "graph"}."""
    from distspec_export import sevennet  # noqa: PLC0415
    from sevenn.scripts.deploy import deploy  # noqa: PLC0415

    deployed = out / "7net0_deployed_serial.pt"
    deploy("7net-0", str(deployed))
    model_file = sevennet.write_deployed(deployed, elements, SEVENNET["cutoff"], UNITS, out, "7net0_serial",
                                        license=SEVENNET["license"])
    deployed.unlink()
    return {"model_file": model_file.name, "graph": "7net0_serial.pt"}


def sevennet_structures() -> dict[str, dict]:
    """The sevennet set's structures, as its manifest lists them: data file, type elements, reference."""
    import sevennet_model  # noqa: PLC0415

    model = next(iter(SETS["sevennet"]))
    return {name: {"data": f"{name}.data", "type_elements": elements, "reference": f"ref_{model}_{name}.json"}
            for name, (elements, _, _) in sevennet_model.STRUCTURES.items()}


def references(which: str, out: Path) -> list[tuple[str, dict]]:
    """(file name, reference) of each model of the set, on the data file."""
    if which == "twin":
        return []
    if which == "sevennet":
        import periodic  # noqa: PLC0415
        import sevennet_model  # noqa: PLC0415

        refs = []
        for s in sevennet_structures().values():
            system = periodic.read_data(out / s["data"])
            ref = {"model": "sevennet 7net-0", "data_file": s["data"], "type_elements": s["type_elements"],
                   "units": UNITS, "n_edges": int(periodic.rows(system, SEVENNET["cutoff"], SEVENNET["cutoff"])
                                                   .edge_index.shape[1])}
            ref.update(sevennet_model.native(system, s["type_elements"]))
            refs.append((s["reference"], ref))
        s = sevennet_structures()[SEVENNET_EXTRA_STRUCTURE]
        system = periodic.read_data(out / s["data"])
        for name, (model, modal) in SEVENNET_REFERENCE.items():
            ref = {"model": f"sevennet {model}" + (f" modal {modal}" if modal else ""), "data_file": s["data"],
                   "type_elements": s["type_elements"], "units": UNITS,
                   "n_edges": int(periodic.rows(system, SEVENNET["cutoff"], SEVENNET["cutoff"]).edge_index.shape[1])}
            ref.update(sevennet_model.native(system, s["type_elements"], model, modal))
            refs.append((f"ref_{name}_{SEVENNET_EXTRA_STRUCTURE}.json", ref))
        return refs
    if which == "aimnet":
        import aimnet_model  # noqa: PLC0415
        import periodic  # noqa: PLC0415

        refs = []
        for name, (passes, _) in SETS["aimnet"].items():
            ref = {"model": {"module": "aimnet_model.build", "passes": passes, "rc": AIMNET["cutoff"], "seed": 0},
                   "data_file": AIMNET["data"], "type_elements": AIMNET["elements"], "units": UNITS}
            model = aimnet_model.build(rc=AIMNET["cutoff"], passes=passes)
            ref.update(aimnet_model.native(model, periodic.read_data(out / AIMNET["data"]), AIMNET["elements"],
                                           AIMNET["cutoff"]))
            refs.append((f"ref_{name}.json", ref))
        return refs
    if which == "nequip":
        import nequip_model  # noqa: PLC0415
        import periodic  # noqa: PLC0415

        from distspec_export import nequip  # noqa: PLC0415

        system = periodic.read_data(out / DATA)
        refs = []
        for name, (layers, _) in SETS["nequip"].items():
            allegro = name.endswith("allegro")
            ref = {"model": {"module": "nequip_model.build", "layers": layers, "allegro": allegro, "r_max": CUTOFF,
                             "seed": 0}, "data_file": DATA, "type_elements": ELEMENTS, "units": UNITS}
            ref.update(nequip_model.native(nequip_model.build(r_max=CUTOFF, layers=layers, allegro=allegro), system,
                                           ELEMENTS))
            refs.append((f"ref_{name}.json", ref))
        packaged = nequip.load(str(out / NEQUIP_PACKAGED["package"]))  # as nequip loads it, forces on
        ref = {"model": f"nequip package {NEQUIP_PACKAGED['package']}", "data_file": DATA,
               "type_elements": NEQUIP_PACKAGED["type_elements"], "units": UNITS}
        ref.update(nequip_model.native(packaged, system, NEQUIP_PACKAGED["type_elements"]))
        refs.append((f"ref_{NEQUIP_PACKAGED['name']}.json", ref))
        return refs
    if which == "fastmace":
        import mace_model  # noqa: PLC0415
        import periodic  # noqa: PLC0415

        system = periodic.read_data(out / DATA)
        model_file = out / FASTMACE_TRAINING / "mace_trained.model"
        ref = {"model": f"mace_run_train's {model_file.relative_to(out)}", "data_file": DATA,
               "type_elements": ELEMENTS, "units": UNITS,
               "n_edges": int(periodic.rows(system, CUTOFF, CUTOFF).edge_index.shape[1])}
        ref.update(mace_model.calculator(str(model_file), system, ELEMENTS))
        return [(f"ref_{name}.json", ref) for name in SETS["fastmace"]]
    if which == "toy":
        import reference  # noqa: PLC0415

        return [(f"ref_toy_mpnn_L{layers}.json", reference.reference(out / DATA, ELEMENTS, layers, cutoff=CUTOFF))
                for layers in sorted({layers for layers, _ in SETS["toy"].values()})]
    import mace_model  # noqa: PLC0415
    import periodic  # noqa: PLC0415

    refs = []
    for name, (layers, _) in SETS["mace"].items():
        if name == MACE_FP64:  # the file as saved, through mace's own calculator
            model_file = COMMAND_LINE[name][1]
            system = periodic.read_data(out / DATA)
            ref = {"model": f"mace_model.trained_fp64(interactions={layers}) saved as {model_file}", "data_file": DATA,
                   "type_elements": ELEMENTS, "units": UNITS,
                   "n_edges": int(periodic.rows(system, CUTOFF, CUTOFF).edge_index.shape[1])}
            ref.update(mace_model.calculator(str(out / model_file), system, ELEMENTS))
            refs.append((f"ref_{name}.json", ref))
            continue
        ref = {"model": {"module": "mace_model.build", "interactions": layers, "r_max": CUTOFF, "seed": 0},
               "data_file": DATA, "type_elements": ELEMENTS, "units": UNITS}
        model = mace_build(name, layers)
        head = None
        if name in COMMAND_LINE:  # the head the command line chose, by its index in MACE's own model
            ref["model"].update(heads=MACE_HEADS["heads"], head=MACE_HEADS["head"])
            head = MACE_HEADS["heads"].index(MACE_HEADS["head"])
        ref.update(mace_model.native(model, periodic.read_data(out / DATA), ELEMENTS, head=head))
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
    need = {"mace": ("mace",), "fastmace": ("mace",), "sevennet": ("sevenn",),
            "nequip": ("nequip", "allegro")}.get(which, ())
    return in_env.ensure(argv, what, PYTHON_VAR.get(which, "DISTSPEC_PYTHON"), need=need)


OEQ_CONV_FORWARD = ("jit_conv_forward(Tensor json_bytes, int hash, Tensor L1_in, Tensor L2_in, Tensor W, "
                    "int L3_dim, Tensor rows, Tensor cols, Tensor workspace, Tensor transpose_perm) -> Tensor")
OEQ_CONV_BACKWARD = ("jit_conv_backward(Tensor json_bytes, int hash, Tensor L1_in, Tensor L2_in, Tensor W, "
                     "Tensor L3_grad, Tensor rows, Tensor cols, Tensor workspace, Tensor transpose_perm) "
                     "-> (Tensor, Tensor, Tensor)")


def define_oeq_schemas() -> None:
    """OpenEquivariance's conv ops by their exact schemas, with a stand-in kernel, where the
    real library is not loaded (OpenEquivariance runs on CUDA only): for scripting a graph that
    calls them, and for nvalchemi, which resolves a spec's ops when it reads the spec."""
    import torch  # noqa: PLC0415

    if hasattr(torch.ops.libtorch_tp_jit, "jit_conv_forward"):
        return
    lib = torch.library.Library("libtorch_tp_jit", "FRAGMENT")
    lib.define(OEQ_CONV_FORWARD)
    lib.define(OEQ_CONV_BACKWARD)
    lib.impl("jit_conv_forward", lambda *a: a[2].clone(), "CompositeExplicitAutograd")
    lib.impl("jit_conv_backward", lambda *a: (a[2].clone(), a[3].clone(), a[4].clone()), "CompositeExplicitAutograd")
    define_oeq_schemas.library = lib  # the registrations live as long as the library object


def accelerated_call(path: Path) -> None:
    """A graph that calls OpenEquivariance's fused convolution, with the op's exact schema.

    OpenEquivariance runs on CUDA only, so here the op is defined with a stand-in kernel for
    scripting alone; pair_style distspec then loads a graph that names an accelerator op its
    process lacks, which it must refuse at pair_coeff, naming the op, the accelerator and how to
    build with it (test_torch_lammps.cpp). Nothing ever runs the kernel.
    """
    import torch  # noqa: PLC0415

    define_oeq_schemas()

    class Conv(torch.nn.Module):
        def forward(self, positions, species, edge_index, n_owned, send_index, recv_dest, recv_real):
            x = torch.ops.libtorch_tp_jit.jit_conv_forward(torch.zeros(1, dtype=torch.uint8), 0, positions, positions,
                                                          positions, 3, edge_index[1], edge_index[0],
                                                          torch.zeros(1), torch.zeros(1))
            return x.sum(-1)

    torch.jit.script(Conv()).save(str(path))


def without_atomic_virials(path: Path) -> None:
    """The toy L2 model exported as TorchScript from a module whose forward takes no edge_shift,
    as a user's plain module may: its graph gives no per-atom virial, so `compute stress/atom`
    must stop on it (cases/toy_mpnn_errors.json) rather than make one from absolute positions."""
    import torch  # noqa: PLC0415

    import toy_mpnn  # noqa: PLC0415
    from distspec_export import check, trace  # noqa: PLC0415

    model = toy_mpnn.build(layers=2, n_species=len(ELEMENTS), cutoff=CUTOFF).eval()
    for p in model.parameters():
        p.requires_grad_(False)

    class SevenInputs(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, positions, species, edge_index, n_owned, send_index, recv_dest, recv_real):
            return self.model(positions, species, edge_index, n_owned, send_index, recv_dest, recv_real)

    example = check.examples(len(ELEMENTS), CUTOFF, torch.float64)[0]
    trace.save_torchscript(trace.trace_forces(SevenInputs(), example.inputs), str(path), {})


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
    if args.set in ("mace", "fastmace"):
        import mace  # noqa: PLC0415

        versions += f" mace {getattr(mace, '__version__', '?')}"
    if args.set == "sevennet":
        import sevenn  # noqa: PLC0415

        versions += f" sevenn {getattr(sevenn, '__version__', '?')}"
    if args.set == "nequip":
        import allegro  # noqa: PLC0415
        import nequip  # noqa: PLC0415

        versions += f" nequip {nequip.__version__} allegro {getattr(allegro, '__version__', '?')}"
    digest = sources_hash(versions)
    if not args.force and not args.only and up_to_date(out, args.set, digest):
        print(f"{args.set} fixtures in {out} are up to date ({versions}); --force remakes them")
        return 0

    t_all = time.perf_counter()
    seconds: dict[str, dict[str, float] | float] = {}
    manifest: dict = {"elements": ELEMENTS, "cutoff": CUTOFF, "units": UNITS, "data": DATA, "versions": versions,
                      "sources": digest if not args.only else "", "models": {}}
    models = {"toy": toy_models, "mace": mace_models, "twin": twin_models, "aimnet": aimnet_models,
              "sevennet": sevennet_models, "nequip": nequip_models,
              "fastmace": lambda: fastmace_models(out)}[args.set]()
    if args.set == "aimnet":
        manifest.update(AIMNET)
    if args.set == "sevennet":
        import sevennet_model  # noqa: PLC0415

        del manifest["data"]  # one per structure
        manifest.update(elements=sevennet_model.ELEMENTS, cutoff=SEVENNET["cutoff"], structures=sevennet_structures())
    for name, model, spec, fmt, description, source in models:
        if args.only and name not in args.only:
            continue
        if args.set == "twin":  # the native model file's
            elements, cutoff, units = model.elements, model.cutoff, model.units
            manifest.update(elements=elements, cutoff=cutoff, units=units)
        elif args.set == "aimnet":
            elements, cutoff, units = AIMNET["elements"], AIMNET["cutoff"], UNITS
        elif args.set == "sevennet":
            elements, cutoff, units = manifest["elements"], SEVENNET["cutoff"], UNITS
        else:
            elements, cutoff, units = ELEMENTS, CUTOFF, UNITS
        sevennet = args.set == "sevennet"
        command = None
        if name in COMMAND_LINE:
            result, command = export_from_command_line(out, name, model, fmt)
        else:
            result = export(model, spec, elements, cutoff, units, out, name, format=fmt, description=description,
                            source=source, license=SEVENNET["license"] if sevennet else "CC0-1.0",
                            precision=SEVENNET["precision"] if sevennet else "fp64", quick_compile=True,
                            log=lambda line: None)
        seconds[name] = {k: round(v, 2) for k, v in result.seconds.items()}
        layers = result.message_passing_layers
        manifest["models"][name] = {"model_file": result.model_file.name, "graph": result.graph_file.name,
                                    "format": fmt, "layers": layers,
                                    "reference": f"ref_toy_mpnn_L{layers}.json" if args.set == "toy"
                                    else f"ref_{name}.json",
                                    "halo_sites": result.halo_sites, "comm_width": result.comm_width,
                                    "export_check": result.deviations}
        if command:
            manifest["models"][name]["command"] = ["distspec-export", *command]
        if args.set == "twin":
            manifest["models"][name]["native"] = NATIVE[layers]
        if args.set in ("twin", "sevennet"):  # sevennet: a reference per structure
            del manifest["models"][name]["reference"]
        print(f"{name}: {result.graph_file.name} ({', '.join(f'{k} {v:.1f} s' for k, v in result.seconds.items())}); "
              f"check against the model as given: energies {result.deviations['atomic_energies']:.1e}, "
              f"forces {result.deviations['forces']:.1e}", flush=True)

    t0 = time.perf_counter()
    # The other set may be reading it: write beside it, then rename.
    if args.set == "aimnet":
        import aimnet_model  # noqa: PLC0415

        periodic.write_data(aimnet_model.molecular_box(), out / AIMNET["data"],
                            "TEST box: 27 small H/C/N/O molecules, turned at random (make_fixtures.py)")
    elif args.set == "sevennet":
        import sevennet_model  # noqa: PLC0415

        for name, (_, build, title) in sevennet_model.STRUCTURES.items():
            periodic.write_data(build(), out / f"{name}.data", f"TEST crystal: {title} (make_fixtures.py)")
        manifest["serial"] = sevennet_serial(out, manifest["elements"])
    else:
        if args.set == "nequip":
            manifest["packaged"] = nequip_packaged(out)
        else:
            accelerated_call(out / "oeq_call.pt")
            if args.set == "toy":
                without_atomic_virials(out / "toy_mpnn_L2_no_virial.pt")
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
