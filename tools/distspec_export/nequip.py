"""NequIP and Allegro (the `nequip` framework's `GraphModel`) as an energy function of contract 1.

NequIP's interaction blocks already mark where a multi-rank run needs its halo: each block after
the first calls a `GhostExchangeModule` on the node features before its tensor-product scatter
(a no-op by default; nequip's LAMMPS ML-IAP integration swaps in LAMMPS' forward exchange). The
same is done here with the contract's op: every such module becomes `halo_forward_static` on
the features, so a block's halo rows read their owners' features, refreshed once per
message-passing layer. Layer 0 embeds every row from its type, so it needs no exchange.

- inputs: nequip's keys as its ML-IAP integration gives them: `edge_vectors` (sender's row minus
  receiver's row: halo rows carry image coordinates, plus the exporter's zero `edge_shift`, whose
  gradient gives the per-atom virial), `edge_index` rows (receiver, sender),
  `atom_types` of every row (the exported elements mapped onto the model's `type_names`);
- output: `atomic_energy` of every row, with nequip's force and stress module disabled
  (`disable_ForceStressOutput`): the exporter differentiates the owned energies itself;
- Allegro is strictly local: its energies are sums over the edges of an atom, with no node
  features passed between atoms, so it has no ghost-exchange module and its graph calls no halo
  op. Its spec is the same halo spec (forces on halo rows folded to their owners); the
  exchanges per step are none, `message_passing_layers` 1.

Its spec, when none is given, is nvalchemi's halo spec of a gather-only MPNN (sevennet.spec()).
"""

from __future__ import annotations

import copy
from typing import Any, Callable

import torch

from . import element_linears, ops, packages, rows
from .adapted import Adapted, Reference
from .trace import ExportError


def _ghost_exchange_classes():
    try:
        from nequip.nn._ghost_exchange_base import GhostExchangeModule, NoOpGhostExchangeModule  # noqa: PLC0415
    except ImportError as e:
        raise packages.missing("exporting a NequIP or Allegro model", "nequip", e) from e
    return GhostExchangeModule, NoOpGhostExchangeModule


def graph_model(model: Any) -> torch.nn.Module:
    """The nequip GraphModel of `model` (a GraphModel, or nequip's dict of them by model key)."""
    if isinstance(model, dict):
        if len(model) != 1:
            raise ExportError(f"the nequip file holds {len(model)} models ({', '.join(model)}); export one")
        model = next(iter(model.values()))
    if not hasattr(model, "metadata") or not hasattr(model, "type_names"):
        raise ExportError(f"{type(model).__name__} is not a nequip GraphModel (no metadata / type_names)")
    return model


def load(path: str) -> torch.nn.Module:
    """A model nequip saved: a training checkpoint (*.ckpt) or a package (*.nequip.zip), eager."""
    try:
        from nequip.model.saved_models.load_utils import load_saved_model  # noqa: PLC0415
        from nequip.model.utils import _EAGER_MODEL_KEY  # noqa: PLC0415
        from nequip.utils.global_state import set_global_state  # noqa: PLC0415
    except ImportError as e:
        raise packages.missing("--from nequip", "nequip", e) from e
    set_global_state()
    try:
        return graph_model(load_saved_model(path, compile_mode=_EAGER_MODEL_KEY))
    except ExportError:
        raise
    except Exception as e:  # noqa: BLE001
        raise ExportError(f"--from nequip {path}: nequip cannot load it ({type(e).__name__}: {e}); give a checkpoint "
                          "(*.ckpt) or a package (*.nequip.zip) nequip wrote, not a nequip-compile output") from e


