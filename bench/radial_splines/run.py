"""Do radial splines (tools/distspec_export/radial_splines.py) pay on the CPU?

Exports SevenNet-0 twice with distspec-export (AOTInductor, fp32): with its radial MLPs as splines
(the default) and with --no-radial-spline, then times the graph per call, as the plugin calls it
on one rank (the contract's inputs, DISTSPEC's op semantics for one process), on the same
periodic crystal, the calls of the two graphs interleaved.

  run.py OUT [--cells 6] [--calls 5] [--threads 1] [--device cpu|cuda] [--reuse]

Prints a table: graph, knots, matrix-product FLOPs per call (torch's FlopCounterMode on the traced
graph), seconds per call (min and median), and the spline graph's largest difference from the MLP
graph's (relative to max(1, |value|)). Needs DISTSPEC_PYTHON_SEVENN's environment. On a GPU
machine, `--device cuda` exports and times CUDA graphs instead.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "tools"))
sys.path.insert(0, str(HERE.parent))

from graph_timing import crystal as timed_crystal, options, time_graphs  # noqa: E402

ELEMENTS = ["Si"]
CUTOFF = 5.0


def export(out: Path, spline: bool, device: str, reuse: bool) -> tuple[str, dict]:
    """(graph file, its radial_splines record), exported unless `reuse` finds it already there."""
    import torch  # noqa: PLC0415
    from distspec_export.export import export as run_export  # noqa: PLC0415
    from distspec_export.sevennet import checkpoint  # noqa: PLC0415

    name = "7net0" + ("" if spline else "_mlp")
    graph = out / f"{name}.pt2"
    if not (reuse and graph.is_file()):
        run_export(checkpoint("7net-0"), None, ELEMENTS, CUTOFF, "metal", out, name, precision="fp32",
                   kind="sevennet", check_export=False, device=device, radial_spline=spline,
                   log=lambda s: print(s, flush=True))
    meta = torch._inductor.aoti_load_package(str(graph)).get_metadata()
    return str(graph), json.loads(meta["distspec.json"]).get("radial_splines", {})


def graph_flops(spline: bool, example) -> int:
    """Matrix-product FLOPs of the traced force graph on `example` (FlopCounterMode)."""
    import torch  # noqa: PLC0415
    from torch.utils.flop_counter import FlopCounterMode  # noqa: PLC0415

    from distspec_export import adapters, ops, radial_splines, trace  # noqa: PLC0415
    from distspec_export.host_ops import HostExchange  # noqa: PLC0415
    from distspec_export.sevennet import checkpoint  # noqa: PLC0415

    with radial_splines.recording(spline):
        adapted = adapters.adapt(checkpoint("7net-0"), "sevennet", ELEMENTS, CUTOFF, torch.float32, example)
    gm = trace.trace_forces(adapted.energy_fn, example.inputs)
    counter = FlopCounterMode(display=False)
    with HostExchange(example.owner, example.n_owned).install(), ops.opaque_halo_backward(), counter:
        gm(*example.contract_inputs())
    return counter.get_total_flops()


def main() -> int:
    args = options(__doc__).parse_args()
    import torch  # noqa: PLC0415

    crystal = timed_crystal(args, len(ELEMENTS), CUTOFF)
    n_rows, n_edges = crystal.inputs[0].shape[0], crystal.inputs[2].shape[1]
    graphs, records = {}, {}
    for spline in (True, False):
        graphs[spline], records[spline] = export(args.out, spline, args.device, args.reuse)
    timed = time_graphs(graphs, crystal, args.calls, args.device)
    finite = all(bool(t.isfinite().all()) for key in timed for t in timed[key][2])
    deviation = max(float((a - b).abs().max()) / max(1.0, float(b.abs().max()))
                    for a, b in zip(timed[True][2], timed[False][2]))
    print(f"\n{crystal.n_owned} atoms, {n_rows} rows, {n_edges} edges, {args.threads} thread(s), {args.device}, "
          f"torch {torch.__version__}; {args.calls} calls of each graph, interleaved")
    print("| graph | knots | matrix-product FLOPs per call | s per call, min | median | splines vs MLPs |")
    print("|---|---|---|---|---|---|")
    for spline in (False, True):
        replaced = records[spline].get("replaced", [])
        knots = replaced[0]["knots"] if replaced else ""
        flops = graph_flops(spline, crystal)
        note = (f"{deviation:.1e}" if finite else "outputs not finite") if spline else ""
        print(f"| {'radial splines' if spline else 'radial MLPs'} | {knots} | {flops:,} | {timed[spline][0]:.4f} | "
              f"{timed[spline][1]:.4f} | {note} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
