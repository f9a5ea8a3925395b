"""mace-torch's own calculator on one GPU, per accelerator: seconds and peak memory.

    python mace_calculator.py MODEL [--accelerators e3nn cueq oeq] [--cells 11 17 23] [--repeats 3]

MODEL: a model file as mace-torch saves one (mace_mp0_medium.py save). For each rattled silicon
diamond crystal of 8 n^3 atoms and each accelerator mace-torch's MACECalculator can enable
(`enable_cueq`, `enable_oeq`), fp32: the model call on a batch already on the GPU (energy,
forces, stress; what an MD code with its own neighbour list would pay), median of --repeats
after a warm-up call, and one whole `calculate` (mace's host neighbour list and batching
included, as ASE MD pays it). Prints a table row per size and accelerator with the peak GPU
memory of the model call (torch's allocator) and the largest force difference from e3nn on the
same batch. A size or an accelerator that fails is reported as such.
"""

from __future__ import annotations

import os
import statistics
import sys
import time

os.environ.setdefault("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")  # mace-torch under torch >= 2.6

import torch  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sevennet_model_call import arguments, build_each, crystal  # noqa: E402


def failure(e: Exception) -> str:
    """One table cell for a call that raised: a TorchScript model raises its out-of-memory error as a
    RuntimeError whose first lines are the interpreter's traceback, so the cause is its last line."""
    text = str(e)
    if "out of memory" in text.lower():
        return "out of GPU memory"
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return f"fails: {type(e).__name__}: {(lines[-1] if lines else '')[:160]}".replace("|", "/")


def calculator(model: str, accelerator: str):
    from mace.calculators import MACECalculator  # noqa: PLC0415

    return MACECalculator(model_paths=model, device="cuda", default_dtype="float32",
                          enable_cueq=accelerator == "cueq", enable_oeq=accelerator == "oeq")


def call(calc, batch):
    out = calc.models[0](calc._clone_batch(batch).to_dict(), compute_stress=True, training=False)
    torch.cuda.synchronize()
    return out["forces"].detach(), out["energy"].detach()


def main() -> int:
    p = arguments(__doc__, ["e3nn", "cueq"], 3)
    p.add_argument("model")
    args = p.parse_args()
    calcs = build_each(args.accelerators, lambda acc: calculator(args.model, acc), "MACECalculator fails", 300)
    print("| atoms | accelerator | s per model call | s per calculate | peak GiB | max force diff vs e3nn (eV/A) |")
    print("|---|---|---|---|---|---|", flush=True)
    for n in args.cells:
        atoms = crystal(n)
        reference = None
        for acc, calc in calcs.items():
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()
            try:
                t = time.perf_counter()
                batch = calc._atoms_to_batch(atoms)
                batching = time.perf_counter() - t
                forces, _ = call(calc, batch)
                times = []
                for _ in range(args.repeats):
                    t = time.perf_counter()
                    forces, _ = call(calc, batch)
                    times.append(time.perf_counter() - t)
                peak = torch.cuda.max_memory_allocated() / 2**30
                t = time.perf_counter()
                calc.calculate(atoms, ["energy", "forces", "stress"])
                whole = time.perf_counter() - t
            except torch.cuda.OutOfMemoryError:
                print(f"| {len(atoms)} | {acc} | out of GPU memory | | | |", flush=True)
                continue
            except Exception as e:  # noqa: BLE001
                print(f"| {len(atoms)} | {acc} | {failure(e)} | | | |", flush=True)
                continue
            if acc == "e3nn":
                reference = forces
            diff = f"{(forces - reference).abs().max().item():.2e}" if reference is not None and acc != "e3nn" else ""
            print(f"| {len(atoms)} | {acc} | {statistics.median(times):.4f} | {whole:.3f} (batching {batching:.2f}) "
                  f"| {peak:.1f} | {diff} |", flush=True)
            del batch
    return 0


if __name__ == "__main__":
    sys.exit(main())
