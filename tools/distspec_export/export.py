"""`export()`: a PyTorch energy model and its MLIPSpec -> graph, spec file and DISTSPEC model file."""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import re
import time
from pathlib import Path
from typing import Any, Callable

import torch

from . import accelerators, adapters, check, element_linears, radial_splines, trace
from .files import file_sha256, spec_dict, spec_sha256, write_model_file, write_spec  # noqa: F401 (write_spec: public)
from .trace import UNITS, ExportError  # noqa: F401 (UNITS: the command line's choices)

FORMATS = {"aoti": ".pt2", "torchscript": ".pt"}
PRECISIONS = {"fp64": torch.float64, "fp32": torch.float32}
DEVICES = ("cpu", "cuda")
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
    element_linears: dict[str, Any] = dataclasses.field(default_factory=dict)  # element_linears.Record
    choices: dict[str, Any] = dataclasses.field(default_factory=dict)  # the adapter's (Adapted.choices)
    radial_splines: dict[str, Any] = dataclasses.field(default_factory=dict)  # radial_splines.Record


def torch_version() -> str:
    """The torch release that compiles the graph, without a local build tag (`+cu132`)."""
    return torch.__version__.split("+")[0]


@dataclasses.dataclass(frozen=True)
class ExportOptions:
    """What to export and how: export()'s arguments as one value, checked by checked()."""

    elements: list[str]
    cutoff: float
    units: str
    out_dir: Path
    name: str
    format: str = "aoti"  # noqa: A003
    precision: str = "fp64"
    kind: str = "auto"
    message_passing_layers: int | None = None
    description: str | None = None
    source: str | None = None
    license: str | None = None  # noqa: A003
    quick_compile: bool = False
    check_export: bool = True
    device: str = "cpu"
    accelerate: str = "none"
    head: str | None = None  # the head of a multi-head MACE model
    fold_elements: bool = True  # element_linears.py: modules of the element's one-hot folded per element
    radial_spline: bool = True  # radial_splines.py: radial MLPs of r alone tabulated as splines
    radial_knots: int = radial_splines.DEFAULT_KNOTS

    @property
    def dtype(self) -> torch.dtype:
        return PRECISIONS[self.precision]

    @property
    def graph_file(self) -> Path:
        return self.out_dir / (self.name + FORMATS[self.format])

    def checked(self) -> ExportOptions:
        """These options with the elements as strings, or ExportError naming the first bad one."""
        if self.device not in DEVICES:
            raise ExportError(f"device {self.device!r} must be one of {', '.join(DEVICES)}")
        if self.device != "cpu" and self.format != "aoti":
            raise ExportError(f"--device {self.device}: a TorchScript graph is traced on the cpu and runs on every "
                              "device (its devices follow the positions'); leave out --device, or export an "
                              "AOTInductor package for this device")
        if self.device == "cuda" and not torch.cuda.is_available():
            why = "torch is a build without CUDA" if torch.version.cuda is None else "torch.cuda.is_available() is False"
            raise ExportError(f"--device cuda: this Python sees no GPU ({why}); the model is traced, compiled and "
                              "checked on the GPU the graph is made for: export on a machine with one, or export for "
                              "the cpu (TorchScript runs on every device)")
        if self.kind not in adapters.KINDS:
            raise ExportError(f"model kind '{self.kind}' is not one of {list(adapters.KINDS)}")
        elements = _check_arguments(self.elements, self.cutoff, self.units, self.name, self.format, self.precision)
        return dataclasses.replace(self, elements=elements, cutoff=float(self.cutoff), out_dir=Path(self.out_dir))


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
           accelerate: str = "none", head: str | None = None, reload: Callable[[], Any] | None = None,
           fold_elements: bool = True, radial_spline: bool = True, radial_knots: int = radial_splines.DEFAULT_KNOTS,
           log: Callable[[str], None] = print) -> ExportResult:
    """Export `model` for `pair_style distspec` (doc/torch_models.md, contract 1).

    model: a module with the contract's forward (`forward(positions, species, edge_index,
        n_owned, send_index, recv_dest, recv_real) -> atomic_energies [N]`), or one of the
        model kinds in adapters.py (nvalchemi's MACE); it is cast to `precision` and put in
        eval mode.
    spec: an nvalchemi `MLIPSpec`, or the path of a JSON file it saved; None takes the model
        kind's own spec where it has one.
    Writes `NAME.pt2` (or `NAME.pt`), `NAME.spec.json` and the model file `NAME.json` in
    `out_dir`, then (check_export) runs the graph file on two example crystals with DISTSPEC's
    op semantics (host_ops.py) against the eager model, both on the export's device.
    device: where the graph runs ("cpu" or "cuda"): an AOTInductor package is compiled for one
    device; the model and the example inputs are moved there for the trace.
    accelerate: "none", or the accelerator (accelerators.py) the model was built with: its ops
    are kept opaque in the graph, listed in the spec as pass-through op adapters and named in
    the model file (parameters.accelerator); "auto" (the command line's default): the model kind's
    default accelerator (MACE: mace-kernels, its fast forward) where the model allows, which the
    adapter otherwise declines, saying why (logged, and in the graph metadata's `choices`).
    head: the head a multi-head MACE model is exported with (its `heads`), None for a model of one.
    fold_elements: fold each tensor product or linear of the element's one-hot (SevenNet's, MACE's and
        NequIP's, element_linears.py) into weights per exported element; False traces them as they are.
    radial_spline: tabulate each radial MLP of the edge length alone (SevenNet's) as a cubic Hermite
        spline of radial_knots knots (radial_splines.py), where it reproduces the MLP within 1e-5;
        False traces the MLPs as they are.
    reload: loads the model afresh from the file it came from, as its package does (--from); the
        check's reference where the exporter rebuilds or rewires the model (MACE, NequIP). None: a
        copy of `model` taken before the export touches it.
    """
    options = ExportOptions(elements, cutoff, units, Path(out_dir), name, format, precision, kind,
                            message_passing_layers, description, source, license, quick_compile, check_export,
                            device, accelerate, head, fold_elements, radial_spline, radial_knots)
    return export_with(model, spec, options, log, reload)


