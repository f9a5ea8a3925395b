"""SevenNet's own model call on one GPU, per accelerator: seconds and peak memory.

    python sevennet_model_call.py [--accelerators e3nn oeq cueq] [--cells 11 17 22] [--repeats 5]

For each rattled silicon diamond crystal of 8 n^3 atoms and each accelerator sevenn can enable
(`build_model(enable_oeq=True)` etc.), builds SevenNet-0 and times what SevenNet's ASE calculator
times inside `calculate`: the model call on a graph already on the GPU (energy, forces, stress),
after two warm-up calls, median of --repeats. Prints one table row per size and accelerator with
the peak GPU memory the call allocated (torch's allocator), and the largest force difference
from e3nn on the same graph. A size that does not fit is reported as such.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np
import torch


def crystal(n: int, seed: int = 7):
    from ase.build import bulk  # noqa: PLC0415

    atoms = bulk("Si", "diamond", a=5.43, cubic=True).repeat((n, n, n))
    rng = np.random.default_rng(seed)
    atoms.positions += rng.normal(scale=0.05, size=atoms.positions.shape)
    return atoms


def build(accelerator: str):
    from sevenn.util import load_checkpoint  # noqa: PLC0415

    flags = {"oeq": {"enable_oeq": True}, "cueq": {"enable_cueq": True}, "flash": {"enable_flash": True}}
    model = load_checkpoint("7net-0").build_model(**flags.get(accelerator, {}))
    model.set_is_batch_data(False)
    return model.to("cuda").eval()


def graph(atoms, cutoff: float):
    from sevenn.atom_graph_data import AtomGraphData  # noqa: PLC0415
    from sevenn.train.dataload import unlabeled_atoms_to_graph  # noqa: PLC0415

    return AtomGraphData.from_numpy_dict(unlabeled_atoms_to_graph(atoms, cutoff, with_shift=False))


def call(model, data):
    out = model(data.clone().to("cuda"))
    torch.cuda.synchronize()
    return out["inferred_force"].detach(), out["inferred_total_energy"].detach()


def median_seconds(fn, repeats: int, warmups: int = 2):
    """(fn()'s last result, the median seconds of `repeats` calls after `warmups` untimed ones)."""
    for _ in range(warmups):
        out = fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return out, statistics.median(times)


def arguments(doc: str, accelerators: list[str], repeats: int) -> argparse.ArgumentParser:
    """The options of a per-accelerator benchmark: --accelerators, --cells, --repeats."""
    p = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--accelerators", nargs="+", default=accelerators)
    p.add_argument("--cells", nargs="+", type=int, default=[11, 17])
    p.add_argument("--repeats", type=int, default=repeats)
    return p


def build_each(accelerators: list[str], build, failure: str, message_chars: int | None = None) -> dict:
    """{accelerator: build(accelerator)} of those that build, after a line naming the GPU and torch;
    one that fails prints `# ACCELERATOR: FAILURE: ERROR` (its first message_chars characters)."""
    print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}", flush=True)
    built = {}
    for acc in accelerators:
        try:
            built[acc] = build(acc)
        except Exception as e:  # noqa: BLE001
            print(f"# {acc}: {failure}: {type(e).__name__}: {str(e)[:message_chars]}", flush=True)
    return built


def main() -> int:
    args = arguments(__doc__, ["e3nn", "oeq"], 5).parse_args()
    models = build_each(args.accelerators, build, "cannot build")
    print("| atoms | accelerator | s per call | peak GiB | max force diff vs e3nn (eV/A) | energy diff per atom (eV) |")
    print("|---|---|---|---|---|---|", flush=True)
    for n in args.cells:
        atoms = crystal(n)
        t0 = time.time()
        data = graph(atoms, 5.0)
        print(f"# {len(atoms)} atoms, {data['edge_index'].shape[1]} edges, graph in {time.time() - t0:.1f} s",
              flush=True)
        reference = None
        for acc, model in models.items():
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()
            try:
                (forces, energy), seconds = median_seconds(lambda: call(model, data), args.repeats)
            except torch.cuda.OutOfMemoryError:
                print(f"| {len(atoms)} | {acc} | out of GPU memory | | | |", flush=True)
                continue
            peak = torch.cuda.max_memory_allocated() / 2**30
            if acc == "e3nn":
                reference = (forces, energy)
            diff = ""
            if reference is not None and acc != "e3nn":
                diff = (f"{(forces - reference[0]).abs().max().item():.2e} | "
                        f"{(energy - reference[1]).abs().item() / len(atoms):.2e}")
            else:
                diff = " | "
            print(f"| {len(atoms)} | {acc} | {seconds:.4f} | {peak:.1f} | {diff} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
