#!/usr/bin/env python3
"""Element-specialised linears (tools/distspec_export/element_linears.py), ctest torch.element_linears_SET.

For the set's package (--set sevennet | mace | nequip, in its environment):

- each folded module equals the module it replaced, in fp64 to 1e-12 and in fp32 to 1e-6 (relative to
  max(1, |value|)), in value and in its gradient with respect to the features, on random features
  of rows of every exported element in random order; the operand is built as the package builds
  it (sevenn's one_hot, mace's one-hot of its atomic-number table, nequip's type embedding), not by
  the pass. SevenNet: SevenNet-0 (its one-hot embedding) and SevenNet-0's configuration with
  `self_connection_type: nequip` (random weights; each block's tensor product with the 89-wide
  one-hot); MACE: a ScaleShiftMACE of 5 elements exported for 2 (skip_tp of each interaction, the
  node embedding, the symmetric contractions); NequIP: nequip_model.build() (each block's self-connection with the type
  embedding);
- the traced force graph (the exporter's adapter and make_fx, as export() traces it) has fewer
  FLOPs folded than with folding off (torch's FlopCounterMode on the graph run on the tracing
  example): the test fails when the pass stops firing;
- a module whose operand is not the element's is refused, and the record says why (a
  SelfConnectionIntro reading another key; a MACE block not known to pass node_attrs);
- with --fixtures, the set's exported fixtures (make_fixtures.py, which torch.export_SET and the
  LAMMPS tests check against the package's own evaluation) record folded modules in their graph
  metadata: those checks run on folded graphs.

  test_element_linears.py --set sevennet|mace|nequip [--fixtures DIR] [--python PYTHON]
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1] / "tools"))

from results import Results  # noqa: E402

TOLERANCE = {"fp64": 1e-12, "fp32": 1e-6}
ROWS_PER_ELEMENT = 16


def relative(a, b) -> float:
    return float((a.double() - b.double()).abs().max()) / max(1.0, float(b.double().abs().max()))


def submodule(model, dotted: str):
    for part in dotted.split("."):
        model = getattr(model, part)
    return model


def compare_folded(results: Results, label: str, model, kind: str, type_index: list[int], operand_of) -> None:
    """Each module fold() folds equals its original (value and d/dx), in fp64 and fp32.
    operand_of(model, element_rows) -> the operand rows as the package builds them."""
    import torch  # noqa: PLC0415
    from distspec_export import element_linears  # noqa: PLC0415

    for precision, dtype in (("fp64", torch.float64), ("fp32", torch.float32)):
        given = copy.deepcopy(model).to(dtype)
        with element_linears.recording() as record:
            folded = element_linears.fold(given, kind, type_index)
        results.report(bool(record.folded), f"{label} {precision}: modules folded",
                       ", ".join(f["module"] for f in record.folded) or f"none; kept {record.kept}")
        gen = torch.Generator().manual_seed(11)
        element = torch.arange(len(type_index)).repeat(ROWS_PER_ELEMENT)
        element = element[torch.randperm(element.shape[0], generator=gen)]
        operand = operand_of(folded, torch.tensor(type_index)[element]).to(dtype)
        for entry in record.folded:
            module = submodule(folded, entry["module"])
            original = module.original
            if entry["as"] == "per-element table":
                inputs = (operand,)
            else:
                shape = ((original.irreps_in1.dim,) if entry["as"] == "per-element weights" else
                         (original.num_features, original.coupling_irreps.dim))  # mace's Contraction
                x = torch.randn(element.shape[0], *shape, generator=gen, dtype=torch.float64)
                inputs = (x.to(dtype).requires_grad_(True), operand)
            want, got = original(*inputs), module(*inputs)
            deviation = relative(got, want)
            if len(inputs) == 2:
                probe = torch.randn(want.shape, generator=gen, dtype=torch.float64).to(dtype)
                g_want, = torch.autograd.grad((want * probe).sum(), inputs[0])
                g_got, = torch.autograd.grad((got * probe).sum(), inputs[0])
                deviation = max(deviation, relative(g_got, g_want))
            results.report(deviation <= TOLERANCE[precision],
                           f"{label} {precision}: {entry['module']} folded equals the original",
                           f"{deviation:.1e} relative (value and d/dx; tolerance {TOLERANCE[precision]:g}), "
                           f"{element.shape[0]} rows of {len(type_index)} elements, MACs per row "
                           f"{entry['macs_per_row'][0]} -> {entry['macs_per_row'][1]}")


def graph_flops(model, kind: str, elements: list[str], cutoff: float, dtype, fold: bool) -> tuple[int, dict]:
    """FLOPs of the traced force graph on the tracing example, and the pass's record."""
    import torch  # noqa: PLC0415
    from torch.utils.flop_counter import FlopCounterMode  # noqa: PLC0415

    from distspec_export import adapters, check, element_linears, ops, trace  # noqa: PLC0415
    from distspec_export.host_ops import HostExchange  # noqa: PLC0415

    example = check.examples(len(elements), cutoff, dtype)[0]
    with element_linears.recording(fold) as record:
        adapted = adapters.adapt(model, kind, elements, cutoff, dtype, example)
    gm = trace.trace_forces(adapted.energy_fn, example.inputs)
    counter = FlopCounterMode(display=False)
    with HostExchange(example.owner, example.n_owned).install(), ops.opaque_halo_backward(), counter:
        gm(*example.contract_inputs())
    return counter.get_total_flops(), record.as_json()


