#!/usr/bin/env python3
"""distspec_mace::spline_convolution against mace-torch's own convolution, ctest torch.mace_convolution.

The interaction blocks of a MACE of MACE-MP-0 medium's architecture (bench/accelerators/
mace_mp0_medium.py: layer 0 a RealAgnosticInteractionBlock on 128x0e, layer 1 a
RealAgnosticResidualInteractionBlock on 128x0e+128x1o, harmonics to l = 3, radial MLP [64, 64, 64],
r_max 6 A; random weights), on a random periodic cloud of 343 atoms with mace's own neighbour list
(mace.data.neighborhood.get_neighborhood, edges sorted by receiver):

- fp64, the op against mace's chain scatter_sum(conv_tp(x[sender], sh(v), W), receiver) with W the
  op's spline evaluated by torch (convolution.hermite): message, d/d node_feats and d/d vectors
  (the adjoint of a random message gradient) to 1e-11 relative to max(1, |reference|): the kernel;
  and the op on 3 threads against 1 (the backward splits its edges among threads);
- fp64, the op against the same chain with mace's radial MLP (W = conv_tp_weights(radial(r))): the
  spline's error, reported and bounded by SPLINE_TOLERANCE; the error for 64..2048 knots is printed;
- fp32, the op (fp32 tables) against the fp64 spline chain, to 1e-5 relative (values and gradients);
- make_fx with symbolic sizes (the exporter's tracing) through the fake implementations: the force
  graph holds both ops and equals eager on a cloud of other sizes;
- bad input: unsorted receivers, int32 senders, a receiver >= n_out, a species-dependent distance
  transform (from_mace's ExportError), a second derivative;
- times the op's and mace's CPU forward + backward on ~2000 atoms (fp32; printed, not checked).

  test_mace_convolution.py [--library LIBRARY] [--python PYTHON] [--no-timing]
"""

from __future__ import annotations

import sys
import time

import mace_op_testing as testing
from mace_op_testing import Results, expect_error
from mace_op_testing import relative as relative_to_max

KERNEL_TOLERANCE = 1e-11
FP32_TOLERANCE = 1e-5
# The spline's error in d message / d vectors relative to its largest value: forces of order
# 1 eV/A then differ by 1e-5 eV/A per interaction, ten times below the 1e-4 eV/A the whole model
# is allowed.
SPLINE_TOLERANCE = 1e-5
KNOT_SWEEP = (64, 128, 256, 512, 1024, 2048)


def relative(a, b) -> float:
    """The largest |a - b| over max(1, the largest |b|)."""
    return float((a.double() - b.double()).abs().max()) / max(1.0, float(b.double().abs().max()))


def cloud(per_side: int, spacing: float, seed: int):
    """A jittered simple-cubic periodic box (no two atoms closer than spacing - 0.8 A) and mace's
    own neighbour list within 6 A: positions [n, 3], edge_index [2, E] sorted by receiver,
    vectors [E, 3] (receiver - sender + shift), float64."""
    import numpy as np  # noqa: PLC0415
    import torch  # noqa: PLC0415
    from mace.data.neighborhood import get_neighborhood  # noqa: PLC0415
    from distspec_export.mace_kernels.convolution import sort_by_receiver  # noqa: PLC0415

    rng = np.random.default_rng(seed)
    grid = np.stack(np.meshgrid(*[np.arange(per_side)] * 3, indexing="ij"), -1).reshape(-1, 3) * spacing
    positions = grid + rng.uniform(-0.4, 0.4, grid.shape)
    edge_index, shifts, _, _ = get_neighborhood(positions, 6.0, pbc=(True, True, True),
                                                cell=np.eye(3) * per_side * spacing)
    edge_index = torch.as_tensor(edge_index, dtype=torch.int64)
    positions = torch.as_tensor(positions)
    vectors = positions[edge_index[1]] - positions[edge_index[0]] + torch.as_tensor(shifts)
    edge_index, vectors = sort_by_receiver(edge_index, vectors)
    return positions, edge_index, vectors


