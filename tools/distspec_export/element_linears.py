"""Element-specialised linears: modules whose second operand depends on the element alone, folded
at export into weights per exported element, indexed by each row's element.

An e3nn tensor product `TP(x, a)` whose second operand `a` is `Nx0e` (N scalars) is bilinear, and
with scalars for `a` each path is `out_w = c * sum_{u,v} W[u,v,w] x_u a_v` (per component of the
irrep), c = the path's normalisation (`path_weight`: irrep and path normalisation, fan-in, alpha)
divided by sqrt(2l+1) (e3nn's Wigner 3j of (l, 0, l) is the identity over sqrt(2l+1)). Where `a` is
the same row A[e] for every atom of element e (a one-hot of the element, or a type embedding), the
product is the linear map `out = x @ W_e`, `W_e[u,w] = c * sum_v A[e,v] W[u,v,w]`, the same for every
atom of e. For a one-hot, W_e is the weight slice at e's column, so the fold costs one linear per
element the export keeps instead of N (SevenNet's and MACE's 89-wide tables).

A module whose only input is the one-hot (an e3nn Linear of it: SevenNet's and MACE's node
embeddings) computes each row from that row alone, so it is a table of one row per element: its own
output on each element's one-hot. MACE's symmetric contraction contracts weights [n_types, ...]
with the one-hot: kept to the exported elements' rows and columns, it drops only products with zeros.

Which modules receive such an operand is a fact of each package's architecture (`SITES`): the pass
folds only those, after checking that the operand is what the architecture says (the one-hot module
and its width, or the type embedding), and that the folded module equals the original on random
features of every exported element; where a check fails the original module stays and the record
says why. `fold()` is called by the adapters (sevennet.py, mace.py, nequip.py) on the model they
trace; `recording()` (export.py) says whether to fold and collects what was folded.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import functools
import math
from typing import Any, Callable, Iterator, Sequence

import torch

# Relative deviation of a folded module from the original on random features above which it is
# not folded: the same products summed in another order (fp64 ~1e-16, fp32 ~1e-7 per term).
SELF_CHECK = {torch.float64: 1e-12, torch.float32: 1e-5}


@dataclasses.dataclass
class Record:
    """What the pass did in one export: modules folded and modules kept (with why)."""

    enabled: bool = True
    folded: list[dict] = dataclasses.field(default_factory=list)
    kept: list[dict] = dataclasses.field(default_factory=list)

    def as_json(self) -> dict:
        return {"enabled": self.enabled, "folded": self.folded, "kept": self.kept}


_RECORD: contextvars.ContextVar[Record | None] = contextvars.ContextVar("element_linears_record", default=None)
_ORIGINAL: contextvars.ContextVar[bool] = contextvars.ContextVar("element_linears_original", default=False)


@contextlib.contextmanager
def recording(enabled: bool = True) -> Iterator[Record]:
    """Inside, fold() folds (or, with enabled False, leaves every module as it is) and records
    into the Record yielded. Outside any, fold() folds and records nothing: the adapters keep
    their signatures, and the exporter alone decides."""
    record = Record(enabled)
    token = _RECORD.set(record)
    try:
        yield record
    finally:
        _RECORD.reset(token)


@contextlib.contextmanager
def originals() -> Iterator[None]:
    """Inside, every folded module calls the module it replaced (the export's check compares the
    graph with the model as given)."""
    token = _ORIGINAL.set(True)
    try:
        yield
    finally:
        _ORIGINAL.reset(token)


def using_originals() -> bool:
    """Whether originals() is in force (radial_splines.RadialSpline follows it too)."""
    return _ORIGINAL.get()


def with_originals(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` run with the original modules (originals()); its signature and attributes (the
    per-atom virial's partition) are fn's."""
    @functools.wraps(fn)
    def run(*args, **kwargs):
        with originals():
            return fn(*args, **kwargs)
    return run


