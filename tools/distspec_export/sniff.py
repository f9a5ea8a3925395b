"""What a file given to a route looks like, told from its bytes without loading it: the records of
the zip archive PyTorch writes and the names its pickle holds (the module of a pickled class, a
dict's keys: plain text in the pickle protocol torch.save uses), never by running its code. A file
of the wrong kind then gets an error naming it, what it is, and the route that takes it, instead
of whatever the wrong package raises deep inside its loader.

The plugin tells the same kinds apart when such a file is given to pair_coeff
(lib/models/not_model_file.cpp).
"""

from __future__ import annotations

import dataclasses
import json
import zipfile
from pathlib import Path

from .trace import ExportError

ROUTES = ("mace", "sevennet", "nequip", "deployed", "module", "spec")


@dataclasses.dataclass(frozen=True)
class Sniffed:
    kind: str            # one of the keys of TAKEN_BY, or a generic kind ("torch_save", "zip", ...)
    looks_like: str      # "a MACE model saved by mace-torch (...)"
    taken_by: str        # what to do with it: the route that takes it, or how to get what a route takes


def _archive_kind(z: zipfile.ZipFile, path: str) -> Sniffed:
    names = z.namelist()
    inner = [n.split("/", 1)[1] if "/" in n else n for n in names]

    def has(name: str) -> bool:
        return any(i == name or (name.endswith("/") and i.startswith(name)) for i in inner)

    def stored(suffix: str, text: bytes) -> bool:
        for info in z.infolist():
            if info.filename.endswith(suffix) and info.compress_type == zipfile.ZIP_STORED and info.file_size < 1 << 26:
                if text in z.read(info):
                    return True
        return False

    beside = str(Path(path).with_suffix(".json"))
    if any("data/aotinductor/" in n for n in names):
        if stored("_metadata.json", b"distspec.json"):
            return Sniffed("distspec_graph", "an AOTInductor package (.pt2) distspec-export wrote: an exported graph",
                           f"it is exported already: give pair_coeff its model file {beside}; to export the model "
                           "again, give the exporter the file its package saved")
        if any("nequip" in n for n in names) or stored("_metadata.json", b"r_max"):
            return Sniffed("nequip_compiled", "an AOTInductor package nequip-compile wrote (for nequip's own pair "
                           "style)", f"give --from nequip the checkpoint (*.ckpt) or package (*.nequip.zip) it was "
                           "compiled from")
        return Sniffed("aoti", "an AOTInductor package (.pt2, data/aotinductor/ inside)",
                       "give the exporter the model as its package saved it (--from mace|sevennet|nequip FILE), or "
                       "build it with --module")
    if has("constants.pkl") and has("code/"):
        if has("extra/distspec.json"):
            return Sniffed("distspec_graph", "a TorchScript module (.pt) distspec-export wrote: an exported graph",
                           f"it is exported already: give pair_coeff its model file {beside}; to export the model "
                           "again, give the exporter the file its package saved")
        if has("extra/chemical_symbols_to_index"):
            return Sniffed("sevennet_deployed", "a TorchScript module SevenNet deployed (sevenn_get_model)",
                           f"--deployed {path} --elements ... --cutoff ... --units metal")
        if has("extra/r_max") or has("extra/type_names") or any("nequip" in n for n in names):
            return Sniffed("nequip_compiled", "a TorchScript module nequip-compile wrote (for nequip's own pair style)",
                           "give --from nequip the checkpoint (*.ckpt) or package (*.nequip.zip) it was compiled from")
        return Sniffed("torchscript", "a TorchScript module (a zip archive with code/ and constants.pkl)",
                       "give the exporter the model as its package saved it (--from mace|sevennet|nequip FILE), or "
                       "build it with --module")
    if has(".data/extern_modules"):
        if has("nequip/"):  # nequip's own code, packaged with the model
            return Sniffed("nequip_package", "a nequip package (nequip-package's *.nequip.zip, a torch.package "
                           "archive)", f"--from nequip {path}")
        return Sniffed("torch_package", "a torch.package archive (.data/extern_modules inside)",
                       "load it in a factory of your own and export that with --module FILE.py:FACTORY")
    if has("data.pkl"):
        pickle = next((z.read(i) for i in z.infolist() if i.filename.split("/", 1)[-1] == "data.pkl"), b"")
        if b"mace.modules" in pickle:
            return Sniffed("mace_model", "a MACE model saved by mace-torch (a torch.save zip archive whose data.pkl "
                           "names mace.modules classes)", f"--from mace {path}")
        if b"pytorch-lightning_version" in pickle:
            if b"nequip" in pickle:
                return Sniffed("nequip_checkpoint", "a nequip training checkpoint (a PyTorch Lightning *.ckpt naming "
                               "nequip)", f"--from nequip {path}")
            return Sniffed("lightning_checkpoint", "a PyTorch Lightning checkpoint (*.ckpt)",
                           "load it in a factory of your own and export that with --module FILE.py:FACTORY")
        if b"model_state_dict" in pickle and b"config" in pickle:
            return Sniffed("sevennet_checkpoint", "a SevenNet checkpoint (a torch.save zip archive of a dict with "
                           "'config' and 'model_state_dict', as sevenn writes checkpoint_best.pth)",
                           f"--from sevennet {path} --precision fp32")
        if b"aimnet" in pickle:
            return Sniffed("aimnet_model", "an AIMNet2 model saved with torch.save (its data.pkl names aimnet "
                           "classes)", "load it in a factory of your own and export that with --module "
                           "FILE.py:FACTORY (model kind aimnet)")
        return Sniffed("torch_save", "a file torch.save wrote (a zip archive with data.pkl)",
                       "give --from the model as its package saved it, or load it in a factory of your own and "
                       "export that with --module FILE.py:FACTORY")
    shown = ", ".join(names[:4]) + (", ..." if len(names) > 4 else "")
    return Sniffed("zip", f"a zip archive ({shown}), not one PyTorch writes",
                   "give the model as its package saved it (doc/torch_models.md)")


