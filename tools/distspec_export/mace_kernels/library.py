"""Loading libdistspec_mace_ops.so, the C++ and CUDA kernels of the `distspec_mace` ops.

The library is the one pair_style distspec loads beside the plugin: built with the plugin when
LibTorch is found (lib/models/CMakeLists.txt, target distspec_mace_ops), against the torch of the
Python that exports. Found at $DISTSPEC_MACE_OPS_LIBRARY, else in the plugin's build folder
named by $DISTSPEC_PLUGIN (the folder both are built into).
"""

from __future__ import annotations

import os
from pathlib import Path

from ..trace import ExportError

NAMESPACE = "distspec_mace"
LIBRARY = "libdistspec_mace_ops.so"
# The kernels' version this exporter writes graphs for (torch/mace_ops_library.cpp's kKernelsVersion).
KERNELS_VERSION = 1

_faked: set[str] = set()


def library_path() -> Path | None:
    """Where the library is, or None when neither variable names one that exists."""
    env = os.environ.get("DISTSPEC_MACE_OPS_LIBRARY")
    if env:
        return Path(env)
    plugin = os.environ.get("DISTSPEC_PLUGIN")
    if plugin and (Path(plugin).parent / LIBRARY).is_file():
        return Path(plugin).parent / LIBRARY
    return None


def load() -> Path:
    """Loads the library once per process and checks its kernels' version; an ExportError that
    says how to get it otherwise."""
    import torch  # noqa: PLC0415

    path = library_path()
    if hasattr(torch.ops, NAMESPACE) and hasattr(getattr(torch.ops, NAMESPACE), "kernels_version"):
        return path or Path(LIBRARY)
    if path is None:
        raise ExportError(f"MACE's fast kernels need {LIBRARY} (built with the plugin when LibTorch is found, in its "
                          "build folder): set DISTSPEC_MACE_OPS_LIBRARY to it, or export with --accelerate none "
                          "(mace-torch's own modules)")
    if not path.is_file():
        raise ExportError(f"DISTSPEC_MACE_OPS_LIBRARY={path}: no such file; build the plugin with LibTorch "
                          f"(target distspec_mace_ops) and point the variable at {LIBRARY}")
    try:
        torch.ops.load_library(str(path))
    except Exception as e:  # noqa: BLE001
        raise ExportError(f"{path} does not load into this Python's torch {torch.__version__} ({e}); it must be "
                          "built against the same torch (the plugin's Torch_DIR)") from e
    version = int(torch.ops.distspec_mace.kernels_version())
    if version != KERNELS_VERSION:
        raise ExportError(f"{path} has MACE kernels version {version}, this exporter writes graphs for version "
                          f"{KERNELS_VERSION}: rebuild the library from the same checkout as the exporter")
    return path


def register_fakes(op: str, forward, backward) -> None:
    """The fake implementations of `op` and `op`_backward (functions of the ops' arguments that give
    their results' shapes), for tracing with symbolic sizes (make_fx, torch.export); the library
    loaded first, and each op's registered once per process, as torch.library wants."""
    if op in _faked:
        return
    import torch  # noqa: PLC0415

    load()
    torch.library.register_fake(f"{NAMESPACE}::{op}", forward)
    torch.library.register_fake(f"{NAMESPACE}::{op}_backward", backward)
    _faked.add(op)
