"""Does folding the element's one-hot (tools/distspec_export/element_linears.py) pay on the CPU?

Exports each model twice with distspec-export (AOTInductor, cpu, fp32): folded (the default) and
with --no-fold-elements, then times the graph per call, as the plugin calls it on one rank (the
contract's inputs, DISTSPEC's op semantics for one process), on the same periodic crystal:

- SevenNet-0 ('7net-0'): its self-connections are linears of the features alone, so only the
  linear embedding of the 89-wide one-hot folds;
- with --nequip-sc, also SevenNet-0's architecture with `self_connection_type: nequip` (SevenNet-0's
  weights, random self-connections, nequip_sc()): each block's self-connection is the tensor product
  of the features with the 89-wide one-hot, which folds into one linear per exported element.

  run.py OUT [--cells 6] [--calls 5] [--threads 1] [--nequip-sc] [--device cpu|cuda] [--reuse]

Prints a table: model, folded or not, MACs per row folded away, seconds per call, and the graphs'
largest difference (relative to max(1, |value|)). Needs DISTSPEC_PYTHON_SEVENN's environment. On
a GPU machine, `--device cuda` exports and times CUDA graphs instead.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "tools"))
sys.path.insert(0, str(HERE.parent))

from graph_timing import crystal as timed_crystal, options, time_graphs  # noqa: E402

ELEMENTS = ["Si", "O"]


def nequip_sc():
    """SevenNet-0's configuration with the nequip-style self-connection: SevenNet-0's weights where
    the shapes match (its convolutions' denominators among them, which the configuration leaves at
    0), random self-connections (seeded)."""
    import torch  # noqa: PLC0415
    from sevenn.model_build import build_E3_equivariant_model  # noqa: PLC0415
    from sevenn.util import load_checkpoint  # noqa: PLC0415

    loaded = load_checkpoint("7net-0")
    config = dict(loaded.config)
    config["self_connection_type"] = "nequip"
    torch.manual_seed(0)
    model = build_E3_equivariant_model(config)
    state, own = model.state_dict(), loaded.build_model().state_dict()
    model.load_state_dict({k: v for k, v in own.items() if k in state and state[k].shape == v.shape}, strict=False)
    return model


def export(build, name: str, out: Path, fold: bool, device: str, reuse: bool) -> tuple[str, dict]:
    """(graph file, its element_linears record), exported unless `reuse` finds it already there."""
    import json  # noqa: PLC0415

    import torch  # noqa: PLC0415
    from distspec_export.export import export as run_export  # noqa: PLC0415

    name += "" if fold else "_unfolded"
    graph = out / f"{name}.pt2"
    if not (reuse and graph.is_file()):
        run_export(build(), None, ELEMENTS, 5.0, "metal", out, name, precision="fp32", kind="sevennet",
                   check_export=False, device=device, fold_elements=fold, log=lambda s: print(s, flush=True))
    meta = torch._inductor.aoti_load_package(str(graph)).get_metadata()
    return str(graph), json.loads(meta["distspec.json"]).get("element_linears", {})


def main() -> int:
    p = options(__doc__)
    p.add_argument("--nequip-sc", action="store_true", help="also the nequip-style self-connection model")
    args = p.parse_args()
    import torch  # noqa: PLC0415
    from distspec_export.sevennet import checkpoint  # noqa: PLC0415

    crystal = timed_crystal(args, len(ELEMENTS), 5.0)
    n_rows, n_edges = crystal.inputs[0].shape[0], crystal.inputs[2].shape[1]
    models = {"SevenNet-0": lambda: checkpoint("7net-0")}
    if args.nequip_sc:
        models["SevenNet-0 arch., nequip self-connection"] = nequip_sc
    rows = []
    for label, build in models.items():
        name = "7net0" if label == "SevenNet-0" else "7net0_nequip_sc"
        graphs, macs = {}, {}
        for fold in (True, False):
            graphs[fold], record = export(build, name, args.out, fold, args.device, args.reuse)
            macs[fold] = sum(f["macs_per_row"][0] - f["macs_per_row"][1] for f in record.get("folded", []))
        timed = time_graphs(graphs, crystal, args.calls, args.device)
        finite = all(bool(t.isfinite().all()) for fold in timed for t in timed[fold][2])
        deviation = max(float((a - b).abs().max()) / max(1.0, float(b.abs().max()))
                        for a, b in zip(timed[True][2], timed[False][2]))
        for fold in (False, True):
            rows.append((label, "folded" if fold else "as is", macs[fold], *timed[fold][:2],
                         f"{deviation:.1e}" if fold and finite else ("" if not fold else "outputs not finite")))
    print(f"\n{crystal.n_owned} atoms, {n_rows} rows, {n_edges} edges, {args.threads} thread(s), {args.device}, "
          f"torch {torch.__version__}; {args.calls} calls of each graph, interleaved")
    print("| model | graph | MACs per row folded away | s per call, min | median | folded vs as is |")
    print("|---|---|---|---|---|---|")
    for label, how, folded_away, fastest, median, deviation in rows:
        print(f"| {label} | {how} | {folded_away} | {fastest:.4f} | {median:.4f} | {deviation} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
