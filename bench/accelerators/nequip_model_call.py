"""nequip's own fastest model call on one GPU, beside its eager evaluation: seconds and peak memory.

  python nequip_model_call.py compile CKPT OUT.nequip.pt2 [--device cuda] [--modifiers M ...]
      nequip-compile as nequip documents it for its foundation models: `--mode aotinductor
      --target ase` with the acceleration modifiers (NequIP: enable_OpenEquivariance; Allegro:
      enable_TritonContracter), given a 64-atom rattled Si crystal as its example data
      (`--data-path`: the checkpoint holds no data set, nequip_checkpoint.py).
  python nequip_model_call.py time CKPT [--compiled OUT.nequip.pt2] [--cells 11 17] [--repeats 5]
      [--check-cells 11] [--device cuda]
      For each rattled Si diamond crystal of 8 n^3 atoms (as sevennet_model_call.py builds them),
      what nequip's ASE calculator times inside `calculate`: the model call on a graph already on
      the device (energy, forces, stress; nequip's own neighbour list built beforehand), after two
      warm-up calls, median of --repeats, with the peak memory torch's allocator saw. The compiled
      model if --compiled is given (nequip's `from_compiled_model`), else the eager one. At
      --check-cells, the forces against nequip's eager evaluation of CKPT on the same graph and
      device. Prints one markdown row per size; a size that does not fit says so.
  python nequip_model_call.py ref CKPT DUMP OUT [--device cpu]
      nequip's own eager evaluation (its ASE calculator, its neighbour list, e3nn) of the
      atoms of a forces dump that bench/accelerators/in.forces wrote: energy and every force, in
      the form report.py reads (ref.py's).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sevennet_model_call import crystal, median_seconds  # noqa: E402

HEADER = ("| atoms | accelerator | s per call | peak GiB | max force diff vs eager (eV/A) | energy diff per atom (eV) |\n"
          "|---|---|---|---|---|---|")


def eager_calculator(ckpt: str, device: str):
    from nequip.integrations.ase import NequIPCalculator  # noqa: PLC0415

    return NequIPCalculator._from_saved_model(ckpt, device=device)


def compiled_calculator(path: str, device: str):
    from nequip.integrations.ase import NequIPCalculator  # noqa: PLC0415

    return NequIPCalculator.from_compiled_model(path, device=device)


def write_example_data(ckpt: str, path: str) -> None:
    """The example graph nequip-compile traces (`--data-path`): its loader reads the state dict
    of a TorchScript module, one buffer per data field."""
    from nequip.data import AtomicDataDict  # noqa: PLC0415

    data = AtomicDataDict.with_batch_(eager_calculator(ckpt, "cpu").atoms_to_data(crystal(2)))

    class Fields(torch.nn.Module):
        def __init__(self):
            super().__init__()
            for key, value in data.items():
                self.register_buffer(key, value)

    torch.jit.save(torch.jit.script(Fields()), path)


def compile_model(ckpt: str, out: str, device: str, modifiers: list[str]) -> None:
    from nequip.scripts.compile import main as nequip_compile  # noqa: PLC0415

    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "data.pt")
        write_example_data(ckpt, data)
        args = [ckpt, out, "--mode", "aotinductor", "--device", device, "--target", "ase", "--data-path", data]
        nequip_compile(args + (["--modifiers", *modifiers] if modifiers else []))


def call(calc, data):
    out = calc.call_model(dict(data))
    if calc.device.type == "cuda":
        torch.cuda.synchronize()
    from nequip.data import AtomicDataDict  # noqa: PLC0415

    return out[AtomicDataDict.FORCE_KEY].detach(), out[AtomicDataDict.TOTAL_ENERGY_KEY].detach().reshape(())


def time_calls(args) -> int:
    cuda = args.device == "cuda"
    name = args.label or ("compiled" if args.compiled else "eager")
    print(f"# {torch.cuda.get_device_name() if cuda else 'cpu'}, torch {torch.__version__}", flush=True)
    calc = compiled_calculator(args.compiled, args.device) if args.compiled else eager_calculator(args.ckpt, args.device)
    print(HEADER, flush=True)
    for n in args.cells:
        atoms = crystal(n)
        t0 = time.time()
        data = calc.atoms_to_data(atoms)
        edges = data["edge_index"].shape[1]
        print(f"# {len(atoms)} atoms, {edges} edges, graph in {time.time() - t0:.1f} s", flush=True)
        if cuda:
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()
        try:
            (forces, energy), seconds = median_seconds(lambda: call(calc, data), args.repeats)
        except (torch.cuda.OutOfMemoryError, RuntimeError) as e:
            # An AOTInductor package reports a failed allocation as a RuntimeError.
            why = "out of GPU memory" if "out of memory" in str(e).lower() else f"fails: {str(e)[:120]}"
            print(f"| {len(atoms)} | {name} | {why} | | | |", flush=True)
            break
        peak = f"{torch.cuda.max_memory_allocated() / 2**30:.1f}" if cuda else ""
        diff = " | "
        if n in args.check_cells:
            diff = check_against_eager(args, data, forces, energy, len(atoms))
        print(f"| {len(atoms)} | {name} | {seconds:.4f} | {peak} | {diff} |", flush=True)
        del data
    return 0


def check_against_eager(args, data, forces, energy, atoms: int) -> str:
    """nequip's eager evaluation of the same graph on the same device: its e3nn kernels, no
    compiler, no accelerator. Frees its memory before the next size is timed."""
    calc = eager_calculator(args.ckpt, args.device)
    try:
        ref_forces, ref_energy = call(calc, data)
    except torch.cuda.OutOfMemoryError:
        return "eager: out of GPU memory | "
    finally:
        del calc
        if args.device == "cuda":
            torch.cuda.empty_cache()
    return (f"{(forces - ref_forces).abs().max().item():.2e} | "
            f"{(energy - ref_energy).abs().item() / atoms:.2e}")


def reference(ckpt: str, dump: str, out: str, device: str) -> None:
    from ref import atoms_of, write_reference  # noqa: PLC0415

    atoms, ids = atoms_of(dump)
    atoms.calc = eager_calculator(ckpt, device)
    write_reference(atoms, ids, out)


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser("compile")
    c.add_argument("ckpt")
    c.add_argument("out")
    c.add_argument("--device", default="cuda")
    c.add_argument("--modifiers", nargs="*", default=[])
    t = sub.add_parser("time")
    t.add_argument("ckpt")
    t.add_argument("--compiled")
    t.add_argument("--label", help="the accelerator column (default: compiled or eager)")
    t.add_argument("--cells", nargs="+", type=int, default=[11, 17])
    t.add_argument("--check-cells", nargs="*", type=int, default=[11])
    t.add_argument("--repeats", type=int, default=5)
    t.add_argument("--device", default="cuda")
    r = sub.add_parser("ref")
    r.add_argument("ckpt")
    r.add_argument("dump")
    r.add_argument("out")
    r.add_argument("--device", default="cpu")
    args = p.parse_args(argv)
    from nequip.utils.global_state import set_global_state  # noqa: PLC0415

    set_global_state()
    if args.command == "compile":
        compile_model(args.ckpt, args.out, args.device, args.modifiers)
        return 0
    if args.command == "ref":
        reference(args.ckpt, args.dump, args.out, args.device)
        return 0
    return time_calls(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