class _Folded(torch.nn.Module):
    """A folded module: the element of each row from its operand, and the module it replaced
    (kept for originals(); unused in the trace)."""

    def __init__(self, original: torch.nn.Module, rows: torch.Tensor):
        super().__init__()
        self.original = original
        self.n_elements = rows.shape[0]
        columns = _one_hot_columns(rows)
        # One-hot rows: the element is the hot column among the kept ones. Other rows (a type
        # embedding): the kept row equal to the operand's (the operand is a copy of one of them).
        # On the rows' device: a model moved to the GPU before the fold indexes its operand there.
        self.register_buffer("columns", torch.tensor(columns if columns is not None else [], dtype=torch.int64,
                                                     device=rows.device))
        self.register_buffer("rows", rows.detach().clone() if columns is None else rows.new_zeros(0))

    def element(self, operand: torch.Tensor) -> torch.Tensor:
        """Each row's index among the exported elements [n] (int64)."""
        if self.columns.numel():
            return operand.index_select(-1, self.columns).argmax(-1)
        return (operand.unsqueeze(-2) == self.rows).all(-1).to(torch.int64).argmax(-1)


def _one_hot_columns(rows: torch.Tensor) -> list[int] | None:
    """The hot column of each row where every row is a one-hot, else None."""
    hot = rows == 1
    if not bool(((rows == 0) | hot).all()) or not bool((hot.sum(-1) == 1).all()):
        return None
    return hot.to(torch.int64).argmax(-1).tolist()


class FoldedTensorProduct(_Folded):
    """e3nn's `TensorProduct(x, a)` with `a` a per-element row: per output irrep,
    out[i] = sum over its paths of x_path[i] @ W_path[element_i]."""

    def __init__(self, tp: torch.nn.Module, rows: torch.Tensor):
        super().__init__(tp, rows)
        self.dim_in = tp.irreps_in1.dim
        in_slices = tp.irreps_in1.slices()
        weights: dict[int, list] = {}
        for _, ins, w in tp.weight_views(yield_instruction=True):
            mul_ir_out = tp.irreps_out[ins.i_out]
            c = ins.path_weight / math.sqrt(mul_ir_out.ir.dim)
            # W_e[u, w] = c * sum_v A[e, v] W[u, v, w]; a one-hot row picks W[:, e, :] exactly.
            per_element = c * torch.einsum("ev,uvw->euw", rows.to(w.dtype), w.detach())
            weights.setdefault(ins.i_out, []).append((ins.i_in1, per_element))
        self.blocks: list[tuple[int, int, list[tuple[int, int, int, str]]]] = []
        for i_out, mul_ir in enumerate(tp.irreps_out):
            paths = []
            for i_in1, per_element in weights.get(i_out, []):
                name = f"w_{i_out}_{i_in1}"
                k, mul_in, mul_out = per_element.shape
                # [u, K * w]: one matmul gives every exported element's output.
                self.register_buffer(name, per_element.permute(1, 0, 2).reshape(mul_in, k * mul_out).contiguous())
                sl = in_slices[i_in1]
                paths.append((sl.start, sl.stop, mul_in, name))
            self.blocks.append((mul_ir.mul, mul_ir.ir.dim, paths))

    def forward(self, x: torch.Tensor, operand: torch.Tensor, weight: torch.Tensor | None = None) -> torch.Tensor:
        if _ORIGINAL.get():
            return self.original(x, operand, weight) if weight is not None else self.original(x, operand)
        # Sizes spelled out, no -1: a rank of no atom has 0 rows, and reshape cannot infer from 0.
        shape = x.shape[:-1]
        n, k = math.prod(shape), self.n_elements
        x = x.reshape(n, self.dim_in)
        element = self.element(operand.reshape(n, operand.shape[-1])) if k > 1 else None
        outs = []
        for mul_out, d, paths in self.blocks:
            if not paths:
                outs.append(x.new_zeros(n, mul_out * d))
                continue
            acc = None
            for start, stop, mul_in, name in paths:
                # [n, d, u] @ [u, K * w]: the irrep's d components share the weights.
                y = torch.matmul(x[:, start:stop].reshape(n, mul_in, d).transpose(1, 2), getattr(self, name))
                acc = y if acc is None else acc + y
            if element is not None:
                acc = acc.reshape(n, d, k, mul_out).gather(
                    2, element.view(n, 1, 1, 1).expand(n, d, 1, mul_out)).reshape(n, d, mul_out)
            outs.append(acc.transpose(1, 2).reshape(n, mul_out * d))
        out = outs[0] if len(outs) == 1 else torch.cat(outs, dim=1)
        return out.reshape(*shape, out.shape[-1])