def package_evaluation(original: Callable[[], Any], elements: list[str], type_names: list[str]) -> Reference:
    """nequip's own evaluation of the model as given (`original()`, in its own `model_dtype`, which
    adapt() requires the export's to be): nequip's ASE conversion and neighbour list of the
    example's periodic crystal (images as edge shifts, no halo), its own force module."""
    cache: dict[str, torch.nn.Module] = {}

    def evaluate(example) -> tuple[torch.Tensor, torch.Tensor]:
        from ase import Atoms  # noqa: PLC0415 (nequip depends on ase)
        from nequip.data import AtomicDataDict, compute_neighborlist_, from_ase  # noqa: PLC0415

        if "model" not in cache:
            cache["model"] = graph_model(original()).eval()
        model = cache["model"]
        n = example.n_owned
        symbols = [elements[s] for s in example.inputs[1][:n].tolist()]
        atoms = Atoms(symbols=symbols, positions=example.inputs[0][:n].detach().to("cpu", torch.float64).numpy(),
                      cell=example.cell.numpy(), pbc=True)
        data = from_ase(atoms)
        data[AtomicDataDict.ATOM_TYPE_KEY] = torch.tensor([type_names.index(e) for e in symbols], dtype=torch.int64)
        data = compute_neighborlist_(data, r_max=float(model.metadata["r_max"]))
        with torch.enable_grad():
            out = model(AtomicDataDict.with_batch_(data))
        return (out[AtomicDataDict.PER_ATOM_ENERGY_KEY].detach().reshape(-1),
                out[AtomicDataDict.FORCE_KEY].detach())

    return Reference("nequip's own evaluation of the model as given (nequip's neighbour list, edge shifts, no halo)",
                     evaluate)


def adapt(model: Any, elements: list[str], cutoff: float, dtype: torch.dtype, example,
          original: Callable[[], Any] | None = None, accelerator: Any = None) -> Adapted:
    """original: the model as the user gave it (its file loaded afresh), for the check's reference;
    None: `model`, which is left as it is (its ghost exchanges are replaced in a copy).
    accelerator: OpenEquivariance (accelerators.py) applies nequip's own `enable_OpenEquivariance`
    modifier to the copy: each block's tensor product and scatter become OpenEquivariance's fused
    convolution, which gathers the senders' features itself, after the block's halo refresh."""
    del example  # traced by the exporter as it is
    given = graph_model(model)
    model = copy.deepcopy(given)
    ghost_base, no_op = _ghost_exchange_classes()
    from nequip.data import AtomicDataDict  # noqa: PLC0415
    from nequip.model.modify_utils import get_all_modifiers, modify  # noqa: PLC0415

    metadata = model.metadata
    model_dtype = {"float64": torch.float64, "float32": torch.float32}.get(str(metadata.get("model_dtype")))
    if model_dtype is not None and model_dtype != dtype:
        raise ExportError(f"the nequip model computes in {metadata['model_dtype']}: export it with --precision "
                          f"{'fp64' if model_dtype == torch.float64 else 'fp32'}")
    if metadata.get("per_edge_type_cutoff"):
        raise ExportError("the nequip model has per-edge-type cutoffs, which the plugin's one cutoff does not prune "
                          "to; export a model with one r_max")
    r_max = float(metadata["r_max"])
    if abs(cutoff - r_max) > 1e-9 * max(1.0, r_max):
        # Its polynomial envelope reaches zero at r_max, and its edges must be exactly those.
        raise ExportError(f"cutoff {cutoff} is not the nequip model's r_max {r_max}; use --cutoff {r_max:g}")
    type_names = list(model.type_names)
    unknown = [e for e in elements if e not in type_names]
    if unknown:
        raise ExportError(f"elements {unknown} are not among the nequip model's type names {type_names}")
    type_index = torch.tensor([type_names.index(e) for e in elements], dtype=torch.int64)

    if "disable_ForceStressOutput" in get_all_modifiers(model):
        model = modify(model, [{"modifier": "disable_ForceStressOutput"}])
    if accelerator is not None:
        model = _accelerated(model, accelerator, get_all_modifiers, modify)
    routing: dict[str, torch.Tensor] = {}

    class HaloRefresh(ghost_base):
        """nequip's ghost exchange as the contract's forward halo refresh of the features: of every
        row, or (`ghost_included` False) of the owned rows nequip's block computed, with zero halo
        rows below them for the refresh to overwrite, as nequip's own LAMMPS exchange does."""

        def forward(self, data, ghost_included: bool = False):
            x = data[self.field]
            if not ghost_included and AtomicDataDict.LMP_MLIAP_DATA_KEY in data:
                x = rows.padded(x, data[AtomicDataDict.LMP_MLIAP_DATA_KEY].ntotal - x.shape[0])
            data[self.field] = torch.ops.nvalchemi.halo_forward_static(
                x, routing["send_index"], routing["recv_dest"], routing["recv_real"], routing["n_owned"], 1)
            return data

    # By class name: a model loaded from a nequip package has the package's own copies of
    # nequip's classes, which are not the ones imported here.
    def named(module, name):
        return any(c.__name__ == name for c in type(module).__mro__)

    blocks = sum(1 for m in model.modules() if named(m, "InteractionBlock"))
    layers = _replace_ghost_exchanges(model, lambda m: named(m, no_op.__name__),
                                      lambda old: HaloRefresh(field=old.field, irreps_in=old.irreps_in))
    if layers != blocks:
        raise ExportError(f"the nequip model has {blocks} interaction blocks but {layers} ghost-exchange modules: "
                          "this nequip version places its halo exchanges elsewhere, which the exporter does not know")
    model = model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    model = element_linears.fold(model, "nequip", type_index)
    allegro = layers == 0

    def energy(positions, species, edge_index, n_owned, send_index, recv_dest, recv_real, edge_shift):
        routing.update(send_index=send_index, recv_dest=recv_dest, recv_real=recv_real, n_owned=n_owned)
        sender, receiver = edge_index[0], edge_index[1]
        data = {
            # edge_shift (zero): the exporter's handle on dE/d(edge vector), the per-atom virial.
            AtomicDataDict.EDGE_VECTORS_KEY: (positions.index_select(0, sender) - positions.index_select(0, receiver)
                                              + edge_shift),
            AtomicDataDict.EDGE_INDEX_KEY: torch.stack([receiver, sender]),
            AtomicDataDict.ATOM_TYPE_KEY: type_index.to(positions.device).index_select(0, species),
        }
        if rows.owned_only():
            # nequip's own owned-row mode, which its LAMMPS ML-IAP integration switches on with this
            # key: the blocks after the first compute owned rows and refresh after linear_1.
            n, n_halo = rows.counts(positions, recv_dest)
            data[AtomicDataDict.LMP_MLIAP_DATA_KEY] = OwnedRows(n, n + n_halo)
        return model(data)[AtomicDataDict.PER_ATOM_ENERGY_KEY].reshape(-1).to(positions.dtype)

    name = "Allegro" if allegro else "NequIP"
    return Adapted(energy, "nequip",
                   f"{name} (nequip GraphModel, {'strictly local' if allegro else f'{layers} interaction blocks'}, "
                   f"r_max {r_max:g}, types {' '.join(type_names)})",
                   f"{type(model).__module__}.{type(model).__qualname__}",
                   spec=_spec if ops.have_nvalchemi() else None, message_passing_layers=1 if allegro else layers,
                   cutoff=r_max, reference=package_evaluation(original or (lambda: given), elements, type_names))


