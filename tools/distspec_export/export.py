"""`export()`: a PyTorch energy model and its MLIPSpec -> graph, spec file and DISTSPEC model file."""

from __future__ import annotations

import dataclasses
import json
import math
import re
import time
from pathlib import Path
from typing import Any, Callable

import torch

from . import accelerators, adapters, check, trace
from .files import spec_dict, write_model_file, write_spec  # noqa: F401 (write_spec: public)
from .trace import ExportError

FORMATS = {"aoti": ".pt2", "torchscript": ".pt"}
PRECISIONS = {"fp64": torch.float64, "fp32": torch.float32}
DEVICES = ("cpu", "cuda")
UNITS = ("lj", "real", "metal", "si", "cgs", "electron", "micro", "nano")  # LAMMPS `units` styles
HALO_POLICIES = ("halo", "refresh_halo")
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")


@dataclasses.dataclass
class ExportResult:
    model_file: Path
    graph_file: Path
    spec_file: Path
    custom_ops: list[str]
    halo_sites: dict[str, int]
    comm_width: int
    message_passing_layers: int
    seconds: dict[str, float]
    deviations: dict[str, Any]


def torch_version() -> str:
    """The torch release that compiles the graph, without a local build tag (`+cu132`)."""
    return torch.__version__.split("+")[0]


def _check_arguments(elements, cutoff, units, name, fmt, precision) -> list[str]:
    if fmt not in FORMATS:
        raise ExportError(f"format '{fmt}' is not one of {list(FORMATS)}")
    if precision not in PRECISIONS:
        raise ExportError(f"precision '{precision}' is not one of {list(PRECISIONS)}")
    if units not in UNITS:
        raise ExportError(f"units '{units}' is not a LAMMPS units style; use one of {list(UNITS)}")
    if isinstance(cutoff, bool) or not isinstance(cutoff, (int, float)) or not math.isfinite(cutoff) or cutoff <= 0:
        raise ExportError(f"cutoff must be a positive number, got {cutoff!r}")
    if isinstance(elements, str) or not elements:
        raise ExportError("elements must be a non-empty list of element names, e.g. ['Cu', 'Ni']")
    elements = [str(e) for e in elements]
    for e in elements:
        if not e or any(c.isspace() for c in e):
            raise ExportError(f"element name {e!r} is empty or contains whitespace")
    dup = sorted({e for e in elements if elements.count(e) > 1})
    if dup:
        raise ExportError(f"elements {dup} are listed more than once; species index i is elements[i]")
    if not NAME_RE.match(name):
        raise ExportError(f"name {name!r} must be a file name stem: letters, digits and _ . + -")
    return elements


