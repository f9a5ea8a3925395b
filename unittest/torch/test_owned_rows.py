#!/usr/bin/env python3
"""Owned-row node work in the exported graphs (ctest torch.owned_rows and torch.owned_rows_SET,
label torch; doc/torch_models.md, "What the exporter changes in a graph").

For each model of the set, the force graph is traced as the exporter traces it
(trace.trace_forces) and compared with the same model computing every node update on every
row, as it was written before the exporter cut the work down (the toy model's and the twin's
`owned_rows=False`; the adapters' energy functions under `rows.every_row()`):

- values: the traced owned-row graph, run with DISTSPEC's op semantics for one process
  (host_ops.py) on two example crystals of other sizes than the trace's, equals the every-row
  energy function run eagerly, in atomic energies, forces (every row) and per-atom virials, to
  the export check's tolerance (1e-12 relative in fp64, 1e-5 in fp32);
- work: of the aten ops that make a tensor of every row ([N, ...]), the matrix products
  (rows.census) must be at most half as many as in the every-row graph, and some must run on the
  owned rows ([N - len(recv_dest), ...]): a change that puts the node updates back on every
  row fails here;
- the halo exchanges are the same ops, as many, as wide (comm_width), as the every-row graph's;
- exported (torch.export, as the exporter does it), the graph keeps no size assert that a rank
  owning 0 or 1 atoms fails (rows.drop_owned_lower_bounds).

  test_owned_rows.py [--set toy|sevennet|mace|nequip|aimnet] [--python PYTHON]

The toy set holds the toy model (2 and 4 layers) and the native mpnn's twin
(potentials/cu_mpnn_L2.json); each other set its package's model as make_fixtures.py builds it.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1] / "tools"))

from results import Results  # noqa: E402

REPO = HERE.parents[1]


def toy_cases():
    """(name, energy function of owned_rows, n_species, cutoff, dtype) of the toy set."""
    import torch  # noqa: PLC0415

    import native_mpnn  # noqa: PLC0415
    import toy_mpnn  # noqa: PLC0415

    def prepared(module):
        module = module.eval()
        for p in module.parameters():
            p.requires_grad_(False)
        return module

    for layers in (2, 4):
        yield (f"toy_mpnn_L{layers}", lambda owned, layers=layers: prepared(toy_mpnn.build(layers=layers, owned_rows=owned)),
               2, 4.5, torch.float64)
    twin = str(REPO / "potentials" / "cu_mpnn_L2.json")
    yield "native_mpnn_L2", lambda owned: prepared(native_mpnn.build(twin, owned_rows=owned)), 1, 5.0, torch.float64


def sevennet_cases():
    import torch  # noqa: PLC0415

    from distspec_export import sevennet  # noqa: PLC0415

    energy = sevennet.adapt(sevennet.checkpoint("7net-0"), ["Si", "O"], 5.0, torch.float32, None).energy_fn
    yield "sevennet 7net-0", lambda owned: energy, 2, 5.0, torch.float32


def nequip_cases():
    """NequIP (3 layers) as make_fixtures.py builds it; Allegro is strictly local (no node
    updates between atoms), and its graph has no halo op to compare."""
    import torch  # noqa: PLC0415

    import nequip_model  # noqa: PLC0415
    from distspec_export import nequip  # noqa: PLC0415

    energy = nequip.adapt(nequip_model.build(r_max=4.5, layers=3), ["Cu", "Ni"], 4.5, torch.float64, None).energy_fn
    yield "nequip L3", lambda owned: energy, 2, 4.5, torch.float64


CASES: dict[str, Callable[[], Any]] = {"toy": toy_cases, "sevennet": sevennet_cases, "nequip": nequip_cases}
NEED = {"sevennet": ("sevenn",), "mace": ("mace",), "nequip": ("nequip", "allegro"), "aimnet": ("aimnet",)}
PYTHON_VAR = {"toy": "DISTSPEC_PYTHON", "sevennet": "DISTSPEC_PYTHON_SEVENN", "mace": "DISTSPEC_PYTHON_MACE",
              "nequip": "DISTSPEC_PYTHON_NEQUIP", "aimnet": "DISTSPEC_PYTHON"}


def rows_of(owned: bool):
    """The exporter's energy functions on the owned rows, or on every row (rows.every_row())."""
    from distspec_export import rows  # noqa: PLC0415

    return contextlib.nullcontext() if owned else rows.every_row()


