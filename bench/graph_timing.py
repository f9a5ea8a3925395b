"""Seconds per call of exported AOTInductor graphs, as the plugin calls them on one rank: the
contract's inputs of one crystal and DISTSPEC's op semantics for one process (host_ops.py).
Shared by bench/element_linears/run.py and bench/radial_splines/run.py; tools/ must be on
sys.path."""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path


def options(doc: str) -> argparse.ArgumentParser:
    """The benchmarks' common command line: OUT, --cells, --calls, --threads, --device, --reuse."""
    p = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    p.add_argument("out", type=Path)
    p.add_argument("--cells", type=int, default=6, help="crystal of CELLS^3 atoms 2.5 A apart (default 216)")
    p.add_argument("--calls", type=int, default=5)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    p.add_argument("--reuse", action="store_true", help="time the graphs already in OUT instead of exporting")
    return p


def crystal(args: argparse.Namespace, n_species: int, cutoff: float):
    """The timed crystal (example.crystal, fp32, jittered), after torch's threads and the graphs'
    ops are set up as the plugin's process has them."""
    import torch  # noqa: PLC0415
    from distspec_export import example as ex  # noqa: PLC0415
    from distspec_export import ops  # noqa: PLC0415

    torch.set_num_threads(args.threads)
    ops.import_nvalchemi_ops()
    ops.define_backward_op()
    return ex.crystal(n_species, cutoff, torch.float32, cells=args.cells, spacing=0.5, seed=3)


def time_graphs(paths: dict, example, calls: int, device: str) -> dict:
    """{key: (min and median seconds per call, outputs)} of each graph, their calls interleaved so
    that a machine's changing load falls on each alike."""
    import torch  # noqa: PLC0415
    from distspec_export import trace  # noqa: PLC0415
    from distspec_export.host_ops import HostExchange  # noqa: PLC0415

    runs = {key: trace.load_graph(path, "aoti") for key, path in paths.items()}
    inputs = tuple(t.to(device) for t in example.contract_inputs())
    host = HostExchange(example.owner.to(device), example.n_owned)
    times: dict = {key: [] for key in runs}
    outputs = {}
    with host.install():
        for key, run in runs.items():
            outputs[key] = run(inputs)  # warm-up
        for _ in range(calls):
            for key, run in runs.items():
                if device == "cuda":
                    torch.cuda.synchronize()
                t0 = time.perf_counter()
                outputs[key] = run(inputs)
                if device == "cuda":
                    torch.cuda.synchronize()
                times[key].append(time.perf_counter() - t0)
    return {key: (min(times[key]), statistics.median(times[key]),
                  tuple(t.detach().cpu().double() for t in outputs[key])) for key in runs}
