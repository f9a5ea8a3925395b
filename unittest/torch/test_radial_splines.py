#!/usr/bin/env python3
"""Radial splines (tools/distspec_export/radial_splines.py), ctest torch.radial_splines_sevennet.

For SevenNet-0 (sevenn's own checkpoint, fp32, in the sevennet environment):

- each convolution's RadialSpline equals the radial MLP it replaced, called as sevenn calls it
  (weight_nn on the EdgeEmbedding's basis times cutoff, fp32), on 4 000 random lengths from 1 A
  to the cutoff: weights and their d/dr (autograd of both) within 2e-5 of the largest, with the
  XPLOR switch's r_on (4.5 A) among them;
- a knot lies on r_on: with the grid the request alone gives (1 024 knots, r_on between two), the
  slope errs by more than 1e-5 there, so the alignment is what keeps it within;
- too few knots (16) keep every MLP, and the record says to give more;
- the traced force graph does less work with the splines (torch's FlopCounterMode) than without:
  the test fails when the pass stops firing;
- energy and forces of the adapted model with the splines against the model as given
  (element_linears.originals(), which puts the MLPs back) on the exporter's example crystal:
  within 2e-5 of the largest force, 1e-6 of the energy.

  test_radial_splines.py [--set sevennet] [--python PYTHON]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1] / "tools"))

from results import Results  # noqa: E402

WEIGHT_TOLERANCE = 2e-5  # of the largest weight and of the largest d/dr: fp32 MLP noise is ~5e-7
FORCE_TOLERANCE = 2e-5


def relative(a, b) -> float:
    return float((a.double() - b.double()).abs().max()) / max(1e-300, float(b.double().abs().max()))


def splines_equal_mlps(results: Results) -> None:
    import torch  # noqa: PLC0415

    from distspec_export import radial_splines  # noqa: PLC0415
    from distspec_export.sevennet import checkpoint  # noqa: PLC0415

    model = checkpoint("7net-0")
    embedding = model._modules["edge_embedding"]
    r_on = float(embedding.cutoff_function.r_on)
    r_max = float(model.cutoff)
    with radial_splines.recording() as record:
        radial_splines.replace(model, "sevennet")
    results.report(len(record.replaced) == 5 and not record.kept, "SevenNet-0: its 5 radial MLPs become splines",
                   f"replaced {[r['module'] for r in record.replaced]}, kept {record.kept}")
    gen = torch.Generator().manual_seed(5)
    r = torch.cat([1.0 + (r_max - 1.0) * torch.rand(4000, generator=gen), torch.tensor([r_on, r_on - 1e-4, r_on + 1e-4])])
    for entry in record.replaced:
        spline = model.get_submodule(entry["module"])
        h = r_max / (entry["knots"] - 1)
        on_grid = abs(r_on / h - round(r_on / h)) < 1e-9
        x = r.clone().requires_grad_(True)
        want = spline.original(embedding.basis_function(x) * embedding.cutoff_function(x).unsqueeze(-1))
        got = spline(x)
        probe = torch.randn(want.shape, generator=gen)
        d_want, = torch.autograd.grad((want * probe).sum(), x)
        d_got, = torch.autograd.grad((got * probe).sum(), x)
        # d/dr of each weight, for the largest-slope scale: forward-mode over the lengths
        _, slope = torch.func.jvp(lambda t: spline.original(embedding.basis_function(t) *
                                                            embedding.cutoff_function(t).unsqueeze(-1)),
                                  (r,), (torch.ones_like(r),))
        _, slope_got = torch.func.jvp(spline, (r,), (torch.ones_like(r),))
        value, deriv = relative(got.detach(), want.detach()), relative(slope_got, slope)
        results.report(on_grid and value <= WEIGHT_TOLERANCE and deriv <= WEIGHT_TOLERANCE
                       and relative(d_got, d_want) <= WEIGHT_TOLERANCE,
                       f"SevenNet-0 {entry['module']}: the spline equals the MLP",
                       f"{entry['knots']} knots (r_on {r_on} on a knot: {on_grid}), width {entry['width']}: weights "
                       f"{value:.1e}, d/dr {deriv:.1e}, backward {relative(d_got, d_want):.1e} of the largest "
                       f"(tolerance {WEIGHT_TOLERANCE:g}); the export's own measure {entry['weight_rel']:.1e} / "
                       f"{entry['slope_rel']:.1e}")

    # Why the knots are aligned: the same request on a grid that straddles r_on.
    site = radial_splines._sevennet_sites(checkpoint("7net-0"))[3]
    table = radial_splines.tabulate(site.chain, site.r_max, radial_splines.DEFAULT_KNOTS)
    coeffs = radial_splines.coefficients(table, site.r_max).float()
    error = radial_splines.spline_error(site.chain, table, site.r_max,
                                        spline=lambda x: radial_splines.cubic(coeffs, site.r_max, x))
    results.report(error["slope_rel"] > 1e-5, "SevenNet-0: off the knots, the XPLOR switch's r_on spoils d/dr",
                   f"{radial_splines.DEFAULT_KNOTS} knots, r_on not on one: d/dr errs by {error['slope_rel']:.1e} "
                   "of its largest (the aligned grid: above)")

    with radial_splines.recording(knots=16) as few:
        radial_splines.replace(checkpoint("7net-0"), "sevennet")
    results.report(not few.replaced and len(few.kept) == 5 and all("give more knots" in k["why"] for k in few.kept),
                   "SevenNet-0: 16 knots keep every MLP, saying why", str(few.kept[:1]))


def graph_and_forces(results: Results) -> None:
    import torch  # noqa: PLC0415
    from torch.utils.flop_counter import FlopCounterMode  # noqa: PLC0415

    from distspec_export import adapters, check, element_linears, ops, radial_splines, trace  # noqa: PLC0415
    from distspec_export.host_ops import HostExchange  # noqa: PLC0415
    from distspec_export.sevennet import checkpoint  # noqa: PLC0415

    elements, cutoff, dtype = ["Si", "O"], 5.0, torch.float32
    example = check.examples(len(elements), cutoff, dtype)[0]
    flops, outputs = {}, {}
    for spline in (False, True):
        with radial_splines.recording(spline) as record:
            adapted = adapters.adapt(checkpoint("7net-0"), "sevennet", elements, cutoff, dtype, example)
        gm = trace.trace_forces(adapted.energy_fn, example.inputs)
        counter = FlopCounterMode(display=False)
        with HostExchange(example.owner, example.n_owned).install(), ops.opaque_halo_backward(), counter:
            outputs[spline] = [t.detach() for t in gm(*example.contract_inputs())[:2]]
        flops[spline] = counter.get_total_flops()
        if spline:  # the same adapted model with its MLPs put back
            with element_linears.originals():
                given = trace.trace_forces(adapted.energy_fn, example.inputs)
            with HostExchange(example.owner, example.n_owned).install(), ops.opaque_halo_backward():
                reference = [t.detach() for t in given(*example.contract_inputs())[:2]]
    results.report(flops[True] < flops[False], "SevenNet-0 (Si, O): the traced force graph does less work with splines",
                   f"{flops[False]} FLOPs with the MLPs, {flops[True]} with splines "
                   f"({1 - flops[True] / flops[False]:.1%} fewer; FlopCounterMode: matrix products)")
    for name, tolerance, index in (("energies", 1e-6, 0), ("forces", FORCE_TOLERANCE, 1)):
        for label, want in (("the model as given (originals)", reference), ("the MLP graph", outputs[False])):
            deviation = relative(outputs[True][index], want[index])
            results.report(deviation <= tolerance, f"SevenNet-0 (Si, O): {name} with splines equal {label}",
                           f"{deviation:.1e} of the largest (tolerance {tolerance:g}), "
                           f"{example.n_owned} owned atoms")


def main(argv: list[str] | None = None) -> int:
    import make_fixtures  # noqa: PLC0415

    argv = sys.argv[1:] if argv is None else argv
    # The set picks the environment (DISTSPEC_PYTHON_SEVENN), which takes precedence over --python.
    if make_fixtures.set_of(argv) != "sevennet":
        argv = ["--set", "sevennet", *argv]
    argv = make_fixtures.environment(argv, "the radial-splines test")
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--set", choices=("sevennet",), default="sevennet")
    p.parse_args(argv)
    import warnings  # noqa: PLC0415

    warnings.filterwarnings("ignore")
    from distspec_export import ops  # noqa: PLC0415

    ops.import_nvalchemi_ops()
    ops.define_backward_op()
    t0 = time.perf_counter()
    results = Results()
    splines_equal_mlps(results)
    graph_and_forces(results)
    print(f"({time.perf_counter() - t0:.1f} s)")
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