class FoldedTable(_Folded):
    """A module of the one-hot alone (e3nn's Linear of it): its output row for each element."""

    def __init__(self, module: torch.nn.Module, rows: torch.Tensor):
        super().__init__(module, rows)
        with torch.no_grad():
            self.register_buffer("table", module(rows).detach().clone())

    def forward(self, operand: torch.Tensor) -> torch.Tensor:
        if _ORIGINAL.get():
            return self.original(operand)
        shape = operand.shape[:-1]
        flat = operand.reshape(math.prod(shape), operand.shape[-1])
        out = self.table.index_select(0, self.element(flat))
        return out.reshape(*shape, self.table.shape[-1])


class FoldedContraction(_Folded):
    """One output irrep of mace's symmetric contraction (`Contraction(x, y)`, y the element's
    one-hot): its weights [n_types, ...] are contracted with y, so only the kept elements' rows and
    y's kept columns enter; the terms dropped are products with zeros."""

    def __init__(self, contraction: torch.nn.Module, rows: torch.Tensor):
        super().__init__(contraction, rows)
        if not self.columns.numel():
            raise ValueError("its operand is not a one-hot")
        self.correlation = contraction.correlation
        # mace's contraction graphs (opt_einsum's), shared with the original: einsums of any size.
        self.graph_opt_main = contraction.graph_opt_main
        self.contractions_weighting = contraction.contractions_weighting
        self.contractions_features = contraction.contractions_features
        for nu in range(1, self.correlation + 1):
            self.register_buffer(f"u_{nu}", contraction.U_tensors(nu).detach().clone())
        self.register_buffer("weights_max", contraction.weights_max.detach().index_select(0, self.columns).clone())
        self.n_weights = len(contraction.weights)
        for i, w in enumerate(contraction.weights):
            self.register_buffer(f"weights_{i}", w.detach().index_select(0, self.columns).clone())

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        if _ORIGINAL.get():
            return self.original(x, y)
        y = y.index_select(-1, self.columns)
        out = self.graph_opt_main(getattr(self, f"u_{self.correlation}"), self.weights_max, x, y)
        for i in range(self.n_weights):
            c = self.contractions_weighting[i](getattr(self, f"u_{self.correlation - i - 1}"),
                                               getattr(self, f"weights_{i}"), y)
            out = self.contractions_features[i](c + out, x)
        return out.reshape(out.shape[0], math.prod(out.shape[1:]))


@dataclasses.dataclass
class Site:
    """A module to fold: `parent.<attr>`, named `name` in the model, and the row of its one-hot
    (or type-embedding) operand for each exported element; or why it is kept as it is."""

    name: str
    parent: torch.nn.Module
    attr: str
    kind: str             # "tp": a tensor product (x, operand); "table": a module of the operand alone;
                          # "contraction": mace's symmetric contraction of one irrep (x, operand)
    rows: torch.Tensor | None = None
    why_kept: str = ""


def _named(module: Any, *names: str) -> bool:
    # By class name: a model loaded from a package file has the package's own copies of classes.
    return any(c.__name__ in names for c in type(module).__mro__)


def _is_e3nn_tp(module: Any) -> bool:
    return _named(module, "TensorProduct") and all(hasattr(module, a) for a in ("weight_views", "instructions",
                                                                                "irreps_in1", "irreps_in2"))


def _is_e3nn_linear(module: Any) -> bool:
    return _named(module, "Linear") and all(hasattr(module, a) for a in ("instructions", "irreps_in", "irreps_out"))


