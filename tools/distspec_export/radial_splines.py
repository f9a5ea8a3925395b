"""Radial MLPs of the edge length alone, tabulated as cubic Hermite splines.

A convolution's weights in SevenNet (and in MACE) are an MLP of the edge's radial embedding,
which is a function of the edge length r alone: basis(r) times an envelope. Per edge and layer
the MLP costs three matrix products (SevenNet-0: 8 -> 64 -> 64 -> up to 960 weights) and as
many again in the backward, which at 300 000 edges is most of a step's arithmetic outside the
tensor products. As a function of one variable on [0, r_max) it is a table: the values and
exact derivatives (forward-mode autograd in float64) at knots h = r_max / (knots - 1) apart make
each segment's cubic Hermite polynomial, stored as its four coefficients (coefficients()), and
the weights at r are four products per weight, their d/dr three more. The error of a cubic
Hermite spline falls as h^4; `spline_error` measures it on every segment against the MLP, and
the export records it (doc/torch_models.md, Radial splines).

`replace(model, kind)` swaps, in the model itself, each convolution's radial MLP of SITES[kind]
for a RadialSpline that reads the edge length. The MLP stays inside it: under
element_linears.originals() (the export's check) the spline module calls it on the model's own
embedding, so the check compares the graph with the model as given. `recording()` (export.py)
says whether to replace and collects what was replaced, as element_linears.recording() does for
the element folds.

MACE's fast forward tabulates its radial MLPs the same way for the distspec_mace convolution
(mace_kernels/convolution.py), with the same tabulate() and spline_error().
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
from typing import Callable, Iterator

import torch

from . import element_linears
from .trace import ExportError

# Knots per table unless the caller asks. At SevenNet-0's r_max of 5 A, 1 031 knots (one on its
# switch's r_on), h = 0.00485 A: its five MLPs are reproduced within 9.3e-8 of their largest weight
# and 5.3e-6 of their largest d/dr (ctest torch.radial_splines_sevennet, the export's record).
DEFAULT_KNOTS = 1024
# A spline that errs by more than this, relative to the table's largest weight or slope, is not used
# (the MLP stays, and the record says why): fp32 rounding of the MLP itself is about 1e-7.
MAX_RELATIVE_ERROR = 1e-5


def tabulate(chain: Callable[[torch.Tensor], torch.Tensor], r_max: float, knots: int) -> torch.Tensor:
    """[knots, 2, width] float64: the chain's values and exact d/dr (forward-mode autograd) at
    r_k = k r_max / (knots - 1). At r = 0 a Bessel basis is 0/0: the first knot is taken at
    1e-3 h, so the first segment, closer than any two atoms come, is approximate."""
    r = torch.linspace(0.0, r_max, knots, dtype=torch.float64)
    r[0] = 1e-3 * r_max / (knots - 1)
    with torch.no_grad():
        values, slopes = torch.func.jvp(chain, (r,), (torch.ones_like(r),))
    values[-1] = 0.0  # at r_max the envelope vanishes with its derivatives
    slopes[-1] = 0.0
    return torch.stack([values, slopes], dim=1)


def hermite(table: torch.Tensor, r_max: float, lengths: torch.Tensor) -> torch.Tensor:
    """The spline [knots, 2, ...] at lengths [E] (differentiable in lengths), summed in float64 from
    the values and slopes at its knots: [E, ...] in the table's dtype, zero for r >= r_max and
    r = 0 (the checks' evaluation; a graph evaluates cubic())."""
    knots = table.shape[0]
    h = r_max / (knots - 1)
    r = lengths.to(torch.float64)
    s = r / h
    k = s.detach().floor().clamp(0, knots - 2).long()
    t = (s - k.to(s.dtype)).reshape(-1, *([1] * (table.dim() - 2)))
    t2, t3 = t * t, t * t * t
    lo, hi = table[k].to(torch.float64), table[k + 1].to(torch.float64)
    w = ((2 * t3 - 3 * t2 + 1) * lo[:, 0] + h * (t3 - 2 * t2 + t) * lo[:, 1] + (-2 * t3 + 3 * t2) * hi[:, 0]
         + h * (t3 - t2) * hi[:, 1])
    inside = ((r > 0) & (r < r_max)).reshape(t.shape)
    return torch.where(inside, w, torch.zeros_like(w)).to(table.dtype)


def coefficients(table: torch.Tensor, r_max: float) -> torch.Tensor:
    """The Hermite table [knots, 2, ...] as each segment's cubic in its coordinate t in [0, 1),
    [knots - 1, 4, ...] float64: a0 + a1 t + a2 t^2 + a3 t^3. In this form an fp32 slope,
    (a1 + 2 a2 t + 3 a3 t^2) / h, comes from coefficients rounded each on its own; from the values
    at both ends it would take their difference over h, which multiplies their rounding by 1 / h
    (1e-5 of the largest slope at 1 000 knots)."""
    h = r_max / (table.shape[0] - 1)
    table = table.to(torch.float64)
    v0, s0, v1, s1 = table[:-1, 0], h * table[:-1, 1], table[1:, 0], h * table[1:, 1]
    return torch.stack([v0, s0, 3 * (v1 - v0) - 2 * s0 - s1, 2 * (v0 - v1) + s0 + s1], dim=1)


def cubic(coeffs: torch.Tensor, r_max: float, lengths: torch.Tensor) -> torch.Tensor:
    """The segments' cubics [segments, 4, ...] at lengths [E] (differentiable in lengths), [E, ...]
    in the coefficients' dtype, zero for r >= r_max and r = 0: one row of 4 per edge, Horner's rule
    (four products per weight; their d/dr as many again), which a compiled graph fuses into one
    kernel. The segment and its coordinate come from r in float64."""
    segments = coeffs.shape[0]
    h = r_max / segments
    r = lengths.to(torch.float64)
    s = r / h
    k = s.detach().floor().clamp(0, segments - 1).long()
    t = (s - k.to(s.dtype)).to(coeffs.dtype).reshape(-1, *([1] * (coeffs.dim() - 2)))
    a = coeffs[k]
    w = a[:, 0] + t * (a[:, 1] + t * (a[:, 2] + t * a[:, 3]))
    inside = ((r > 0) & (r < r_max)).reshape(t.shape)
    return torch.where(inside, w, torch.zeros_like(w))


def spline_error(chain: Callable[[torch.Tensor], torch.Tensor], table: torch.Tensor, r_max: float,
                 r_min: float = 0.5, spline: Callable[[torch.Tensor], torch.Tensor] | None = None) -> dict:
    """The spline's largest error against the chain on r in [r_min, r_max) (at the quarter points of
    every segment, where a cubic Hermite errs most), absolute and relative to the largest weight,
    for the weights and their d/dr. `spline` evaluates it (r [E] float64 -> [E, ...]); by default
    hermite() of the table in float64."""
    knots = table.shape[0]
    h = r_max / (knots - 1)
    r = torch.cat([torch.arange(knots - 1, dtype=torch.float64) * h + f * h for f in (0.25, 0.5, 0.75)])
    r = r[(r >= r_min) & (r < r_max)]
    with torch.no_grad():
        exact, d_exact = torch.func.jvp(chain, (r,), (torch.ones_like(r),))
        if spline is None:
            spline = lambda x: hermite(table.to(torch.float64), r_max, x)  # noqa: E731
        spline, d_spline = torch.func.jvp(lambda x: spline(x).to(torch.float64), (r,), (torch.ones_like(r),))
    value_err = float((spline - exact).abs().max())
    slope_err = float((d_spline - d_exact).abs().max())
    return {"knots": knots, "h": h, "r_min": r_min,
            "weight_abs": value_err, "weight_rel": value_err / max(float(exact.abs().max()), 1e-300),
            "slope_abs": slope_err, "slope_rel": slope_err / max(float(d_exact.abs().max()), 1e-300)}


class RadialSpline(torch.nn.Module):
    """A radial MLP's weights as a spline of the edge length: forward(r [E]) -> [E, width], from
    each segment's cubic (coefficients()). Under element_linears.originals() it calls the MLP it
    replaced on `embed(r)`, the model's own radial embedding."""

    def __init__(self, coeffs: torch.Tensor, r_max: float, original: torch.nn.Module,
                 embed: Callable[[torch.Tensor], torch.Tensor]):
        super().__init__()
        self.register_buffer("coeffs", coeffs)
        self.r_max = float(r_max)
        self.original = original
        self.embed = embed

    def forward(self, lengths: torch.Tensor) -> torch.Tensor:
        lengths = lengths.reshape(-1)
        if element_linears.using_originals():
            return self.original(self.embed(lengths))
        return cubic(self.coeffs, self.r_max, lengths)

    def extra_repr(self) -> str:
        return f"segments={self.coeffs.shape[0]}, width={self.coeffs.shape[-1]}, r_max={self.r_max}"


@dataclasses.dataclass
class Record:
    """What the pass did in one export: MLPs replaced (with their tables' measured errors) and
    MLPs kept (with why)."""

    enabled: bool = True
    knots: int = DEFAULT_KNOTS
    replaced: list[dict] = dataclasses.field(default_factory=list)
    kept: list[dict] = dataclasses.field(default_factory=list)

    def as_json(self) -> dict:
        return {"enabled": self.enabled, "knots": self.knots, "replaced": self.replaced, "kept": self.kept}


_RECORD: contextvars.ContextVar[Record | None] = contextvars.ContextVar("radial_splines_record", default=None)


@contextlib.contextmanager
def recording(enabled: bool = True, knots: int = DEFAULT_KNOTS) -> Iterator[Record]:
    """Inside, replace() tabulates (or, with enabled False, leaves every MLP as it is) and records
    into the Record yielded. Outside any, replace() leaves the model as it is: the adapters keep
    their signatures, and the exporter alone decides."""
    if knots < 4:
        raise ExportError(f"radial splines need at least 4 knots; got {knots}")
    record = Record(enabled, int(knots))
    token = _RECORD.set(record)
    try:
        yield record
    finally:
        _RECORD.reset(token)


@dataclasses.dataclass
class Site:
    """One convolution whose weights are an MLP of the radial embedding of r alone."""

    name: str
    parent: torch.nn.Module   # holds the MLP as attribute `attr`
    attr: str
    chain: Callable[[torch.Tensor], torch.Tensor]   # r [E] float64 -> the MLP's weights, float64
    embed: Callable[[torch.Tensor], torch.Tensor]   # r [E] -> the model's own embedding (its dtype)
    r_max: float
    rewire: Callable[[], None]  # makes the parent pass the edge length to the new module
    # Lengths where the chain's second derivative jumps (an XPLOR switch's r_on): knots are put on
    # them, or a cubic's d/dr errs there by the jump times h whatever the number of knots.
    breakpoints: tuple[float, ...] = ()


def aligned_knots(knots: int, r_max: float, breakpoints: tuple[float, ...]) -> int:
    """The fewest knots >= `knots` whose grid has a knot on every breakpoint (within 1e-9 h), or
    `knots` where none up to four times as many has (the error check then decides)."""
    for segments in range(knots - 1, 4 * (knots - 1) + 1):
        if all(abs(b / r_max * segments - round(b / r_max * segments)) < 1e-9 for b in breakpoints):
            return segments + 1
    return knots


def _sevennet_sites(model: torch.nn.Module) -> list[Site]:
    """SevenNet's convolutions (IrrepsConvolution and its fused and OpenEquivariance forms): their
    weight_nn reads the EdgeEmbedding's basis(r) * cutoff(r), a function of the edge length, which
    the EdgeEmbedding also stores (sevenn's KEY.EDGE_LENGTH)."""
    import copy  # noqa: PLC0415

    from sevenn import _keys as KEY  # noqa: PLC0415

    embedding = model._modules.get("edge_embedding")
    basis = getattr(embedding, "basis_function", None)
    cutoff = getattr(embedding, "cutoff_function", None)
    if basis is None or cutoff is None:
        return []
    r_max = float(getattr(cutoff, "cutoff_length", getattr(cutoff, "r_cut", getattr(model, "cutoff", 0.0))))
    # sevenn's XPLORCutoff is 1 below r_on and a C1 switch above: its second derivative jumps at r_on.
    breakpoints = (float(cutoff.r_on),) if hasattr(cutoff, "r_on") else ()

    def embed(r: torch.Tensor) -> torch.Tensor:
        return basis(r) * cutoff(r).unsqueeze(-1)

    # The table is made on the cpu in float64, wherever the model is (--device cuda moves it first).
    basis64, cutoff64 = copy.deepcopy(basis).to("cpu", torch.float64), copy.deepcopy(cutoff).to("cpu", torch.float64)
    sites = []
    for name, module in model.named_modules():
        mlp = getattr(module, "weight_nn", None)
        if mlp is None or getattr(module, "key_weight_input", None) != KEY.EDGE_EMBEDDING:
            continue
        mlp64 = copy.deepcopy(mlp).to("cpu", torch.float64)

        def chain(r: torch.Tensor, mlp64=mlp64) -> torch.Tensor:
            return mlp64(basis64(r) * cutoff64(r).unsqueeze(-1))

        def rewire(module=module) -> None:
            module.key_weight_input = KEY.EDGE_LENGTH
        sites.append(Site(f"{name}.weight_nn", module, "weight_nn", chain, embed, r_max, rewire, breakpoints))
    return sites


SITES = {"sevennet": _sevennet_sites}


def replace(model: torch.nn.Module, kind: str, log: Callable[[str], None] | None = None) -> torch.nn.Module:
    """Replaces, in `model` itself, each radial MLP of SITES[kind] by its spline where the spline
    reproduces it within MAX_RELATIVE_ERROR; returns `model`. Records into recording()'s Record."""
    record = _RECORD.get()
    if record is None or not record.enabled:
        return model
    dtype = next((p.dtype for p in model.parameters() if p.is_floating_point()), torch.float32)
    device = next((p.device for p in model.parameters()), torch.device("cpu"))
    for site in SITES[kind](model):
        knots = aligned_knots(record.knots, site.r_max, site.breakpoints)
        try:
            table = tabulate(site.chain, site.r_max, knots)
            coeffs = coefficients(table, site.r_max).to(dtype)
            error = spline_error(site.chain, table, site.r_max, spline=lambda r: cubic(coeffs, site.r_max, r))
        except Exception as e:  # noqa: BLE001 (an MLP of a form the table does not know stays)
            record.kept.append({"module": site.name, "why": f"tabulating it failed: {type(e).__name__}: {e}"})
            continue
        worst = max(error["weight_rel"], error["slope_rel"])
        if not worst <= MAX_RELATIVE_ERROR:
            why = (f"the spline of {knots} knots errs by {worst:.1e} relative (more than "
                   f"{MAX_RELATIVE_ERROR:g}); give more knots")
            record.kept.append({"module": site.name, "why": why})
            if log:
                log(f"radial splines: {site.name} kept: {why}")
            continue
        original = getattr(site.parent, site.attr)
        setattr(site.parent, site.attr, RadialSpline(coeffs.to(device), site.r_max, original, site.embed))
        site.rewire()
        record.replaced.append({"module": site.name, "width": int(coeffs.shape[-1]), "knots": knots,
                                "weight_rel": error["weight_rel"], "slope_rel": error["slope_rel"]})
    return model
