#!/usr/bin/env python3
"""The fast MACE forward (tools/distspec_export/mace_kernels/model.py) against mace-torch (ctest
torch.mace_fast, label torch, in DISTSPEC_PYTHON_MACE's environment; doc/mace_kernels.md, "The
fast MACE forward").

- MACE-MP-0 medium's architecture with random weights (bench/accelerators/mace_mp0_medium.py,
  its inter_scale raised so that forces are about 1 eV/A, as the benchmark does), fp64 on the cpu:
  the fast forward's atomic energies and forces, with DISTSPEC's op semantics for one process
  (host_ops.py) on the export's two example crystals, against mace's own evaluation of the model
  (its neighbour list, edge shifts, autograd): forces within 1e-4 eV/A, energy within 1e-6
  relative; then the exporter's own check (check.py) on the graph it writes;
- a 2-head ScaleShiftMACE, head mp, against mace's own evaluation of that head;
- the force graph's node work: no matrix product over every row, one forward exchange per
  interaction after the first, as wide as the next convolution's input, skip_tp by the op
  distspec_mace::element_linear (where the library loads); the graph traced under rows.every_row()
  (every node update on every row, DISTSPEC_EXPORT_EVERY_ROW=1) has matrix products over every row
  and the same values (1e-12);
- a model the forward does not rebuild (a radial embedding of the elements too: mace's Agnesi
  distance transform): `--accelerate
  auto` exports mace's module whole and says why (the graph's metadata `choices`, which the check
  passes), `--accelerate mace-kernels` stops with the reason and the way out.

The kernels are the `distspec_mace` ops where their library loads (DISTSPEC_MACE_OPS_LIBRARY),
else mace's own modules with their calls (module_ops.py); each line says which ran.

  test_mace_fast.py [--work DIR] [--python PYTHON]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1] / "tools"))
sys.path.append(str(HERE.parents[1] / "bench" / "accelerators"))  # after ours: it has a results.py too

from results import Results  # noqa: E402

FORCES_EV_A = 1e-4     # largest force difference, eV/A
ENERGY_RELATIVE = 1e-6  # total energy, relative
INTER_SCALE = 3000.0    # mace_mp0_medium.build: forces about 1 eV/A, as a trained potential's
MP0_ELEMENTS = ["Si", "O", "Cu"]


def compare(results: Results, name: str, mace_module, elements: list[str], cutoff: float, head: int = 0) -> dict:
    """The fast forward of `mace_module` against mace's own evaluation of it on the export's
    examples; returns the forward's record."""
    import torch  # noqa: PLC0415
    from ase.data import atomic_numbers as z_of  # noqa: PLC0415

    from distspec_export import check, mace, ops, trace  # noqa: PLC0415
    from distspec_export.host_ops import HostExchange  # noqa: PLC0415
    from distspec_export.mace_kernels import model as fast_model  # noqa: PLC0415

    dtype = torch.float64
    table = [int(z) for z in mace_module.atomic_numbers.tolist()]
    rebuilt = mace._rebuild_without_codegen(mace_module).to(dtype).eval()
    for p in rebuilt.parameters():
        p.requires_grad_(False)
    fast, record = fast_model.build(rebuilt, [table.index(z_of[e]) for e in elements], head, dtype)
    reference = mace.package_evaluation(lambda: mace_module, elements, head, dtype)
    forces_fn = trace.force_function(fast)
    worst_f = worst_e = largest_f = 0.0
    for example in check.examples(len(elements), cutoff, dtype):
        n = example.n_owned
        with HostExchange(example.owner, n).install("cpu"), ops.opaque_halo_backward():
            energies, forces = forces_fn(*example.contract_inputs())
        energies_ref, forces_ref = reference.evaluate(example)
        forces = torch.zeros(n, 3, dtype=dtype).index_add(0, example.owner, forces)
        worst_f = max(worst_f, float((forces - forces_ref).abs().max()))
        worst_e = max(worst_e, abs(float(energies[:n].sum() - energies_ref.sum())) / abs(float(energies_ref.sum())))
        largest_f = max(largest_f, float(forces_ref.abs().max()))
    kernels = "distspec_mace ops" if "why_not_ops" not in record else f"mace's modules ({record['why_not_ops']})"
    results.report(worst_f <= FORCES_EV_A and worst_e <= ENERGY_RELATIVE, f"{name}: fast forward against mace",
                   f"forces {worst_f:.1e} eV/A (bound {FORCES_EV_A:g}; largest force {largest_f:.2f} eV/A), energy "
                   f"{worst_e:.1e} relative (bound {ENERGY_RELATIVE:g}); kernels: {kernels}")
    return record


