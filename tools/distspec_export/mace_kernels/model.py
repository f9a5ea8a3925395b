"""The fast MACE forward: mace's `MACE` / `ScaleShiftMACE` forward rebuilt from its parts as an
energy function of calling convention 1 (doc/mace_kernels.md, "The fast MACE forward").

What it computes is mace's `node_energy` (models.py, forward): atomic energies E0, then per
interaction the linear up, the convolution (spherical harmonics and the radial MLP of each edge,
tensor product with the sender's features, summed into the receiver), the linear and the division
by the average neighbour count, the self-connection (skip_tp of the element), the product basis
(symmetric contraction per element, linear, plus the residual), the readout; ScaleShiftMACE
scales and shifts the interaction energy. Where it is done differs:

- rows: the contract's edges end on owned rows (a full neighbour list over the owned atoms), so
  every node update runs on the owned rows only [n_owned = N - len(recv_dest), rows.py], and
  halo rows are read only as senders of a convolution. Under `rows.every_row()` (or
  DISTSPEC_EXPORT_EVERY_ROW=1) every node update runs on every row instead, with each interaction
  k >= 1's input refreshed onto the halo rows at its start, as mace's own layer loop would run under
  halo exchanges: the same values, the reference of the tests and of bench/owned_rows;
- layer 0: the node embedding is a linear of the element's one-hot, the first linear up and the
  first residual self-connection are linears of it: three tables of one row per exported element,
  read on every row (the first convolution's senders) without an exchange;
- layers k >= 1: the senders' features are the previous layer's node features through interaction
  k's linear up, computed on owned rows and refreshed onto the halo rows by one forward exchange
  (`halo_forward_static`): one exchange per interaction after the first, as wide as the
  convolution's input (linear_up is row-wise: refreshing its output equals applying it to
  refreshed rows);
- kernels: the convolution, the symmetric contraction and the element's skip_tp are `distspec_mace`
  ops where the library loads (convolution.py: the radial MLP as splines of r;
  symmetric_contraction.py; element_linear.py: each node multiplied by its own element's matrices),
  else mace's own modules with the same calls (module_ops.py), skip_tp folded to one weight matrix
  per exported element (element_linears.py: every element's product, then the row's own);
- head: one head of a multi-head model (its readouts' column, E0s, scale and shift).

`why_unsupported(model)` says what of a model this forward does not rebuild ('' where it does);
`build(model, ...)` returns the energy function and the record of its choices.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

import torch

from .. import element_linears, rows
from ..trace import ExportError
from . import module_ops

MODELS = ("MACE", "ScaleShiftMACE")
INTERACTIONS = ("RealAgnosticInteractionBlock", "RealAgnosticResidualInteractionBlock")
RESIDUAL = "RealAgnosticResidualInteractionBlock"  # its self-connection: skip_tp of the block's input
READOUTS = ("LinearReadoutBlock", "NonLinearReadoutBlock")
MAX_CORRELATION = 3
MAX_L = 3


def _class(module: Any) -> str:
    return type(module).__name__


def _max_l(irreps: Any) -> int:
    return max((ir.l for _, ir in irreps), default=0)


def why_unsupported(model: torch.nn.Module) -> str:
    """'' where this forward rebuilds the model exactly, else the first thing it does not."""
    if _class(model) not in MODELS:
        return f"the model is a {_class(model)}, the fast forward rebuilds {' and '.join(MODELS)}"
    for part, what in (("pair_repulsion", "a ZBL pair repulsion"), ("joint_embedding", "a joint embedding of "
                                                                    "extra node features")):
        if hasattr(model, part):
            return f"the model has {what} ({part})"
    if _class(model.node_embedding) != "LinearNodeEmbeddingBlock":
        return f"its node embedding is a {_class(model.node_embedding)}, not mace's LinearNodeEmbeddingBlock"
    why = module_ops.radial_is_of_length_alone(model.radial_embedding)
    if why:
        return why
    l_sh = _max_l(model.spherical_harmonics.irreps_out)
    if l_sh > MAX_L:
        return f"its spherical harmonics go to l = {l_sh}, the kernels to l = {MAX_L}"
    for k, (block, product) in enumerate(zip(model.interactions, model.products)):
        if _class(block) not in INTERACTIONS:
            return f"interaction {k} is a {_class(block)}; the fast forward rebuilds {', '.join(INTERACTIONS)}"
        if hasattr(block, "conv_fusion") or not hasattr(block.conv_tp, "instructions"):
            return f"interaction {k}'s convolution is not e3nn's TensorProduct (a cuEquivariance or OEQ model)"
        l_feats = max(_max_l(block.node_feats_irreps), _max_l(block.target_irreps))
        if l_feats > MAX_L:
            return f"interaction {k}'s features go to l = {l_feats}, the kernels to l = {MAX_L}"
        contractions = getattr(product.symmetric_contractions, "contractions", None)
        if contractions is None:
            return f"product {k}'s symmetric contraction is {_class(product.symmetric_contractions)}, not mace's own"
        correlation = max(c.correlation for c in contractions)
        if correlation > MAX_CORRELATION:
            return f"product {k} has correlation {correlation}, the kernels up to {MAX_CORRELATION}"
    for k, readout in enumerate(model.readouts):
        if _class(readout) not in READOUTS:
            return f"readout {k} is a {_class(readout)}; the fast forward calls {', '.join(READOUTS)}"
    return ""


@dataclasses.dataclass
class Kernels:
    """The modules of the convolutions, symmetric contractions and skip_tp's, and what they are;
    `element_linears` None: skip_tp by mace's module (module_ops.ModuleElementLinear, folded)."""

    convolutions: list[torch.nn.Module]
    contractions: list[torch.nn.Module]
    element_linears: list[torch.nn.Module] | None
    record: dict


