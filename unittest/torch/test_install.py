#!/usr/bin/env python3
"""distspec-export as a user installs it (ctest torch.exporter_install, label torch).

A user runs `pip install ./tools` (or `./tools[mace]`, `./tools[sevennet]`, `./tools[nequip]`) in an environment
of their own that already has torch. Here each new environment is layered on one of the
bootstrap's (which hold exactly the versions tools/pyproject.toml lists as tested), and pip runs
with `--no-index`: the install passes only if the package's requirements and each extra's are
met by those tested versions, with nothing to download.

Then, from a folder outside the checkout, the installed console script `distspec-export` must
be the installed package's (not the checkout's), and it must write the same model file and spec
as the checkout's `tools/distspec-export` for the same toy model; its refusals exit 2.

  test_install.py --work DIR [--python PYTHON]

Prints one line per check and `N passed, N failed` last.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))

import in_env  # noqa: E402
from results import Results  # noqa: E402

LAYERS = (("", "DISTSPEC_PYTHON"), ("mace", "DISTSPEC_PYTHON_MACE"), ("sevennet", "DISTSPEC_PYTHON_SEVENN"),
          ("nequip", "DISTSPEC_PYTHON_NEQUIP"))
TOY_ARGS = ["--module", f"{HERE / 'toy_mpnn.py'}:build", "--elements", "Cu", "Ni", "--cutoff", "4.5",
            "--units", "metal", "--format", "torchscript", "--name", "toy"]
# Fields of a model file that name where or when it was made, not what it is.
VOLATILE = ("source",)


def run(cmd: list[str], cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


def last_line(p: subprocess.CompletedProcess) -> str:
    return ((p.stderr.strip() or p.stdout.strip()).splitlines() or [""])[-1][:200]


def layered_venv(python: str, where: Path) -> Path:
    """A fresh venv at `where` that sees `python`'s environment (as scripts/bootstrap.sh layers)."""
    shutil.rmtree(where, ignore_errors=True)
    subprocess.run([python, "-m", "venv", str(where)], check=True, capture_output=True)
    purelib = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    site = subprocess.run([str(where / "bin" / "python"), "-c",
                           "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    Path(site, "base-env.pth").write_text(f"import site; site.addsitedir({purelib!r})\n")
    # The new venv's own setuptools (Debian's, older than torch asks for) would shadow the
    # environment's, as no user environment with torch in it has.
    subprocess.run([str(where / "bin" / "python"), "-m", "pip", "uninstall", "-y", "-q", "setuptools"],
                   check=True, capture_output=True)
    return where


def comparable(model_file: Path) -> dict:
    d = json.loads(model_file.read_text())
    for key in VOLATILE:
        d.pop(key, None)
    # A TorchScript archive holds a serialization id of its own each time it is saved, so two
    # exports of one model differ in their graph's digest (the spec's must agree).
    d.get("parameters", {}).pop("graph_sha256", None)
    return d


def main(argv: list[str] | None = None) -> int:
    argv = in_env.ensure(sys.argv[1:] if argv is None else argv, "the exporter install test")
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--work", required=True, help="scratch folder (emptied)")
    args = p.parse_args(argv)
    work = Path(args.work).resolve()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    from nvalchemi.distributed.spec import SPEC_MPNN_HALO  # noqa: PLC0415

    SPEC_MPNN_HALO.save(work / "mpnn.spec.json")
    TOY_ARGS.extend(["--spec", str(work / "mpnn.spec.json")])
    results = Results()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "DISTSPEC_IN_ENV")}

    # pip builds in the source folder (build/, *.egg-info): a copy keeps the checkout clean.
    source = work / "tools"
    shutil.copytree(REPO / "tools" / "distspec_export", source / "distspec_export",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(REPO / "tools" / "pyproject.toml", source)
    for extra, var in LAYERS:
        python = os.environ.get(var) or (sys.executable if not extra else "")
        name = f"pip install ./tools{f'[{extra}]' if extra else ''}"
        if not python or not os.access(python, os.X_OK):
            results.report(False, name, f"{var} names no Python environment (scripts/bootstrap.sh makes it)")
            continue
        venv = layered_venv(python, work / f"venv-{extra or 'base'}")
        target = f"{source}{f'[{extra}]' if extra else ''}"
        pip = run([str(venv / "bin" / "python"), "-m", "pip", "install", "--no-index", "--no-build-isolation",
                   "--disable-pip-version-check", "--no-input", target], work, env)
        results.report(pip.returncode == 0, f"{name} (no index: the tested versions meet its requirements)",
                       "installed" if pip.returncode == 0 else last_line(pip))
        if pip.returncode != 0 or extra:
            continue

        script = venv / "bin" / "distspec-export"
        where = run([str(venv / "bin" / "python"), "-c", "import distspec_export; print(distspec_export.__file__)"],
                    work, env)
        purelib = run([str(venv / "bin" / "python"), "-c",
                       "import sysconfig; print(sysconfig.get_paths()['purelib'])"], work, env).stdout.strip()
        results.report(where.returncode == 0 and where.stdout.strip().startswith(purelib),
                       "the installed package is the environment's, not the checkout's", where.stdout.strip()
                       or last_line(where))

        installed = run([str(script), *TOY_ARGS, "--out", str(work / "installed")], work, env)
        checkout = run([sys.executable, str(REPO / "tools" / "distspec-export"), *TOY_ARGS,
                        "--out", str(work / "checkout")], work, env)
        ok = installed.returncode == 0 and checkout.returncode == 0
        results.report(ok, "distspec-export (installed) exports the toy model",
                       installed.stdout.strip().splitlines()[0] if ok else
                       f"installed: {last_line(installed)}; checkout: {last_line(checkout)}")
        if ok:
            same_model = comparable(work / "installed" / "toy.json") == comparable(work / "checkout" / "toy.json")
            same_spec = ((work / "installed" / "toy.spec.json").read_text() ==
                         (work / "checkout" / "toy.spec.json").read_text())
            results.report(same_model and same_spec, "installed and checkout write the same model file and spec",
                           f"model file {'equal' if same_model else 'DIFFERS'}, spec {'equal' if same_spec else 'DIFFERS'}")
        refused = run([str(script), *TOY_ARGS, "--cutoff", "3.0", "--out", str(work / "refused")], work, env)
        results.report(refused.returncode == 2 and "own cutoff 4.5" in refused.stderr,
                       "the installed command refuses a cutoff below the model's", f"exit {refused.returncode}: "
                       f"{last_line(refused)}")
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