def node_work(results: Results, mace_module, elements: list[str], cutoff: float) -> None:
    """The force graph's rows, exchanges and kernels; the same graph with every node update on every
    row (rows.every_row()) gives the same values."""
    import torch  # noqa: PLC0415
    from ase.data import atomic_numbers as z_of  # noqa: PLC0415

    from distspec_export import check, mace, rows, trace  # noqa: PLC0415
    from distspec_export.host_ops import HostExchange  # noqa: PLC0415
    from distspec_export.mace_kernels import model as fast_model  # noqa: PLC0415

    table = [int(z) for z in mace_module.atomic_numbers.tolist()]
    rebuilt = mace._rebuild_without_codegen(mace_module).to(torch.float64).eval()
    for p in rebuilt.parameters():
        p.requires_grad_(False)
    fast, record = fast_model.build(rebuilt, [table.index(z_of[e]) for e in elements], 0, torch.float64)
    example = check.examples(len(elements), cutoff, torch.float64)[0]
    gm = trace.trace_forces(fast, example.inputs, ("distspec_mace",))
    census = rows.census(gm)
    results.report(census["n_rows_matmul"] == 0 and census["n_owned_matmul"] > 0, "node work on owned rows",
                   f"matrix products over every row {census['n_rows_matmul']}, over owned rows "
                   f"{census['n_owned_matmul']}")
    layers = len(mace_module.interactions)
    sites, width = trace.halo_sites(gm), trace.comm_width(gm)
    want = rebuilt.interactions[1].linear_up.irreps_out.dim
    results.report(sites.get("halo_forward_static", 0) == layers - 1 and width == want,
                   "one exchange per interaction after the first",
                   f"{sites}, comm_width {width} (linear_up of interaction 1: {want} wide; {layers} interactions)")
    # skip_tp of interaction 1 (residual) by the op where its library loads, else folded (aten only).
    custom = trace.custom_ops_of(gm)
    element_linear = {"distspec_mace::element_linear", "distspec_mace::element_linear_backward"}
    with_ops = "why_not_ops" not in record
    aten_only = not any(op.startswith("distspec_mace") for op in custom)
    results.report(element_linear <= set(custom) if with_ops else aten_only,
                   "skip_tp by distspec_mace::element_linear where the library loads",
                   f"record {record.get('element_linear')!r}; graph ops {custom}")
    with rows.every_row():
        gm_all = trace.trace_forces(fast, example.inputs, ("distspec_mace",))
    census_all = rows.census(gm_all)
    n = example.n_owned
    with HostExchange(example.owner, n).install("cpu"):
        energies, forces = gm(*example.inputs)[:2]
        energies_all, forces_all = gm_all(*example.inputs)[:2]
    scale = max(1.0, float(forces.abs().max()))
    deviation = max(float((energies[:n] - energies_all[:n]).abs().max()) / max(1.0, float(energies[:n].abs().max())),
                    float((forces - forces_all).abs().max()) / scale)
    results.report(census_all["n_rows_matmul"] > 0 and trace.halo_sites(gm_all) == sites and deviation <= 1e-12,
                   "every_row(): every node update on every row, the same values",
                   f"matrix products over every row {census_all['n_rows_matmul']} (owned-row graph "
                   f"{census['n_rows_matmul']}), exchanges {trace.halo_sites(gm_all)}; energies and forces differ by "
                   f"{deviation:.1e} relative (bound 1e-12)")