def _op_module(name: str, use_ops: bool):
    """The class `name` of the ops' module (convolution.SplineConvolution,
    symmetric_contraction.SymmetricContraction, element_linear.ElementLinear) with its library
    loaded, or why not."""
    if not use_ops:
        return None, "asked for mace-torch's modules"
    try:
        from . import library  # noqa: PLC0415

        library.load()
        if name == "SplineConvolution":
            from .convolution import SplineConvolution as cls  # noqa: PLC0415
        elif name == "ElementLinear":
            from .element_linear import ElementLinear as cls  # noqa: PLC0415
        else:
            from .symmetric_contraction import SymmetricContraction as cls  # noqa: PLC0415
    except ImportError as e:
        return None, f"its Python module is not in this checkout ({e})"
    except ExportError as e:
        return None, str(e)
    return cls, ""


def kernels(model: torch.nn.Module, element_rows: Sequence[int], dtype: torch.dtype, use_ops: bool = True,
            knots: int | None = None) -> Kernels:
    """Each kernel's `distspec_mace` op module where `use_ops` and the library and the op's module
    are here, else mace's own modules with its call (module_ops.py), and why."""
    record: dict = {}
    why_modules = []
    conv_cls, why = _op_module("SplineConvolution", use_ops)
    if conv_cls is not None:
        convolutions = [conv_cls.from_mace(b, model.radial_embedding, dtype, knots=knots) for b in model.interactions]
        record["convolution"] = "distspec_mace::spline_convolution (radial MLP as cubic Hermite splines of r)"
        record["spline_knots"] = [c.knots for c in convolutions]
        record["spline_error"] = [getattr(c, "spline_error", {}) for c in convolutions]
    else:
        convolutions = [module_ops.ModuleConvolution(b, model.radial_embedding, dtype) for b in model.interactions]
        record["convolution"] = "mace-torch's modules"
        why_modules.append(("convolution", why))
    sc_cls, why = _op_module("SymmetricContraction", use_ops)
    products = [p.symmetric_contractions for p in model.products]
    if sc_cls is not None:
        contractions = [sc_cls.from_mace(s, element_rows, dtype) for s in products]
        record["symmetric_contraction"] = "distspec_mace ops"
    else:
        contractions = [module_ops.ModuleSymmetricContraction(s, element_rows, dtype) for s in products]
        record["symmetric_contraction"] = "mace-torch's modules (per-element weights of the exported elements)"
        why_modules.append(("symmetric contraction", why))
    el_cls, why = _op_module("ElementLinear", use_ops)
    if el_cls is not None:
        # Built from mace's skip_tp as given: before FastMACE would fold it.
        skips = [el_cls.from_mace(b.skip_tp, element_rows, dtype) for b in model.interactions]
        record["element_linear"] = "distspec_mace::element_linear"
    else:
        skips = None
        record["element_linear"] = "mace-torch's skip_tp (folded per exported element where the export folds)"
        why_modules.append(("element linear", why))
    if why_modules:
        # One reason (the library not found) is usually every kernel's: said once, naming them.
        reasons: dict[str, list[str]] = {}
        for part, why in why_modules:
            reasons.setdefault(why, []).append(part)
        record["why_not_ops"] = "; ".join(f"{', '.join(parts)}: {why}" for why, parts in reasons.items())
    return Kernels(convolutions, contractions, skips, record)


