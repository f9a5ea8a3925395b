"""SevenNet (`sevenn`'s `AtomGraphSequential`, e.g. SevenNet-0) as an energy function of contract 1.

SevenNet calls no halo op itself. Its own LAMMPS parallel mode (`e3gnn/parallel`) sends node
features forward to the ghosts before each convolution after the first; the same is done here,
with the contract's inputs:

- node types: `species` (an index into the exported `elements`) becomes SevenNet's type index
  (its `type_map` of atomic numbers), on every row: layer 0 embeds halo rows from their types,
  so interaction block 0 reads valid halo features without an exchange;
- edges: SevenNet's `edge_index` row 0 is the centre (receiver), row 1 the neighbour (sender),
  the contract's the other way round; `edge_vec` = the sender's row minus the receiver's row
  (halo rows carry image coordinates, so no cell shift) plus the exporter's `edge_shift`, whose
  gradient is SevenNet's own per-edge force (`ForceStressOutputFromEdge` differentiates
  `edge_vec` alike), from which the per-atom virial is built as SevenNet builds its own (each
  edge's -edge_vec (x) g whole on the neighbour: trace.atomic_virials' "sevennet");
- halo refreshes: `halo_forward_static` in each interaction block k >= 1, on the node features
  that its convolution gathers by sender: the output of its self-interaction 1 (e3gnn/parallel
  refreshes x before the block, which is the same, the linear being row-wise);
- rows: node updates run on the owned rows only, except block 0's embedding and
  self-interaction 1, whose halo rows the first convolution reads (`_owned_rows`);
  `rows.every_row()` traces every module on every row with the refresh at the start of the
  block, as before;
- output: SevenNet's `atomic_energy` (after `rescale_atomic_energy`) of the owned rows; its
  total-energy and force modules are left out: the host sums owned energies, the exporter
  differentiates them.

Tracing: `sevenn.nn.convolution.message_gather` sizes its output with `len(node_features)`, and
a multi-fidelity model's `IrrepsLinear` expands its modal one-hot to `len(features)` rows, which
fixes the row count under make_fx; the energy function swaps in the same code with `.shape[0]`. SevenNet-0's weights and its one-hot embedding are fp32: the kind runs in fp32.

`checkpoint(name)` is the factory `--module distspec_export.sevennet:checkpoint` takes (and
`--from sevennet NAME|CHECKPOINT`): a pretrained name ('7net-0', '7net-l3i5', '7net-mf-0') or a
checkpoint path, as `sevenn.util.load_checkpoint` reads it. A multi-fidelity model (7net-mf-0:
modals R2SCAN and PBE) is exported for one modal, as sevenn deploys it for LAMMPS
(`prepare_modal_deploy`: the modal's index fixed in the graph).
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any, Iterator

import torch

from . import element_linears, ops, packages, radial_splines, rows, sniff
from .adapted import Adapted
from .trace import ATOMIC_VIRIAL_PARTITION, ExportError

BLOCK_START = "_self_connection_intro"  # first module of interaction block k: "<k>_self_connection_intro"
LAST_MODULE = "rescale_atomic_energy"   # writes the per-atom energy; total energy and forces follow it


ACCELERATE_FLAGS = {"none": {}, "oeq": {"enable_oeq": True}}


def checkpoint(name: str = "7net-0", accelerate: str = "none", modal: str | None = None) -> torch.nn.Module:
    """SevenNet's model of a pretrained name or checkpoint file (`sevenn.util.load_checkpoint`),
    built with the tensor-product kernels `accelerate` names (sevenn's `enable_oeq` / `enable_cueq`),
    for `modal` where it is multi-fidelity."""
    if accelerate not in ACCELERATE_FLAGS:
        raise ExportError(f"accelerate {accelerate!r}: SevenNet is built with one of {', '.join(ACCELERATE_FLAGS)}")
    try:
        from sevenn.util import load_checkpoint  # noqa: PLC0415
    except ImportError as e:
        raise packages.missing("exporting SevenNet", "sevenn", e) from e
    if accelerate == "oeq":
        try:
            import openequivariance  # noqa: F401, PLC0415
        except Exception as e:  # noqa: BLE001
            raise ExportError("accelerate oeq: openequivariance does not import here (build it against this torch "
                              f"with scripts/build_openequivariance.sh and put OUT/site on PYTHONPATH): {e}") from e
        if not torch.cuda.is_available():
            raise ExportError("accelerate oeq: OpenEquivariance's kernels need a CUDA GPU at export (they are "
                              "generated for the device); export on a GPU machine")
    try:
        loaded = load_checkpoint(name)
    except Exception as e:  # noqa: BLE001
        raise ExportError(f"SevenNet checkpoint {name!r}: sevenn cannot load it ({type(e).__name__}: {e}); give a "
                          "pretrained name (7net-0, 7net-l3i5, 7net-mf-0, ...) or a checkpoint file sevenn wrote") from e
    model = loaded.build_model(**ACCELERATE_FLAGS[accelerate])
    modals = sorted(getattr(model, "modal_map", None) or {})
    if modals:
        if modal is None:
            raise ExportError(f"SevenNet model {name!r} is multi-fidelity (modals {', '.join(modals)}): choose the "
                              "modal to export with --modal NAME")
        if modal not in modals:
            raise ExportError(f"--modal {modal}: the modals of SevenNet model {name!r} are {', '.join(modals)}")
        model.prepare_modal_deploy(modal)
    elif modal is not None:
        raise ExportError(f"--modal {modal}: SevenNet model {name!r} has one fidelity, no modals")
    # sevenn falls back to e3nn, with a warning only, where the accelerator is unusable.
    if accelerate != "none" and not _uses_accelerator(model, accelerate):
        raise ExportError(f"accelerate {accelerate}: sevenn built the model without it (sevenn falls back to e3nn "
                          "where the accelerator does not import or does not support the model)")
    return model


def _uses_accelerator(model: torch.nn.Module, accelerate: str) -> bool:
    marker = {"oeq": "OEQConvolution"}[accelerate]
    return any(marker in type(m).__name__ or marker in type(m).__module__ for m in model.modules())


def _message_gather(node_features: torch.Tensor, edge_dst: torch.Tensor, message: torch.Tensor) -> torch.Tensor:
    """sevenn.nn.convolution.message_gather with the row count a symbolic size: every row's, or
    the owned rows' where the energy function sets `_message_gather.rows` (receivers are owned)."""
    index = edge_dst.view(-1, *([1] * (message.dim() - 1))).expand_as(message)
    n_rows = node_features.shape[0] if _message_gather.rows is None else _message_gather.rows
    out = torch.zeros([n_rows, *message.shape[1:]], dtype=node_features.dtype, device=node_features.device)
    return out.scatter_reduce(0, index, message, reduce="sum")


_message_gather.rows = None


def _patch_modal_to_data(self, data):
    """sevenn.nn.linear.IrrepsLinear._patch_modal_to_data of one graph, with the row count a
    symbolic size (the multi-fidelity models' modal one-hot beside every row's features)."""
    if self._is_batch_data:
        return _patch_modal_to_data.saved(self, data)
    features = data[self.key_input]
    modality = data[self.key_modal_attr].expand(features.shape[0], -1).type(features.dtype)
    data[self.key_input] = torch.cat([features, modality], dim=1)
    return data


@contextlib.contextmanager
def _shape_free_gather() -> Iterator[None]:
    """sevenn's functions that size outputs with len(), which fixes the row count under make_fx,
    swapped for the same code with .shape[0]."""
    from sevenn.nn import convolution, linear  # noqa: PLC0415

    saved = convolution.message_gather, linear.IrrepsLinear._patch_modal_to_data
    convolution.message_gather = _message_gather
    _patch_modal_to_data.saved = saved[1]
    linear.IrrepsLinear._patch_modal_to_data = _patch_modal_to_data
    try:
        yield
    finally:
        convolution.message_gather, linear.IrrepsLinear._patch_modal_to_data = saved


def spec():
    """nvalchemi's halo spec of a gather-only MPNN: halo rows read after a forward refresh."""
    from nvalchemi.distributed.spec import (  # noqa: PLC0415
        DistributionSpec, HaloStoragePolicy, MLIPSpec, OutputKind, OutputSpec)

    return MLIPSpec(distribution=DistributionSpec(policy=HaloStoragePolicy(gather_mode="halo_read")),
                    outputs={"energy": OutputSpec(OutputKind.PER_GRAPH), "forces": OutputSpec(OutputKind.PER_NODE),
                             "stress": OutputSpec(OutputKind.PER_GRAPH),
                             "atomic_energies": OutputSpec(OutputKind.PER_NODE)})


def _blocks(model: torch.nn.Module) -> int:
    names = list(model._modules)
    if LAST_MODULE not in names or "edge_embedding" not in names:
        raise ExportError(f"{type(model).__name__} is not a SevenNet model with modules edge_embedding ... "
                          f"{LAST_MODULE}: {names}")
    blocks = sum(1 for n in names if n.endswith(BLOCK_START))
    if not blocks or any(f"{k}{BLOCK_START}" not in names for k in range(blocks)):
        raise ExportError(f"the SevenNet model's interaction blocks are not named 0{BLOCK_START} ...: {names}")
    return blocks


def adapt(model: Any, elements: list[str], cutoff: float, dtype: torch.dtype, example) -> Adapted:
    del example  # traced by the exporter as it is
    try:
        from ase.data import atomic_numbers as z_of  # noqa: PLC0415 (sevenn depends on ase)
    except ImportError as e:
        raise packages.missing("exporting SevenNet", "sevenn", e) from e
    if dtype != torch.float32:
        raise ExportError("SevenNet runs in fp32 (its weights and one-hot embedding are fp32): use --precision fp32")
    if getattr(model, "modal_map", None) and getattr(model, "eval_modal_map", False):
        raise ExportError(f"the SevenNet model is multi-fidelity (modals {', '.join(sorted(model.modal_map))}) and no "
                          "modal is fixed: export it with --from sevennet NAME --modal MODAL (or the factory's "
                          "modal argument)")
    blocks = _blocks(model)
    model_cutoff = float(model.cutoff)
    if abs(cutoff - model_cutoff) > 1e-9:
        # Its polynomial envelope is not zero beyond the cutoff: the edges must be exactly its.
        raise ExportError(f"cutoff {cutoff} is not the SevenNet model's cutoff {model_cutoff}; use --cutoff "
                          f"{model_cutoff:g}")
    type_map = dict(model.type_map or {})
    unknown = [e for e in elements if z_of.get(e) not in type_map]
    if unknown:
        raise ExportError(f"elements {unknown} are not among the SevenNet model's {len(type_map)} elements")
    type_index = torch.tensor([type_map[z_of[e]] for e in elements], dtype=torch.int64)
    model = element_linears.fold(model, "sevennet", type_index)
    model = radial_splines.replace(model, "sevennet")

    model = model.eval()
    model.set_is_batch_data(False)
    for p in model.parameters():
        p.requires_grad_(False)
    modules = list(model._modules.items())
    modules = modules[:[n for n, _ in modules].index(LAST_MODULE) + 1]
    refresh_before = {f"{k}{BLOCK_START}" for k in range(1, blocks)}

    def energy(positions, species, edge_index, n_owned, send_index, recv_dest, recv_real, edge_shift):
        sender, receiver = edge_index[0], edge_index[1]
        data = {
            "x": type_index.to(positions.device).index_select(0, species),
            "edge_index": torch.stack([receiver, sender]),
            # edge_shift (zero): the exporter's handle on dE/d(edge vector), the per-atom virial.
            "edge_vec": positions.index_select(0, sender) - positions.index_select(0, receiver) + edge_shift,
        }
        routing = (send_index, recv_dest, recv_real, n_owned, 1)
        with _shape_free_gather():
            if not rows.owned_only():
                for name, module in modules:
                    if name in refresh_before:
                        data["x"] = torch.ops.nvalchemi.halo_forward_static(data["x"], *routing)
                    data = module(data)
                return data["atomic_energy"].squeeze(-1)
            return _owned_rows(modules, data, rows.counts(positions, recv_dest), routing)

    # SevenNet's own per-atom virial (ForceStressOutputFromEdge with use_atomic_virial, what its
    # pair_style e3gnn gives compute stress/atom): each edge's, whole, on its neighbour.
    setattr(energy, ATOMIC_VIRIAL_PARTITION, "sevennet")
    return Adapted(energy, "sevennet",
                   f"SevenNet ({type(model).__name__}, {blocks} interaction blocks, cutoff {model_cutoff:g}, "
                   f"{len(type_map)} elements)",
                   f"{type(model).__module__}.{type(model).__qualname__}", spec=spec() if ops.have_nvalchemi() else None,
                   message_passing_layers=blocks, units="metal")


PER_NODE = ("node_attr", "atom_type")  # sevenn's per-node entries beside x (KEY.NODE_ATTR, KEY.ATOM_TYPE)


def _owned_rows(modules, data: dict, counts, routing) -> torch.Tensor:
    """SevenNet's modules on the rows whose results are read: atomic energies [n_owned].

    Receivers are owned rows, so a convolution's result lives there, and so does everything
    after it. Halo rows are read only as senders of a convolution: block 0's (x embedded from
    every row's type, and its self-interaction 1 on every row), and block k >= 1's, whose input
    comes from a refresh. That refresh is taken after self-interaction 1 rather than before the
    block: the linear is row-wise, so its output refreshed equals it applied to a refreshed
    input, and the block's self-connection reads owned rows only. (SevenNet's self-interaction 1
    keeps the width of x, 480 values for SevenNet-0, so the exchanged rows are as wide as before.)
    """
    n, n_halo = counts
    x_owned = False  # x holds the owned rows only (after the first convolution)
    for name, module in modules:
        block, _, part = name.partition("_")
        if block.isdigit() and part == BLOCK_START[1:]:
            # the embedding is done: its per-node entries are read on owned rows from here on
            for key in PER_NODE:
                if key in data:
                    data[key] = rows.owned(data[key], n, n_halo)
            # the self-connection reads owned rows; block 0's x stays whole for self-interaction 1
            x = data["x"]
            data["x"] = rows.owned(x, n, n_halo)
            data = module(data)
            data["x"] = x
        elif block.isdigit() and part == "convolution":
            if x_owned:  # blocks k >= 1: senders' rows from their owners
                data["x"] = torch.ops.nvalchemi.halo_forward_static(rows.padded(data["x"], n_halo), *routing)
            _message_gather.rows = n
            try:
                data = module(data)
            finally:
                _message_gather.rows = None
            data["x"] = rows.owned(data["x"], n, n_halo)  # a fused kernel's output spans every row
            x_owned = True
        else:
            data = module(data)
    return data["atomic_energy"].squeeze(-1)


SERIAL_CONTRACT = "sevennet-serial"


def write_deployed(deployed: str | Path, elements: list[str], cutoff: float, units: str, out_dir: str | Path,
                   name: str, description: str | None = None, source: str | None = None,
                   license: str | None = None, spec: str | Path | None = None) -> Path:  # noqa: A002
    """A model file for SevenNet's own serial module (`sevenn_get_model`'s deployed_serial.pt).

    The module is copied beside the model file as NAME.pt and called by the plugin with
    SevenNet's own inputs (contract "sevennet-serial", lib/models/torch/sevennet_serial.h): one
    MPI rank, periodic images mapped onto their owners. Its spec is nvalchemi's default
    `DistributionSpec()` (local storage: one process, no halo), or `spec`, a file nvalchemi saved,
    where nvalchemi does not import. Returns the model file.
    """
    import shutil  # noqa: PLC0415

    from .files import raw_spec_dict, write_model_file  # noqa: PLC0415

    deployed = Path(deployed)
    if not deployed.is_file():
        raise ExportError(f"--deployed {deployed}: no such file")
    sniff.require("deployed", deployed)
    extra = {"chemical_symbols_to_index": "", "cutoff": "", "dtype": "", "model_type": ""}
    try:
        torch.jit.load(str(deployed), map_location="cpu", _extra_files=extra)
    except Exception as e:  # noqa: BLE001
        raise ExportError(f"--deployed {deployed}: not a TorchScript module: {type(e).__name__}: {e}") from e
    symbols = extra["chemical_symbols_to_index"].decode().split() if extra["chemical_symbols_to_index"] else []
    if not symbols or not extra["cutoff"]:
        raise ExportError(f"--deployed {deployed}: no chemical_symbols_to_index or cutoff in the module: it is not "
                          "one `sevenn_get_model` deployed (without -p)")
    module_cutoff = float(extra["cutoff"].decode())
    if abs(module_cutoff - cutoff) > 1e-9 * max(1.0, module_cutoff):
        raise ExportError(f"--cutoff {cutoff}: the module's cutoff is {module_cutoff}; give that one")
    missing = [e for e in elements if e not in symbols]
    if missing:
        raise ExportError(f"--elements {missing}: not among the module's {len(symbols)} elements")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    graph, spec_file, model_file = out / f"{name}.pt", out / f"{name}.spec.json", out / f"{name}.json"
    if graph.resolve() != deployed.resolve():
        shutil.copyfile(deployed, graph)
    if spec is not None:
        spec_file.write_text(json.dumps(raw_spec_dict(spec), indent=2))
    elif ops.have_nvalchemi():
        from nvalchemi.distributed.spec import DistributionSpec, MLIPSpec  # noqa: PLC0415

        MLIPSpec(DistributionSpec()).save(str(spec_file))
    else:
        raise ExportError("nvalchemi does not import in this Python environment: pass --spec FILE, the local spec "
                          "nvalchemi's MLIPSpec(DistributionSpec()).save() wrote")
    write_model_file(model_file, units, cutoff, elements, {"graph": graph.name, "contract": SERIAL_CONTRACT},
                     spec_file.name,
                     description or f"SevenNet serial module {deployed.name} ({extra['model_type'].decode()}, "
                                    f"{extra['dtype'].decode()}), one MPI rank",
                     source or str(deployed.name), license or "GPL-3.0-only (sevenn)")
    return model_file
