"""What the tests of the distspec_mace ops against mace-torch share (test_mace_convolution.py,
test_mace_element_linear.py, test_mace_symmetric_contraction.py).

- `run`, `start`: the script in the MACE environment, the op library loaded, the checks' tally;
- `relative`, `one_hot`: the errors the checks bound, the one-hot mace's modules take;
- `compare_with_mace`: an op's value and d/dx against mace's module on rows of 3 of its elements,
  fp64 and fp32;
- `check_gradcheck`, `check_traced`: the backward op against central differences of the forward,
  make_fx with symbolic sizes;
- `expect_error`, `second_derivative`: bad input refused with the op's message;
- `cpu_times`: the best of a few CPU times of calls (printed by the scripts, not checked).

Imported by the scripts before torch: they start under the system python3, and in_env re-runs
them in the MACE environment, so torch is imported inside the functions.
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

# The ops against mace's modules (each in the same precision), relative to the largest value.
TOLERANCE = {"fp64": 1e-12, "fp32": 1e-5}
# The nodes of the timings.
TIMING_NODES = 2000


def start(argv: list[str], script: str) -> list[str]:
    """argv without --python, in DISTSPEC_PYTHON_MACE's environment (in_env re-runs the script
    there, or skips it), the op library (--library LIBRARY, else $DISTSPEC_MACE_OPS_LIBRARY) loaded;
    exits 1, a FAIL line printed, where it does not load."""
    argv = in_env.ensure(argv, script, var="DISTSPEC_PYTHON_MACE", need=("mace",))
    if "--library" in argv:
        os.environ["DISTSPEC_MACE_OPS_LIBRARY"] = argv[argv.index("--library") + 1]
    import warnings  # noqa: PLC0415

    warnings.filterwarnings("ignore")
    from distspec_export.mace_kernels import library  # noqa: PLC0415
    from distspec_export.trace import ExportError  # noqa: PLC0415

    try:
        library.load()
    except ExportError as e:
        print(f"FAIL: {e}")
        sys.exit(1)
    return argv


def run(argv: list[str], script: str, checks) -> int:
    """The script's checks, checks(results, argv), after `start`: their tally printed, with the
    time they took; the exit status."""
    argv = start(argv, script)
    t0 = time.perf_counter()
    results = Results()
    checks(results, argv)
    print(f"({time.perf_counter() - t0:.1f} s)")
    return results.finish()


def relative(got, want) -> float:
    """The largest |got - want| over the largest |want| (in float64)."""
    return float((got.double() - want.double()).abs().max()) / float(want.double().abs().max())


def one_hot(rows, species, width: int, dtype):
    """mace's one-hot of each node's element: column rows[species[n]] of `width`."""
    import torch  # noqa: PLC0415

    return torch.nn.functional.one_hot(torch.as_tensor(rows)[species], width).to(dtype)


def compare_with_mace(results: Results, label: str, mace_name: str, module, width: int, from_mace, inputs,
                      gen) -> None:
    """The op (from_mace(rows, dtype), a module of (x, species)) against mace's `module` given the
    one-hot of each node's element, on 3 random rows of its `width`-wide table and inputs(n_elements,
    dtype, gen) -> (x, species): value and d/dx (torch.autograd.grad with a random cotangent) within
    TOLERANCE, fp64 and then fp32 (`module` turned fp32 in place, and back)."""
    import torch  # noqa: PLC0415

    rows = torch.randperm(width, generator=gen)[:3].tolist()
    for precision, dtype in (("fp64", torch.float64), ("fp32", torch.float32)):
        module.to(dtype)
        ours = from_mace(rows, dtype)
        x, species = inputs(len(rows), dtype, gen)
        x.requires_grad_(True)
        want = module(x, one_hot(rows, species, width, dtype))
        got = ours(x, species)
        cotangent = torch.randn(want.shape, generator=gen, dtype=torch.float64).to(dtype)
        g_want, = torch.autograd.grad(want, x, cotangent)
        g_got, = torch.autograd.grad(got, x, cotangent)
        value, grad = relative(got, want), relative(g_got, g_want)
        tol = TOLERANCE[precision]
        results.report(got.shape == want.shape and value <= tol and grad <= tol,
                       f"{label} {precision}: value and d/dx equal {mace_name}",
                       f"value {value:.1e}, d/dx {grad:.1e} relative to their largest (tolerance {tol:g}); "
                       f"{x.shape[0]} rows of elements {rows}, {ours.extra_repr()}")
    module.to(torch.float64)


def check_gradcheck(results: Results, ours, x, species) -> None:
    """The backward op against central differences of the forward op (torch.autograd.gradcheck, fp64)
    at x's rows."""
    import torch  # noqa: PLC0415

    x = x.requires_grad_(True)
    try:
        ok = torch.autograd.gradcheck(lambda x: ours(x, species), (x,), eps=1e-6, atol=1e-8, rtol=1e-6)
        detail = f"{x.numel()} inputs, {ours.extra_repr()}"
    except Exception as e:  # noqa: BLE001 (gradcheck raises where they differ)
        ok, detail = False, str(e).splitlines()[0]
    results.report(ok, "d/dx equals central differences of the forward (gradcheck, fp64)", detail)