def compare_graphs(results: Results, label: str, build, kind: str, elements: list[str], cutoff: float, dtype) -> None:
    flops_off, _ = graph_flops(build(), kind, elements, cutoff, dtype, False)
    flops_on, record = graph_flops(build(), kind, elements, cutoff, dtype, True)
    # With the pass off the FLOPs are the same as with it on and nothing folded: fewer means it fired.
    results.report(bool(record["folded"]) and flops_on < flops_off,
                   f"{label}: the traced force graph does less work folded",
                   f"{flops_off} FLOPs as is, {flops_on} folded ({1 - flops_on / flops_off:.1%} fewer; "
                   "torch's FlopCounterMode: matrix products); folded "
                   f"{[f['module'] for f in record['folded']]}")


def fixtures_folded(results: Results, fixtures: Path, which: str) -> None:
    import torch  # noqa: PLC0415
    import make_fixtures  # noqa: PLC0415

    manifest = json.loads((fixtures / make_fixtures.MANIFEST[which]).read_text())
    for name, entry in manifest["models"].items():
        params = json.loads((fixtures / entry["model_file"]).read_text())["parameters"]
        graph = fixtures / params["graph"]
        if params["format"] == "aoti":
            meta = torch._inductor.aoti_load_package(str(graph)).get_metadata()
        else:
            meta = {"distspec.json": ""}
            torch.jit.load(str(graph), _extra_files=meta)
        record = json.loads(meta.get("distspec.json") or "{}").get("element_linears", {})
        folded = [f["module"] for f in record.get("folded", [])]
        expect = not (which == "nequip" and "allegro" in name)  # Allegro has no such module
        results.report(bool(folded) == expect, f"fixture {name}: graph metadata records its folded modules",
                       f"folded {folded or 'none'}; kept {record.get('kept', [])}")


def sevennet(results: Results) -> None:
    import torch  # noqa: PLC0415
    from sevenn.model_build import build_E3_equivariant_model  # noqa: PLC0415
    from sevenn.util import load_checkpoint  # noqa: PLC0415

    from distspec_export import element_linears  # noqa: PLC0415
    from distspec_export.sevennet import checkpoint  # noqa: PLC0415

    def one_hot(model, types):  # sevenn's OnehotEmbedding
        return torch.nn.functional.one_hot(types, model.onehot_idx_to_onehot.num_classes).float()

    loaded = load_checkpoint("7net-0")
    type_map = loaded.build_model().type_map  # atomic number -> type index
    types = [type_map[14], type_map[8], type_map[29]]  # Si, O, Cu
    compare_folded(results, "SevenNet-0", checkpoint("7net-0"), "sevennet", types, one_hot)

    def nequip_sc():
        config = dict(loaded.config)
        config["self_connection_type"] = "nequip"
        torch.manual_seed(0)
        return build_E3_equivariant_model(config)
    compare_folded(results, "SevenNet-0 arch. with nequip self-connection", nequip_sc(), "sevennet", types, one_hot)
    compare_graphs(results, "SevenNet-0 (Si, O)", lambda: checkpoint("7net-0"), "sevennet", ["Si", "O"], 5.0,
                   torch.float32)

    model = nequip_sc()
    model._modules["1_self_connection_intro"].key_operand = "x"  # not the one-hot
    with element_linears.recording() as record:
        element_linears.fold(model, "sevennet", types)
    kept = {k["module"]: k["why"] for k in record.kept}
    results.report("1_self_connection_intro.fc_tensor_product" in kept and "one-hot" in
                   kept.get("1_self_connection_intro.fc_tensor_product", ""),
                   "SevenNet: a self-connection of another operand is kept", str(kept))


