"""MACE's symmetric contraction as one sparse op per element (doc/mace_kernels.md, "The symmetric
contraction").

mace-torch's `SymmetricContraction` (the product basis of `EquivariantProductBasisBlock`) computes,
for each output irrep of dimension d (one `Contraction` each) and each node of element e,

    out[n, c, m] = sum_{nu=1..correlation} sum_{i_1..i_nu} sum_k U_nu[m, i_1..i_nu, k] W_nu[e, k, c]
                   * x[n, c, i_1] * ... * x[n, c, i_nu]

(its recursion of einsums does this product by product; the one-hot `node_attrs` picks W's row e).
The sum over i_1..i_nu is a polynomial in the D components of channel c: each monomial
x_i x_j x_k (i <= j <= k) collects the U entries of all its permutations. `from_mace` folds those
with each exported element's weights into one coefficient per (element, term, channel), a term
being a (monomial, output component) pair whose U entries are not all zero. MACE-MP-0-medium's
contraction (D = 16: l <= 3, correlation 3, 128x0e + 128x1o out) has 410 terms, against the 4096
products per output component of the dense recursion.

The op (libdistspec_mace_ops.so, lib/models/torch/mace_symmetric_contraction_op.cpp):

    distspec_mace::symmetric_contraction(Tensor x, Tensor species, Tensor coefficients,
        Tensor monomials, Tensor term_offsets, Tensor term_outputs, int[] irrep_dims) -> Tensor

- x: float32 or float64 [n, C, D], mace's node features as EquivariantProductBasisBlock receives
  them (reshape_irreps' layout: channel c's components of every coupling irrep, l = 0, 1, ...);
- species: int64 [n], each node's index into the exported elements (element_rows);
- coefficients: x's dtype [E, T, C], E exported elements, T terms;
- monomials: int32 [P, 3], the factors (i, j, k) of each monomial, sorted, 0 <= i < D and
  i <= j <= k <= D; the index D stands for the constant 1 (x_i is (i, D, D), x_i x_j is (i, j, D));
  monomials sorted;
- term_offsets: int32 [P + 1], monomial p's terms are [term_offsets[p], term_offsets[p + 1]);
- term_outputs: int32 [T], each term's output component o in [0, O), O = sum(irrep_dims); the
  components of output irrep b are o = d_0 + ... + d_{b-1} + m;
- irrep_dims: the dimensions 2l + 1 of mace's output irreps, in order (128x0e + 128x1o: [1, 3]);
- returns x's dtype [n, C * O] in mace's layout, the output SymmetricContraction.forward gives and
  EquivariantProductBasisBlock feeds its linear: irrep b's block [n, C, d_b] flattened, the blocks
  one after another.

    distspec_mace::symmetric_contraction_backward(Tensor grad_out, Tensor x, Tensor species,
        <the same tables>, int[] irrep_dims) -> Tensor

returns grad_x [n, C, D] = d(sum grad_out * out) / dx, recomputing the monomials from x (nothing
per node is stored between forward and backward). The forward op's autograd calls it; it has no
derivative of its own (an error names it). No gradient flows to the tables. On the CPU a species
outside [0, E) or tables that break the contract are errors; on CUDA such a node's row is NaN.

`SymmetricContraction.from_mace(module, element_rows, dtype)` builds the tables from mace's module
(element_rows: the rows of mace's one-hot table, `atomic_numbers`, that the export keeps, in the
order of `species`); `forward(x, species)` equals mace's `module(x, one_hot(element_rows[species]))`.
"""

from __future__ import annotations

from typing import Sequence

import torch

from ..trace import ExportError
from . import library

# U entries below this fraction of the largest of their tensor are the decomposition's rounding
# (e3nn's Clebsch-Gordan products): dropped, they change an output by less than fp64's epsilon.
NEGLIGIBLE = 1e-14


def register_fakes() -> None:
    """The ops' fake implementations, for tracing with symbolic sizes."""
    library.register_fakes(
        "symmetric_contraction",
        lambda x, species, coefficients, monomials, term_offsets, term_outputs, irrep_dims:
            x.new_empty(x.shape[0], x.shape[1] * sum(irrep_dims)),
        lambda grad_out, x, species, coefficients, monomials, term_offsets, term_outputs, irrep_dims:
            torch.empty_like(x, memory_format=torch.contiguous_format))