def _tp_why_not(tp: Any, width: int) -> str:
    """Why the tensor product cannot be folded with a `width`-wide scalar operand ('' if it can)."""
    if not _is_e3nn_tp(tp):
        return f"{type(tp).__module__}.{type(tp).__name__} is not e3nn's TensorProduct"
    in2 = tp.irreps_in2
    if len(in2) != 1 or in2[0].ir.l != 0 or in2[0].ir.p != 1 or in2.dim != width:
        return f"its second operand's irreps are {in2}, not {width}x0e"
    if not getattr(tp, "internal_weights", False) or not getattr(tp, "shared_weights", False):
        return "its weights are not its own shared weights"
    bad = [ins for ins in tp.instructions if ins.connection_mode != "uvw" or not ins.has_weight]
    if bad:
        return f"paths {[(i.i_in1, i.i_in2, i.i_out, i.connection_mode) for i in bad]} are not weighted 'uvw' paths"
    return ""


def _one_hot_rows(width: int, type_index: Sequence[int], dtype: torch.dtype, device) -> torch.Tensor:
    rows = torch.zeros(len(type_index), width, dtype=dtype, device=device)
    for k, t in enumerate(type_index):
        rows[k, int(t)] = 1.0
    return rows


def _param_of(module: torch.nn.Module) -> torch.Tensor:
    """A tensor of the model, for its dtype and device."""
    for t in module.parameters():
        return t
    return next(iter(module.buffers()))


def sevennet_sites(model: torch.nn.Module, type_index: Sequence[int]) -> list[Site]:
    """SevenNet: its one-hot (OnehotEmbedding: one_hot(type, num_classes) into `x` and, for the
    self-connections, `node_attr`); the linear embedding of it that follows (`onehot_to_feature_x`),
    and each SelfConnectionIntro's tensor product of the features with `node_attr` (a
    `self_connection_type: nequip` model; SevenNet-0's self-connections are linears of the features
    alone, SelfConnectionLinearIntro, with nothing to fold)."""
    modules = list(model._modules.items())
    # The element's one-hot is of the atom types in `x` (a multi-fidelity model has another, of its modal).
    onehots = [(k, m) for k, (_, m) in enumerate(modules) if _named(m, "OnehotEmbedding") and m.key_x == "x"]
    if len(onehots) != 1:
        return [Site("model", model, "", "", why_kept=f"{len(onehots)} OnehotEmbedding modules of the types in x, "
                                                       "expected 1")]
    at, onehot = onehots[0]
    p = _param_of(model)
    rows = _one_hot_rows(onehot.num_classes, type_index, p.dtype, p.device)
    sites = []
    # Keys that hold the one-hot after OnehotEmbedding; another module writing one ends it.
    holds = {onehot.key_output, onehot.key_additional_output} - {None}
    for name, module in modules[at + 1:]:
        if _named(module, "IrrepsLinear") and module.key_input in holds:
            if getattr(module, "num_modalities", 0) > 1:
                why = "its input is the one-hot with the multi-fidelity modal one-hot beside it"
            elif not _is_e3nn_linear(module.linear):
                why = f"{type(module.linear).__name__} is not e3nn's Linear"
            elif module.linear.irreps_in.dim != onehot.num_classes:
                why = f"its input irreps {module.linear.irreps_in} are not the {onehot.num_classes}-wide one-hot"
            else:
                why = ""
            sites.append(Site(f"{name}.linear", module, "linear", "table", rows, why))
        if _named(module, "SelfConnectionIntro") and module.key_operand in holds:
            tp = module.fc_tensor_product
            sites.append(Site(f"{name}.fc_tensor_product", module, "fc_tensor_product", "tp", rows,
                              _tp_why_not(tp, onehot.num_classes)))
        elif _named(module, "SelfConnectionIntro"):
            sites.append(Site(f"{name}.fc_tensor_product", module, "fc_tensor_product", "tp",
                              why_kept=f"its operand {module.key_operand!r} is not the one-hot ({sorted(holds)})"))
        holds -= {getattr(module, "key_output", None)}
    return sites