def mace(results: Results) -> None:
    import numpy as np  # noqa: PLC0415
    import torch  # noqa: PLC0415

    import mace_model  # noqa: F401, PLC0415 (sets TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD for mace-torch and e3nn)
    from e3nn import o3  # noqa: PLC0415
    from mace import modules  # noqa: PLC0415

    from distspec_export import element_linears  # noqa: PLC0415

    table = [1, 8, 28, 29, 79]  # H O Ni Cu Au; exported: Cu, Ni

    def build():
        torch.manual_seed(0)
        block = modules.interaction_classes["RealAgnosticResidualInteractionBlock"]
        return modules.ScaleShiftMACE(
            r_max=4.5, num_bessel=6, num_polynomial_cutoff=5, max_ell=2, interaction_cls=block,
            interaction_cls_first=modules.interaction_classes["RealAgnosticInteractionBlock"], num_interactions=2,
            num_elements=len(table), hidden_irreps=o3.Irreps("8x0e + 8x1o"), MLP_irreps=o3.Irreps("8x0e"),
            gate=torch.nn.functional.silu, atomic_energies=np.linspace(-1.0, -0.2, len(table)),
            avg_num_neighbors=20.0, atomic_numbers=table, correlation=2, radial_type="bessel",
            atomic_inter_scale=0.1, atomic_inter_shift=0.0).to(torch.float64).eval()

    def one_hot(model, types):  # mace's node_attrs: one-hot of the index into atomic_numbers
        return torch.nn.functional.one_hot(types, len(model.atomic_numbers)).double()

    compare_folded(results, "MACE (5 elements, 2 exported)", build(), "mace", [table.index(29), table.index(28)],
                   one_hot)
    compare_graphs(results, "MACE (5 elements, Cu Ni exported)", build, "mace", ["Cu", "Ni"], 4.5, torch.float64)

    model = build()
    block = model.interactions[0]
    block.__class__ = type("UnknownBlock", (type(block),), {})  # a block the pass knows nothing of
    with element_linears.recording() as record:
        element_linears.fold(model, "mace", [3, 2])
    kept = {k["module"]: k["why"] for k in record.kept}
    results.report("known to call skip_tp" in kept.get("interactions.0.skip_tp", ""),
                   "MACE: a skip_tp of a block not known to pass node_attrs is kept", str(kept))


def nequip(results: Results) -> None:
    import torch  # noqa: PLC0415
    import nequip_model  # noqa: PLC0415

    def embedding(model, types):  # nequip's node_attrs: NodeTypeEmbed's row of each type
        embed = next(m for m in model.modules() if type(m).__name__ == "NodeTypeEmbed")
        return embed.embed_module.weight.detach()[types]

    types = [nequip_model.TYPE_NAMES.index("Ni"), nequip_model.TYPE_NAMES.index("Cu")]
    compare_folded(results, "NequIP", nequip_model.build(), "nequip", types, embedding)
    compare_graphs(results, "NequIP (Cu Ni)", nequip_model.build, "nequip", ["Cu", "Ni"], 4.5, torch.float64)


def main(argv: list[str] | None = None) -> int:
    import make_fixtures  # noqa: PLC0415

    argv = make_fixtures.environment(sys.argv[1:] if argv is None else argv, "the element-linears test")
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--set", required=True, choices=("sevennet", "mace", "nequip"))
    p.add_argument("--fixtures", type=Path, help="make_fixtures.py's folder: check the set's exported graphs")
    args = p.parse_args(argv)
    import warnings  # noqa: PLC0415

    warnings.filterwarnings("ignore")
    from distspec_export import ops  # noqa: PLC0415

    ops.import_nvalchemi_ops()
    ops.define_backward_op()
    t0 = time.perf_counter()
    results = Results()
    {"sevennet": sevennet, "mace": mace, "nequip": nequip}[args.set](results)
    if args.fixtures is not None:
        fixtures_folded(results, args.fixtures, args.set)
    print(f"({time.perf_counter() - t0:.1f} s)")
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
