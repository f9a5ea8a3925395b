#!/usr/bin/env python3
"""distspec_mace::element_linear against mace-torch's own skip_tp, ctest torch.mace_element_linear.

mace's skip_tp (e3nn's FullyConnectedTensorProduct of the features with the element's one-hot) of
MACE-MP-0 medium's two interaction blocks (bench/accelerators/mace_mp0_medium.py, random weights:
128x(0e+1o+2e+3o) -> the same, 4 paths; 128x0e+128x1o -> 128x0e, 1 path) and of a block with two
input irreps into one output (32x0e+32x0e+16x1o -> 16x0e+16x1o, 5 elements):

- on rows of 3 exported elements (random columns of the one-hot, in random order), random x: the
  op's value and its gradient with respect to x (torch.autograd.grad with a random cotangent) equal
  skip_tp's given the one-hot of each row's element, relative to their largest magnitude: fp64 within
  1e-12, fp32 (skip_tp and ours in fp32) within 1e-5; the backward op equals central differences of
  the forward (gradcheck);
- traced by make_fx with symbolic sizes (the fake implementations): both ops in the graph, the same
  numbers on another size;
- bad input gives the op's message: a species outside the exported elements, x of the wrong width,
  a second derivative, a module that is not such a tensor product;
- the CPU time of forward + backward on 2000 nodes, ours against element_linears' fold (every
  exported element's matrices, then each row's own) and mace's skip_tp (printed, not checked).

  test_mace_element_linear.py [--library LIBRARY] [--python PYTHON] [--no-timing]
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1] / "tools"))
sys.path.append(str(HERE.parents[1] / "bench" / "accelerators"))  # after ours: it has a results.py too
os.environ.setdefault("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")  # mace-torch under torch >= 2.6

import in_env  # noqa: E402
from results import Results  # noqa: E402

TOLERANCE = {"fp64": 1e-12, "fp32": 1e-5}
ROWS_PER_ELEMENT = 40
TIMING_NODES = 2000


def relative(got, want) -> float:
    return float((got.double() - want.double()).abs().max()) / float(want.double().abs().max())


def one_hot(rows, species, width: int, dtype):
    import torch  # noqa: PLC0415

    return torch.nn.functional.one_hot(torch.as_tensor(rows)[species], width).to(dtype)


def inputs(tp, n_elements: int, dtype, gen):
    import torch  # noqa: PLC0415

    species = torch.arange(n_elements).repeat(ROWS_PER_ELEMENT)
    species = species[torch.randperm(species.shape[0], generator=gen)]
    x = torch.randn(species.shape[0], tp.irreps_in1.dim, generator=gen, dtype=torch.float64)
    return x.to(dtype), species


def compare(results: Results, label: str, tp, gen) -> None:
    """Ours against `tp` (fp64; turned fp32 in place for the fp32 half)."""
    import torch  # noqa: PLC0415
    from distspec_export.mace_kernels.element_linear import ElementLinear  # noqa: PLC0415

    width = tp.irreps_in2.dim
    rows = torch.randperm(width, generator=gen)[:3].tolist()
    for precision, dtype in (("fp64", torch.float64), ("fp32", torch.float32)):
        tp.to(dtype)
        ours = ElementLinear.from_mace(tp, rows, dtype)
        x, species = inputs(tp, len(rows), dtype, gen)
        x.requires_grad_(True)
        want = tp(x, one_hot(rows, species, width, dtype))
        got = ours(x, species)
        cotangent = torch.randn(want.shape, generator=gen, dtype=torch.float64).to(dtype)
        g_want, = torch.autograd.grad(want, x, cotangent)
        g_got, = torch.autograd.grad(got, x, cotangent)
        value, grad = relative(got, want), relative(g_got, g_want)
        tol = TOLERANCE[precision]
        results.report(got.shape == want.shape and value <= tol and grad <= tol,
                       f"{label} {precision}: value and d/dx equal skip_tp's",
                       f"value {value:.1e}, d/dx {grad:.1e} relative to their largest (tolerance {tol:g}); "
                       f"{x.shape[0]} rows of elements {rows}, {ours.extra_repr()}")
    tp.to(torch.float64)


def compare_traced(results: Results, tp, gen) -> None:
    import torch  # noqa: PLC0415
    from torch.fx.experimental.proxy_tensor import make_fx  # noqa: PLC0415
    from distspec_export.mace_kernels.element_linear import ElementLinear  # noqa: PLC0415

    ours = ElementLinear.from_mace(tp, [tp.irreps_in2.dim - 1, 0], torch.float64)
    x, species = inputs(tp, 2, torch.float64, gen)

    def grad_of(x, species):
        x = x.detach().requires_grad_(True)
        out = ours(x, species)
        g, = torch.autograd.grad((out * out).sum(), x)
        return out, g

    # As the exporter traces (trace.py): the tables are constants of the graph.
    gm = make_fx(grad_of, tracing_mode="symbolic", _allow_non_fake_inputs=True)(x, species)
    called = {str(n.target) for n in gm.graph.nodes if n.op == "call_function"}
    names = {"distspec_mace.element_linear.default", "distspec_mace.element_linear_backward.default"}
    out, g = gm(x[:17], species[:17])
    want, g_want = grad_of(x[:17], species[:17])
    deviation = max(relative(out, want), relative(g, g_want))
    results.report(names <= called and deviation == 0.0, "make_fx (symbolic sizes): forward and backward ops traced",
                   f"ops {sorted(c for c in called if 'distspec_mace' in c)}; the graph on 17 rows equals eager "
                   f"to {deviation:.1e}")


def compare_finite_differences(results: Results, tp, gen) -> None:
    """The backward op against central differences of the forward op (torch.autograd.gradcheck, fp64)."""
    import torch  # noqa: PLC0415
    from distspec_export.mace_kernels.element_linear import ElementLinear  # noqa: PLC0415

    ours = ElementLinear.from_mace(tp, [1, tp.irreps_in2.dim - 1], torch.float64)
    x, species = inputs(tp, 2, torch.float64, gen)
    x, species = x[:4].requires_grad_(True), species[:4]
    try:
        ok = torch.autograd.gradcheck(lambda x: ours(x, species), (x,), eps=1e-6, atol=1e-8, rtol=1e-6)
        detail = f"{x.numel()} inputs, {ours.extra_repr()}"
    except Exception as e:  # noqa: BLE001 (gradcheck raises where they differ)
        ok, detail = False, str(e).splitlines()[0]
    results.report(ok, "d/dx equals central differences of the forward (gradcheck, fp64)", detail)


def expect_error(results: Results, label: str, call, *needles: str, kind: type = Exception) -> None:
    try:
        call()
    except Exception as e:  # noqa: BLE001
        text = str(e)
        results.report(isinstance(e, kind) and all(n in text for n in needles), f"error: {label}",
                       f"{type(e).__name__}: {text.splitlines()[0][:300]}")
        return
    results.report(False, f"error: {label}", "no error raised")


def check_errors(results: Results, tp) -> None:
    import torch  # noqa: PLC0415
    from distspec_export.mace_kernels.element_linear import ElementLinear  # noqa: PLC0415
    from distspec_export.trace import ExportError  # noqa: PLC0415

    ours = ElementLinear.from_mace(tp, [3, 1, 4], torch.float64)
    x, species = inputs(tp, 3, torch.float64, torch.Generator().manual_seed(5))
    op = "distspec_mace::element_linear"
    expect_error(results, "species outside the exported elements", lambda: ours(x, species + 1), op,
                 "species holds values in [1, 3], outside [0, 3)")
    expect_error(results, "species of another length", lambda: ours(x, species[1:]), op, "species must be int64 [n]")
    expect_error(results, "x narrower than a path's block", lambda: ours(x[:, :100], species), op,
                 "reaches beyond x's 100 columns")
    expect_error(results, "x float32, tables float64", lambda: ours(x.float(), species), op, "weights must be Float")

    def second_derivative():
        xg = x.detach().requires_grad_(True)
        g, = torch.autograd.grad((ours(xg, species) ** 2).sum(), xg, create_graph=True)
        torch.autograd.grad(g.sum(), xg)
    expect_error(results, "second derivative", second_derivative, "element_linear_backward",
                 "second derivatives are not implemented")
    expect_error(results, "a module that is not such a tensor product", lambda: ElementLinear.from_mace(
        torch.nn.Linear(2, 2), [0], torch.float64), "is not a tensor product of features with the element's one-hot",
        kind=ExportError)


def timing(tp, label: str) -> None:
    import torch  # noqa: PLC0415
    from distspec_export import element_linears  # noqa: PLC0415
    from distspec_export.mace_kernels.element_linear import ElementLinear  # noqa: PLC0415

    rows = [5, 13, 28]
    width = tp.irreps_in2.dim
    gen = torch.Generator().manual_seed(9)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as a LAMMPS rank runs
    for precision, dtype in (("fp64", torch.float64), ("fp32", torch.float32)):
        tp.to(dtype)
        ours = ElementLinear.from_mace(tp, rows, dtype)
        folded = element_linears.FoldedTensorProduct(tp, one_hot(rows, torch.arange(3), width, dtype))
        species = torch.randint(0, len(rows), (TIMING_NODES,), generator=gen)
        x = torch.randn(TIMING_NODES, tp.irreps_in1.dim, generator=gen).to(dtype)
        y = one_hot(rows, species, width, dtype)
        calls = {"ours": lambda xg: ours(xg, species), "element_linears' fold": lambda xg: folded(xg, y),
                 "mace's skip_tp": lambda xg: tp(xg, y)}
        times = {}
        for name, fn in calls.items():
            best = float("inf")
            for _ in range(3):
                xg = x.detach().requires_grad_(True)
                start = time.process_time()
                out = fn(xg)
                torch.autograd.grad(out, xg, torch.ones_like(out))
                best = min(best, time.process_time() - start)
            times[name] = best
        print(f"timing {label} {precision}, {TIMING_NODES} nodes, CPU forward + backward (process time, one thread): " +
              ", ".join(f"{k} {v * 1e3:.1f} ms" for k, v in times.items()))
    tp.to(torch.float64)
    torch.set_num_threads(threads)


def main(argv: list[str]) -> int:
    argv = in_env.ensure(argv, "test_mace_element_linear.py", var="DISTSPEC_PYTHON_MACE", need=("mace",))
    if "--library" in argv:
        os.environ["DISTSPEC_MACE_OPS_LIBRARY"] = argv[argv.index("--library") + 1]
    import warnings  # noqa: PLC0415

    warnings.filterwarnings("ignore")
    import torch  # noqa: PLC0415
    from e3nn import o3  # noqa: PLC0415

    import mace_mp0_medium  # noqa: PLC0415
    from distspec_export.mace_kernels import library  # noqa: PLC0415
    from distspec_export.trace import ExportError  # noqa: PLC0415

    try:
        library.load()
    except ExportError as e:
        print(f"FAIL: {e}")
        return 1
    t0 = time.perf_counter()
    results = Results()
    gen = torch.Generator().manual_seed(0)
    model = mace_mp0_medium.build(dtype="float64")
    for k, block in enumerate(model.interactions):
        tp = block.skip_tp
        compare(results, f"MACE-MP-0 medium interaction {k} skip_tp ({tp.irreps_in1} -> {tp.irreps_out})", tp, gen)
    torch.manual_seed(1)
    two_into_one = o3.FullyConnectedTensorProduct(o3.Irreps("32x0e + 32x0e + 16x1o"), o3.Irreps("5x0e"),
                                                  o3.Irreps("16x0e + 16x1o")).double()
    compare(results, "32x0e+32x0e+16x1o -> 16x0e+16x1o (two paths into one output)", two_into_one, gen)
    compare_finite_differences(results, two_into_one, gen)
    compare_traced(results, model.interactions[1].skip_tp, gen)
    check_errors(results, model.interactions[1].skip_tp)
    if "--no-timing" not in argv:
        for k, block in enumerate(model.interactions):
            timing(block.skip_tp, f"interaction {k}")
    print(f"({time.perf_counter() - t0:.1f} s)")
    return results.finish()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