def _terms_of(u: torch.Tensor, d: int, components: int, nu: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """mace's U_nu [d, D, ..., D, K] (its size-1 axes squeezed) as symmetric terms: the output
    component m, the monomial's padded sorted factors [T, 3] and the U entries of its
    permutations summed [T, K]."""
    k = u.shape[-1]
    u = u.reshape(d, components ** nu, k)
    big = float(u.abs().max()) if u.numel() else 0.0
    m, flat = (u.abs() > NEGLIGIBLE * big).any(-1).nonzero(as_tuple=True)
    factors = torch.stack([flat // components ** (nu - 1 - a) % components for a in range(nu)], dim=1)
    factors = torch.cat([factors.sort(dim=1).values, factors.new_full((factors.shape[0], 3 - nu), components)], 1)
    key = (m * (components + 1) + factors[:, 0]) * (components + 1) ** 2 + factors[:, 1] * (components + 1) + factors[:, 2]
    keys, which = torch.unique(key, return_inverse=True)
    summed = torch.zeros(keys.shape[0], k, dtype=u.dtype).index_add_(0, which, u[m, flat])
    first = torch.zeros(keys.shape[0], dtype=torch.int64).scatter_(0, which, torch.arange(which.shape[0]))
    return m[first], factors[first], summed


class SymmetricContraction(torch.nn.Module):
    """mace's SymmetricContraction for the exported elements, computed by the op."""

    def __init__(self, coefficients: torch.Tensor, monomials: torch.Tensor, term_offsets: torch.Tensor,
                 term_outputs: torch.Tensor, irrep_dims: Sequence[int], components: int):
        super().__init__()
        self.register_buffer("coefficients", coefficients)
        self.register_buffer("monomials", monomials)
        self.register_buffer("term_offsets", term_offsets)
        self.register_buffer("term_outputs", term_outputs)
        self.irrep_dims = [int(d) for d in irrep_dims]
        self.components = components
        register_fakes()

    @classmethod
    def from_mace(cls, module: torch.nn.Module, element_rows: Sequence[int], dtype: torch.dtype
                  ) -> "SymmetricContraction":
        """The tables of mace's `module` (its weights and U tensors, folded in float64, then cast
        to `dtype`) for the elements of rows `element_rows` of its one-hot table."""
        contractions = getattr(module, "contractions", None)
        if contractions is None or not all(hasattr(c, "U_tensors") for c in contractions):
            raise ExportError(f"{type(module).__module__}.{type(module).__name__} is not mace's e3nn "
                              "SymmetricContraction (no contractions with U tensors; cuequivariance's is not "
                              "supported): export with --accelerate none")
        rows = torch.as_tensor(list(element_rows), dtype=torch.int64)
        width = contractions[0].weights_max.shape[0]
        if rows.numel() == 0 or int(rows.min()) < 0 or int(rows.max()) >= width:
            raise ExportError(f"element_rows {list(element_rows)} must be rows of mace's {width}-wide one-hot table")
        channels = contractions[0].num_features
        components = contractions[0].coupling_irreps.dim
        parts, irrep_dims, offset = [], [], 0
        for j, (contraction, (mul, ir)) in enumerate(zip(contractions, module.irreps_out)):
            if contraction.num_features != channels or mul != channels or ir.l > 3:
                raise ExportError(f"mace's output irrep {j} ({mul}x{ir}) of a contraction of {contraction.num_features} "
                                  f"channels: the op needs {channels} channels for every irrep and l <= 3")
            for nu in range(1, contraction.correlation + 1):
                weights = (contraction.weights_max if nu == contraction.correlation
                           else contraction.weights[contraction.correlation - nu - 1])
                m, factors, summed = _terms_of(contraction.U_tensors(nu).detach().double(), ir.dim, components, nu)
                # [E, T, C]: the U sums of each term against the element's weights [K, C].
                coef = torch.einsum("tk,ekc->etc", summed, weights.detach().double().index_select(0, rows))
                keep = coef.abs().amax(dim=(0, 2)) > 0
                parts.append((factors[keep], m[keep] + offset, coef[:, keep]))
            irrep_dims.append(ir.dim)
            offset += ir.dim
        factors = torch.cat([p[0] for p in parts])
        outputs = torch.cat([p[1] for p in parts])
        coef = torch.cat([p[2] for p in parts], dim=1)
        # Terms grouped by monomial (sorted), so that each monomial is computed once.
        key = ((factors[:, 0] * (components + 1) + factors[:, 1]) * (components + 1) + factors[:, 2]) * 64 + outputs
        order = key.argsort()
        factors, outputs, coef = factors[order], outputs[order], coef[:, order]
        monomials, counts = torch.unique_consecutive(factors, dim=0, return_counts=True)
        offsets = torch.cat([counts.new_zeros(1), counts.cumsum(0)])
        return cls(coef.to(dtype).contiguous(), monomials.to(torch.int32).contiguous(), offsets.to(torch.int32),
                   outputs.to(torch.int32), irrep_dims, components)

    def forward(self, x: torch.Tensor, species: torch.Tensor) -> torch.Tensor:
        return torch.ops.distspec_mace.symmetric_contraction(x, species, self.coefficients, self.monomials,
                                                             self.term_offsets, self.term_outputs, self.irrep_dims)

    def extra_repr(self) -> str:
        e, t, c = self.coefficients.shape
        return (f"elements={e}, channels={c}, components={self.components}, monomials={self.monomials.shape[0]}, "
                f"terms={t}, irrep_dims={self.irrep_dims}")