# mace's interaction blocks whose skip_tp is called as skip_tp(features, node_attrs).
MACE_ATTR_SKIP_BLOCKS = ("RealAgnosticInteractionBlock", "RealAgnosticResidualInteractionBlock",
                         "RealAgnosticDensityInteractionBlock", "RealAgnosticDensityResidualInteractionBlock")


def mace_sites(model: torch.nn.Module, type_index: Sequence[int]) -> list[Site]:
    """MACE: `node_attrs` is the one-hot of the atomic-number table (the adapter's, mace's
    data loader's): the node embedding is a linear of it alone, each interaction's skip_tp
    (MACE_ATTR_SKIP_BLOCKS) is the tensor product of the features with it, and each product's
    symmetric contraction contracts its weights per element with it (unless element-agnostic)."""
    width = len(model.atomic_numbers)
    p = _param_of(model)
    rows = _one_hot_rows(width, type_index, p.dtype, p.device)
    sites = []
    embedding = getattr(model, "node_embedding", None)
    if embedding is not None and _named(embedding, "LinearNodeEmbeddingBlock"):
        linear = embedding.linear
        why = "" if _is_e3nn_linear(linear) and linear.irreps_in.dim == width else (
            f"{type(linear).__name__} of irreps {getattr(linear, 'irreps_in', '?')} is not e3nn's Linear of the "
            f"{width}-wide one-hot")
        sites.append(Site("node_embedding.linear", embedding, "linear", "table", rows, why))
    for k, block in enumerate(model.interactions):
        tp = getattr(block, "skip_tp", None)
        if tp is None or not _named(tp, "TensorProduct", "FullyConnectedTensorProduct"):
            continue  # a Linear of the features alone (no element in it)
        why = (_tp_why_not(tp, width) if type(block).__name__ in MACE_ATTR_SKIP_BLOCKS else
               f"{type(block).__name__} is not one of mace's blocks known to call skip_tp(features, node_attrs)")
        sites.append(Site(f"interactions.{k}.skip_tp", block, "skip_tp", "tp", rows, why))
    for k, product in enumerate(getattr(model, "products", [])):
        symmetric = getattr(product, "symmetric_contractions", None)
        if symmetric is None or not hasattr(symmetric, "contractions"):
            continue  # cuequivariance's: not folded
        why = "its product is element-agnostic (use_agnostic_product)" if getattr(
            product, "use_agnostic_product", False) else ""
        for j, contraction in enumerate(symmetric.contractions):
            if not why and (not _named(contraction, "Contraction") or contraction.weights_max.shape[0] != width):
                why = f"{type(contraction).__name__} has no weights per element of the {width}-wide table"
            sites.append(Site(f"products.{k}.symmetric_contractions.contractions.{j}", symmetric.contractions, str(j),
                              "contraction", rows, why))
    return sites


def nequip_sites(model: torch.nn.Module, type_index: Sequence[int]) -> list[Site]:
    """NequIP: `node_attrs` is the type embedding (NodeTypeEmbed: a torch Embedding row per type,
    not a one-hot), and each InteractionBlock's self-connection `sc` is the tensor product of the
    features with it. Allegro has no such module."""
    embeds = [m for m in model.modules() if _named(m, "NodeTypeEmbed")]
    blocks = [(n, m) for n, m in model.named_modules() if _named(m, "InteractionBlock") and getattr(m, "sc", None)
              is not None]
    if not blocks:
        return []
    if len(embeds) != 1:
        return [Site(n + ".sc", m, "sc", "tp", why_kept=f"{len(embeds)} NodeTypeEmbed modules, expected 1")
                for n, m in blocks]
    embed = embeds[0]
    if getattr(embed, "do_categorical_graph_field_embed", False):
        return [Site(n + ".sc", m, "sc", "tp", why_kept="node_attrs carries a graph-field embedding beside the type's")
                for n, m in blocks]
    table = embed.embed_module.weight.detach()
    rows = table.index_select(0, torch.as_tensor(list(type_index), dtype=torch.int64, device=table.device))
    return [Site(n + ".sc", m, "sc", "tp", rows, _tp_why_not(m.sc, table.shape[1])) for n, m in blocks]


