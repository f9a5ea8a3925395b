"""MACE's element-dependent linears as one segmented matrix product per path (doc/mace_kernels.md,
"The element-dependent linears").

mace's interaction blocks call `skip_tp(node_feats, node_attrs)`, e3nn's FullyConnectedTensorProduct
of the features with the element's one-hot (`Nx0e`). With a one-hot second operand each path (input
irrep i into output irrep o of the same type, weights w[u, v, w]) is, for a node of element e,

    out[n, o-block][w, m] += c * sum_u x[n, i-block][u, m] * w[u, e, w],   c = path_weight / sqrt(2l + 1)

a matrix of the element alone (element_linears.py says why). element_linears.FoldedTensorProduct
computes it as one matrix product with every exported element's matrices side by side, then keeps
each row's own: E times the work. The op groups the nodes by element and multiplies each group by
its own matrices only. (The node embedding, a linear of the one-hot alone, is a table of one row per
element: element_linears.FoldedTable, an index_select; no op is needed there.)

The op (libdistspec_mace_ops.so, lib/models/torch/mace_element_linear_op.cpp):

    distspec_mace::element_linear(Tensor x, Tensor species, Tensor weights, Tensor paths,
        int out_dim) -> Tensor

- x: float32 or float64 [n, in_dim], e3nn's layout of skip_tp's first input irreps (mul_ir: an
  irrep's block is [mul, 2l + 1] flattened);
- species: int64 [n], each node's index into the exported elements (element_rows);
- weights: x's dtype [E, per_element]; path p's matrix for element e is
  weights[e, weight_offset : weight_offset + mul_in * mul_out] as [mul_in, mul_out], the path's
  normalisation folded in;
- paths: int64 [P, 6], per path in skip_tp's instruction order: in_offset, mul_in, out_offset,
  mul_out, dim (2l + 1), weight_offset;
- out_dim: skip_tp.irreps_out.dim;
- returns x's dtype [n, out_dim] in e3nn's layout: out[n, out_offset + w * dim + m] = sum over
  the paths into it of sum_u x[n, in_offset + u * dim + m] * W_e[u, w] (zero where no path writes).

    distspec_mace::element_linear_backward(Tensor grad_out, Tensor species, Tensor weights,
        Tensor paths, int in_dim) -> Tensor

returns grad_x [n, in_dim] (the product with the transposed matrices; it needs no x). The forward
op's autograd calls it; it has no derivative of its own. No gradient flows to the tables. On the
CPU a species outside [0, E) or paths outside the rows are errors; on CUDA such a node's row is NaN.

`ElementLinear.from_mace(skip_tp, element_rows, dtype)` builds the tables (element_rows: the columns
of mace's one-hot, `atomic_numbers`' indices, that the export keeps, in the order of `species`);
`forward(x, species)` equals `skip_tp(x, one_hot(element_rows[species]))`.
"""

from __future__ import annotations

import math
from typing import Sequence

import torch

from ..trace import ExportError
from . import library


def register_fakes() -> None:
    """The ops' fake implementations, for tracing with symbolic sizes."""
    library.register_fakes(
        "element_linear",
        lambda x, species, weights, paths, out_dim: x.new_empty(x.shape[0], out_dim),
        lambda grad_out, species, weights, paths, in_dim: grad_out.new_empty(grad_out.shape[0], in_dim))


class ElementLinear(torch.nn.Module):
    """mace's skip_tp(x, one-hot) for the exported elements, computed by the op."""

    def __init__(self, weights: torch.Tensor, paths: torch.Tensor, in_dim: int, out_dim: int):
        super().__init__()
        self.register_buffer("weights", weights)
        self.register_buffer("paths", paths)
        self.in_dim = in_dim
        self.out_dim = out_dim
        register_fakes()

    @classmethod
    def from_mace(cls, tp: torch.nn.Module, element_rows: Sequence[int], dtype: torch.dtype) -> "ElementLinear":
        """The tables of e3nn's tensor product `tp` of features with a one-hot (mace's skip_tp),
        folded in float64 and cast to `dtype`, for the one-hot columns `element_rows`."""
        from ..element_linears import _tp_why_not  # noqa: PLC0415 (the fold's own check of such a product)

        width = getattr(getattr(tp, "irreps_in2", None), "dim", None)
        why = _tp_why_not(tp, width) if width is not None else f"{type(tp).__name__} has no second operand"
        if why:
            raise ExportError(f"{type(tp).__module__}.{type(tp).__name__} is not a tensor product of features with "
                              f"the element's one-hot that the op computes: {why}")
        rows = torch.as_tensor(list(element_rows), dtype=torch.int64)
        if rows.numel() == 0 or int(rows.min()) < 0 or int(rows.max()) >= width:
            raise ExportError(f"element_rows {list(element_rows)} must be columns of the {width}-wide one-hot")
        in_slices, out_slices = tp.irreps_in1.slices(), tp.irreps_out.slices()
        blocks, paths, offset = [], [], 0
        for _, ins, w in tp.weight_views(yield_instruction=True):
            mul_in, ir_in = tp.irreps_in1[ins.i_in1]
            mul_out, ir_out = tp.irreps_out[ins.i_out]
            if ir_in != ir_out:
                raise ExportError(f"path {ins.i_in1} -> {ins.i_out} couples {ir_in} into {ir_out}: with a scalar "
                                  "operand a path keeps its irrep")
            # W_e[u, w] = c * w[u, e, w] for the one-hot's column e.
            c = ins.path_weight / math.sqrt(ir_out.dim)
            blocks.append((c * w.detach().double().index_select(1, rows)).permute(1, 0, 2).reshape(len(rows), -1))
            paths.append([in_slices[ins.i_in1].start, mul_in, out_slices[ins.i_out].start, mul_out, ir_in.dim, offset])
            offset += mul_in * mul_out
        weights = torch.cat(blocks, dim=1) if blocks else torch.zeros(len(rows), 0, dtype=torch.float64)
        return cls(weights.to(dtype).contiguous(), torch.tensor(paths, dtype=torch.int64).reshape(-1, 6),
                   tp.irreps_in1.dim, tp.irreps_out.dim)

    def forward(self, x: torch.Tensor, species: torch.Tensor) -> torch.Tensor:
        return torch.ops.distspec_mace.element_linear(x, species, self.weights, self.paths, self.out_dim)

    def extra_repr(self) -> str:
        return (f"elements={self.weights.shape[0]}, paths={self.paths.shape[0]}, in_dim={self.in_dim}, "
                f"out_dim={self.out_dim}")