def agnesi_model():
    """A small ScaleShiftMACE whose radial embedding transforms distances by the elements of both
    ends (mace's Agnesi transform), which the fast forward does not rebuild."""
    import numpy as np  # noqa: PLC0415
    import torch  # noqa: PLC0415
    from e3nn import o3  # noqa: PLC0415
    from mace import modules  # noqa: PLC0415

    torch.manual_seed(3)
    block = modules.interaction_classes["RealAgnosticResidualInteractionBlock"]
    return modules.ScaleShiftMACE(
        r_max=4.5, num_bessel=6, num_polynomial_cutoff=5, max_ell=2, interaction_cls=block,
        interaction_cls_first=block, num_interactions=2, num_elements=2, hidden_irreps=o3.Irreps("8x0e + 8x1o"),
        MLP_irreps=o3.Irreps("8x0e"), gate=torch.nn.functional.silu, atomic_energies=np.array([-0.5, -0.6]),
        avg_num_neighbors=42.0, atomic_numbers=[28, 29], correlation=2, radial_type="bessel",
        distance_transform="Agnesi", atomic_inter_scale=0.1, atomic_inter_shift=0.0).to(torch.float64).eval()


def fallback(results: Results, work: Path) -> None:
    from distspec_export import export, mace  # noqa: PLC0415
    from distspec_export.mace_kernels import model as fast_model  # noqa: PLC0415
    from distspec_export.trace import ExportError  # noqa: PLC0415

    model = agnesi_model()
    why = fast_model.why_unsupported(model)
    result = export(model, None, ["Ni", "Cu"], 4.5, "metal", work, "agnesi", format="torchscript",
                    accelerate="auto", log=lambda line: None)
    choices = result.choices
    results.report(bool(why) and choices.get("forward") == mace.WHOLE_MODULE and why in choices.get("why_not_fast", "")
                   and result.deviations["forces"] <= 1e-12,
                   "an unsupported model falls back, saying why",
                   f"why_unsupported: {why!r}; choices {choices}; check: forces {result.deviations['forces']:.1e}")
    try:
        export(model, None, ["Ni", "Cu"], 4.5, "metal", work, "agnesi_named", format="torchscript",
               accelerate="mace-kernels", check_export=False, log=lambda line: None)
        results.report(False, "--accelerate mace-kernels on an unsupported model stops", "it exported")
    except ExportError as e:
        message = str(e)
        results.report(why in message and "--accelerate none" in message,
                       "--accelerate mace-kernels on an unsupported model stops", message)


def exported_check(results: Results, model, work: Path) -> None:
    """The exporter's own check of the graph it writes of the MP0-medium-sized model."""
    from distspec_export import export  # noqa: PLC0415

    result = export(model, None, MP0_ELEMENTS, 6.0, "metal", work, "mp0_medium", format="torchscript",
                    accelerate="auto", log=lambda line: None)
    d = result.deviations
    results.report(d["small_ranks_ok"] and result.choices.get("forward", "").startswith("distspec fast"),
                   "the exporter's check of the MP0-medium-sized graph",
                   f"against {d['reference']}: atomic energies {d['atomic_energies']:.1e}, forces {d['forces']:.1e} "
                   f"(relative); small ranks {'run' if d['small_ranks_ok'] else d.get('small_ranks_failure')}; "
                   f"choices {result.choices}; {', '.join(f'{k} {v:.0f} s' for k, v in result.seconds.items())}")


def main(argv: list[str] | None = None) -> int:
    import in_env  # noqa: PLC0415

    argv = in_env.ensure(sys.argv[1:] if argv is None else argv, "the fast MACE test", "DISTSPEC_PYTHON_MACE",
                         need=("mace",))
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--work", help="folder for the exported files (default: a temporary one)")
    args = p.parse_args(argv)
    os.environ.setdefault("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    import mace_model  # noqa: PLC0415
    import mace_mp0_medium  # noqa: PLC0415

    from distspec_export import ops  # noqa: PLC0415

    ops.import_nvalchemi_ops()
    ops.define_backward_op()
    results = Results()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(args.work or tmp)
        mp0 = mace_mp0_medium.build(dtype="float64", inter_scale=INTER_SCALE)
        compare(results, "MACE-MP-0 medium's architecture", mp0, MP0_ELEMENTS, mace_mp0_medium.R_MAX)
        heads = mace_model.build(heads=["pbe", "mp"])
        compare(results, "2-head ScaleShiftMACE, head mp", heads, ["Cu", "Ni"], 4.5, head=1)
        node_work(results, mace_model.build(), ["Cu", "Ni"], 4.5)
        fallback(results, work)
        exported_check(results, mp0, work)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