class OwnedRows:
    """What nequip's interaction blocks read of LAMMPS' ML-IAP data (`nlocal`, rows computed after
    the first block) and its ghost exchange (`ntotal`, rows it exchanges), here symbolic sizes:
    nequip (0.19) then computes the node updates of its blocks after the first on owned rows only,
    refreshing the halo rows of the features after `linear_1` (its `InteractionBlock.forward`),
    and its per-type scale and shift on the rows it is given."""

    def __init__(self, nlocal, ntotal):
        self.nlocal, self.ntotal = nlocal, ntotal


def _accelerated(model: torch.nn.Module, accelerator: Any, get_all_modifiers, modify) -> torch.nn.Module:
    """The model with nequip's modifier for `accelerator`, on the device of its parameters."""
    modifier = {"openequivariance": "enable_OpenEquivariance"}.get(accelerator.name)
    if modifier is None or modifier not in get_all_modifiers(model):
        raise ExportError(f"--accelerate {accelerator.key}: this nequip model has no {accelerator.name} modifier "
                          f"(an Allegro model, or a nequip without it); export it with --accelerate none")
    device = next(model.parameters()).device
    try:
        return modify(model, [{"modifier": modifier}]).to(device)
    except ImportError as e:
        raise ExportError(f"--accelerate {accelerator.key}: {accelerator.name} does not import here (build it against "
                          "this torch with scripts/build_openequivariance.sh and put OUT/site on PYTHONPATH): "
                          f"{e}") from e


def _replace_ghost_exchanges(model: torch.nn.Module, match, factory) -> int:
    """Replaces, in place, every submodule `match` accepts by `factory(old)`; how many."""
    count = 0
    for name, child in list(model.named_children()):
        if match(child):
            model._modules[name] = factory(child)
            count += 1
        else:
            count += _replace_ghost_exchanges(child, match, factory)
    return count


def _spec():
    from .sevennet import spec  # noqa: PLC0415

    return spec()
