#!/usr/bin/env python3
"""Self-check of distspec-export, without the C++ side (ctest torch.export, label torch).

For each fixture of make_fixtures.py (toy_mpnn L2 and L4 as .pt2, L2 as .pt):

- the model file has the keys and values doc/torch_models.md gives, its graph and spec exist,
  nvalchemi loads the spec and its compile.force_strategy is framework_from_node_energy, and
  the graph carries the contract in its metadata (.pt2) or extra file (.pt);
- the graph file, loaded back in Python and run with DISTSPEC's op semantics for one process
  (tools/distspec_export/host_ops.py: halo rows copied from, and summed into, their owners;
  `send_index` empty as LAMMPS passes it), on the fixture crystal laid out as LAMMPS would
  (halo = images within cutoff + skin, in shuffled order; edges = a full neighbour list within
  cutoff + skin, shuffled), reproduces the eager reference (reference.py: nvalchemi's own ops
  and backward formulas over a gloo group) to 1e-10 relative in energy, per-atom energies,
  forces folded to owners by tag, and virial; in two layouts (skins 2.0 and 0.5), so the
  dynamic shapes are exercised;
- the graph runs on the smallest ranks: no atom; one atom; one atom whose only neighbour is its
  image (a `.pt2` with AOTInductor's input checks on, as the plugin runs it).

Then distspec-export's command line must stop with a clear message on bad input, and the
export's check must load a package in a child process first (a crash there is named by its
signal in an error, not the end of the exporter's process).

The mace set's MACE trained and saved in fp64 (mace_fp64_L2) must equal mace's own calculator to
1e-12, its rebuild keep every weight, and the export's check refuse a graph whose weights were
rounded to fp32 on the way (check_precision_kept).

With `--set mace` the same checks run on the MACE fixture (make_fixtures.py --set mace), against
MACE's own periodic evaluation, which has no halo at all (mace_model.py); with `--set aimnet`
on the AIMNet2 fixture against AIMNet2's own (aimnet_model.py). A set whose manifest gives
`max_skin` (AIMNet2: its neighbour matrix has a fixed width) must instead refuse, with a clear
message, the layouts of a larger skin, whose atoms have more neighbours.

  test_export.py --fixtures DIR [--set toy|mace|aimnet] [--make] [--python PYTHON]

--make (or a DIR without the set's manifest) runs make_fixtures.py into DIR first. Prints one
line per check and `N passed, N failed` last.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1] / "tools"))

from results import Results  # noqa: E402
import test_wrong_files  # noqa: E402

TOLERANCE = 1e-10
# The models trained and saved in fp64, against their package's own fp64 evaluation: 1e-12
# (a weight rounded to fp32 on the way moves them by 1e-8).
FP64_TRAINED = ("mace_fp64_L2",)
FP64_TOLERANCE = 1e-12
LAYOUTS = ((2.0, 11), (0.5, 23))  # (skin, shuffle seed)
DOC_PARAMETERS = ["graph", "format", "precision", "message_passing_layers", "comm_width", "contract", "torch_version",
                  "graph_sha256", "spec_sha256"]


def relative(a, b) -> float:
    import torch  # noqa: PLC0415

    a, b = torch.as_tensor(a, dtype=torch.float64), torch.as_tensor(b, dtype=torch.float64)
    return float((a - b).abs().max()) / max(1.0, float(b.abs().max()))


def fixed_devices(graph) -> set[str]:
    """The devices a TorchScript graph names as constants, nested blocks and calls included."""
    import torch  # noqa: PLC0415

    graph = graph.copy()
    torch._C._jit_pass_inline(graph)
    found, blocks = set(), [graph.block()]
    while blocks:
        for node in blocks.pop().nodes():
            if node.kind() == "prim::Constant" and node.output().type().kind() == "DeviceObjType":
                found.add(node.s("value"))
            blocks.extend(node.blocks())
    return found


def check_files(fixtures: Path, name: str, entry: dict, manifest: dict) -> list[str]:
    """What is wrong with the model file, spec and graph metadata (empty: nothing)."""
    import torch  # noqa: PLC0415
    from distspec_export import trace  # noqa: PLC0415
    from nvalchemi.distributed.spec import MLIPSpec  # noqa: PLC0415

    problems = []
    doc = json.loads((fixtures / entry["model_file"]).read_text())
    want = {"format": "distspec-model", "format_version": 1, "architecture": "torch", "units": manifest["units"],
            "cutoff": manifest["cutoff"], "elements": manifest["elements"]}
    problems += [f"{k} is {doc.get(k)!r}, expected {v!r}" for k, v in want.items() if doc.get(k) != v]
    params = doc.get("parameters", {})
    if list(params) != DOC_PARAMETERS:
        problems.append(f"parameters keys {list(params)}, expected {DOC_PARAMETERS}")
    if params.get("contract") != trace.CONTRACT or params.get("torch_version") != torch.__version__.split("+")[0]:
        problems.append(f"contract {params.get('contract')}, torch_version {params.get('torch_version')}")
    graph = fixtures / params.get("graph", "?")
    if not graph.is_file() or graph.suffix != {"aoti": ".pt2", "torchscript": ".pt"}.get(params.get("format")):
        problems.append(f"graph {graph.name} missing or not of format {params.get('format')}")
    spec = MLIPSpec.load(fixtures / doc["spec"])
    # The digests the plugin checks: of the graph's bytes, and of the spec file's JSON with keys
    # sorted and no whitespace (so the same spec inline in a model file has the same one).
    spec_bytes = json.dumps(json.loads((fixtures / doc["spec"]).read_text()), sort_keys=True, separators=(",", ":"),
                            ensure_ascii=False).encode()
    for key, want in (("graph_sha256", hashlib.sha256(graph.read_bytes()).hexdigest() if graph.is_file() else None),
                      ("spec_sha256", hashlib.sha256(spec_bytes).hexdigest())):
        if params.get(key) != want:
            problems.append(f"parameters.{key} {params.get(key)!r}, expected {want!r}")
    if spec.to_dict()["compile"]["force_strategy"] != "framework_from_node_energy":
        problems.append(f"spec compile {spec.to_dict()['compile']}")
    if params.get("format") == "aoti":
        meta = torch._inductor.aoti_load_package(str(graph)).get_metadata()
    else:
        meta = {"distspec.contract": "", "distspec.json": ""}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            script = torch.jit.load(str(graph), _extra_files=meta)
        meta = {k: v.decode() if isinstance(v, bytes) else v for k, v in meta.items()}
        # One file for every device: the trace's devices follow the positions (the plugin refuses
        # a graph that fixes another device than the run's).
        fixed = sorted(fixed_devices(script.forward.graph))
        if fixed:
            problems.append(f"graph {graph.name} fixes its tensors to {', '.join(fixed)}")
    if meta.get("distspec.contract") != str(trace.CONTRACT):
        problems.append(f"graph metadata distspec.contract {meta.get('distspec.contract')!r}")
    contract = json.loads(meta.get("distspec.json", "{}"))
    if contract.get("inputs") != list(trace.INPUT_NAMES) or contract.get("outputs") != list(trace.OUTPUT_NAMES):
        problems.append(f"graph metadata inputs/outputs {contract.get('inputs')} -> {contract.get('outputs')}")
    return problems


def run_layout(run, system, ref: dict, manifest: dict, skin: float, seed: int):
    """Run the graph as one LAMMPS rank owning every atom; deviations from the reference."""
    import periodic  # noqa: PLC0415
    import torch  # noqa: PLC0415
    from distspec_export.host_ops import HostExchange  # noqa: PLC0415

    cutoff, elements = manifest["cutoff"], manifest["elements"]
    rows = periodic.rows(system, cutoff + skin, cutoff + skin, shuffle_seed=seed)
    n, n_rows = rows.n_owned, rows.positions.shape[0]
    species = periodic.species_of(system, ref["type_elements"], elements)[rows.owner]
    inputs = (rows.positions, species, rows.edge_index, torch.tensor(n), torch.zeros(0, dtype=torch.int64),
              torch.arange(n, n_rows), torch.ones(n_rows - n, dtype=torch.bool))
    host = HostExchange(rows.owner, n)
    with host.install():
        outputs = run(inputs)
    energies, forces = outputs[:2]
    folded = torch.zeros(n, 3, dtype=torch.float64).index_add(0, rows.owner, forces)
    w = rows.positions.T @ forces
    virial = [w[0, 0], w[1, 1], w[2, 2], w[0, 1], w[0, 2], w[1, 2]]
    order = {tag: i for i, tag in enumerate(system.tags.tolist())}
    by_tag = torch.tensor([order[t] for t in ref["tags"]])
    dev = {
        "energy": relative(energies[:n].sum(), ref["energy"]),
        "atomic_energies": relative(energies[:n][by_tag], ref["atomic_energies"]),
        "forces": relative(folded[by_tag], ref["forces"]),
        "virial": relative(torch.stack(virial), ref["virial"]),
    }
    if "virial_atom" in ref:
        # The graph's per-atom virial, halo rows folded to their owners, against the reference's
        # (the package's own, or the same partition of its own edge derivatives), and its sum
        # against the global virial: on every layout (skin, shuffled rows) alike.
        atomic = torch.zeros(n, 6, dtype=torch.float64).index_add(0, rows.owner, outputs[2].double())
        dev["virial_atom"] = relative(atomic[by_tag], ref["virial_atom"])
        dev["virial_atom sum"] = relative(atomic.sum(0), ref["virial"])
    return dev, dict(host.calls), (n_rows - n, rows.edge_index.shape[1])


def check_graph(results: Results, fixtures: Path, name: str, entry: dict, manifest: dict) -> None:
    import periodic  # noqa: PLC0415
    import torch  # noqa: PLC0415
    from distspec_export import check, trace  # noqa: PLC0415

    ref = json.loads((fixtures / entry["reference"]).read_text())
    system = periodic.read_data(fixtures / manifest["data"])
    run = trace.load_graph(str(fixtures / entry["graph"]), entry["format"])
    run_all = trace.load_graph(str(fixtures / entry["graph"]), entry["format"], virials=True)
    for skin, seed in LAYOUTS:
        too_wide = skin > manifest.get("max_skin", skin)
        try:
            dev, calls, (n_halo, n_edges) = run_layout(run_all, system, ref, manifest, skin, seed)
        except Exception as e:  # noqa: BLE001
            refused = too_wide and "more neighbours than" in str(e)
            results.report(refused, f"{name} vs eager reference, skin {skin}",
                           "refused: more neighbours than its max_neighbors" if refused
                           else f"{type(e).__name__}: {str(e)[:300]}")
            continue
        if too_wide:
            results.report(False, f"{name}, skin {skin}", "ran, though its atoms have more neighbours than it takes")
            continue
        worst = max(dev.values())
        tolerance = FP64_TOLERANCE if name in FP64_TRAINED else TOLERANCE
        results.report(worst <= tolerance, f"{name} vs eager reference, skin {skin}",
                       f"{n_halo} halo rows, {n_edges} edges; relative deviations "
                       + ", ".join(f"{k} {v:.1e}" for k, v in dev.items()) + f"; op calls {calls}")
    why = check.small_ranks_fail(run, torch.float64, cutoff=manifest["cutoff"])
    note = ""
    if why.startswith("0 atoms:") and entry["format"] == "torchscript":
        # A TorchScript graph may not take 0 rows (MACE's view(0, -1)); the plugin calls no
        # graph on a rank that owns no atom, and the rest must still run.
        note = f" (0 atoms: fails in TorchScript, a call the plugin never makes: {why.splitlines()[-1][:80]})"
        why = check.small_ranks_fail(run, torch.float64, cutoff=manifest["cutoff"], skip_empty=True)
    results.report(not why, f"{name} on the smallest ranks (inputs checked)",
                   why or ", ".join(what for what, _, _ in check.small_ranks(torch.float64)) + ": run" + note)


BAD_INPUTS = [  # (name, extra argv replacing the defaults, text the message must contain)
    ("duplicate element", ["--elements", "Cu", "Cu"], "listed more than once"),
    ("negative cutoff", ["--cutoff", "-1"], "positive"),
    ("missing spec file", ["--spec", "/nonexistent/spec.json"], "cannot read the spec file"),
    ("module not found", ["--module", "no_such_module_xyz:build"], "cannot import"),
    ("module attribute missing", ["--module", "{toy}:nothing"], "has no attribute"),
    ("bad module args", ["--module-args", '{"layers": 3}'], "2 or 4 layers"),
    ("wrong forward signature",
     ["--module", "torch.nn:Linear", "--module-args", '{"in_features": 3, "out_features": 1}'], "positional arguments"),
    ("non-halo policy", ["--spec", "{local_spec}"], "policy is 'local'"),
    ("accelerator for a kind without one", ["--accelerate", "oeq"], "not for a 'plain' model"),
    ("accelerator on the cpu", ["--kind", "sevennet", "--accelerate", "oeq"], "run on cuda only"),
    ("MACE accelerator on the cpu", ["--kind", "mace", "--accelerate", "oeq"], "run on cuda only"),
    ("cutoff below the model's own", ["--cutoff", "3.0"], "below ToyMPNN (PyTorch module)'s own cutoff 4.5"),
    ("units other than the model's",
     ["--module", "{native}:build", "--module-args", '{"model_file": "{cu_mpnn}"}', "--elements", "Cu", "--cutoff",
      "5.0", "--units", "real"], "computes energies and lengths in LAMMPS units 'metal'"),
]


def check_cli(results: Results, workdir: Path) -> None:
    from distspec_export import cli  # noqa: PLC0415
    from nvalchemi.distributed.spec import SPEC_MPNN_HALO, MLIPSpec  # noqa: PLC0415

    workdir.mkdir(parents=True, exist_ok=True)
    spec = workdir / "mpnn.spec.json"
    SPEC_MPNN_HALO.save(spec)
    local = SPEC_MPNN_HALO.to_dict()
    local["core"]["policy"] = {"kind": "local"}
    MLIPSpec.from_dict(local).save(workdir / "local.spec.json")
    toy = str(HERE / "toy_mpnn.py")
    base = {"--module": f"{toy}:build", "--module-args": "{}", "--spec": str(spec), "--elements": ["Cu", "Ni"],
            "--cutoff": "4.5", "--units": "metal", "--out": str(workdir), "--name": "bad", "--format": "torchscript"}
    import torch  # noqa: PLC0415

    rows = list(BAD_INPUTS)
    if not torch.cuda.is_available():
        # Said before anything is traced: the trace, the compilation and the check need the GPU.
        rows.append(("--device cuda without a GPU", ["--format", "aoti", "--device", "cuda"], "this Python sees no GPU"))
    for name, extra, expect in rows:
        opts = dict(base)
        i = 0
        while i < len(extra):
            key, values = extra[i], []
            i += 1
            while i < len(extra) and not extra[i].startswith("--"):
                values.append(extra[i].replace("{toy}", toy).replace("{local_spec}", str(workdir / "local.spec.json"))
                              .replace("{native}", str(HERE / "native_mpnn.py"))
                              .replace("{cu_mpnn}", str(HERE.parent.parent / "potentials" / "cu_mpnn_L2.json")))
                i += 1
            opts[key] = values if key == "--elements" else values[0]
        argv = []
        for key, value in opts.items():
            argv += [key, *value] if isinstance(value, list) else [key, value]
        code, message = run_cli(argv)
        results.report(code == 2 and expect in message, f"distspec-export rejects {name}",
                       f"exit {code}: {message[:160]}")


def run_cli(argv: list[str]) -> tuple[int, str]:
    """distspec-export's exit code and the last line of its standard error (test_wrong_files.py's
    run_cli: a traceback is exit code "traceback")."""
    code, err = test_wrong_files.run_cli(argv)
    lines = err.strip().splitlines()
    return code, lines[-1] if lines else ""


def check_sources(results: Results, workdir: Path, fixtures: Path, which: str) -> None:
    """--from, --head, --modal and --deployed used wrongly: exit 2 and a message that says what
    to give. The mace set adds its two-head model file: a head must be chosen, and be one of its."""
    workdir.mkdir(parents=True, exist_ok=True)
    out = ["--out", str(workdir), "--name", "bad"]
    rows = [
        ("--head without --from", ["--module", "x.py:build", "--elements", "Cu", "--cutoff", "4", "--units", "metal",
                                   "--head", "mp", *out], "--head applies to --from"),
        ("an unknown --from kind", ["--from", "gulp", "x", *out], "the model sources are mace, sevennet, nequip"),
        ("--from mace without the file", ["--from", "mace", str(workdir / "none.model"), *out], "no such file"),
        ("--modal for a MACE model", ["--from", "mace", str(workdir / "none.model"), "--modal", "PBE", *out],
         "modals are SevenNet's"),
        ("--deployed with export options", ["--deployed", str(workdir / "none.pt"), "--elements", "Si", "--cutoff",
                                            "5", "--units", "metal", "--format", "torchscript", *out],
         "--format do not apply"),
    ]
    if which == "mace":
        model = str(fixtures / make_fixtures_heads_file())
        rows += [("a two-head MACE without --head", ["--from", "mace", model, *out],
                  "has 2 heads (pbe, mp): choose the one to export with --head NAME"),
                 ("a head the MACE model lacks", ["--from", "mace", model, "--head", "omat", *out],
                  "--head omat: the MACE model's heads are pbe, mp")]
    for name, argv, expect in rows:
        code, message = run_cli(argv)
        results.report(code == 2 and expect in message, f"distspec-export rejects {name}", f"exit {code}: {message[:160]}")


def make_fixtures_heads_file() -> str:
    import make_fixtures  # noqa: PLC0415

    return make_fixtures.COMMAND_LINE["mace_heads_L2"][1]


def check_precision_kept(results: Results, workdir: Path, fixtures: Path) -> None:
    """The MACE trained and saved in fp64 (make_fixtures.MACE_FP64): the exporter's rebuild keeps
    every weight bit for bit and leaves torch's default dtype as it was, an error included; and
    the export's check compares with the model as given, so a rebuild that rounds the weights to
    fp32 (extract_model under torch's float32 default, as the exporter once rebuilt) is refused."""
    import make_fixtures  # noqa: PLC0415
    import torch  # noqa: PLC0415
    from distspec_export import cli, mace, precision  # noqa: PLC0415
    from distspec_export.trace import ExportError  # noqa: PLC0415
    from mace.tools.compile import disable_e3nn_codegen  # noqa: PLC0415
    from mace.tools.scripts_utils import extract_model  # noqa: PLC0415

    model_file = fixtures / make_fixtures.COMMAND_LINE[make_fixtures.MACE_FP64][1]
    model = torch.load(str(model_file), map_location="cpu", weights_only=False)
    default = torch.get_default_dtype()

    def rounding_rebuild(m):
        with disable_e3nn_codegen():  # torch's default dtype float32
            return extract_model(m)

    rounded = precision.changed_weights(model, rounding_rebuild(model))
    kept = precision.changed_weights(model, mace._rebuild_without_codegen(model))
    dtypes = {p.dtype for p in mace._rebuild_without_codegen(model).parameters()}
    results.report(bool(rounded) and not kept and dtypes == {torch.float64} and torch.get_default_dtype() == default,
                   "the MACE rebuild keeps an fp64 model's weights",
                   f"rebuilt in fp64: {len(kept)} weights changed, parameters {sorted(map(str, dtypes))}; rebuilt "
                   f"under float32: {len(rounded)} changed, by up to {max(rounded.values(), default=0.0):.1e}")
    try:
        mace._rebuild_without_codegen(torch.nn.Linear(2, 2).double())  # not a MACE: extract_model fails
        error = None
    except Exception as e:  # noqa: BLE001
        error = e
    results.report(isinstance(error, ExportError) and torch.get_default_dtype() == default,
                   "a failed MACE rebuild restores torch's default dtype",
                   f"{torch.get_default_dtype()} after {type(error).__name__}: {str(error)[:120]}")
    torch.set_default_dtype(default)

    workdir.mkdir(parents=True, exist_ok=True)
    # mace's module traced whole, whose check holds fp64 to 1e-12 (the fast forward's splines are held to 1e-4)
    argv = ["--from", "mace", str(model_file), "--elements", "Cu", "Ni", "--format", "torchscript",
            "--accelerate", "none", "--out", str(workdir), "--name", "rounded"]
    saved = mace._rebuild_without_codegen
    mace._rebuild_without_codegen = rounding_rebuild
    try:
        cli.export_from_args(cli.parse_args(argv), log=lambda line: None)
        message = ""
    except ExportError as e:
        message = str(e)
    finally:
        mace._rebuild_without_codegen = saved
    results.report("differs from MACE's own evaluation of the model as given" in message and "1e-12" in message,
                   "the export's check refuses a graph of fp32-rounded weights", message[:400] or "exported")

    # Asked for fp32, the graph equals mace's own fp32 evaluation (the model cast as its calculator
    # casts it) to fp32 rounding (not exactly: the two sum in another order).
    argv = ["--from", "mace", str(model_file), "--elements", "Cu", "Ni", "--format", "torchscript",
            "--precision", "fp32", "--out", str(workdir), "--name", "fp32"]
    try:
        d = cli.export_from_args(cli.parse_args(argv), log=lambda line: None).deviations
        worst, why = max(d["atomic_energies"], d["forces"]), f"{d['reference']}: {d['atomic_energies']:.1e} in " \
            f"atomic energies, {d['forces']:.1e} in forces"
    except ExportError as e:
        worst, why = float("inf"), str(e)[:300]
    results.report(0.0 < worst <= 1e-5, "an fp64 MACE exported in fp32 equals mace's fp32 evaluation", why)


NO_NVALCHEMI = """
import sys
sys.modules["nvalchemi"] = None  # as on a machine where nvalchemi-toolkit cannot be installed
sys.path.insert(0, sys.argv[1])
from distspec_export.cli import main
sys.exit(main(sys.argv[2:]))
"""


def check_accelerated_spec(results: Results) -> None:
    """The spec the exporter writes for a graph that calls an accelerator's kernels: each a
    pass-through op adapter, as nvalchemi's own MACE spec for cuEquivariance lists them, which
    nvalchemi reads back unchanged; a graph op of another accelerator than the one asked for,
    and an accelerated export whose graph calls none, are refused."""
    import make_fixtures  # noqa: PLC0415
    from distspec_export import accelerators  # noqa: PLC0415
    from distspec_export.trace import ExportError  # noqa: PLC0415
    from nvalchemi.distributed.spec import SPEC_MPNN_HALO, MLIPSpec  # noqa: PLC0415

    make_fixtures.define_oeq_schemas()  # nvalchemi resolves a spec's ops when it reads one

    oeq = accelerators.ACCELERATORS["oeq"]
    graph_ops = ["nvalchemi::halo_forward_static", "libtorch_tp_jit::jit_conv_forward",
                 "libtorch_tp_jit::jit_conv_backward", "nvalchemi::halo_forward_static_backward"]
    accelerated, rest = accelerators.split_ops(graph_ops, oeq)
    spec_d = accelerators.add_adapters(SPEC_MPNN_HALO.to_dict(), accelerated)
    listed = [(a["op"], a["arg_transforms"], a["output_transforms"]) for a in spec_d["core"]["custom_ops"]]
    expected = [("libtorch_tp_jit::jit_conv_forward", {}, {}), ("libtorch_tp_jit::jit_conv_backward", {}, {})]
    back = MLIPSpec.from_dict(spec_d).to_dict()
    results.report(listed == expected and rest == graph_ops[::3] and back["core"] == spec_d["core"],
                   "the spec of an accelerated graph lists its kernels as pass-through adapters",
                   f"custom_ops {listed}; nvalchemi reads it back {'unchanged' if back['core'] == spec_d['core'] else 'CHANGED'}")
    for name, ops_, chosen, expect in [
            ("a graph calling another accelerator's kernels", ["cuequivariance::uniform_1d"], oeq, "from Python only"),
            ("an accelerated export whose graph calls none of its kernels", graph_ops[:1], oeq, "calls no openequivariance op"),
            ("accelerator kernels in an export asked for none", graph_ops, None, "--accelerate oeq")]:
        try:
            accelerators.split_ops(ops_, chosen)
            results.report(False, f"exporter refuses {name}", "accepted")
        except ExportError as e:
            results.report(expect in str(e), f"exporter refuses {name}", str(e)[:160])


def check_fused_conv_corrections(results: Results) -> None:
    """A MACE exported with OpenEquivariance's fused convolution (gather, tensor product and
    scatter in one op) gets its halo correction where nvalchemi's pass puts it after an aten
    scatter: after each fused convolution whose receivers come from edge_index, consuming it, and
    in front of every later use; a convolution over other rows gets none."""
    import make_fixtures  # noqa: PLC0415
    import torch  # noqa: PLC0415
    from distspec_export import check, mace, ops, trace  # noqa: PLC0415

    make_fixtures.define_oeq_schemas()
    conv = torch.ops.libtorch_tp_jit.jit_conv_forward.default
    correct = torch.ops.nvalchemi.halo_scatter_correct_static.default

    def energy(positions, species, edge_index, _halo_no, _halo_si, _halo_rd, _halo_rr):
        kernel, workspace = torch.zeros(1, dtype=torch.uint8), torch.zeros(1)
        x = conv(kernel, 0, positions, positions, positions, 3, edge_index[1], edge_index[0], workspace, workspace)
        rows = torch.arange(x.shape[0])
        y = conv(kernel, 0, x, x, x, 3, rows, rows, workspace, workspace)
        return (x + y).sum(-1)

    if not ops.have_nvalchemi():
        ops.define_standalone_ops()
    example = check.examples(2, 3.0, torch.float64)[0]
    gm = trace.trace_symbolic(energy, example.inputs)
    sites = mace.insert_fused_conv_corrections(gm, correct)
    convs = [n for n in gm.graph.nodes if n.target == conv]
    fixes = [n for n in gm.graph.nodes if n.target == correct]
    ok = (len(sites) == 1 and len(convs) == 2 and len(fixes) == 1 and fixes[0].args[0] is convs[0]
          and set(convs[0].users) == {fixes[0]} and fixes[0] in convs[1].all_input_nodes
          and all(convs[1] not in f.all_input_nodes for f in fixes))
    results.report(ok, "MACE's fused convolutions get the halo correction after the edge scatter",
                   f"{len(sites)} corrected of {len(convs)} convolutions; corrections consume "
                   f"{[str(f.args[0]) for f in fixes]}; users of the first: {[str(u) for u in convs[0].users]}")


def check_without_nvalchemi(results: Results, fixtures: Path, manifest: dict) -> None:
    """The exporter with torch alone (nvalchemi not importable), given a spec nvalchemi saved: it
    defines the ops itself and keeps the spec; its TorchScript graph of the 2-layer toy model
    equals the eager reference made with nvalchemi's own ops and backward formulas."""
    import subprocess  # noqa: PLC0415

    from nvalchemi.distributed.spec import SPEC_MPNN_HALO  # noqa: PLC0415

    workdir = fixtures / "without_nvalchemi"
    workdir.mkdir(parents=True, exist_ok=True)
    spec = workdir / "mpnn.spec.json"
    SPEC_MPNN_HALO.save(spec)
    entry = dict(manifest["models"]["toy_mpnn_L2_ts"])
    args = ["--module", f"{HERE / 'toy_mpnn.py'}:build", "--module-args",
            json.dumps({"layers": 2, "n_species": 2, "cutoff": manifest["cutoff"]}), "--elements", "Cu", "Ni",
            "--cutoff", str(manifest["cutoff"]), "--units", "metal", "--out", str(workdir), "--format", "torchscript",
            "--spec", str(spec), "--name", "toy"]
    run = subprocess.run([sys.executable, "-c", NO_NVALCHEMI, str(HERE.parents[1] / "tools"), *args],
                         capture_output=True, text=True)
    written = json.loads((workdir / "toy.spec.json").read_text()) if run.returncode == 0 else {}
    same_core = written.get("core") == SPEC_MPNN_HALO.to_dict()["core"]
    results.report(run.returncode == 0 and same_core, "exporter without nvalchemi, spec given",
                   f"exit {run.returncode}, spec core kept: {same_core}; "
                   f"{(run.stderr.strip().splitlines() or [''])[-1][:160]}")
    if run.returncode == 0:
        entry["graph"] = "without_nvalchemi/toy.pt"
        check_graph(results, fixtures, "toy_mpnn_L2 exported without nvalchemi", entry, manifest)


def check_package_probe(results: Results, fixtures: Path, manifest: dict) -> None:
    """The check loads an AOTInductor package in a child process first (trace.probe_package): a
    package that loads gives '', a process killed by a signal is named by it, and check_graph turns
    a crash into an ExportError that says the files are written and what to do, rather than taking
    the exporter's process down (torch 2.11 with OpenEquivariance's ops segfaults there), and a
    package that does not load into one that names it."""
    import torch  # noqa: PLC0415

    from distspec_export import check, trace  # noqa: PLC0415
    from distspec_export.trace import ExportError  # noqa: PLC0415

    package = next((fixtures / e["graph"] for e in manifest["models"].values() if e["graph"].endswith(".pt2")), None)
    if package is None:
        results.report(False, "probe: a .pt2 fixture to load", "none in the manifest")
        return
    why = trace.probe_package(str(package))
    results.report(why == "", "probe: a fresh process loads a fixture package", why or package.name)
    crash = "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n"
    why = trace.probe_package(str(package), code=crash)
    message = str(check.package_load_failure(str(package), why, "import openequivariance"))
    results.report(why == "SIGSEGV" and "killed by SIGSEGV" in message and "--no-check" in message
                   and "written" in message, "probe: a process that crashes is named by its signal",
                   f"{why!r}: {message[:160]}...")
    why = trace.probe_package(str(package), code="raise RuntimeError('no such package')\n")
    results.report(why == "RuntimeError: no such package", "probe: a child's error is its last line", repr(why))
    garbage = fixtures / "bad_inputs" / "not_a_package.pt2"
    garbage.parent.mkdir(parents=True, exist_ok=True)
    garbage.write_bytes(b"not a zip archive")
    try:
        check.check_graph(str(garbage), "aoti", None, 1, 2.0, torch.float64)
        results.report(False, "probe: check_graph stops on a package that does not load", "it returned")
    except Exception as e:  # noqa: BLE001 (anything but the exporter's own error fails the check below)
        results.report(isinstance(e, ExportError) and "cannot load the graph it wrote" in str(e) and
                       "--no-check" in str(e), "probe: check_graph stops on a package that does not load, "
                       "naming it", f"{type(e).__name__}: {str(e)[:200]}")


def main(argv: list[str] | None = None) -> int:
    import make_fixtures  # noqa: PLC0415

    argv = make_fixtures.environment(sys.argv[1:] if argv is None else argv, "the torch export test")
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--fixtures", required=True, help="folder of make_fixtures.py's output")
    p.add_argument("--set", choices=list(make_fixtures.SETS), default="toy", help="which fixtures (default toy)")
    p.add_argument("--make", action="store_true", help="run make_fixtures.py into it first")
    args = p.parse_args(argv)
    from distspec_export import ops  # noqa: PLC0415

    ops.import_nvalchemi_ops()  # the graphs' ops must exist before a graph file loads
    ops.define_backward_op()
    fixtures = Path(args.fixtures)
    t0 = time.perf_counter()
    manifest_file = fixtures / make_fixtures.MANIFEST[args.set]
    if args.make or not manifest_file.is_file():
        if make_fixtures.main([str(fixtures), "--set", args.set] + (["--force"] if args.make else [])) != 0:
            print("FAIL: make_fixtures.py\n0 passed, 1 failed")
            return 1
    manifest = json.loads(manifest_file.read_text())
    results = Results()
    results.report(bool(manifest["models"]), "the fixtures list models", f"{len(manifest['models'])} in {manifest_file.name}")
    for name, entry in manifest["models"].items():
        problems = check_files(fixtures, name, entry, manifest)
        results.report(not problems, f"{name} files", "; ".join(problems) or
                       f"{entry['model_file']}, {entry['graph']}, spec and metadata as doc/torch_models.md says")
        check_graph(results, fixtures, name, entry, manifest)
    if args.set in ("toy", "mace"):
        check_sources(results, fixtures / "bad_sources", fixtures, args.set)
    if args.set == "mace":
        check_precision_kept(results, fixtures / "precision", fixtures)
    if args.set == "toy":
        check_cli(results, fixtures / "bad_inputs")
        check_accelerated_spec(results)
        check_fused_conv_corrections(results)
        check_without_nvalchemi(results, fixtures, manifest)
        check_package_probe(results, fixtures, manifest)
    print(f"({time.perf_counter() - t0:.1f} s)")
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