def _json_kind(doc, path: str) -> Sniffed:
    if isinstance(doc, dict) and doc.get("format") == "distspec-model":
        return Sniffed("distspec_model_file", "a DISTSPEC model file (what distspec-export writes)",
                       f"it is exported already: give it to pair_coeff (pair_coeff * * {path} ELEMENTS)")
    if isinstance(doc, dict) and "core" in doc and "version" in doc:
        return Sniffed("mlip_spec", "an MLIPSpec (a spec file nvalchemi saved)",
                       f"it is a spec: give it with --spec {path}, beside the model")
    return Sniffed("json", "a JSON file that is neither a model file nor an MLIPSpec",
                   "give the model as its package saved it (doc/torch_models.md)")


def sniff(path: str | Path) -> Sniffed:
    """What the file at `path` looks like (a missing path and a folder included)."""
    p = Path(path)
    if not p.exists():
        return Sniffed("missing", "no such file", "check the path")
    if p.is_dir():
        return Sniffed("directory", "a folder, not a file", "give the file inside it")
    try:
        with open(p, "rb") as f:
            head = f.read(8)
    except OSError as e:
        return Sniffed("unreadable", f"a file that cannot be read ({e.strerror})", "check its permissions")
    if head.startswith(b"PK\x03\x04"):
        try:
            with zipfile.ZipFile(p) as z:
                return _archive_kind(z, str(path))
        except (zipfile.BadZipFile, OSError):
            return Sniffed("zip", "a zip archive cut short (no central directory)", "copy it again")
    if len(head) >= 2 and head[0] == 0x80 and 2 <= head[1] <= 5:
        return Sniffed("pickle", "a Python pickle (torch.save's legacy format, or pickle.dump)",
                       "save the model again with a current torch.save, as its package does")
    if head.startswith(b"\x89HDF\r\n\x1a\n"):
        return Sniffed("hdf5", "an HDF5 file", "give the model as its package saved it (doc/torch_models.md)")
    if head.startswith(b"\x1f\x8b"):
        return Sniffed("gzip", "a gzip-compressed file", "uncompress it first")
    text = p.read_bytes()[:1 << 16]
    if b"\0" in text:
        return Sniffed("binary", f"a binary file (it starts {head!r})", "give the model as its package saved it "
                       "(doc/torch_models.md)")
    if text.lstrip()[:1] in (b"{", b"["):
        try:
            return _json_kind(json.loads(p.read_text()), str(path))
        except (ValueError, UnicodeDecodeError):
            pass
    return Sniffed("text", "a text file that is no PyTorch file", "give the model as its package saved it "
                   "(doc/torch_models.md)")


# What each route takes: kinds it accepts as they are, and kinds it hands to its package to judge
# (a torch.save file of an unknown class may be a MACE subclass; sevenn reads checkpoints of other
# shapes than its own).
TAKES = {
    "mace": {"mace_model", "torch_save", "pickle"},
    "sevennet": {"sevennet_checkpoint", "torch_save", "pickle"},
    "nequip": {"nequip_checkpoint", "nequip_package", "lightning_checkpoint", "torch_package"},
    "deployed": {"sevennet_deployed", "torchscript"},
    "spec": {"mlip_spec"},
}
ROUTE_NAMES = {"mace": "--from mace", "sevennet": "--from sevennet", "nequip": "--from nequip",
               "deployed": "--deployed", "spec": "--spec", "module": "--module"}


def require(route: str, path: str | Path) -> Sniffed:
    """The file `route` was given, or ExportError naming it, what it looks like and what takes it."""
    s = sniff(path)
    if s.kind in TAKES[route] or s.kind == "missing":
        return s
    raise ExportError(f"{ROUTE_NAMES[route]} {path}: this is {s.looks_like}, which {ROUTE_NAMES[route]} does not "
                      f"take; {advice(s)}")


def advice(s: Sniffed) -> str:
    """What to do with a file of this kind: the command that takes it, or what to give instead."""
    if s.taken_by.startswith("--"):
        return f"export it with `distspec-export {s.taken_by} --out DIR --name NAME`"
    return s.taken_by
