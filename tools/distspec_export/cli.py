"""Command line of distspec-export."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

USAGE_EXAMPLE = """\
examples:
  distspec-export --from mace MACE_model.model --head Default --out model --name my_mace
  distspec-export --from sevennet 7net-mf-0 --modal PBE --precision fp32 --out model --name 7net_mf0_pbe
  distspec-export --module unittest/torch/toy_mpnn.py:build --module-args '{"layers": 2}' \\
      --spec spec.json --elements Cu Ni --cutoff 4.5 --units metal --out potentials/torch --name toy_L2

--from KIND SOURCE takes a model as its own package saves or names it: `mace FILE.model` (a model
file mace-torch saved; --head NAME for a multi-head model), `sevennet NAME|CHECKPOINT` (7net-0,
7net-l3i5, 7net-mf-0 or a checkpoint file; --modal NAME for a multi-fidelity model), `nequip FILE`
(a NequIP or Allegro checkpoint *.ckpt or package *.nequip.zip). Its
elements, cutoff and units are the model's own where --elements, --cutoff and --units are left
out (and checked against it where given).

Or the model comes from --module: `package.module:attr` or `path/to/file.py:attr`, where attr is an
nn.Module instance, or a class or function that --module-args (a JSON object of keyword
arguments) is passed to. Writes NAME.pt2 (or NAME.pt), NAME.spec.json and the model file
NAME.json for `pair_coeff * * NAME.json <elements>` (doc/torch_models.md).