def mace_convolution(block, radial_embedding, sh, x, vectors, edge_index, n_out, weights=None):
    """mace's own chain (blocks.py, models.py): radial embedding of the lengths, conv_tp_weights,
    conv_tp on the senders' rows and the harmonics, scatter_sum into the receivers; `weights`
    replaces the radial chain where given (a function of the lengths [E])."""
    import torch  # noqa: PLC0415
    from mace.tools.scatter import scatter_sum  # noqa: PLC0415

    lengths = torch.linalg.norm(vectors, dim=-1, keepdim=True)
    if weights is None:
        edge_feats, cutoff = radial_embedding(lengths, None, edge_index, None)
        tp_weights = block.conv_tp_weights(edge_feats)
        if cutoff is not None:
            tp_weights = tp_weights * cutoff
    else:
        tp_weights = weights(lengths[:, 0])
    mji = block.conv_tp(x[edge_index[0]], sh(vectors), tp_weights)
    return scatter_sum(src=mji, index=edge_index[1], dim=0, dim_size=n_out)


def value_and_grads(fn, x, vectors, grad_message):
    import torch  # noqa: PLC0415

    x = x.detach().requires_grad_(True)
    vectors = vectors.detach().requires_grad_(True)
    message = fn(x, vectors)
    gx, gv = torch.autograd.grad(message, (x, vectors), grad_message.to(message.dtype))
    return message.detach(), gx, gv


def compare(results: Results, label: str, ours, reference, tolerance: float, measure=relative) -> None:
    for name, a, b in zip(("message", "d/d node_feats", "d/d vectors"), ours, reference):
        err = measure(a, b)
        results.report(err <= tolerance, f"{label}: {name}", f"{err:.2e} (tolerance {tolerance:g})")


def check_layer(results: Results, k: int, model, positions, edge_index, vectors) -> None:
    import torch  # noqa: PLC0415
    from e3nn import o3  # noqa: PLC0415
    from distspec_export.mace_kernels import convolution  # noqa: PLC0415

    block, radial = model.interactions[k], model.radial_embedding
    sh = o3.SphericalHarmonics(model.spherical_harmonics.irreps_out, normalize=True, normalization="component")
    n = positions.shape[0]
    gen = torch.Generator().manual_seed(100 + k)
    x = torch.randn(n, block.conv_tp.irreps_in1.dim, generator=gen, dtype=torch.float64)
    grad_message = torch.randn(n, block.conv_tp.irreps_out.dim, generator=gen, dtype=torch.float64)
    label = f"layer {k} ({type(block).__name__}, {block.conv_tp.irreps_in1})"

    conv = convolution.SplineConvolution.from_mace(block, radial, torch.float64)
    # The CPU backward splits the edges among threads, each summing its senders' rows apart: on
    # one thread and on three (more than this machine may have) it must give the same gradients.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    one_thread = value_and_grads(lambda x_, v_: conv(x_, v_, edge_index, n), x, vectors, grad_message)
    torch.set_num_threads(max(threads, 3))
    ours = value_and_grads(lambda x_, v_: conv(x_, v_, edge_index, n), x, vectors, grad_message)
    torch.set_num_threads(threads)
    compare(results, f"{label} fp64, {max(threads, 3)} threads vs 1", ours, one_thread, KERNEL_TOLERANCE)
    spline_chain = value_and_grads(
        lambda x_, v_: mace_convolution(block, radial, sh, x_, v_, edge_index, n, conv.radial_weights),
        x, vectors, grad_message)
    compare(results, f"{label} fp64 vs mace's chain with the spline", ours, spline_chain, KERNEL_TOLERANCE)

    mlp_chain = value_and_grads(lambda x_, v_: mace_convolution(block, radial, sh, x_, v_, edge_index, n),
                                x, vectors, grad_message)
    err = relative_to_max(ours[2], mlp_chain[2])
    results.report(err <= SPLINE_TOLERANCE, f"{label} fp64 vs mace's radial MLP ({conv.knots} knots): d/d vectors",
                   f"{err:.2e} of its largest value (tolerance {SPLINE_TOLERANCE:g}); message "
                   f"{relative_to_max(ours[0], mlp_chain[0]):.2e}, d/d node_feats "
                   f"{relative_to_max(ours[1], mlp_chain[1]):.2e}; table: {conv.spline_error}")

    conv32 = convolution.SplineConvolution.from_mace(block, radial, torch.float32)
    ours32 = value_and_grads(lambda x_, v_: conv32(x_, v_, edge_index, n), x.float(), vectors.float(), grad_message)
    compare(results, f"{label} fp32 vs the fp64 spline chain", ours32, spline_chain, FP32_TOLERANCE,
            relative_to_max)
    if k == 1:
        knot_sweep(block, radial, sh, x, vectors, edge_index, grad_message, mlp_chain)