def relative(a, b) -> float:
    import torch  # noqa: PLC0415

    if a.numel() == 0 and b.numel() == 0:
        return 0.0
    a, b = a.detach().double(), b.detach().double()
    return float((a - b).abs().max()) / max(1.0, float(b.abs().max()))


def check_case(results: Results, name: str, energy_of, n_species: int, cutoff: float, dtype) -> None:
    from distspec_export import check, example, ops, rows, trace  # noqa: PLC0415
    from distspec_export.host_ops import HostExchange  # noqa: PLC0415

    traced_on = check.examples(n_species, cutoff, dtype)[0]
    graphs, energy_fns = {}, {}
    for owned in (True, False):
        energy_fns[owned] = energy_of(owned)
        with rows_of(owned):
            graphs[owned] = trace.trace_forces(energy_fns[owned], traced_on.inputs)

    worst = {"atomic_energies": 0.0, "forces": 0.0, "atomic_virials": 0.0}
    every_row = trace.force_function(energy_fns[False], virials=True)
    for crystal in check.examples(n_species, cutoff, dtype)[1:] + [example.crystal(n_species, cutoff, dtype, seed=3)]:
        host = HostExchange(crystal.owner, crystal.n_owned)
        with host.install(), ops.opaque_halo_backward():
            got = graphs[True](*crystal.contract_inputs())
            with rows_of(False):
                want = every_row(*crystal.inputs)
        n = crystal.n_owned
        worst["atomic_energies"] = max(worst["atomic_energies"], relative(got[0][:n], want[0][:n]))
        worst["forces"] = max(worst["forces"], relative(got[1], want[1]))
        worst["atomic_virials"] = max(worst["atomic_virials"], relative(got[2], want[2]))
    tolerance = check.TOLERANCE[dtype]
    results.report(max(worst.values()) <= tolerance, f"{name}: owned-row graph equals every-row model",
                   ", ".join(f"{k} {v:.1e}" for k, v in worst.items()) + f" (relative; tolerance {tolerance:g})")

    census = {owned: rows.census(gm) for owned, gm in graphs.items()}
    mine, before = census[True], census[False]
    results.report(mine["n_rows_matmul"] <= before["n_rows_matmul"] // 2 and mine["n_owned_matmul"] > 0,
                   f"{name}: node work on owned rows",
                   f"matrix products over every row {mine['n_rows_matmul']} (every-row graph: "
                   f"{before['n_rows_matmul']}), over owned rows {mine['n_owned_matmul']} "
                   f"({before['n_owned_matmul']}); all ops over every row {mine['n_rows']} ({before['n_rows']}), "
                   f"over owned rows {mine['n_owned']} ({before['n_owned']})")

    # torch.export, as the exporter calls it: no size assert may stop a rank owning 0 or 1 atoms
    # (the owned count is an expression of two sizes, which export does not treat as a free size).
    stopping = rows.small_rank_asserts(trace.export_program(graphs[True], traced_on.inputs))
    results.report(not stopping, f"{name}: the exported program runs on ranks of 0 and 1 owned atoms",
                   f"size asserts that stop them: {stopping}" if stopping else "no size assert stops them")

    sites = {owned: (trace.halo_sites(gm), trace.comm_width(gm)) for owned, gm in graphs.items()}
    results.report(sites[True] == sites[False], f"{name}: the same halo exchanges",
                   f"{sites[True][0]}, comm_width {sites[True][1]} (every-row graph: {sites[False][0]}, "
                   f"comm_width {sites[False][1]})")


def main(argv: list[str] | None = None) -> int:
    import in_env  # noqa: PLC0415

    argv = sys.argv[1:] if argv is None else argv
    which = "toy"
    for i, arg in enumerate(argv):
        if arg == "--set" and i + 1 < len(argv):
            which = argv[i + 1]
    argv = in_env.ensure(argv, "the owned-rows test", PYTHON_VAR.get(which, "DISTSPEC_PYTHON"),
                         need=NEED.get(which, ()))
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--set", choices=list(CASES), default="toy")
    args = p.parse_args(argv)
    from distspec_export import ops  # noqa: PLC0415

    ops.import_nvalchemi_ops()
    ops.define_backward_op()
    results = Results()
    for case in CASES[args.set]():
        check_case(results, *case)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