def check_traced(results: Results, op: str, ours, x, species) -> None:
    """make_fx with symbolic sizes (the fake implementations) of ours' value and d/dx: the ops
    distspec_mace::`op` and `op`_backward in the graph, which on 17 rows (another size than the
    trace's) equals eager."""
    import torch  # noqa: PLC0415
    from torch.fx.experimental.proxy_tensor import make_fx  # noqa: PLC0415

    def grad_of(x, species):
        x = x.detach().requires_grad_(True)
        out = ours(x, species)
        g, = torch.autograd.grad((out * out).sum(), x)
        return out, g

    # As the exporter traces (trace.py): the tables are constants of the graph.
    gm = make_fx(grad_of, tracing_mode="symbolic", _allow_non_fake_inputs=True)(x, species)
    called = {str(n.target) for n in gm.graph.nodes if n.op == "call_function"}
    names = {f"distspec_mace.{op}.default", f"distspec_mace.{op}_backward.default"}
    x2, species2 = x[:17], species[:17]
    out, g = gm(x2, species2)
    want, g_want = grad_of(x2, species2)
    deviation = max(relative(out, want), relative(g, g_want))
    results.report(names <= called and deviation == 0.0, "make_fx (symbolic sizes): forward and backward ops traced",
                   f"ops {sorted(c for c in called if 'distspec_mace' in c)}; the graph on 17 rows equals eager "
                   f"to {deviation:.1e}")


def expect_error(results: Results, label: str, call, *needles: str, kind: type = Exception) -> None:
    """call() raises a `kind` whose message holds every needle."""
    try:
        call()
    except Exception as e:  # noqa: BLE001
        text = str(e)
        results.report(isinstance(e, kind) and all(n in text for n in needles), f"error: {label}",
                       f"{type(e).__name__}: {text.splitlines()[0][:300]}")
        return
    results.report(False, f"error: {label}", "no error raised")


def second_derivative(fn, x):
    """A call that differentiates fn (of x alone) twice at x: through the backward op, which refuses."""
    import torch  # noqa: PLC0415

    def call():
        xg = x.detach().requires_grad_(True)
        g, = torch.autograd.grad((fn(xg) ** 2).sum(), xg, create_graph=True)
        torch.autograd.grad(g.sum(), xg)
    return call


def timing_inputs(rows, width: int, features: tuple[int, ...], dtype, gen):
    """TIMING_NODES nodes of random elements among `rows`: species, random x [TIMING_NODES, *features]
    and mace's one-hot of the elements."""
    import torch  # noqa: PLC0415

    species = torch.randint(0, len(rows), (TIMING_NODES,), generator=gen)
    x = torch.randn(TIMING_NODES, *features, generator=gen).to(dtype)
    return species, x, one_hot(rows, species, width, dtype)


def forward_backward_time(fn, x, repeats: int) -> float:
    """The shortest CPU time (process time, seconds) of `repeats` runs of fn(x) and its d/dx (a
    cotangent of ones)."""
    import torch  # noqa: PLC0415

    best = float("inf")
    for _ in range(repeats):
        xg = x.detach().requires_grad_(True)
        start = time.process_time()
        out = fn(xg)
        torch.autograd.grad(out, xg, torch.ones_like(out))
        best = min(best, time.process_time() - start)
    return best


def timing_line(what: str, times: dict[str, float]) -> str:
    """What a timing prints: `what`, the nodes, each call's time."""
    return (f"timing {what}, {TIMING_NODES} nodes, CPU forward + backward (process time, one thread): " +
            ", ".join(f"{k} {v * 1e3:.1f} ms" for k, v in times.items()))


def cpu_times(module, calls_at, repeats) -> list[tuple[str, dict[str, float]]]:
    """[(precision, {name: forward_backward_time of the call, repeats(name) runs})] for fp64 and fp32,
    on one thread as a LAMMPS rank runs: `module` turned to the dtype in place (and back to fp64
    after), calls_at(dtype) -> (x, {name: a function of x}) the calls timed."""
    import torch  # noqa: PLC0415

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    rows = []
    for precision, dtype in (("fp64", torch.float64), ("fp32", torch.float32)):
        module.to(dtype)
        x, calls = calls_at(dtype)
        rows.append((precision, {name: forward_backward_time(fn, x, repeats(name)) for name, fn in calls.items()}))
    module.to(torch.float64)
    torch.set_num_threads(threads)
    return rows