def knot_sweep(block, radial, sh, x, vectors, edge_index, grad_message, mlp_chain) -> None:
    """The spline's error against the MLP for several knot counts (printed: how DEFAULT_KNOTS was chosen)."""
    import torch  # noqa: PLC0415
    from distspec_export.mace_kernels import convolution  # noqa: PLC0415

    n = x.shape[0]
    print("knots  h (A)    weights   d/dr weights   message   d/d node_feats   d/d vectors   (relative to largest)")
    for knots in KNOT_SWEEP:
        conv = convolution.SplineConvolution.from_mace(block, radial, torch.float64, knots=knots)
        ours = value_and_grads(lambda x_, v_: conv(x_, v_, edge_index, n), x, vectors, grad_message)
        e = conv.spline_error
        print(f"{knots:5d}  {e['h']:.4f}  {e['weight_rel']:.2e}  {e['slope_rel']:.2e}       "
              f"{relative_to_max(ours[0], mlp_chain[0]):.2e}  {relative_to_max(ours[1], mlp_chain[1]):.2e}"
              f"         {relative_to_max(ours[2], mlp_chain[2]):.2e}")


def check_errors(results: Results, model, positions, edge_index, vectors) -> None:
    import torch  # noqa: PLC0415
    from mace.modules.blocks import RadialEmbeddingBlock  # noqa: PLC0415
    from distspec_export.mace_kernels import convolution  # noqa: PLC0415
    from distspec_export.trace import ExportError  # noqa: PLC0415

    block = model.interactions[1]
    conv = convolution.SplineConvolution.from_mace(block, model.radial_embedding, torch.float64)
    n = positions.shape[0]
    x = torch.randn(n, block.conv_tp.irreps_in1.dim, dtype=torch.float64)

    flipped = edge_index.flip(1)
    expect_error(results, "receivers not grouped", lambda: conv(x, vectors.flip(0), flipped, n), "non-decreasing",
                 kind=RuntimeError)
    expect_error(results, "int32 senders", lambda: torch.ops.distspec_mace.spline_convolution(
        x, vectors, edge_index[0].int(), edge_index[1], n, conv.spline, conv.r_max, conv.paths, conv.cg_ijk,
        conv.cg_value, conv.out_dim), "senders must be int64", kind=RuntimeError)
    expect_error(results, "a receiver >= n_out", lambda: conv(x, vectors, edge_index, int(edge_index[1].max())),
                 "is not in [0, n_out", kind=RuntimeError)
    agnesi = RadialEmbeddingBlock(r_max=6.0, num_bessel=8, num_polynomial_cutoff=5, distance_transform="Agnesi")
    expect_error(results, "Agnesi distance transform",
                 lambda: convolution.SplineConvolution.from_mace(block, agnesi, torch.float64), "AgnesiTransform",
                 kind=ExportError)
    expect_error(results, "second derivative",
                 testing.second_derivative(lambda xg: conv(xg, vectors, edge_index, n), x),
                 "second derivatives are not implemented", kind=RuntimeError)