@dataclasses.dataclass
class _Traced:
    """The force graph of an adapted model, and what the spec and model file say of it."""

    adapted: Any
    gm: Any
    example: Any
    spec: dict
    custom_ops: list[str]
    sites: dict[str, int]
    width: int
    layers: int
    accelerator: Any
    element_linears: element_linears.Record
    radial_splines: radial_splines.Record


def export_with(model: Any, spec: Any, options: ExportOptions, log: Callable[[str], None] = print,
                reload: Callable[[], Any] | None = None) -> ExportResult:
    """export() with its options as one value."""
    o = options.checked()
    o.out_dir.mkdir(parents=True, exist_ok=True)
    spec_file, model_file = o.out_dir / f"{o.name}.spec.json", o.out_dir / f"{o.name}.json"
    seconds: dict[str, float] = {}

    t0 = time.perf_counter()
    t = _trace(model, spec, o, reload, log)
    seconds["trace"] = time.perf_counter() - t0
    params = {
        "graph": o.graph_file.name,
        "format": o.format,
        "precision": o.precision,
        "message_passing_layers": t.layers,
        "comm_width": t.width,
        "contract": trace.CONTRACT,
        "torch_version": torch_version(),
    }
    if t.accelerator is not None:
        params["accelerator"] = t.accelerator.name

    if o.format == "aoti":
        t0 = time.perf_counter()
        ep = trace.export_program(t.gm, t.example.inputs)
        seconds["export"] = time.perf_counter() - t0
        log(f"{o.name}: traced in {seconds['trace']:.1f} s, exported in {seconds['export']:.1f} s; "
            "AOTInductor compilation (tens of seconds)...")
        seconds["compile"] = trace.compile_aoti(ep, str(o.graph_file), _graph_metadata(o, t), quick=o.quick_compile)
    else:
        seconds["compile"] = trace.save_torchscript(t.gm, str(o.graph_file), _graph_metadata(o, t))

    # What the graph and spec were exported with, checked by the plugin against the files beside.
    params["graph_sha256"] = file_sha256(o.graph_file)
    params["spec_sha256"] = spec_sha256(write_spec(t.spec, spec_file))
    write_model_file(model_file, o.units, o.cutoff, o.elements, params, spec_file.name,
                     o.description or f"{t.adapted.description}, exported by distspec-export",
                     o.source or t.adapted.source, o.license or "unknown")

    deviations: dict[str, Any] = {}
    if o.check_export:
        t0 = time.perf_counter()
        # Without the package's own evaluation, the eager model is the reference: with its modules unfolded.
        replaced = t.element_linears.folded or t.radial_splines.replaced
        eager = element_linears.with_originals(t.adapted.energy_fn) if replaced else t.adapted.energy_fn
        deviations = check.check_graph(str(o.graph_file), o.format, eager, len(o.elements), o.cutoff, o.dtype,
                                       t.adapted.reference, device=o.device,
                                       python_import=t.accelerator.python_import if t.accelerator else "")
        seconds["check"] = time.perf_counter() - t0
    return ExportResult(model_file, o.graph_file, spec_file, t.custom_ops, t.sites, t.width, t.layers, seconds,
                        deviations, t.element_linears.as_json(), t.adapted.choices, t.radial_splines.as_json())


