"""One MACE interaction's convolution as the op `distspec_mace::spline_convolution`: each edge's
radial weights from spline tables, its spherical harmonics and its "uvu" tensor product with the
sender's features, summed into the receiver's row in one kernel, with no per-edge tensor kept,
forward or backward (lib/models/mace/spline_convolution.h; doc/mace_kernels.md).

`SplineConvolution.from_mace(interaction_block, radial_embedding, dtype, knots=None)` builds the
op's tables from a RealAgnosticInteractionBlock or RealAgnosticResidualInteractionBlock and the
model's RadialEmbeddingBlock; `forward(node_feats_up, vectors, edge_index, n_out)` equals mace's

    scatter_sum(conv_tp(node_feats_up[sender], sh(vectors), conv_tp_weights(radial(lengths))),
                receiver, dim_size=n_out)

with the radial chain (Bessel basis, polynomial envelope, radial MLP; the envelope on the MLP's
output where apply_cutoff is False) replaced by its cubic Hermite spline in r. What stays outside:
linear_up before, `linear` and the division by avg_num_neighbors after, the skip connection, ZBL
pair repulsion (a separate energy term of the model).

The op's contract (the whole-model forward calls it through this module):

    spline_convolution(Tensor node_feats, Tensor vectors, Tensor senders, Tensor receivers,
                       SymInt n_out, Tensor spline, float r_max, Tensor paths, Tensor cg_ijk,
                       Tensor cg_value, int out_dim) -> Tensor message
    spline_convolution_backward(Tensor grad_message, Tensor node_feats, Tensor vectors,
                       Tensor senders, Tensor receivers, Tensor spline, float r_max, Tensor paths,
                       Tensor cg_ijk, Tensor cg_value) -> (Tensor grad_node_feats, Tensor grad_vectors)

- node_feats [n_rows, C * D_in]: linear_up's output, e3nn's layout (irreps in order, each
  mul-major: column in_offset + u * (2 l1 + 1) + i); float32 or float64, the op's dtype.
- vectors [E, 3], same dtype: mace's edge vectors, positions[receiver] - positions[sender] +
  shift (A); r = |v| is taken in float64. Edges with r >= r_max or r = 0 contribute nothing.
- senders, receivers int64 [E]: edge_index[0] and edge_index[1]. Edges must be grouped by
  receiver, receivers non-decreasing (the caller sorts once per neighbour list, e.g. a stable
  argsort of edge_index[1]); every receiver < n_out (rows >= n_out are not computed, so edges into
  them must be dropped); senders index any row of node_feats (owned or halo).
- n_out: the receiver rows, the owned rows in a distributed run; message is [n_out, out_dim].
- spline [K, 2, P, C] (op dtype): at r_k = k r_max / (K - 1), [k, 0, p, u] the weight of path p,
  channel u (e3nn's flattened conv_tp weight column p * C + u) and [k, 1, p, u] its d/dr (1/A).
- paths int64 [P, 7]: l1, l2, l3, in_offset, out_offset, cg_begin, cg_end (offsets in columns of
  a row of node_feats and of message; the path's CG entries are cg rows [cg_begin, cg_end)).
- cg_ijk int64 [N, 3], cg_value [N] (op dtype): the nonzero entries (i, j, k) of the module's
  Wigner 3j symbol (its own buffer where it keeps one, else e3nn's wigner_3j in fp64) times the
  path's normalisation (e3nn's Instruction.path_weight), j
  indexing Y_l2; message[r, out_offset + u (2 l3 + 1) + k] += R_pu cg x[s, in_offset + u (2 l1 +
  1) + i] Y_l2,j.
- message [n_out, out_dim], out_dim = conv_tp.irreps_out.dim: e3nn's layout of the tensor
  product's irreps_out (mace's irreps_mid, one block per path, sorted, not simplified).
- gradients: grad_node_feats [n_rows, C * D_in] (every row: halo rows get the senders' share),
  grad_vectors [E, 3]; the backward op itself is not differentiable (forces and virials only).
"""

from __future__ import annotations

import copy

import torch

from . import library
from ..radial_splines import hermite, spline_error, tabulate  # noqa: F401 (hermite: the tests' evaluation)
from ..trace import ExportError

# Knots of the radial tables unless the caller asks: at r_max = 6 A, h = 6 / 511 = 0.0117 A. Chosen
# from the errors measured on MACE-MP-0-medium-sized interactions (doc/mace_kernels.md, ctest
# torch.mace_convolution): d message / d vectors within 1.3e-6 of its largest value (256 knots:
# 8.6e-6), so forces of order 1 eV/A move by about 1e-6 eV/A, a hundred times below 1e-4.
DEFAULT_KNOTS = 512
# The interaction blocks whose convolution is exactly scatter_sum(conv_tp(x[sender], Y, MLP(radial)))
# (mace/modules/blocks.py, mace-torch 0.3.15).
BLOCKS = ("RealAgnosticInteractionBlock", "RealAgnosticResidualInteractionBlock")
PATH_COLUMNS = 7
MAX_L = 3