class FastMACE(torch.nn.Module):
    """mace's MACE / ScaleShiftMACE as an energy function of the contract (module doc)."""

    def __init__(self, model: torch.nn.Module, element_rows: Sequence[int], head_index: int,
                 dtype: torch.dtype, ops: Kernels):
        super().__init__()
        why = why_unsupported(model)
        if why:
            raise ExportError(f"the fast MACE forward does not rebuild this model: {why}")
        width = len(model.atomic_numbers)
        one_hot = torch.zeros(len(element_rows), width, dtype=dtype)
        one_hot[torch.arange(len(element_rows)), torch.as_tensor(list(element_rows))] = 1.0
        self.head = head_index
        blocks = list(model.interactions)
        self.residual = [_class(b) == RESIDUAL for b in blocks]
        with torch.no_grad():
            # E0 of each exported element, for the head (AtomicEnergiesBlock: one_hot @ E0s^T).
            e0 = one_hot @ torch.atleast_2d(model.atomic_energies_fn.atomic_energies).to(dtype).T
            self.register_buffer("e0", e0[:, head_index].contiguous())
            embedding = model.node_embedding(one_hot)
            self.register_buffer("up_0", blocks[0].linear_up(embedding))
            if self.residual[0]:
                self.register_buffer("sc_0", blocks[0].skip_tp(embedding, one_hot))
        self.scale_shift = None
        if _class(model) == "ScaleShiftMACE":
            scale = torch.atleast_1d(model.scale_shift.scale.detach()).to(dtype)[head_index]
            shift = torch.atleast_1d(model.scale_shift.shift.detach()).to(dtype)[head_index]
            self.register_buffer("scale", scale.clone())
            self.register_buffer("shift", shift.clone())
            self.scale_shift = True
        # skip_tp of each layer (a residual layer 0's is the table sc_0): the op, else mace's module
        # folded to one matrix per element (element_linears). The products are out of the fold's
        # reach while it runs: their contractions are the kernels' (`ops`), and the record must not
        # claim mace's.
        if ops.element_linears is None:
            products = model.products
            model.products = torch.nn.ModuleList()
            try:
                element_linears.fold(model, "mace", list(element_rows))
            finally:
                model.products = products
            skips = [module_ops.ModuleElementLinear(b.skip_tp, one_hot) for b in blocks]
        else:
            skips = ops.element_linears
        self.linear_up = torch.nn.ModuleList([b.linear_up for b in blocks])
        self.linear = torch.nn.ModuleList([b.linear for b in blocks])
        self.skip_tp = torch.nn.ModuleList(skips)
        self.reshape = torch.nn.ModuleList([b.reshape for b in blocks])
        self.avg_num_neighbors = [float(b.avg_num_neighbors) for b in blocks]
        self.product_linear = torch.nn.ModuleList([p.linear for p in model.products])
        self.use_sc = [bool(p.use_sc) for p in model.products]
        self.readouts = torch.nn.ModuleList(list(model.readouts))
        self.convolutions = torch.nn.ModuleList(ops.convolutions)
        self.contractions = torch.nn.ModuleList(ops.contractions)
        self.n_heads = len(getattr(model, "heads", None) or ["Default"])
        self.widths = [int(self.up_0.shape[1])] + [int(b.linear_up.irreps_out.dim) for b in blocks[1:]]

    def forward(self, positions, species, edge_index, n_owned, send_index, recv_dest, recv_real, edge_shift):
        n, n_halo = rows.counts(positions, recv_dest)
        routing = (send_index, recv_dest, recv_real, n_owned, 1)
        # The convolution op reads edges grouped by receiver (convolution.py): one stable sort per
        # call, shared by every interaction.
        order = torch.argsort(edge_index[1], stable=True)
        edge_index = edge_index.index_select(1, order)
        sender, receiver = edge_index[0], edge_index[1]
        # mace's edge vector, receiver minus sender; the contract's edge_shift (zero) is added to
        # the sender's minus the receiver's, so its gradient is dE/d(contract's edge vector).
        vectors = (positions.index_select(0, receiver) - positions.index_select(0, sender)
                   - edge_shift.index_select(0, order))
        # The rows node updates run on: the owned ones, or every row (rows.every_row(): the module doc).
        owned_only = rows.owned_only()
        node_species = rows.owned(species, n, n_halo) if owned_only else species
        n_out = n if owned_only else n + n_halo
        heads = torch.full_like(node_species, self.head)
        node_energy = self.e0.index_select(0, node_species)
        interaction_energy = None
        feats = None  # node features of the updated rows after each product
        n_layers = len(self.convolutions)
        read = []
        for k in range(n_layers):
            if k == 0:
                up = self.up_0.index_select(0, species)  # every row: the first convolution's senders
                sc = self.sc_0.index_select(0, node_species) if self.residual[0] else None
            elif owned_only:
                sc = self.skip_tp[k](feats, node_species) if self.residual[k] else None
                up = torch.ops.nvalchemi.halo_forward_static(rows.padded(self.linear_up[k](feats), n_halo), *routing)
            else:
                feats = torch.ops.nvalchemi.halo_forward_static(feats, *routing)
                sc = self.skip_tp[k](feats, species) if self.residual[k] else None
                up = self.linear_up[k](feats)
            message = self.convolutions[k](up, vectors, edge_index, n_out)
            message = self.linear[k](message) / self.avg_num_neighbors[k]
            if not self.residual[k]:
                message = self.skip_tp[k](message, node_species)
            feats = self.contractions[k](self.reshape[k](message), node_species)
            feats = self.product_linear[k](feats)
            if self.use_sc[k] and sc is not None:
                feats = feats + sc
            read.append(feats)
        for k, readout in enumerate(self.readouts):
            # mace: one readout reads the last layer's features, several read one layer each
            energy = readout(read[-1 if len(self.readouts) == 1 else k], heads)[:, self.head]
            interaction_energy = energy if interaction_energy is None else interaction_energy + energy
        if self.scale_shift is not None:
            interaction_energy = self.scale * interaction_energy + self.shift
        return node_energy + interaction_energy


def build(model: torch.nn.Module, element_rows: Sequence[int], head_index: int, dtype: torch.dtype,
          use_ops: bool = True, knots: int | None = None) -> tuple[FastMACE, dict]:
    """The fast forward of `model` (mace's module rebuilt without e3nn's code generation, in
    `dtype`; its modules are taken into the forward, its skip_tp folded in place) for the exported
    elements (`element_rows[s]`: the model's type of species s), and the record of its choices."""
    why = why_unsupported(model)
    if why:
        raise ExportError(f"the fast MACE forward does not rebuild this model: {why}")
    ops = kernels(model, element_rows, dtype, use_ops, knots)
    fast = FastMACE(model, element_rows, head_index, dtype, ops)
    record = {"forward": "distspec fast MACE forward (node work on owned rows, layer 0 from tables)",
              "halo_exchanges": len(fast.convolutions) - 1, "exchange_widths": fast.widths[1:],
              **ops.record}
    return fast, record
