"""The files an export writes beside the graph: the spec as nvalchemi saves it, and the DISTSPEC
model file (doc/torch_models.md)."""

from __future__ import annotations

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
        try:
            raw = json.loads(path.read_text())
        except OSError as e:
            raise ExportError(f"cannot read the spec file {path}: {e.strerror}") from e
        except json.JSONDecodeError as e:
            raise ExportError(f"the spec file {path} is not JSON: {e}") from e
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
    try:
        d = json.loads(Path(spec).read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise ExportError(f"cannot read the spec file {spec}: {e}") from e
    if not isinstance(d, dict) or not isinstance(d.get("core"), dict):
        raise ExportError(f"the spec file {spec} is not an MLIPSpec as nvalchemi saves it (no 'core' object)")
    return d


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


def write_model_file(path: Path, units: str, cutoff: float, elements: list[str], parameters: dict[str, Any],
                     spec_name: str, description: str, source: str, license: str) -> None:  # noqa: A002
    """A DISTSPEC model file of the torch kind (doc/torch_models.md)."""
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