def _register_fakes() -> None:
    """The ops' shapes for tracing with symbolic sizes (make_fx, torch.export)."""
    library.register_fakes(
        "spline_convolution",
        lambda node_feats, vectors, senders, receivers, n_out, spline, r_max, paths, cg_ijk, cg_value, out_dim:
            node_feats.new_empty((n_out, out_dim)),
        lambda grad_message, node_feats, vectors, senders, receivers, spline, r_max, paths, cg_ijk, cg_value:
            (node_feats.new_empty(node_feats.shape), vectors.new_empty(vectors.shape)))


def _why_not(interaction_block: torch.nn.Module, radial_embedding: torch.nn.Module) -> str:
    """'' where the op can stand in for the block's convolution, else the setting that prevents it."""
    from e3nn import o3  # noqa: PLC0415

    name = type(interaction_block).__name__
    if name not in BLOCKS:
        return f"{name} is not one of {', '.join(BLOCKS)} (whose convolution the op reproduces)"
    if hasattr(interaction_block, "conv_fusion"):
        return f"{name} fuses its convolution (conv_fusion of a cuEquivariance or OEQ configuration)"
    if hasattr(radial_embedding, "distance_transform"):
        return (f"radial_embedding.distance_transform ({type(radial_embedding.distance_transform).__name__}, "
                "distance_transform='Agnesi' or 'Soft') makes the radial weights depend on the elements of both "
                "ends, not on r alone")
    tp = interaction_block.conv_tp
    if not isinstance(tp, o3.TensorProduct):
        return f"conv_tp is {type(tp).__name__}, not e3nn's TensorProduct (a cuEquivariance or OEQ model)"
    if tp.internal_weights or tp.shared_weights:
        return "conv_tp's weights are not per edge (internal or shared weights)"
    ls = [ir.l for mul, ir in tp.irreps_in2]
    if ls != list(range(len(ls))) or any(mul != 1 for mul, _ in tp.irreps_in2) or max(ls) > MAX_L:
        return f"conv_tp's second input {tp.irreps_in2} is not the spherical harmonics 0..L, L <= {MAX_L}"
    channels = {mul for mul, _ in tp.irreps_in1} | {mul for mul, _ in tp.irreps_out}
    if len(channels) != 1:
        return f"conv_tp's irreps {tp.irreps_in1} -> {tp.irreps_out} do not share one multiplicity"
    if any(ir.l > MAX_L for _, ir in tp.irreps_in1) or any(ir.l > MAX_L for _, ir in tp.irreps_out):
        return f"conv_tp's irreps {tp.irreps_in1} -> {tp.irreps_out} go beyond l = {MAX_L}"
    if sum(ir.dim for _, ir in tp.irreps_in1) > 2 * (MAX_L + 1) ** 2:
        return f"conv_tp's input {tp.irreps_in1} has more than one irrep of each l and parity"
    for ins in tp.instructions:
        if ins.connection_mode != "uvu" or not ins.has_weight:
            return f"conv_tp has a path {ins.connection_mode} (weighted: {ins.has_weight}), not a weighted 'uvu'"
    return ""


def _wigner_3j(tp, l1: int, l2: int, l3: int) -> torch.Tensor:
    """The Wigner 3j symbol the module itself multiplies by: e3nn's compiled tensor product keeps it
    as a buffer (rounded to fp32 in a model built under fp32, then cast), except where its
    specialised code divides by sqrt(2 l + 1) instead (an l of 0), which wigner_3j in fp64 equals."""
    from e3nn import o3  # noqa: PLC0415

    main = getattr(tp, "_compiled_main_left_right", None)
    kept = getattr(main, f"_w3j_{l1}_{l2}_{l3}", None) if main is not None else None
    if isinstance(kept, torch.Tensor):
        return kept.detach().to(torch.float64)
    return o3.wigner_3j(l1, l2, l3, dtype=torch.float64)


def _paths(tp) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """paths [P, 7], cg_ijk [N, 3], cg_value [N] (float64) of an e3nn "uvu" TensorProduct, in the order
    of its instructions (the order of its flattened weights)."""
    in_offsets, out_offsets = tp.irreps_in1.slices(), tp.irreps_out.slices()
    rows, ijk, values = [], [], []
    for ins in tp.instructions:
        l1, l2, l3 = tp.irreps_in1[ins.i_in1].ir.l, tp.irreps_in2[ins.i_in2].ir.l, tp.irreps_out[ins.i_out].ir.l
        cg = _wigner_3j(tp, l1, l2, l3) * ins.path_weight
        nonzero = (cg.abs() > 1e-14).nonzero()
        begin = len(values)
        for i, j, k in nonzero.tolist():
            ijk.append((i, j, k))
            values.append(float(cg[i, j, k]))
        rows.append((l1, l2, l3, in_offsets[ins.i_in1].start, out_offsets[ins.i_out].start, begin, len(values)))
    return (torch.tensor(rows, dtype=torch.int64), torch.tensor(ijk, dtype=torch.int64).reshape(-1, 3),
            torch.tensor(values, dtype=torch.float64))


