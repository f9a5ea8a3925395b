"""Run a torch test script in one of the bootstrap's Python environments.

ctest starts these scripts with the system python3 and `--python` set to the interpreter it
was configured with (DISTSPEC_PYTHON: torch + nvalchemi-toolkit; DISTSPEC_PYTHON_MACE: the same
plus mace-torch); the environment variable at test time wins. Without such an environment a
script reports itself skipped (exit 77), or failed when CI=true, as unittest/interop does.
"""

from __future__ import annotations

import importlib.util
import os
import sys

SKIP = 77


def _importable(modules: tuple[str, ...]) -> bool:
    return all(importlib.util.find_spec(m) is not None for m in modules)


def ensure(argv: list[str], what: str, var: str = "DISTSPEC_PYTHON", need: tuple[str, ...] = ()) -> list[str]:
    """Return argv without `--python X`, having re-run this script in the environment if needed.

    The environment must import torch, nvalchemi and the modules in `need`; `var` names the
    environment variable of its interpreter.
    """
    modules = ("torch", "nvalchemi", *need)
    python, rest, i = "", [], 0
    while i < len(argv):
        if argv[i] == "--python" and i + 1 < len(argv):
            python, i = argv[i + 1], i + 2
        elif argv[i].startswith("--python="):
            python, i = argv[i].split("=", 1)[1], i + 1
        else:
            rest.append(argv[i])
            i += 1
    if _importable(modules):
        return rest
    python = os.environ.get(var) or python
    if not python or not os.access(python, os.X_OK):
        why = (f"no Python environment with {', '.join(modules)}: {var} is "
               f"{'unset' if not python else repr(python) + ', not an executable'} "
               "(scripts/bootstrap.sh makes it and writes it into env.sh)")
        if os.environ.get("CI", "").strip().lower() in ("true", "1", "yes"):
            print(f"FAIL: {why}; CI=true, so {what} fails instead of skipping")
            sys.exit(1)
        # The line scripts/test_summary.py collects: ctest shows only that the test was skipped.
        print(f"DISTSPEC-SKIP {os.path.basename(sys.argv[0])}: {why}")
        sys.exit(SKIP)
    if os.environ.get("DISTSPEC_IN_ENV"):
        print(f"FAIL: {python} cannot import {', '.join(modules)}")
        sys.exit(1)
    os.environ["DISTSPEC_IN_ENV"] = "1"
    sys.stdout.flush()
    os.execv(python, [python, os.path.abspath(sys.argv[0]), *rest])
    return rest  # not reached