def _trace(model: Any, spec: Any, o: ExportOptions, reload: Callable[[], Any] | None = None,
           log: Callable[[str], None] = print) -> _Traced:
    """The model adapted to the contract and traced to its force graph on the export device;
    `reload` (or a copy of the model as given) for the check's reference."""
    example = check.examples(len(o.elements), o.cutoff, o.dtype)[0]
    kind = adapters.detect(model) if o.kind == "auto" else o.kind
    if reload is None and o.check_export and kind in adapters.REBUILT:
        given = copy.deepcopy(model)  # before anything casts or moves it
        reload = lambda: given  # noqa: E731
    if o.device != "cpu":
        model = model.to(o.device) if isinstance(model, torch.nn.Module) else model
        example = dataclasses.replace(example, inputs=tuple(t.to(o.device) for t in example.inputs))
    accelerator = accelerators.check_choice(o.accelerate, kind, o.device)
    if o.head is not None and kind != "mace":
        raise ExportError(f"--head {o.head}: heads are MACE's; a {kind} model has none")
    with element_linears.recording(o.fold_elements) as folding, \
            radial_splines.recording(o.radial_spline, o.radial_knots) as splines:
        adapted = adapters.adapt(model, kind, o.elements, o.cutoff, o.dtype, example, accelerator, head=o.head,
                                 original=reload, accelerator_optional=o.accelerate == accelerators.AUTO)
    if adapted.declined_accelerator:
        log(f"{o.name}: {accelerator.name if accelerator else 'the default accelerator'} not used: "
            f"{adapted.declined_accelerator}")
        accelerator = None
    _check_declared(o, adapted)
    if spec is None:
        spec = adapted.spec() if callable(adapted.spec) else adapted.spec
        if spec is None:
            raise ExportError("no spec given and the model has none of its own: pass its MLIPSpec (a saved JSON file)")
    spec_d = spec_dict(spec)

    gm = trace.trace_forces(adapted.energy_fn, example.inputs, accelerator.namespaces if accelerator else ())
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
    layers = o.message_passing_layers or adapted.message_passing_layers
    if not layers:
        # A message-passing layer refreshes its halo rows at least once: by a forward exchange,
        # or by a scatter correction (which the backward calls once more).
        layers = max(1, sites.get("halo_forward_static", 0), sites.get("halo_scatter_correct_static", 0) // 2)
    return _Traced(adapted, gm, example, spec_d, custom_ops, sites, width, int(layers), accelerator, folding,
                   splines)


def _check_declared(o: ExportOptions, adapted: Any) -> None:
    """--units and --cutoff against what the model says of itself."""
    if adapted.units and o.units != adapted.units:
        raise ExportError(f"--units {o.units}: {adapted.description} computes energies and lengths in LAMMPS units "
                          f"'{adapted.units}', and the plugin converts none; use --units {adapted.units} (and "
                          f"'units {adapted.units}' in the input script)")
    if adapted.cutoff is not None and o.cutoff < adapted.cutoff - 1e-9 * max(1.0, adapted.cutoff):
        raise ExportError(f"--cutoff {o.cutoff:g} is below {adapted.description}'s own cutoff {adapted.cutoff:g}: "
                          f"neighbours between the two would be missing; use --cutoff {adapted.cutoff:g}")


def _graph_metadata(o: ExportOptions, t: _Traced) -> dict[str, str]:
    """What the graph file carries about its contract (read back by the plugin and the check)."""
    contract_meta = {
        "contract": trace.CONTRACT,
        "inputs": list(trace.INPUT_NAMES),
        "outputs": list(trace.OUTPUT_NAMES),
        "precision": o.precision,
        "elements": o.elements,
        "cutoff": o.cutoff,
        "units": o.units,
        "message_passing_layers": t.layers,
        "comm_width": t.width,
        "custom_ops": t.custom_ops,
        "torch_version": torch_version(),
        "torch_build": torch.__version__,
        "element_linears": t.element_linears.as_json(),
        "radial_splines": t.radial_splines.as_json(),
    }
    if t.adapted.choices:
        contract_meta["choices"] = t.adapted.choices
    return {"distspec.contract": str(trace.CONTRACT), "distspec.json": json.dumps(contract_meta)}
