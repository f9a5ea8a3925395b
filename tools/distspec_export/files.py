"""The files an export writes beside the graph: the spec as nvalchemi saves it, and the DISTSPEC
model file (doc/torch_models.md)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from . import ops
from .trace import ExportError


def spec_dict(spec: Any) -> dict[str, Any]:
    """The spec as nvalchemi's own `MLIPSpec.to_dict()` gives it (read through nvalchemi).

    A helper's `replacement` that nvalchemi's loader dropped (it does not import here) is kept
    as the file had it.
    """
    if not ops.have_nvalchemi():
        return raw_spec_dict(spec)
    from nvalchemi.distributed.spec import MLIPSpec  # noqa: PLC0415

    if isinstance(spec, MLIPSpec):
        return spec.to_dict()
    if isinstance(spec, (str, Path)):
        path = Path(spec)
        raw = read_spec_file(path)
        where = f"the spec file {path}"
    elif isinstance(spec, dict):
        raw, where = spec, "the spec"
    else:
        raise ExportError(f"spec must be an nvalchemi MLIPSpec or the path of a saved one, got {type(spec).__name__}")
    try:
        d = MLIPSpec.from_dict(raw).to_dict()
    except Exception as e:  # noqa: BLE001
        raise ExportError(f"nvalchemi cannot read {where}: {type(e).__name__}: {e}") from e
    raw_helpers = raw.get("core", {}).get("third_party_helpers", []) if isinstance(raw, dict) else []
    for helper, raw_helper in zip(d["core"].get("third_party_helpers", []), raw_helpers):
        if isinstance(raw_helper, dict) and helper.get("replacement") is None and raw_helper.get("replacement"):
            helper["replacement"] = raw_helper["replacement"]
    return d


def raw_spec_dict(spec: Any) -> dict[str, Any]:
    """The spec file as nvalchemi saved it elsewhere, where nvalchemi does not import here: read,
    not checked (the host checks it when it loads the model file)."""
    if isinstance(spec, dict):
        return spec
    if not isinstance(spec, (str, Path)):
        raise ExportError("nvalchemi does not import in this Python environment: pass the spec as a JSON file "
                          "that nvalchemi's MLIPSpec.save() wrote (--spec FILE)")
    d = read_spec_file(Path(spec))
    if not isinstance(d, dict) or not isinstance(d.get("core"), dict):
        raise ExportError(f"the spec file {spec} is not an MLIPSpec as nvalchemi saves it (no 'core' object)")
    return d


def read_spec_file(path: Path) -> Any:
    """The JSON of --spec FILE; ExportError naming the file, and what it is where it is no spec."""
    from . import sniff  # noqa: PLC0415

    try:
        raw = json.loads(path.read_text())
    except OSError as e:
        raise ExportError(f"cannot read the spec file {path}: {e.strerror}") from e
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        kind = sniff.sniff(path)
        if kind.kind == "text":
            raise ExportError(f"the spec file {path} is not JSON: {e}") from e
        raise ExportError(f"--spec {path}: this is {kind.looks_like}, not an MLIPSpec (the JSON nvalchemi's "
                          f"MLIPSpec.save() writes); {sniff.advice(kind)}") from e
    if isinstance(raw, dict) and raw.get("format") == "distspec-model":
        named = raw.get("spec") if isinstance(raw.get("spec"), str) else "inline, under \"spec\""
        raise ExportError(f"--spec {path}: this is a DISTSPEC model file (what distspec-export writes), not an "
                          f"MLIPSpec; its spec is {named}; it is exported already: give it to pair_coeff")
    return raw


def write_spec(spec: Any, path: Path) -> dict[str, Any]:
    """Save the spec as nvalchemi does, with `compile.force_strategy` framework_from_node_energy.

    The graph computes forces as `-d(owned energy)/dx` on every row; the host folds halo-row
    partials into their owners. The other compile fields are kept (defaults where absent).
    The bytes are those of nvalchemi's `MLIPSpec.save()` (`json.dumps(to_dict(), indent=2)`),
    written from the dict rather than from a reloaded spec, since nvalchemi's loader drops a
    helper `replacement` that does not import here; nvalchemi checks the result all the same.
    """
    d = spec_dict(spec)
    old = d.get("compile") or {}
    d["compile"] = {
        "static_shapes": old.get("static_shapes", True),
        "force_strategy": "framework_from_node_energy",
        "stress_via_strain": old.get("stress_via_strain", False),
    }
    if ops.have_nvalchemi():
        from nvalchemi.distributed.spec import MLIPSpec  # noqa: PLC0415

        try:
            MLIPSpec.from_dict(d)
        except Exception as e:  # noqa: BLE001
            raise ExportError(f"nvalchemi rejects the spec with compile {d['compile']}: {type(e).__name__}: {e}") from e
    path.write_text(json.dumps(d, indent=2))
    return d


def canonical_json(value: Any) -> bytes:
    """The bytes a spec digest is taken over: keys sorted, no whitespace, UTF-8. The plugin writes
    the same (lib/distspec/util/canonical_json.h), so a spec file and its copy inline in a model
    file have one digest whatever their order and indentation."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def spec_sha256(spec: dict[str, Any]) -> str:
    """parameters.spec_sha256 of a model file: SHA-256 of the spec's canonical JSON."""
    return hashlib.sha256(canonical_json(spec)).hexdigest()


def file_sha256(path: str | Path) -> str:
    """parameters.graph_sha256 of a model file: SHA-256 of the graph file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def write_model_file(path: Path, units: str, cutoff: float, elements: list[str], parameters: dict[str, Any],
                     spec_name: str, description: str, source: str, license: str) -> None:  # noqa: A002
    """A DISTSPEC model file of the torch kind (doc/torch_models.md). `parameters` of an export carry
    graph_sha256 and spec_sha256 (file_sha256, spec_sha256), which the plugin checks at load."""
    path.write_text(json.dumps({
        "format": "distspec-model",
        "format_version": 1,
        "architecture": "torch",
        "units": units,
        "cutoff": float(cutoff),
        "elements": elements,
        "description": description,
        "source": source,
        "license": license,
        "parameters": parameters,
        "spec": spec_name,
    }, indent=1) + "\n")