Model kinds (--kind, default from the model's class): plain (a module with the contract's
forward), mace (nvalchemi's MACEWrapper or a MACE model), aimnet (nvalchemi's AIMNet2Wrapper
or an AIMNet2 model), sevennet (a SevenNet model; `--module distspec_export.sevennet:checkpoint
--module-args '{"name": "7net-0"}'` gives SevenNet-0), nequip (a NequIP or Allegro GraphModel);
mace, aimnet, sevennet and nequip bring their own spec, so --spec may be left out.
"""


def parse_args(argv: list[str]) -> argparse.Namespace:
    from .adapters import KINDS  # noqa: PLC0415
    from .export import FORMATS, PRECISIONS, UNITS  # noqa: PLC0415

    p = argparse.ArgumentParser(
        prog="distspec-export", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Export a PyTorch energy model with its nvalchemi MLIPSpec for pair_style distspec: "
                    "forces traced into one graph (AOTInductor .pt2 or TorchScript .pt), the spec, and a "
                    "DISTSPEC model file.",
        epilog=USAGE_EXAMPLE)
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--from", dest="from_", nargs=2, metavar=("KIND", "SOURCE"),
                        help="a model as its package saves it: mace FILE.model, sevennet NAME|CHECKPOINT, nequip FILE (see below)")
    source.add_argument("--module", metavar="MOD:ATTR", help="where the model comes from (see below)")
    source.add_argument("--deployed", metavar="FILE",
                        help="a module SevenNet deployed itself (sevenn_get_model's deployed_serial.pt): write the "
                             "model file around it; it runs on one MPI rank")
    p.add_argument("--module-args", default="{}", metavar="JSON", help="keyword arguments for a class or factory")
    p.add_argument("--head", help="--from mace: the head of a multi-head model")
    p.add_argument("--modal", help="--from sevennet: the modal (fidelity) of a multi-fidelity model")
    p.add_argument("--spec", metavar="FILE",
                   help="the MLIPSpec JSON as nvalchemi saved it (required unless the model kind has its own)")
    p.add_argument("--elements", nargs="+", metavar="EL",
                   help="element of species index 0, 1, ... (--from: default the model's elements)")
    p.add_argument("--cutoff", type=float,
                   help="neighbour cutoff, in the length unit of --units (--from: default the model's)")
    p.add_argument("--units", choices=UNITS, help="the LAMMPS units the model's numbers are in (--from: metal)")
    p.add_argument("--out", required=True, metavar="DIR", help="folder for the files (made if missing)")
    p.add_argument("--name", required=True, help="file name stem of the graph, spec and model file")
    p.add_argument("--format", default="aoti", choices=list(FORMATS), help="graph format (default aoti)")
    p.add_argument("--precision", default="fp64", choices=list(PRECISIONS), help="dtype of positions and outputs")
    p.add_argument("--kind", default="auto", choices=KINDS, help="model kind (default: from the model's class)")
    p.add_argument("--layers", type=int, metavar="L",
                   help="message-passing layers (default: the module's message_passing_layers, else counted)")
    p.add_argument("--description", help="model file 'description'")
    p.add_argument("--source", help="model file 'source'")
    p.add_argument("--license", help="model file 'license'")
    p.add_argument("--quick-compile", action="store_true",
                   help="compile faster (no precompiled header, -O0 wrapper; kernels unchanged)")
    p.add_argument("--no-check", action="store_true", help="skip running the graph against the eager model")
    p.add_argument("--no-fold-elements", action="store_true",
                   help="trace tensor products and linears of the element's one-hot as the model has them, instead "
                        "of folding them into weights per exported element (sevennet, mace, nequip; "
                        "doc/torch_models.md, Element-specialised linears)")
    p.add_argument("--no-radial-spline", action="store_true",
                   help="trace radial MLPs of the edge length as the model has them, instead of tabulating each as "
                        "a cubic spline (sevennet; doc/torch_models.md, Radial splines)")
    from .radial_splines import DEFAULT_KNOTS  # noqa: PLC0415

    p.add_argument("--radial-knots", type=int, default=DEFAULT_KNOTS,
                   help=f"knots of each radial spline table (default {DEFAULT_KNOTS}); the export records the "
                        "table's error against the MLP and keeps an MLP whose table errs by more than 1e-5")
    p.add_argument("--device", default="cpu", choices=("cpu", "cuda"),
                   help="where an AOTInductor package runs (it is compiled for one device; default cpu); a "
                        "TorchScript graph runs on every device")
    from .accelerators import AUTO, CHOICES  # noqa: PLC0415

    p.add_argument("--accelerate", default=AUTO, choices=CHOICES,
                   help="kernels to build the model with (sevennet, mace: oeq, needs --device cuda; mace: "
                        "mace-kernels, DISTSPEC's fast MACE forward): passed to a --module factory that takes "
                        "`accelerate`, kept opaque in the graph and listed in the spec (doc/torch_models.md, "
                        "Accelerators). Default auto: mace-kernels for a MACE the fast forward rebuilds (else "
                        "mace's module traced whole, and the export says why), none for other kinds")
    args = p.parse_args(argv)
    if not args.from_:
        missing = [f"--{k}" for k in ("elements", "cutoff", "units") if getattr(args, k) is None]
        if missing:
            p.error(f"the following arguments are required with --module or --deployed: {', '.join(missing)}")
        for flag in ("head", "modal"):
            if getattr(args, flag) is not None:
                p.error(f"--{flag} applies to --from (mace --head, sevennet --modal)")
    if args.deployed:
        # SevenNet's own module carries its graph, precision and spec: the export options do not apply.
        ignored = [f for f, given in (("--module-args", args.module_args != "{}"), ("--format", args.format != "aoti"),
                                      ("--precision", args.precision != "fp64"), ("--kind", args.kind != "auto"),
                                      ("--layers", args.layers is not None), ("--device", args.device != "cpu"),
                                      ("--accelerate", args.accelerate not in ("none", "auto")),
                                      ("--quick-compile", args.quick_compile), ("--no-check", args.no_check),
                                      ("--no-fold-elements", args.no_fold_elements),
                                      ("--no-radial-spline", args.no_radial_spline),
                                      ("--radial-knots", args.radial_knots != DEFAULT_KNOTS))
                   if given]
        if ignored:
            p.error(f"--deployed writes a model file around SevenNet's own module, which fixes its graph, precision "
                    f"and device: {', '.join(ignored)} do not apply")
    return args


def load_object(ref: str) -> Any:
    """`package.module:attr` or `path/file.py:attr` (attr may be dotted)."""
    from .trace import ExportError  # noqa: PLC0415

    target, sep, attr = ref.rpartition(":")
    for given in (target, ref):
        if given and not given.endswith(".py") and Path(given).is_file():
            # A saved model (a .model, .pt2, checkpoint) where a Python module belongs.
            from .sniff import advice, sniff  # noqa: PLC0415

            kind = sniff(given)
            raise ExportError(f"--module {ref!r}: {given} is {kind.looks_like}, not Python; --module takes MODULE:ATTR "
                              f"or FILE.py:ATTR (a module, class or factory); {advice(kind)}")
    if not sep or not target or not attr:
        raise ExportError(f"--module {ref!r}: expected MODULE:ATTR, e.g. mypkg.models:build or model.py:build")
    if target.endswith(".py"):
        path = Path(target)
        if not path.is_file():
            raise ExportError(f"--module {ref!r}: no file {path}")
        sys.path.insert(0, str(path.resolve().parent))
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = module
        spec.loader.exec_module(module)
    else:
        sys.path.insert(0, os.getcwd())
        try:
            module = importlib.import_module(target)
        except ImportError as e:
            raise ExportError(f"--module {ref!r}: cannot import {target}: {e}") from e
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise ExportError(f"--module {ref!r}: {target} has no attribute {attr}")
        obj = getattr(obj, part)
    return obj


def build_model(ref: str, args_json: str, accelerate: str = "none") -> Any:
    import inspect  # noqa: PLC0415

    import torch  # noqa: PLC0415

    from .trace import ExportError  # noqa: PLC0415

    try:
        kwargs = json.loads(args_json)
    except json.JSONDecodeError as e:
        raise ExportError(f"--module-args is not JSON: {e}") from e
    if not isinstance(kwargs, dict):
        raise ExportError("--module-args must be a JSON object of keyword arguments")
    obj = load_object(ref)
    if isinstance(obj, torch.nn.Module):
        if kwargs:
            raise ExportError(f"--module {ref!r} is a module instance; --module-args apply to a class or factory")
        return obj
    if not callable(obj):
        raise ExportError(f"--module {ref!r} is a {type(obj).__name__}, not a module, class or factory")
    if accelerate not in ("none", "auto") and "accelerate" not in kwargs:
        try:
            takes = "accelerate" in inspect.signature(obj).parameters
        except (TypeError, ValueError):
            takes = False
        if takes:
            kwargs["accelerate"] = accelerate
    try:
        model = obj(**kwargs)
    except Exception as e:  # noqa: BLE001
        raise ExportError(f"--module {ref!r}: calling it with --module-args {kwargs} failed: "
                          f"{type(e).__name__}: {e}") from e
    if not isinstance(model, torch.nn.Module):
        raise ExportError(f"--module {ref!r} returned a {type(model).__name__}, not a torch.nn.Module")
    return model


def export_from_args(args: argparse.Namespace, log=print):
    """The export the command line asks for (--from or --module), its ExportResult; ExportError
    for what is wrong."""
    from .export import export  # noqa: PLC0415
    from .trace import ExportError  # noqa: PLC0415

    kind, description, source, license_ = args.kind, args.description, args.source, args.license
    elements, cutoff, units = args.elements, args.cutoff, args.units
    reload = None
    if args.from_:
        from . import sources  # noqa: PLC0415

        # a package's own kernels (sevenn's OEQ) only where asked for by name
        package_kernels = "none" if args.accelerate == "auto" else args.accelerate
        loaded = sources.load(args.from_[0], args.from_[1], args.head, args.modal, package_kernels)
        model = loaded.model
        if kind not in ("auto", loaded.kind):
            raise ExportError(f"--kind {kind}: --from {args.from_[0]} gives a {loaded.kind} model")
        kind = loaded.kind
        elements = elements or loaded.elements
        cutoff = loaded.cutoff if cutoff is None else cutoff
        units = units or loaded.units
        description = description or loaded.description
        source = source or loaded.source
        license_ = license_ or loaded.license
        reload = loaded.reload
    else:
        model = build_model(args.module, args.module_args, args.accelerate)
        source = source or args.module
    return export(model, args.spec, elements, cutoff, units, args.out, args.name,
                  format=args.format, precision=args.precision, kind=kind,
                  message_passing_layers=args.layers, description=description,
                  source=source, license=license_,
                  quick_compile=args.quick_compile, check_export=not args.no_check, device=args.device,
                  accelerate=args.accelerate, head=args.head, reload=reload,
                  fold_elements=not args.no_fold_elements, radial_spline=not args.no_radial_spline,
                  radial_knots=args.radial_knots, log=log)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    logging.getLogger("torch.utils.cpp_extension").setLevel(logging.ERROR)  # "No CUDA runtime is found"
    from .trace import ExportError  # noqa: PLC0415

    if args.deployed:
        from .sevennet import write_deployed  # noqa: PLC0415

        try:
            model_file = write_deployed(args.deployed, args.elements, args.cutoff, args.units, args.out, args.name,
                                        args.description, args.source, args.license, spec=args.spec)
        except ExportError as e:
            print(f"distspec-export: error: {e}", file=sys.stderr)
            return 2
        print(f"wrote {model_file} (SevenNet's serial module, one MPI rank)")
        return 0
    try:
        result = export_from_args(args)
    except ExportError as e:
        print(f"distspec-export: error: {e}", file=sys.stderr)
        return 2
    seconds = ", ".join(f"{k} {v:.1f} s" for k, v in result.seconds.items())
    print(f"wrote {result.model_file} (graph {result.graph_file.name}, spec {result.spec_file.name})")
    accelerated = [op for op in result.custom_ops if "::" in op and not op.startswith("nvalchemi::")]
    if accelerated:
        print(f"  accelerator ops (pass-through adapters in the spec): {', '.join(accelerated)}")
    print(f"  halo ops: {result.halo_sites or 'none'}; comm_width {result.comm_width}; "
          f"message_passing_layers {result.message_passing_layers}")
    choices = result.choices
    if choices:
        kernels = (f"; convolution: {choices['convolution']}; symmetric contraction: {choices['symmetric_contraction']}"
                   f"; skip_tp: {choices.get('element_linear', '?')}" if "convolution" in choices else "")
        print(f"  forward: {choices.get('forward', '?')}{kernels}")
        for key in ("why_not_fast", "why_not_ops"):
            if choices.get(key):
                print(f"  why: {choices[key]}")
        if choices.get("spline_knots"):
            print(f"  spline knots per interaction: {choices['spline_knots']}")
    folded, kept = result.element_linears.get("folded", []), result.element_linears.get("kept", [])
    if folded:
        print(f"  folded per element: {', '.join(f['module'] for f in folded)}")
    for k in kept:
        print(f"  not folded per element: {k['module']}: {k['why']}")
    splines = result.radial_splines
    if splines.get("replaced"):
        worst = max(max(r["weight_rel"], r["slope_rel"]) for r in splines["replaced"])
        print(f"  radial MLPs as splines of {splines['knots']} knots: {len(splines['replaced'])} "
              f"(largest error {worst:.1e} of the largest weight or slope)")
    for k in splines.get("kept", []):
        print(f"  radial MLP kept: {k['module']}: {k['why']}")
    print(f"  times: {seconds}")
    if result.deviations:
        d = result.deviations
        print(f"  check against {d.get('reference', 'the eager model')}: atomic energies {d['atomic_energies']:.1e}, "
              f"forces {d['forces']:.1e} (relative); ranks of 0, 1 and 2 rows "
              f"{'run' if d['small_ranks_ok'] else 'FAIL: ' + d.get('small_ranks_failure', '')}")
        if not d["small_ranks_ok"]:
            print("  note: the plugin does not run the graph on a rank that owns no atom; a graph that fails "
                  "on one or two rows stops runs where a rank holds only that (--format aoti may not fail)")
    return 0