def export(model: Any, spec: Any, elements: list[str], cutoff: float, units: str, out_dir: str | Path,
           name: str, format: str = "aoti", precision: str = "fp64", *, kind: str = "auto",  # noqa: A002
           message_passing_layers: int | None = None, description: str | None = None,
           source: str | None = None, license: str | None = None,  # noqa: A002
           quick_compile: bool = False, check_export: bool = True, device: str = "cpu",
           accelerate: str = "none", log: Callable[[str], None] = print) -> ExportResult:
    """Export `model` for `pair_style distspec` (doc/torch_models.md, contract 1).

    model: a module with the contract's forward (`forward(positions, species, edge_index,
        n_owned, send_index, recv_dest, recv_real) -> atomic_energies [N]`), or one of the
        model kinds in adapters.py (nvalchemi's MACE); it is cast to `precision` and put in
        eval mode.
    spec: an nvalchemi `MLIPSpec`, or the path of a JSON file it saved; None takes the model
        kind's own spec where it has one.
    Writes `NAME.pt2` (or `NAME.pt`), `NAME.spec.json` and the model file `NAME.json` in
    `out_dir`, then (check_export) runs the graph file on two example crystals with DISTSPEC's
    op semantics (host_ops.py) against the eager model.
    device: where the graph runs ("cpu" or "cuda"): an AOTInductor package is compiled for one
    device; the model and the example inputs are moved there for the trace.
    accelerate: "none", or the accelerator (accelerators.py) the model was built with: its ops
    are kept opaque in the graph, listed in the spec as pass-through op adapters and named in
    the model file (parameters.accelerator).
    """
    if device not in DEVICES:
        raise ExportError(f"device {device!r} must be one of {', '.join(DEVICES)}")
    if device != "cpu" and format != "aoti":
        raise ExportError(f"--device {device}: TorchScript graphs run on the cpu here; export an AOTInductor package")
    if device != "cpu" and check_export:
        raise ExportError(f"--device {device}: the check runs the graph on the cpu; pass --no-check, and compare "
                          "the run on the device against a cpu export (bench/sevennet_gpu)")
    elements = _check_arguments(elements, cutoff, units, name, format, precision)
    dtype = PRECISIONS[precision]
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    graph_file = out / (name + FORMATS[format])
    spec_file, model_file = out / f"{name}.spec.json", out / f"{name}.json"
    seconds: dict[str, float] = {}

    t0 = time.perf_counter()
    example = check.examples(len(elements), float(cutoff), dtype)[0]
    if device != "cpu":
        model = model.to(device) if isinstance(model, torch.nn.Module) else model
        example = dataclasses.replace(example, inputs=tuple(t.to(device) for t in example.inputs))
    if kind not in adapters.KINDS:
        raise ExportError(f"model kind '{kind}' is not one of {list(adapters.KINDS)}")
    kind = adapters.detect(model) if kind == "auto" else kind
    accelerator = accelerators.check_choice(accelerate, kind, device)
    adapted = adapters.adapt(model, kind, elements, float(cutoff), dtype, example, accelerator)
    if spec is None:
        spec = adapted.spec() if callable(adapted.spec) else adapted.spec
        if spec is None:
            raise ExportError("no spec given and the model has none of its own: pass its MLIPSpec (a saved JSON file)")
    spec_d = spec_dict(spec)

    gm = trace.trace_forces(adapted.energy_fn, example.inputs, accelerator.namespaces if accelerator else ())
    seconds["trace"] = time.perf_counter() - t0
    custom_ops = trace.custom_ops_of(gm)  # trace_forces has checked that DISTSPEC provides each
    accelerated, _ = accelerators.split_ops(custom_ops, accelerator)
    if accelerated:
        spec_d = accelerators.add_adapters(spec_d, accelerated)
    sites = trace.halo_sites(gm)
    width = trace.comm_width(gm)
    policy = spec_d["core"]["policy"]["kind"]
    if width and policy not in HALO_POLICIES:
        raise ExportError(f"the model calls halo ops {sorted(sites)} but its spec's policy is '{policy}'; "
                          f"export it with a spec of policy {' or '.join(HALO_POLICIES)}")
    layers = message_passing_layers or adapted.message_passing_layers
    if not layers:
        # A message-passing layer refreshes its halo rows at least once: by a forward exchange,
        # or by a scatter correction (which the backward calls once more).
        layers = max(1, sites.get("halo_forward_static", 0), sites.get("halo_scatter_correct_static", 0) // 2)
    layers = int(layers)

    params = {
        "graph": graph_file.name,
        "format": format,
        "precision": precision,
        "message_passing_layers": layers,
        "comm_width": width,
        "contract": trace.CONTRACT,
        "torch_version": torch_version(),
    }
    if accelerator is not None:
        params["accelerator"] = accelerator.name
    contract_meta = {
        "contract": trace.CONTRACT,
        "inputs": list(trace.INPUT_NAMES),
        "outputs": list(trace.OUTPUT_NAMES),
        "precision": precision,
        "elements": elements,
        "cutoff": float(cutoff),
        "units": units,
        "message_passing_layers": layers,
        "comm_width": width,
        "custom_ops": custom_ops,
        "torch_version": torch_version(),
        "torch_build": torch.__version__,
    }
    metadata = {"distspec.contract": str(trace.CONTRACT), "distspec.json": json.dumps(contract_meta)}

    if format == "aoti":
        t0 = time.perf_counter()
        ep = trace.export_program(gm, example.inputs)
        seconds["export"] = time.perf_counter() - t0
        log(f"{name}: traced in {seconds['trace']:.1f} s, exported in {seconds['export']:.1f} s; "
            "AOTInductor compilation (tens of seconds)...")
        seconds["compile"] = trace.compile_aoti(ep, str(graph_file), metadata, quick=quick_compile)
    else:
        seconds["compile"] = trace.save_torchscript(gm, str(graph_file), metadata)

    write_spec(spec_d, spec_file)
    write_model_file(model_file, units, cutoff, elements, params, spec_file.name,
                     description or f"{adapted.description}, exported by distspec-export",
                     source or adapted.source, license or "unknown")

    deviations: dict[str, Any] = {}
    if check_export:
        t0 = time.perf_counter()
        deviations = check.check_graph(str(graph_file), format, adapted.energy_fn, len(elements),
                                       float(cutoff), dtype)
        seconds["check"] = time.perf_counter() - t0
    return ExportResult(model_file, graph_file, spec_file, custom_ops, sites, width, layers, seconds, deviations)