class RadialChain(torch.nn.Module):
    """mace's radial weights of one interaction as a function of r alone, in float64: its
    RadialEmbeddingBlock (basis times envelope, or the envelope on the MLP's output when
    apply_cutoff is False) and the block's conv_tp_weights, as MACE.forward and the block chain them."""

    def __init__(self, interaction_block: torch.nn.Module, radial_embedding: torch.nn.Module):
        super().__init__()
        self.radial_embedding = copy.deepcopy(radial_embedding).double()
        self.mlp = copy.deepcopy(interaction_block.conv_tp_weights).double()

    def forward(self, r: torch.Tensor) -> torch.Tensor:
        edge_feats, cutoff = self.radial_embedding(r.unsqueeze(-1), None, None, None)
        weights = self.mlp(edge_feats)
        return weights * cutoff if cutoff is not None else weights


class SplineConvolution(torch.nn.Module):
    """distspec_mace::spline_convolution with its tables as buffers; `knots` and `spline_error`
    record the table's resolution and its measured error against mace's radial MLP."""

    def __init__(self, spline: torch.Tensor, r_max: float, paths: torch.Tensor, cg_ijk: torch.Tensor,
                 cg_value: torch.Tensor, out_dim: int, error: dict | None = None):
        super().__init__()
        self.register_buffer("spline", spline)
        self.register_buffer("paths", paths)
        self.register_buffer("cg_ijk", cg_ijk)
        self.register_buffer("cg_value", cg_value)
        self.r_max = float(r_max)
        self.out_dim = int(out_dim)
        self.knots = int(spline.shape[0])
        self.spline_error = error or {}

    @classmethod
    def from_mace(cls, interaction_block: torch.nn.Module, radial_embedding: torch.nn.Module, dtype: torch.dtype,
                  knots: int | None = None) -> SplineConvolution:
        """The op's tables for the block's convolution, in dtype (torch.float32 or float64); an
        ExportError naming the setting where the convolution is not the op's (the caller then keeps
        mace's own modules)."""
        why = _why_not(interaction_block, radial_embedding)
        if why:
            raise ExportError(f"the spline convolution cannot replace {type(interaction_block).__name__}'s: {why}")
        if dtype not in (torch.float32, torch.float64):
            raise ExportError(f"the spline convolution runs in float32 or float64, not {dtype}")
        knots = DEFAULT_KNOTS if knots is None else int(knots)
        if knots < 2:
            raise ExportError(f"the spline convolution needs at least 2 knots; got {knots}")
        library.load()
        _register_fakes()
        tp = interaction_block.conv_tp
        r_max = float(radial_embedding.cutoff_fn.r_max)
        chain = RadialChain(interaction_block, radial_embedding)
        table = tabulate(chain, r_max, knots)
        channels = tp.irreps_in1[0].mul
        spline = table.reshape(knots, 2, len(tp.instructions), channels)
        paths, cg_ijk, cg_value = _paths(tp)
        error = spline_error(chain, table.to(dtype), r_max)
        return cls(spline.to(dtype), r_max, paths, cg_ijk, cg_value.to(dtype), tp.irreps_out.dim, error)

    def radial_weights(self, lengths: torch.Tensor) -> torch.Tensor:
        """The kernels' radial weights [E, P * C] at lengths [E], evaluated by torch (for checks)."""
        return hermite(self.spline, self.r_max, lengths).flatten(1)

    def forward(self, node_feats_up: torch.Tensor, vectors: torch.Tensor, edge_index: torch.Tensor,
                n_out) -> torch.Tensor:
        return torch.ops.distspec_mace.spline_convolution(
            node_feats_up, vectors, edge_index[0], edge_index[1], n_out, self.spline, self.r_max, self.paths,
            self.cg_ijk, self.cg_value, self.out_dim)

    def extra_repr(self) -> str:
        return f"knots={self.knots}, r_max={self.r_max}, out_dim={self.out_dim}, paths={self.paths.shape[0]}"


def sort_by_receiver(edge_index: torch.Tensor, *per_edge: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """edge_index and per-edge tensors (vectors, shifts) reordered so that receivers are
    non-decreasing, as the op requires; a stable sort keeps each receiver's edges in order."""
    order = torch.argsort(edge_index[1], stable=True)
    return (edge_index[:, order], *(t[order] for t in per_edge))