def check_tracing(results: Results, model) -> None:
    """make_fx with symbolic sizes (as the exporter traces) through the op's fake implementations:
    the force graph holds the forward and backward ops and, run on a cloud of other sizes, equals eager."""
    import torch  # noqa: PLC0415
    from torch.fx.experimental.proxy_tensor import make_fx  # noqa: PLC0415
    from distspec_export.mace_kernels import convolution  # noqa: PLC0415

    conv = convolution.SplineConvolution.from_mace(model.interactions[1], model.radial_embedding, torch.float64)

    def forces(x, vectors, edge_index):
        vectors = vectors.detach().requires_grad_(True)
        energy = conv(x, vectors, edge_index, x.shape[0]).square().sum()
        return torch.autograd.grad(energy, vectors)[0]

    def example(per_side: int, seed: int):
        positions, edge_index, vectors = cloud(per_side, 2.6, seed)
        width = model.interactions[1].conv_tp.irreps_in1.dim
        return torch.randn(positions.shape[0], width, dtype=torch.float64), vectors, edge_index

    graph = make_fx(forces, tracing_mode="symbolic", _allow_non_fake_inputs=True)(*example(4, 5))
    ops = sorted({str(n.target) for n in graph.graph.nodes if "distspec_mace" in str(n.target)})
    results.report(len(ops) == 2, "traced (make_fx, symbolic sizes): ops in the force graph", ", ".join(ops))
    other = example(5, 6)
    err = relative(graph(*other), forces(*other))
    results.report(err <= KERNEL_TOLERANCE, "traced graph on a cloud of other sizes vs eager", f"{err:.2e}")


def timing(model) -> None:
    """The op and mace's chain, CPU forward + backward (d/dx, d/dv), fp32, ~2000 atoms."""
    import torch  # noqa: PLC0415
    from e3nn import o3  # noqa: PLC0415
    from distspec_export.mace_kernels import convolution  # noqa: PLC0415

    positions, edge_index, vectors = cloud(13, 2.8, seed=7)
    n = positions.shape[0]
    sh = o3.SphericalHarmonics(model.spherical_harmonics.irreps_out, normalize=True, normalization="component")
    model32 = model.float()
    print(f"timing: {n} atoms, {edge_index.shape[1]} edges, fp32, {torch.get_num_threads()} threads "
          "(forward + backward, best of 3)")
    for k, block in enumerate(model32.interactions):
        conv = convolution.SplineConvolution.from_mace(block, model32.radial_embedding, torch.float32)
        x = torch.randn(n, block.conv_tp.irreps_in1.dim)
        g = torch.randn(n, block.conv_tp.irreps_out.dim)
        v32 = vectors.float()
        row = {}
        for name, fn in (("ours", lambda x_, v_: conv(x_, v_, edge_index, n)),
                         ("mace", lambda x_, v_: mace_convolution(block, model32.radial_embedding, sh, x_, v_,
                                                                  edge_index, n))):
            best = float("inf")
            for _ in range(3):
                start = time.perf_counter()
                value_and_grads(fn, x, v32, g)
                best = min(best, time.perf_counter() - start)
            row[name] = best
        print(f"  layer {k}: ours {row['ours']:.3f} s, mace {row['mace']:.3f} s, {row['mace'] / row['ours']:.1f}x")
    model.double()


def checks(results: Results, argv: list[str]) -> None:
    import mace_mp0_medium  # noqa: PLC0415

    model = mace_mp0_medium.build(dtype="float64")
    positions, edge_index, vectors = cloud(7, 2.6, seed=3)
    print(f"cloud: {positions.shape[0]} atoms, {edge_index.shape[1]} edges "
          f"({edge_index.shape[1] / positions.shape[0]:.1f} per atom), shortest {float(vectors.norm(dim=1).min()):.2f} A")
    for k in range(len(model.interactions)):
        check_layer(results, k, model, positions, edge_index, vectors)
    check_errors(results, model, positions, edge_index, vectors)
    check_tracing(results, model)
    if "--no-timing" not in argv:
        timing(model)


if __name__ == "__main__":
    sys.exit(testing.run(sys.argv[1:], "test_mace_convolution.py", checks))
