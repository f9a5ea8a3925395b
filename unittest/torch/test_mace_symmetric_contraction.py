#!/usr/bin/env python3
"""distspec_mace::symmetric_contraction against mace-torch's own SymmetricContraction, ctest
torch.mace_symmetric_contraction.

mace's modules built as mace builds them (random weights, mace's default reduced Clebsch-Gordan
basis unless said):

- MACE-MP-0 medium's two product blocks (bench/accelerators/mace_mp0_medium.py: 89 elements,
  features 128x(0e+1o+2e+3o) in, 128x0e+128x1o and 128x0e out, correlation 3);
- hidden irreps up to L = 3: 32x(0e+1o+2e+3o) in and out, correlation 1, 2 and 3, 10 elements;
- MACE-MP-0 medium's first product with e3nn's full Clebsch-Gordan basis (use_reduced_cg=False),
  whose U tensors carry rounding-sized entries.

On rows of 3 exported elements (random rows of the table, in random order), random x: the op's
value and its gradient with respect to x (torch.autograd.grad with a random cotangent) equal mace's
module given the one-hot of each row's element, relative to their largest magnitude: fp64 within
1e-12, fp32 (mace's module and ours in fp32) within 1e-5; the backward op equals central
differences of the forward (gradcheck, the L = 3 module at correlation 3). The op traced by make_fx with symbolic
sizes (the fake implementations) gives the same gradient, with the backward op in the graph. Bad
input gives the op's message: a species outside the exported elements, int32 species, x of the
wrong shape or channel count, a second derivative, a module that is not mace's. The CPU time of
the op's and mace's forward + backward on 2000 nodes is printed (not checked).

  test_mace_symmetric_contraction.py [--library LIBRARY] [--python PYTHON] [--no-timing]
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


def inputs(module, n_elements: int, dtype, gen):
    """Random x [n, C, D] and species: ROWS_PER_ELEMENT rows of each element, shuffled."""
    import torch  # noqa: PLC0415

    first = module.contractions[0]
    species = torch.arange(n_elements).repeat(ROWS_PER_ELEMENT)
    species = species[torch.randperm(species.shape[0], generator=gen)]
    x = torch.randn(species.shape[0], first.num_features, first.coupling_irreps.dim, generator=gen,
                    dtype=torch.float64)
    return x.to(dtype), species


def compare(results: Results, label: str, module, width: int, gen) -> None:
    """Ours against `module` (mace's, fp64; turned fp32 in place for the fp32 half)."""
    import torch  # noqa: PLC0415
    from distspec_export.mace_kernels.symmetric_contraction import SymmetricContraction  # noqa: PLC0415

    rows = torch.randperm(width, generator=gen)[:3].tolist()
    for precision, dtype in (("fp64", torch.float64), ("fp32", torch.float32)):
        module.to(dtype)
        ours = SymmetricContraction.from_mace(module, rows, dtype)
        x, species = inputs(module, len(rows), dtype, gen)
        x.requires_grad_(True)
        want = module(x, one_hot(rows, species, width, dtype))
        got = ours(x, species)
        cotangent = torch.randn(want.shape, generator=gen, dtype=torch.float64).to(dtype)
        g_want, = torch.autograd.grad(want, x, cotangent)
        g_got, = torch.autograd.grad(got, x, cotangent)
        value, grad = relative(got, want), relative(g_got, g_want)
        tol = TOLERANCE[precision]
        results.report(got.shape == want.shape and value <= tol and grad <= tol,
                       f"{label} {precision}: value and d/dx equal mace's",
                       f"value {value:.1e}, d/dx {grad:.1e} relative to their largest (tolerance {tol:g}); "
                       f"{x.shape[0]} rows of elements {rows}, {ours.extra_repr()}")
    module.to(torch.float64)


def compare_traced(results: Results, module, width: int, gen) -> None:
    """make_fx with symbolic sizes (the fake implementations), forward and gradient, run back."""
    import torch  # noqa: PLC0415
    from torch.fx.experimental.proxy_tensor import make_fx  # noqa: PLC0415
    from distspec_export.mace_kernels.symmetric_contraction import SymmetricContraction  # noqa: PLC0415

    rows = [width - 1, 0]
    ours = SymmetricContraction.from_mace(module, rows, torch.float64)
    x, species = inputs(module, len(rows), torch.float64, gen)

    def grad_of(x, species):
        x = x.detach().requires_grad_(True)
        out = ours(x, species)
        g, = torch.autograd.grad((out * out).sum(), x)
        return out, g

    # As the exporter traces (trace.py): the tables are constants of the graph.
    gm = make_fx(grad_of, tracing_mode="symbolic", _allow_non_fake_inputs=True)(x, species)
    called = {str(n.target) for n in gm.graph.nodes if n.op == "call_function"}
    names = {"distspec_mace.symmetric_contraction.default", "distspec_mace.symmetric_contraction_backward.default"}
    x2, species2 = x[:17], species[:17]  # another size than the trace's
    out, g = gm(x2, species2)
    want, g_want = grad_of(x2, species2)
    deviation = max(relative(out, want), relative(g, g_want))
    results.report(names <= called and deviation == 0.0, "make_fx (symbolic sizes): forward and backward ops traced",
                   f"ops {sorted(c for c in called if 'distspec_mace' in c)}; the graph on 17 rows equals eager "
                   f"to {deviation:.1e}")


def compare_finite_differences(results: Results, module, width: int, gen) -> None:
    """The backward op against central differences of the forward op (torch.autograd.gradcheck, fp64)."""
    import torch  # noqa: PLC0415
    from distspec_export.mace_kernels.symmetric_contraction import SymmetricContraction  # noqa: PLC0415

    ours = SymmetricContraction.from_mace(module, [1, width - 1], torch.float64)
    x, species = inputs(module, 2, torch.float64, gen)
    x, species = x[:3].requires_grad_(True), species[:3]
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


def check_errors(results: Results, module, width: int) -> None:
    import torch  # noqa: PLC0415
    from distspec_export.mace_kernels.symmetric_contraction import SymmetricContraction  # noqa: PLC0415
    from distspec_export.trace import ExportError  # noqa: PLC0415

    ours = SymmetricContraction.from_mace(module, [3, 1, 4], torch.float64)
    gen = torch.Generator().manual_seed(5)
    x, species = inputs(module, 3, torch.float64, gen)
    op = "distspec_mace::symmetric_contraction"
    expect_error(results, "species outside the exported elements", lambda: ours(x, species + 1), op,
                 "species holds values in [1, 3], outside [0, 3)")
    expect_error(results, "int32 species", lambda: ours(x, species.to(torch.int32)), op, "species must be int64")
    expect_error(results, "species of another length", lambda: ours(x, species[1:]), op, "species must be int64 [n]")
    expect_error(results, "x flat", lambda: ours(x.reshape(x.shape[0], -1), species), op, "x must be [n, channels, D]")
    expect_error(results, "x of another channel count", lambda: ours(x[:, 1:], species), op, "coefficients must be")
    expect_error(results, "x float32, tables float64", lambda: ours(x.float(), species), op,
                 "coefficients must be Float")

    def second_derivative():
        xg = x.detach().requires_grad_(True)
        g, = torch.autograd.grad((ours(xg, species) ** 2).sum(), xg, create_graph=True)
        torch.autograd.grad(g.sum(), xg)
    expect_error(results, "second derivative", second_derivative, "symmetric_contraction_backward",
                 "second derivatives are not implemented")
    expect_error(results, "a module that is not mace's", lambda: SymmetricContraction.from_mace(
        torch.nn.Linear(2, 2), [0], torch.float64), "is not mace's e3nn SymmetricContraction", kind=ExportError)
    expect_error(results, "element rows outside the table", lambda: SymmetricContraction.from_mace(
        module, [width], torch.float64), f"{width}-wide one-hot", kind=ExportError)


def timing(module, width: int) -> None:
    """CPU forward + backward, ours against mace's module as is and kept to the 3 elements
    (module_ops' fallback, element_linears' fold)."""
    import torch  # noqa: PLC0415
    from distspec_export.mace_kernels import module_ops  # noqa: PLC0415
    from distspec_export.mace_kernels.symmetric_contraction import SymmetricContraction  # noqa: PLC0415

    rows = [5, 13, 28]
    gen = torch.Generator().manual_seed(9)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as a LAMMPS rank runs
    for precision, dtype in (("fp64", torch.float64), ("fp32", torch.float32)):
        module.to(dtype)
        ours = SymmetricContraction.from_mace(module, rows, dtype)
        folded = module_ops.ModuleSymmetricContraction(module, rows, dtype)
        first = module.contractions[0]
        species = torch.randint(0, len(rows), (TIMING_NODES,), generator=gen)
        x = torch.randn(TIMING_NODES, first.num_features, first.coupling_irreps.dim, generator=gen).to(dtype)
        y = one_hot(rows, species, width, dtype)
        calls = {"ours": lambda xg: ours(xg, species), "mace, 3 elements": lambda xg: folded(xg, species),
                 "mace, 89 elements": lambda xg: module(xg, y)}
        times = {}
        for name, fn in calls.items():
            best = float("inf")
            for _ in range(3 if name == "ours" else 1):
                xg = x.detach().requires_grad_(True)
                start = time.process_time()
                out = fn(xg)
                torch.autograd.grad(out, xg, torch.ones_like(out))
                best = min(best, time.process_time() - start)
            times[name] = best
        print(f"timing {precision}, {TIMING_NODES} nodes, CPU forward + backward (process time, one thread): " +
              ", ".join(f"{k} {v * 1e3:.1f} ms" for k, v in times.items()) +
              f"; ours {times['mace, 3 elements'] / times['ours']:.0f}x faster than mace's kept to 3 elements")
    module.to(torch.float64)
    torch.set_num_threads(threads)


def main(argv: list[str]) -> int:
    argv = in_env.ensure(argv, "test_mace_symmetric_contraction.py", var="DISTSPEC_PYTHON_MACE", need=("mace",))
    if "--library" in argv:
        os.environ["DISTSPEC_MACE_OPS_LIBRARY"] = argv[argv.index("--library") + 1]
    import warnings  # noqa: PLC0415

    warnings.filterwarnings("ignore")
    import torch  # noqa: PLC0415
    from e3nn import o3  # noqa: PLC0415
    from mace.modules.symmetric_contraction import SymmetricContraction as MaceContraction  # noqa: PLC0415

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
    width = len(mace_mp0_medium.ELEMENTS)
    for k, product in enumerate(model.products):
        compare(results, f"MACE-MP-0 medium product {k} ({product.symmetric_contractions.irreps_out})",
                product.symmetric_contractions, width, gen)

    def built(irreps_in: str, irreps_out: str, correlation: int, elements: int, reduced: bool = True):
        # mace builds its U tensors in torch's default dtype.
        default = torch.get_default_dtype()
        torch.set_default_dtype(torch.float64)
        try:
            torch.manual_seed(correlation)
            return MaceContraction(o3.Irreps(irreps_in), o3.Irreps(irreps_out), correlation=correlation,
                                   num_elements=elements, use_reduced_cg=reduced)
        finally:
            torch.set_default_dtype(default)

    hidden = "32x0e + 32x1o + 32x2e + 32x3o"
    for correlation in (1, 2, 3):
        compare(results, f"{hidden} -> {hidden}, correlation {correlation}", built(hidden, hidden, correlation, 10),
                10, gen)
    mp0_in = "128x0e + 128x1o + 128x2e + 128x3o"
    compare(results, "MACE-MP-0 medium product 0, e3nn's full CG basis",
            built(mp0_in, "128x0e + 128x1o", 3, width, reduced=False), width, gen)
    compare_finite_differences(results, built(hidden, hidden, 3, 10), 10, gen)
    compare_traced(results, model.products[0].symmetric_contractions, width, gen)
    check_errors(results, model.products[0].symmetric_contractions, width)
    if "--no-timing" not in argv:
        timing(model.products[0].symmetric_contractions, width)
    print(f"({time.perf_counter() - t0:.1f} s)")
    return results.finish()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
