"""MACE's symmetric contraction, convolution and element-dependent linear with the calls of the
`distspec_mace` ops' modules (symmetric_contraction.py, convolution.py, element_linear.py),
computed by mace-torch's own modules.

The fast forward (model.py) calls its three kernels through these calls. Where the ops cannot be
used (the library is not built or not found), these stand in: the forward keeps its owned-row
work and its tables, and the graph holds aten ops only, which every plugin build runs.

- `ModuleSymmetricContraction(module, element_rows, dtype)`: `forward(x, species)` = mace's
  `SymmetricContraction.forward(x, one_hot(element_rows[species]))`, each irrep's contraction
  folded to the exported elements (element_linears.FoldedContraction: the other elements' weights
  meet zeros of the one-hot only);
- `ModuleConvolution(interaction_block, radial_embedding, dtype)`: `forward(node_feats_up,
  vectors, edge_index, n_out)` = mace's `scatter_sum(conv_tp(node_feats_up[sender], sh(vectors),
  conv_tp_weights(radial(lengths))), receiver, dim_size=n_out)`, with mace's radial basis and
  polynomial cutoff as RadialEmbeddingBlock applies them;
- `ModuleElementLinear(skip_tp, one_hot)`: `forward(x, species)` = mace's `skip_tp(x,
  one_hot[species])` (one_hot: the model's one-hot row of each exported element), by the module it
  is given: skip_tp itself, or its fold to one matrix per exported element
  (element_linears.FoldedTensorProduct), which finds each row's element from the one-hot.
"""

from __future__ import annotations

from typing import Sequence

import torch

from .. import element_linears
from ..trace import ExportError


def radial_is_of_length_alone(radial_embedding: torch.nn.Module) -> str:
    """'' where mace's radial embedding is a function of the edge length alone, else why not."""
    if hasattr(radial_embedding, "distance_transform"):
        return (f"its radial embedding transforms distances by the elements of both ends "
                f"({type(radial_embedding.distance_transform).__name__}), not a function of r alone")
    for part in ("bessel_fn", "cutoff_fn"):
        if not hasattr(radial_embedding, part):
            return f"its radial embedding {type(radial_embedding).__name__} has no {part}"
    return ""


class ModuleSymmetricContraction(torch.nn.Module):
    def __init__(self, module: torch.nn.Module, element_rows: Sequence[int], dtype: torch.dtype):
        super().__init__()
        contractions = getattr(module, "contractions", None)
        if contractions is None:
            raise ExportError(f"{type(module).__name__} is not mace's SymmetricContraction (no contractions)")
        width = contractions[0].weights_max.shape[0]
        rows = torch.zeros(len(element_rows), width, dtype=dtype)
        rows[torch.arange(len(element_rows)), torch.as_tensor(list(element_rows))] = 1.0
        self.contractions = torch.nn.ModuleList(
            [element_linears.FoldedContraction(c.to(dtype), rows) for c in contractions])
        self.register_buffer("one_hot", rows)

    def forward(self, x: torch.Tensor, species: torch.Tensor) -> torch.Tensor:
        y = self.one_hot.index_select(0, species)
        return torch.cat([c(x, y) for c in self.contractions], dim=-1)


class ModuleConvolution(torch.nn.Module):
    def __init__(self, interaction_block: torch.nn.Module, radial_embedding: torch.nn.Module, dtype: torch.dtype):
        super().__init__()
        from e3nn import o3  # noqa: PLC0415 (mace-torch depends on e3nn)

        why = radial_is_of_length_alone(radial_embedding)
        if why:
            raise ExportError(f"the convolution of {type(interaction_block).__name__}: {why}")
        self.bessel_fn = radial_embedding.bessel_fn
        self.cutoff_fn = radial_embedding.cutoff_fn
        # mace 0.3.15: apply_cutoff False multiplies the MLP's output by the cutoff, not its input.
        self.cutoff_inside = bool(getattr(radial_embedding, "apply_cutoff", True))
        self.spherical_harmonics = o3.SphericalHarmonics(interaction_block.edge_attrs_irreps, normalize=True,
                                                         normalization="component")
        self.conv_tp = interaction_block.conv_tp
        self.conv_tp_weights = interaction_block.conv_tp_weights
        self.width = interaction_block.conv_tp.irreps_out.dim
        self.to(dtype)

    def forward(self, node_feats_up: torch.Tensor, vectors: torch.Tensor, edge_index: torch.Tensor,
                n_out) -> torch.Tensor:
        lengths = torch.linalg.norm(vectors, dim=-1, keepdim=True)
        cutoff = self.cutoff_fn(lengths)
        radial = self.bessel_fn(lengths)
        if self.cutoff_inside:
            weights = self.conv_tp_weights(radial * cutoff)
        else:
            weights = self.conv_tp_weights(radial) * cutoff
        messages = self.conv_tp(node_feats_up.index_select(0, edge_index[0]), self.spherical_harmonics(vectors),
                                weights)
        out = messages.new_zeros((n_out, self.width))
        return out.index_add(0, edge_index[1], messages)


class ModuleElementLinear(torch.nn.Module):
    def __init__(self, skip_tp: torch.nn.Module, one_hot: torch.Tensor):
        super().__init__()
        self.skip_tp = skip_tp
        self.register_buffer("one_hot", one_hot.detach().clone())  # [exported elements, the one-hot's width]

    def forward(self, x: torch.Tensor, species: torch.Tensor) -> torch.Tensor:
        return self.skip_tp(x, self.one_hot.index_select(0, species))
