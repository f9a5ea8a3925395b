"""The accelerated kernels a graph may call beside aten and the halo ops.

An accelerator is a library of equivariant tensor-product kernels that a model kind can be built
with (`--accelerate`). Its ops stay opaque in the exported graph; pair_style distspec loads or
registers the library before it loads the graph, and the spec lists each op as a pass-through
op adapter (no transforms), as nvalchemi's own MACE spec for cuEquivariance does, so that the
plugin can check graph against spec in both directions (doc/torch_models.md, "Accelerators").
"""

from __future__ import annotations

import dataclasses

from .trace import ExportError


@dataclasses.dataclass(frozen=True)
class Accelerator:
    key: str           # --accelerate value
    name: str          # the model file's parameters.accelerator
    namespaces: tuple[str, ...]
    kinds: tuple[str, ...]  # model kinds that can be built with it
    runs_on: tuple[str, ...]
    # Python that registers its ops in a fresh process (an AOTInductor package looks them up when
    # it loads): the export's check loads a package in a child process first (trace.probe_package).
    python_import: str = ""


ACCELERATORS = {
    "oeq": Accelerator("oeq", "openequivariance", ("libtorch_tp_jit",), ("sevennet", "mace", "nequip"), ("cuda",),
                       "import openequivariance"),
    # cuEquivariance defines its torch ops in Python only: no library registers them in a
    # Python-free LAMMPS process, so no kind is exported with it (the plugin refuses its graphs).
    "cueq": Accelerator("cueq", "cuequivariance", ("cuequivariance",), (), ("cuda",)),
    # DISTSPEC's own MACE kernels (doc/mace_kernels.md), libdistspec_mace_ops.so
    # (mace_kernels/library.py); the plugin knows them by the same name (lib/models/torch/accelerators.cpp).
    "mace-kernels": Accelerator("mace-kernels", "mace-kernels", ("distspec_mace",), ("mace",), ("cpu", "cuda"),
                                "from distspec_export.mace_kernels import library; library.load()"),
}
# --accelerate auto (the default): the kind's own default where it has one and the device runs it,
# used where the model allows (the adapter says why not), else none.
AUTO = "auto"
DEFAULTS = {"mace": "mace-kernels"}
CHOICES = (AUTO, "none", *ACCELERATORS)


def of_op(op: str) -> Accelerator | None:
    """The accelerator whose library provides `ns::name`, if any."""
    namespace = op.split("::", 1)[0]
    return next((a for a in ACCELERATORS.values() if namespace in a.namespaces), None)


def check_choice(key: str, kind: str, device: str) -> Accelerator | None:
    """The accelerator `--accelerate key` names for a model of `kind` on `device`, or an error
    that says why it cannot be used."""
    if key in (None, "none"):
        return None
    if key == AUTO:
        default = ACCELERATORS.get(DEFAULTS.get(kind, ""))
        return default if default is not None and device in default.runs_on else None
    if key not in ACCELERATORS:
        raise ExportError(f"--accelerate {key!r}: expected one of {', '.join(CHOICES)}")
    acc = ACCELERATORS[key]
    if not acc.kinds:
        raise ExportError(f"--accelerate {key}: {acc.name} registers its torch ops from Python only, and "
                          "pair_style distspec runs no Python: its graphs cannot run there; use --accelerate oeq "
                          "(SevenNet, MACE, NequIP) or --accelerate none")
    if kind not in acc.kinds:
        raise ExportError(f"--accelerate {key}: {acc.name} kernels exist here for model kinds "
                          f"{', '.join(acc.kinds)}, not for a '{kind}' model; export it with --accelerate none")
    if device not in acc.runs_on:
        raise ExportError(f"--accelerate {key}: {acc.name} kernels run on {', '.join(acc.runs_on)} only; export "
                          f"with --device {acc.runs_on[0]}, or with --accelerate none for --device {device}")
    return acc


def split_ops(ops: list[str], chosen: Accelerator | None) -> tuple[list[str], list[str]]:
    """(the graph's accelerator ops, the rest); an error for an accelerator op of another
    accelerator than the one chosen (a model built with kernels --accelerate did not name)."""
    accelerated, rest = [], []
    for op in ops:
        acc = of_op(op)
        if acc is None:
            rest.append(op)
        elif not acc.kinds:
            raise ExportError(f"the force graph calls {op}, an op of {acc.name}, which registers its torch ops "
                              "from Python only: pair_style distspec cannot run its graphs; build the model without "
                              "it (--accelerate oeq or none)")
        elif chosen is None or acc != chosen:
            raise ExportError(f"the force graph calls {op}, an op of {acc.name}, but the export was asked for "
                              f"--accelerate {chosen.key if chosen else 'none'}; pass --accelerate {acc.key}, or "
                              "build the model without that accelerator")
        else:
            accelerated.append(op)
    if chosen is not None and not accelerated:
        raise ExportError(f"--accelerate {chosen.key}: the force graph calls no {chosen.name} op; the model was "
                          f"built without {chosen.name} kernels (pass the accelerator to its factory, e.g. "
                          "--module-args '{\"accelerate\": \"" + chosen.key + "\"}')")
    return accelerated, rest


def add_adapters(spec_d: dict, accelerated: list[str]) -> dict:
    """The spec with a pass-through op adapter for each accelerator op it does not list yet."""
    listed = {entry.get("op") for entry in spec_d["core"].get("custom_ops", [])}
    for op in accelerated:
        if op not in listed:
            spec_d["core"].setdefault("custom_ops", []).append(
                {"op": op, "arg_transforms": {}, "output_transforms": {}})
    return spec_d
