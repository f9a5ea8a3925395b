#!/usr/bin/env python3
"""distspec-export given a file of the wrong kind, on every route (ctest torch.wrong_files*, label torch).

Each route takes one kind of file: `--from mace` a model mace-torch saved, `--from sevennet` a
SevenNet checkpoint, `--from nequip` a nequip checkpoint or package, `--deployed` SevenNet's
deployed module, `--module` Python, `--spec` an MLIPSpec. Given any other kind (each of the
others, a graph or model file distspec-export wrote, a zip, text, a binary file), the exporter
must stop with exit 2 and one error line (no traceback) that names the file, says what it looks
like and names the route that takes it. A route whose package does not import in the
environment says which package and how to get it.

The files: the toy fixtures' graph, model file and spec (make_fixtures.py); where the set's
package is here, files that package wrote (`--set mace`: the MACE fixture mace-torch saved;
`--set sevennet`: sevenn's own checkpoint of SevenNet-0; `--set nequip`: the nequip fixtures'
training checkpoint and package); and stand-ins written by torch.save, torch.jit.save and
torch.package with what those packages put in them (a pickled class of mace.modules, a dict
with 'config' and 'model_state_dict', a Lightning checkpoint naming nequip, SevenNet's extra
files), for the packages this environment lacks.

  test_wrong_files.py --fixtures DIR [--set toy|mace|sevennet|nequip] [--python PYTHON]
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import sys
import traceback
import types
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1] / "tools"))

from results import Results  # noqa: E402

# kind -> (words of what it looks like, words of what takes it; FILE is the file, BESIDE its .json)
EXPECTED = {
    "mace_model": ("a MACE model saved by mace-torch", "distspec-export --from mace FILE"),
    "sevennet_checkpoint": ("a SevenNet checkpoint", "distspec-export --from sevennet FILE --precision fp32"),
    "nequip_checkpoint": ("a nequip training checkpoint", "distspec-export --from nequip FILE"),
    "nequip_package": ("a nequip package", "distspec-export --from nequip FILE"),
    "sevennet_deployed": ("a TorchScript module SevenNet deployed", "distspec-export --deployed FILE"),
    "distspec_aoti": ("an AOTInductor package (.pt2) distspec-export wrote", "give pair_coeff its model file BESIDE"),
    "distspec_ts": ("a TorchScript module (.pt) distspec-export wrote", "give pair_coeff its model file BESIDE"),
    "model_file": ("a DISTSPEC model file", "give it to pair_coeff"),
    "spec": ("an MLIPSpec", "give it with --spec FILE"),
    "zip": ("a zip archive (", "give the model as its package saved it"),
    "text": ("a text file that is no PyTorch file", "give the model as its package saved it"),
    "binary": ("a binary file", "give the model as its package saved it"),
}
# What each route takes (the rest is wrong for it); --module and --spec take no saved model.
TAKES = {"mace": {"mace_model"}, "sevennet": {"sevennet_checkpoint"},
         "nequip": {"nequip_checkpoint", "nequip_package"}, "deployed": {"sevennet_deployed"},
         "module": set(), "spec": {"spec"}}
MODULE_AND_SPEC_KINDS = ("mace_model", "distspec_aoti", "model_file", "binary")
PACKAGES = {"mace": ("mace", "mace-torch", "tools[mace]"), "sevennet": ("sevenn", "sevenn", "tools[sevennet]"),
            "nequip": ("nequip", "nequip", "tools[nequip]")}


def importable(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


@contextlib.contextmanager
def stand_in_module(qualname: str, cls_name: str, base):
    """A class `cls_name` of module `qualname` (and its parents), for torch.save to pickle by name."""
    parts = qualname.split(".")
    added = []
    for i in range(len(parts)):
        name = ".".join(parts[:i + 1])
        if name not in sys.modules:
            sys.modules[name] = types.ModuleType(name)
            added.append(name)
    cls = type(cls_name, (base,), {"__module__": qualname})
    setattr(sys.modules[qualname], cls_name, cls)
    try:
        yield cls
    finally:
        for name in added:
            del sys.modules[name]


def stand_ins(work: Path) -> dict[str, tuple[Path, str]]:
    """kind -> (file, where it comes from) written here by torch's own writers."""
    import torch  # noqa: PLC0415
    from torch.package import PackageExporter  # noqa: PLC0415

    work.mkdir(parents=True, exist_ok=True)
    files: dict[str, tuple[Path, str]] = {}
    if not importable("mace"):
        with stand_in_module("mace.modules.models", "ScaleShiftMACE", torch.nn.Module) as cls:
            model = cls()
            model.r_max = torch.tensor(4.5)
            torch.save(model, work / "stand_in.model")
        files["mace_model"] = (work / "stand_in.model", "torch.save of a mace.modules.models.ScaleShiftMACE stand-in")
    torch.save({"model_state_dict": {"w": torch.zeros(2)}, "config": {"cutoff": 5.0, "version": "0.13.0"},
                "epoch": 1}, work / "checkpoint_best.pth")
    files["sevennet_checkpoint"] = (work / "checkpoint_best.pth", "torch.save of sevenn's checkpoint keys")
    torch.save({"epoch": 2, "pytorch-lightning_version": "2.5.0", "state_dict": {"model.w": torch.zeros(2)},
                "hyper_parameters": {"info_dict": {"nequip_version": "0.19.1"}}}, work / "last.ckpt")
    files["nequip_checkpoint"] = (work / "last.ckpt", "torch.save of a Lightning checkpoint naming nequip")
    with PackageExporter(str(work / "stand_in.nequip.zip")) as package:
        package.extern("**")
        package.save_text("nequip", "metadata.txt", "r_max: 4.0")
    files["nequip_package"] = (work / "stand_in.nequip.zip", "torch.package with a nequip/ record")

    class Deployed(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x

    torch.jit.save(torch.jit.script(Deployed()), str(work / "deployed_serial.pt"),
                   _extra_files={"chemical_symbols_to_index": "Si O", "cutoff": "5.0", "dtype": "single"})
    files["sevennet_deployed"] = (work / "deployed_serial.pt", "torch.jit.save with SevenNet's extra files")
    with zipfile.ZipFile(work / "notes.zip", "w") as z:
        z.writestr("notes/readme.txt", "not a model")
    files["zip"] = (work / "notes.zip", "zipfile")
    (work / "notes.txt").write_text("pair_style eam\n")
    files["text"] = (work / "notes.txt", "text")
    (work / "weights.bin").write_bytes(b"\x01\x02\x00\x03" * 16)
    files["binary"] = (work / "weights.bin", "bytes with NUL")
    return files


def package_files(fixtures: Path, which: str) -> dict[str, tuple[Path, str]]:
    """kind -> (file, where it comes from) that the set's own package wrote."""
    files: dict[str, tuple[Path, str]] = {}
    if which == "mace":
        import make_fixtures  # noqa: PLC0415

        saved = fixtures / make_fixtures.COMMAND_LINE["mace_heads_L2"][1]
        if not saved.is_file():  # the mace set's fixtures not made: the same model saved the same way
            import mace_model  # noqa: PLC0415
            import torch  # noqa: PLC0415

            saved = fixtures / "wrong_files_mace" / "mace_L2.model"
            saved.parent.mkdir(parents=True, exist_ok=True)
            torch.save(mace_model.build(), saved)
        files["mace_model"] = (saved, "mace-torch's model file, torch.save of its ScaleShiftMACE")
    elif which == "sevennet":
        import make_fixtures  # noqa: PLC0415

        files["sevennet_checkpoint"] = (Path(make_fixtures.sevennet_checkpoint_file("7net-0")),
                                        "sevenn's checkpoint of SevenNet-0")
    elif which == "nequip":
        import make_fixtures  # noqa: PLC0415

        files["nequip_package"] = (fixtures / make_fixtures.NEQUIP_PACKAGED["package"], "nequip-package's package")
        files["nequip_checkpoint"] = (fixtures / "nequip_train" / "last.ckpt", "nequip-train's checkpoint")
    return files


def export_files(fixtures: Path) -> dict[str, tuple[Path, str]]:
    """What distspec-export wrote for the toy fixtures: graphs, model file, spec."""
    return {"distspec_aoti": (fixtures / "toy_mpnn_L2.pt2", "toy fixture"),
            "distspec_ts": (fixtures / "toy_mpnn_L2_ts.pt", "toy fixture"),
            "model_file": (fixtures / "toy_mpnn_L2.json", "toy fixture"),
            "spec": (fixtures / "toy_mpnn_L2.spec.json", "toy fixture")}


def argv_for(route: str, file: Path, out: Path) -> list[str]:
    tail = ["--out", str(out), "--name", "wrong"]
    plain = ["--elements", "Cu", "Ni", "--cutoff", "4.5", "--units", "metal"]
    if route in ("mace", "sevennet", "nequip"):
        return ["--from", route, str(file), *tail]
    if route == "deployed":
        return ["--deployed", str(file), "--elements", "Si", "--cutoff", "5", "--units", "metal", *tail]
    if route == "module":
        return ["--module", f"{file}:build", *plain, *tail]
    return ["--module", f"{HERE / 'toy_mpnn.py'}:build", "--spec", str(file), *plain, "--format", "torchscript", *tail]


def run_cli(argv: list[str]) -> tuple[int, str]:
    """distspec-export's exit code and all it wrote to standard error (a traceback included)."""
    from distspec_export import cli  # noqa: PLC0415

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = cli.main(argv)
        except SystemExit as e:
            code = e.code
        except BaseException:  # noqa: BLE001 (what a user would see: the traceback)
            traceback.print_exc()
            code = "traceback"
    return code, err.getvalue()


def check_route(results: Results, route: str, kind: str, file: Path, origin: str, out: Path) -> None:
    code, text = run_cli(argv_for(route, file, out))
    looks, taken = EXPECTED[kind]
    taken = taken.replace("FILE", str(file)).replace("BESIDE", str(file.with_suffix(".json")))
    message = text.strip().splitlines()[-1] if text.strip() else ""
    missing = [part for part in (str(file), looks, taken) if part not in message]
    ok = code == 2 and not missing and "Traceback" not in text and len(text.strip().splitlines()) == 1
    results.report(ok, f"{'--from ' + route if route in PACKAGES else '--' + route} given {kind} ({origin})",
                   f"exit {code}; " + (f"missing {missing}; " if missing else "") + message[:400])


def check_missing_packages(results: Results, files: dict[str, tuple[Path, str]], out: Path) -> None:
    """A route whose package does not import here says which package and how to get it."""
    for route, (module, package, extra) in PACKAGES.items():
        if importable(module):
            continue
        kind = {"mace": "mace_model", "sevennet": "sevennet_checkpoint", "nequip": "nequip_checkpoint"}[route]
        file, origin = files[kind]
        code, text = run_cli(argv_for(route, file, out))
        message = text.strip().splitlines()[-1] if text.strip() else ""
        missing = [p for p in (f"needs {package}", "does not import in this Python environment", extra) if p not in message]
        results.report(code == 2 and not missing and "Traceback" not in text,
                       f"--from {route} without {package} in the environment ({origin})",
                       f"exit {code}; " + (f"missing {missing}; " if missing else "") + message[:300])


def main(argv: list[str] | None = None) -> int:
    import make_fixtures  # noqa: PLC0415

    argv = make_fixtures.environment(sys.argv[1:] if argv is None else argv, "the wrong-files test")
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--fixtures", required=True, help="folder of make_fixtures.py's output (the toy set at least)")
    p.add_argument("--set", choices=("toy", "mace", "sevennet", "nequip"), default="toy")
    args = p.parse_args(argv)
    fixtures = Path(args.fixtures)
    work = fixtures / f"wrong_files_{args.set}"
    results = Results()
    files = stand_ins(work)
    files.update(export_files(fixtures))
    own = package_files(fixtures, args.set)
    for kind, (file, origin) in own.items():
        results.report(file.is_file(), f"{origin} is there", str(file))
    files.update({k: v for k, v in own.items() if v[0].is_file()})
    absent = [f"{kind} {file}" for kind, (file, _) in files.items() if not file.is_file()]
    if absent:
        results.report(False, "the files to give are there", "missing: " + ", ".join(absent))
    for route, takes in TAKES.items():
        kinds = MODULE_AND_SPEC_KINDS if route in ("module", "spec") else EXPECTED
        for kind in kinds:
            if kind in takes or kind not in files or not files[kind][0].is_file():
                continue
            check_route(results, route, kind, files[kind][0], files[kind][1], work / "out")
    check_missing_packages(results, files, work / "out")
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
