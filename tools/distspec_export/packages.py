"""What a route needs installed, and the error that says so when it does not import."""

from __future__ import annotations

import sys

from .trace import ExportError

# package (as pip names it) -> (the exporter's extra, the bootstrap's Python that has it)
EXTRAS = {
    "mace-torch": ("mace", "DISTSPEC_PYTHON_MACE"),
    "sevenn": ("sevennet", "DISTSPEC_PYTHON_SEVENN"),
    "nequip": ("nequip", "DISTSPEC_PYTHON_NEQUIP"),
    "aimnet": ("aimnet", "DISTSPEC_PYTHON"),
}


def missing(needed_for: str, package: str, error: BaseException) -> ExportError:
    """`needed_for` (e.g. "--from mace") needs `package`, which did not import: which one, in which
    environment, and how to get it."""
    extra, python = EXTRAS[package]
    return ExportError(f"{needed_for} needs {package}, which does not import in this Python environment "
                       f"({sys.executable}: {type(error).__name__}: {error}); run distspec-export with the Python that "
                       f"has {package} (the test command's ${python}), or install the exporter there with its "
                       f"extra: pip install './tools[{extra}]'")
