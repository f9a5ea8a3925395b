"""Run a torch test script in the bootstrap's Python environment (torch + nvalchemi-toolkit).

ctest starts these scripts with the system python3 and `--python` set to the DISTSPEC_PYTHON
it was configured with; the environment variable DISTSPEC_PYTHON at test time wins. Without
such an environment a script reports itself skipped (exit 77), or failed when CI=true, as
unittest/interop does.
"""

from __future__ import annotations

import os
import sys

SKIP = 77


def _importable() -> bool:
    try:
        import nvalchemi  # noqa: F401, PLC0415
        import torch  # noqa: F401, PLC0415
    except ImportError:
        return False
    return True


def ensure(argv: list[str], what: str) -> list[str]:
    """Return argv without `--python X`, having re-run this script in the environment if needed."""
    python, rest, i = "", [], 0
    while i < len(argv):
        if argv[i] == "--python" and i + 1 < len(argv):
            python, i = argv[i + 1], i + 2
        elif argv[i].startswith("--python="):
            python, i = argv[i].split("=", 1)[1], i + 1
        else:
            rest.append(argv[i])
            i += 1
    if _importable():
        return rest
    python = os.environ.get("DISTSPEC_PYTHON") or python
    if not python or not os.access(python, os.X_OK):
        why = (f"no Python environment with torch and nvalchemi: DISTSPEC_PYTHON is "
               f"{'unset' if not python else repr(python) + ', not an executable'} "
               "(scripts/bootstrap.sh makes it and writes it into env.sh)")
        if os.environ.get("CI", "").strip().lower() in ("true", "1", "yes"):
            print(f"FAIL: {why}; CI=true, so {what} fails instead of skipping")
            sys.exit(1)
        print(f"SKIPPED: {why}")
        sys.exit(SKIP)
    if os.environ.get("DISTSPEC_IN_ENV"):
        print(f"FAIL: {python} cannot import torch and nvalchemi")
        sys.exit(1)
    os.environ["DISTSPEC_IN_ENV"] = "1"
    sys.stdout.flush()
    os.execv(python, [python, os.path.abspath(sys.argv[0]), *rest])
    return rest  # not reached