SITES: dict[str, Callable[[torch.nn.Module, Sequence[int]], list[Site]]] = {
    "sevennet": sevennet_sites, "mace": mace_sites, "nequip": nequip_sites}


def _self_check(site: Site, folded: torch.nn.Module, original: torch.nn.Module) -> str:
    """'' where the folded module equals the original on random features of every exported
    element, else by how much it differs."""
    rows = site.rows
    gen = torch.Generator(device="cpu").manual_seed(0)
    element = torch.arange(rows.shape[0]).repeat(4)
    operand = rows.index_select(0, element.to(rows.device))
    with torch.no_grad():
        if site.kind != "table":
            shape = ((original.irreps_in1.dim,) if site.kind == "tp" else
                     (original.num_features, original.coupling_irreps.dim))
            x = torch.randn(element.shape[0], *shape, generator=gen, dtype=torch.float64)
            x = x.to(device=rows.device, dtype=rows.dtype)
            want, got = original(x, operand), folded(x, operand)
        else:
            want, got = original(operand), folded(operand)
    scale = max(1.0, float(want.abs().max())) if want.numel() else 1.0
    deviation = float((want.double() - got.double()).abs().max()) / scale if want.numel() else 0.0
    if deviation > SELF_CHECK.get(rows.dtype, 1e-5):
        return f"the folded module differs from it by {deviation:.1e} (relative) on random features"
    return ""


def _macs_per_row(site: Site, module: torch.nn.Module, k: int) -> tuple[int, int]:
    """Multiply-adds per row before and after the fold."""
    if site.kind == "table":
        return module.irreps_in.dim * module.irreps_out.dim, 0
    if site.kind == "contraction":
        # The weights' contraction with the one-hot: one multiply-add per weight and table column.
        per_type = sum(w[0].numel() for w in [module.weights_max, *module.weights])
        return per_type * module.weights_max.shape[0], per_type * k
    before = after = 0
    for ins in module.instructions:
        mul_in, mul2, mul_out = ins.path_shape
        d = module.irreps_out[ins.i_out].ir.dim
        before += mul_in * mul2 * mul_out * d
        after += mul_in * k * mul_out * d
    return before, after


def fold(model: torch.nn.Module, kind: str, type_index: Sequence[int] | torch.Tensor,
         log: Callable[[str], None] | None = None) -> torch.nn.Module:
    """Replaces, in `model` itself, each module of SITES[kind] whose operand is the element's by its
    fold for the exported elements (`type_index[s]`: the model's type of species s); returns
    `model`. Records into recording()'s Record.

    In place, not on a copy: a deep copy of e3nn 0.4's modules (MACE's) compiles their code with
    TorchScript again, which pins the traced graph's sizes. The original modules stay inside the
    folded ones (originals())."""
    record = _RECORD.get() or Record()
    if not record.enabled:
        return model
    type_index = [int(t) for t in (type_index.tolist() if torch.is_tensor(type_index) else type_index)]
    for site in SITES[kind](model, type_index):
        if site.why_kept:
            record.kept.append({"module": site.name, "why": site.why_kept})
            continue
        original = getattr(site.parent, site.attr)
        try:
            folded = {"tp": FoldedTensorProduct, "table": FoldedTable, "contraction": FoldedContraction}[site.kind](
                original, site.rows)
            why = _self_check(site, folded, original)
        except Exception as e:  # noqa: BLE001 (a module of a form the fold does not know stays)
            why = f"folding it failed: {type(e).__name__}: {e}"
        if why:
            record.kept.append({"module": site.name, "why": why})
            if log:
                log(f"element linears: {site.name} kept: {why}")
            continue
        setattr(site.parent, site.attr, folded)
        before, after = _macs_per_row(site, original, len(type_index))
        record.folded.append({"module": site.name, "as": {"tp": "per-element weights", "table": "per-element table",
                                                          "contraction": "per-element contraction"}[site.kind],
                              "elements": len(type_index),
                              "macs_per_row": [before, after]})
    return model
