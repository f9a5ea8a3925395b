#!/usr/bin/env python3
"""Live interop check of distspec-spec against the released nvalchemi-toolkit.

Saves MLIPSpec files with nvalchemi's own API and its own model classes, adds the golden files
the wheel wrote (unittest/golden_specs), and checks each file both ways:

  (a) `distspec-spec check FILE` accepts it and `distspec-spec format FILE` gives its bytes;
  (b) what distspec-spec wrote loads in nvalchemi (`MLIPSpec.from_dict(json.loads(...))`) as a
      spec whose `to_dict()` equals that of the file itself loaded the same way.

(b) compares two nvalchemi loads rather than a load against the live object because loading is
lossy by design in two places (a `replacement` that does not import becomes null, a
`module_forward` target becomes a placeholder): the same loss on both sides, so any difference
left is DISTSPEC's.

Run by ctest through the system python3; the script re-runs itself in the Python environment
that the bootstrap made (--python, or the environment variable named by --python-var, which
wins). Without that environment it reports itself skipped (exit 77), or failed when CI=true.
Prints one line per spec, a summary, and `N passed, N failed` as its last line.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path

SKIP = 77
IN_ENV_FLAG = "--in-env"


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tool", required=True, help="path of the distspec-spec executable")
    p.add_argument("--python", default="", help="interpreter of the nvalchemi environment")
    p.add_argument("--python-var", default="DISTSPEC_PYTHON",
                   help="environment variable that names the interpreter (wins over --python)")
    p.add_argument("--models", choices=("base", "mace"), default="base",
                   help="base: API specs, golden files and the models of the base environment; "
                        "mace: nvalchemi's MACE wrapper (its own environment)")
    p.add_argument("--golden", action="append", default=[],
                   help="a folder of golden *.json spec files to include (repeatable)")
    p.add_argument("--reference", default="",
                   help="folder of the wheel's model_*.json: say whether each live model spec has their bytes")
    p.add_argument("--workdir", required=True, help="where the saved and rewritten specs go")
    p.add_argument(IN_ENV_FLAG, action="store_true", help=argparse.SUPPRESS)
    return p.parse_args(argv)


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def relaunch(args: argparse.Namespace, argv: list[str]) -> int:
    """Find the environment's interpreter and re-run this script under it."""
    python = os.environ.get(args.python_var) or args.python
    if not python or not os.access(python, os.X_OK):
        why = (f"no Python environment with nvalchemi: {args.python_var} is "
               f"{'unset' if not python else repr(python) + ', not an executable'} "
               f"(scripts/bootstrap.sh makes it and writes it into env.sh)")
        if in_ci():
            print(f"FAIL: {why}; CI=true, so the interop test fails instead of skipping")
            print("0 passed, 1 failed")
            return 1
        # The line scripts/test_summary.py collects: ctest shows only that the test was skipped.
        print(f"DISTSPEC-SKIP {os.path.basename(__file__)}: {why}")
        return SKIP
    sys.stdout.flush()
    os.execv(python, [python, os.path.abspath(__file__), *argv, IN_ENV_FLAG])
    return 1  # not reached


# ---------------------------------------------------------------------------------------------
# Everything below runs inside the nvalchemi environment.


class Case:
    """One spec file: where it came from and whether it is checked or only reported."""

    def __init__(self, name: str, path: Path, origin: str) -> None:
        self.name, self.path, self.origin = name, path, origin


def first_difference(a, b, where: str = "") -> str:
    """Where two to_dict() trees first differ, as a short readable path."""
    if type(a) is not type(b):
        return f"{where or '<root>'}: {a!r} != {b!r}"
    if isinstance(a, dict):
        for k in list(a) + [k for k in b if k not in a]:
            if k not in a or k not in b:
                return f"{where}.{k}: {'missing' if k not in a else a[k]!r} != {'missing' if k not in b else b[k]!r}"
            d = first_difference(a[k], b[k], f"{where}.{k}")
            if d:
                return d
        if list(a) != list(b):
            return f"{where or '<root>'}: key order {list(a)} != {list(b)}"
        return ""
    if isinstance(a, list):
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, f"{where}[{i}]")
            if d:
                return d
        return "" if len(a) == len(b) else f"{where}: length {len(a)} != {len(b)}"
    return "" if a == b else f"{where or '<root>'}: {a!r} != {b!r}"


def byte_difference(want: bytes, got: bytes) -> str:
    """The first differing line of two byte strings, both sides quoted."""
    wl, gl = want.split(b"\n"), got.split(b"\n")
    for i, (w, g) in enumerate(zip(wl, gl)):
        if w != g:
            return f"line {i + 1}: wheel {w.decode(errors='replace').strip()!r}, distspec {g.decode(errors='replace').strip()!r}"
    return f"wheel has {len(wl)} lines ({len(want)} bytes), distspec {len(gl)} lines ({len(got)} bytes)"


class StandInOps:
    """Makes the ops a spec names resolvable, as nvalchemi's from_dict requires.

    `OpAdapter.from_dict` resolves every op name against `torch.ops` and fails for one whose
    registering extension is not loaded. The registering nvalchemi modules are imported where
    they import on this machine (LJ, Ewald, PME: the real ops). The rest are CUDA-only extensions
    (cuEquivariance's `cuequivariance::*` kernels) or the test's own names: for those a stand-in
    schema is defined with torch.library. Only the name matters to the spec round trip, so the
    stand-in's signature is arbitrary; such ops are listed in the output.
    """

    IMPORTERS = (
        "nvalchemi.models._ops.lj",
        "nvalchemi.models._ops.electrostatics.ewald",
        "nvalchemi.models._ops.electrostatics.slab",
        "nvalchemi.models._ops.electrostatics.pme",
        "nvalchemiops.torch.spline",
    )

    def __init__(self) -> None:
        import importlib

        import torch

        self.torch = torch
        self.libraries: dict[str, object] = {}
        self.stand_ins: list[str] = []
        self.import_errors: list[str] = []
        for mod in self.IMPORTERS:
            try:
                importlib.import_module(mod)
            except Exception as e:  # noqa: BLE001 - report and fall back to stand-ins
                self.import_errors.append(f"{mod}: {type(e).__name__}: {e}")

    def resolvable(self, qualname: str) -> bool:
        ns, _, name = qualname.partition("::")
        try:
            return hasattr(getattr(self.torch.ops, ns), name) and bool(
                getattr(getattr(self.torch.ops, ns), name).overloads())
        except (AttributeError, RuntimeError):
            return False

    def ensure(self, qualname: str) -> None:
        if "::" not in qualname or self.resolvable(qualname):
            return
        ns, _, name = qualname.partition("::")
        lib = self.libraries.get(ns)
        if lib is None:
            lib = self.torch.library.Library(ns, "FRAGMENT")  # noqa: TOR901
            self.libraries[ns] = lib
        lib.define(f"{name}(Tensor x) -> Tensor")
        self.stand_ins.append(qualname)

    def ensure_for(self, spec_dict: dict) -> None:
        for op in spec_dict.get("core", {}).get("custom_ops", []):
            if isinstance(op, dict) and isinstance(op.get("op"), str):
                self.ensure(op["op"])


# ------------------------------------------------------------------ specs made with the API


NON_ASCII_MODULE = "módulo_ñ_λ"  # a real module on sys.path, so replacements resolve
NON_ASCII_SOURCE = '''
"""Helper replacements with non-ASCII names for the interop test."""


def función_ü(*args, **kwargs):
    return None


def función_β(*args, **kwargs):
    return None


class Clase_Ω:
    def método(self, *args, **kwargs):
        return None
'''


def api_specs(workdir: Path, ops: StandInOps) -> list[tuple[str, object]]:
    """Specs built with nvalchemi's public spec API: every policy kind and mode, every
    transform (both `replicated_consumer` values), every helper kind and mode, output kinds
    and reductions, shard_fields forms, each compile policy, non-ASCII strings."""
    import dataclasses
    import importlib

    import torch

    from nvalchemi.distributed._core.adapter import ModuleForwardAdapter
    from nvalchemi.distributed._core.op_transforms import (
        AllReduceSum,
        GatherInputs,
        GatherInputsFull,
        ScatterOutputs,
        SliceOutputsOwned,
        SliceOwned,
    )
    from nvalchemi.distributed._core.storage_policy import PlainShard, RefreshOnlyHaloPolicy
    from nvalchemi.distributed.spec import (
        SPEC_DFTD3_HALO,
        SPEC_EWALD_HALO,
        SPEC_LJ_HALO,
        SPEC_MPNN_GP,
        SPEC_MPNN_HALO,
        SPEC_PME_HALO,
        SPEC_UMA_HALO,
        CompilePolicy,
        DistributionSpec,
        ForceStrategy,
        FunctionAdapter,
        GraphParallelPolicy,
        HaloStoragePolicy,
        JitAdapter,
        MethodAdapter,
        MLIPSpec,
        OpAdapter,
        OutputKind,
        OutputSpec,
        PythonAdapter,
        Reduce,
        replace_policy,
    )

    # The test's own ops: real torch.library ops, so the adapters hold live handles as a model's
    # would (to_dict writes their schema names).
    for name in ("kernel_a", "kernel_b", "kernel_c", "many_args"):
        ops.ensure(f"distspec_interop::{name}")
    k_a = torch.ops.distspec_interop.kernel_a
    k_b = torch.ops.distspec_interop.kernel_b.default
    k_c = torch.ops.distspec_interop.kernel_c
    many = torch.ops.distspec_interop.many_args

    pkg = workdir / "python"
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / f"{NON_ASCII_MODULE}.py").write_text(NON_ASCII_SOURCE, encoding="utf-8")
    sys.path.insert(0, str(pkg))
    nam = importlib.import_module(NON_ASCII_MODULE)

    def closure_replacement():
        def inner(*a, **k):
            return None
        return inner  # qualname has <locals>: written, but cannot resolve on load

    def standard(policy, **kw):
        return MLIPSpec(distribution=DistributionSpec(policy=policy, **kw))

    specs: list[tuple[str, object]] = []
    add = lambda name, spec: specs.append((name, spec))  # noqa: E731

    # Policies: every kind, every mode combination, a mode string nvalchemi does not know.
    add("policy_local", standard(None))
    add("policy_shard", standard(PlainShard()))
    add("policy_graph_parallel", standard(GraphParallelPolicy()))
    for sm in ("halo_correction", "local", "custom_mode"):
        for gm in ("halo_read", "local"):
            add(f"policy_halo_{sm}_{gm}", standard(HaloStoragePolicy(scatter_mode=sm, gather_mode=gm)))
    add("policy_refresh_halo_default", standard(RefreshOnlyHaloPolicy(scatter_mode="local")))
    add("policy_refresh_halo_correction", standard(RefreshOnlyHaloPolicy()))
    add("policy_refresh_halo_local_local", standard(RefreshOnlyHaloPolicy(scatter_mode="local", gather_mode="local")))
    add("policy_replace_policy", replace_policy(SPEC_MPNN_HALO, scatter="local", gather="local"))

    # Transforms: each one alone, every one together, both replicated_consumer values.
    halo = HaloStoragePolicy()
    for tname, at, ot in (
        ("gather_inputs", {0: GatherInputs()}, {}),
        ("gather_inputs_full", {1: GatherInputsFull()}, {}),
        ("slice_owned", {0: SliceOwned()}, {}),
        ("scatter_outputs", {}, {0: ScatterOutputs()}),
        ("all_reduce_sum", {}, {0: AllReduceSum()}),
        ("all_reduce_sum_replicated", {}, {0: AllReduceSum(replicated_consumer=True)}),
        ("all_reduce_sum_not_replicated", {}, {1: AllReduceSum(replicated_consumer=False)}),
        ("slice_outputs_owned", {}, {0: SliceOutputsOwned()}),
    ):
        add(f"transform_{tname}", standard(halo, custom_ops=(OpAdapter(k_a, arg_transforms=at, output_transforms=ot),)))
    add("transform_all", standard(halo, custom_ops=(
        OpAdapter(many,
                  arg_transforms={0: GatherInputs(), 1: GatherInputsFull(), 2: SliceOwned(), 10: SliceOwned(),
                                  11: GatherInputs(), 3: GatherInputsFull()},
                  output_transforms={0: ScatterOutputs(), 1: AllReduceSum(), 2: AllReduceSum(replicated_consumer=True),
                                     3: SliceOutputsOwned(), 12: AllReduceSum(replicated_consumer=True),
                                     21: ScatterOutputs()}),
    )))
    add("transform_role_keywords", standard(halo, custom_ops=(
        OpAdapter(k_a, gather_inputs=(0, 2), scatter_outputs=(0,)),
        OpAdapter(k_b, neighbors_inputs=(1,), owned_slice_inputs=(0,), all_reduce_outputs=(0, 1, 2)),
        OpAdapter(k_c, gather_inputs_full=(0, 1), slice_outputs_owned=(0,)),
        OpAdapter("distspec_interop::kernel_a"),                     # a lazily named op, no transforms
    )))
    add("transform_pme_style", standard(halo, custom_ops=(
        OpAdapter(k_a, arg_transforms={0: SliceOwned(), 1: SliceOwned()},
                  output_transforms={0: AllReduceSum(replicated_consumer=True)}),
        OpAdapter(k_b, arg_transforms={1: SliceOwned()}, output_transforms={0: AllReduceSum()}),
    )))
    add("transform_sharded", standard(PlainShard(), custom_ops=(
        OpAdapter(k_c, arg_transforms={0: GatherInputsFull()}, output_transforms={0: SliceOutputsOwned()}),
    )))

    # Helpers: every kind and mode; replacements that resolve, that are null, that cannot resolve.
    linear_forward = torch.nn.Linear(1, 1)
    add("helpers_jit", standard(halo, third_party_helpers=(
        JitAdapter("some.scripted", "envelope"),
        JitAdapter("some.scripted", "envelope_marshal", mode="marshal"),
        JitAdapter("some.scripted", "envelope_eager", replacement=nam.función_ü, mode="eager"),
        JitAdapter("some.scripted", "closure", replacement=closure_replacement()),
    )))
    add("helpers_python", standard(halo, third_party_helpers=(
        PythonAdapter("aimnet.nbops", "mol_sum"),
        PythonAdapter("some.helpers", "neighbor_mask", replacement=nam.función_ü),
        FunctionAdapter(nam.función_ü, nam.función_β),
        PythonAdapter("some.helpers", "closure", replacement=closure_replacement()),
    )))
    add("helpers_method", standard(halo, third_party_helpers=(
        MethodAdapter("e3nn.o3", "SphericalHarmonics", "forward", mode="marshal"),
        MethodAdapter("mace.modules.blocks", "EquivariantProductBasisBlock", "forward", nam.función_ü),
        MethodAdapter(nam.Clase_Ω, "método", nam.función_ü),
        MethodAdapter(module_path="pkg.mod", class_name="Outer.Inner", method_name="forward", mode="wrap"),
        MethodAdapter(torch.nn.Linear, "forward", closure_replacement()),
    )))
    add("helpers_module_forward", standard(halo, third_party_helpers=(
        ModuleForwardAdapter(linear_forward, closure_replacement(), label="conv_tp"),
        ModuleForwardAdapter(linear_forward, nam.función_ü, label="etiqueta_é"),
    )))
    add("helpers_all_kinds_mixed_with_ops", MLIPSpec(
        distribution=DistributionSpec(policy=RefreshOnlyHaloPolicy(scatter_mode="local"), adapters=(
            OpAdapter(k_a, scatter_outputs=(0,)),
            JitAdapter("m", "a", mode="marshal"),
            PythonAdapter("m", "b", replacement=nam.función_β),
            OpAdapter(k_b, all_reduce_outputs=(0,)),
            MethodAdapter("m", "C", "forward", mode="marshal"),
            ModuleForwardAdapter(linear_forward, closure_replacement()),
        ), shard_fields=()),
        outputs={"energy": OutputSpec(OutputKind.PER_GRAPH), "forces": OutputSpec(OutputKind.PER_NODE)},
    ))

    # Non-ASCII everywhere a string may stand: BMP, astral (surrogate pairs in the file),
    # escapes json.dumps writes (quote, backslash, control characters), DEL and '/' unescaped.
    odd = 'q"uo\\te/\t\n\x01\x7f'
    add("non_ascii_helpers", standard(halo, third_party_helpers=(
        JitAdapter("paquete_ñ.módulo", "función_λ", replacement=nam.función_ü),
        PythonAdapter("パッケージ.モジュール", "関数", replacement=nam.función_β),
        MethodAdapter("𝔭𝔞𝔨𝔢𝔱.mod", "Ωmega", "méthode", replacement=None, mode="marshal"),
        MethodAdapter(nam.Clase_Ω, "método", nam.función_β),
        PythonAdapter(odd, odd),
    ), shard_fields=("positions",)))
    add("non_ascii_outputs", MLIPSpec(
        distribution=DistributionSpec(policy=halo),
        outputs={"énergie": OutputSpec(OutputKind.PER_GRAPH), "力": OutputSpec(OutputKind.PER_NODE, Reduce.OWNED_ONLY),
                 "𝔰tress": OutputSpec(OutputKind.PER_GRAPH, Reduce.ALL_REDUCE), odd: OutputSpec(OutputKind.GLOBAL)},
        node_energy_key="énergie_atomique", node_virial_key="𝔳irial",
    ))

    # Outputs: each kind, each reduction, the dict-free form, no outputs at all.
    add("outputs_none", standard(halo))
    add("outputs_every_kind", MLIPSpec(
        distribution=DistributionSpec(policy=halo),
        output_kinds={"a_node": OutputKind.PER_NODE, "b_graph": OutputKind.PER_GRAPH, "c_global": OutputKind.GLOBAL,
                      "d_unknown": OutputKind.UNKNOWN},
    ))
    add("outputs_every_reduction", MLIPSpec(
        distribution=DistributionSpec(policy=halo),
        outputs={"energy": OutputSpec(OutputKind.PER_GRAPH), "forces": OutputSpec(OutputKind.PER_NODE, Reduce.OWNED_ONLY),
                 "stress": OutputSpec(OutputKind.PER_GRAPH, Reduce.ALL_REDUCE),
                 "charges": OutputSpec(OutputKind.PER_NODE, Reduce.NONE), "dipole": OutputSpec(OutputKind.GLOBAL, Reduce.ALL_REDUCE),
                 "unclassified": OutputSpec(reduce=Reduce.OWNED_ONLY)},
    ))
    add("outputs_sets_only", MLIPSpec(
        distribution=DistributionSpec(policy=halo),
        owned_only_outputs=frozenset({"z_last", "a_first", "forces"}),
        all_reduce_outputs=frozenset({"stress", "B_upper", "b_lower"}),
    ))
    add("flags_nondefault", MLIPSpec(
        distribution=DistributionSpec(policy=GraphParallelPolicy(), shard_fields=()),
        system_reductions=False, gp_replicate_geometry=True,
        node_energy_key="atomic_energies", node_virial_key="atomic_virial",
    ))

    # shard_fields: default (omitted), empty, one, two, reordered. (Names other than nvalchemi's
    # three are left out: DISTSPEC rejects them on purpose, an error-parity decision.)
    for name, sf in (("default", None), ("empty", ()), ("positions", ("positions",)),
                     ("charges_positions", ("charges", "positions")),
                     ("reordered", ("atomic_numbers", "positions", "charges"))):
        kw = {} if sf is None else {"shard_fields": sf}
        add(f"shard_fields_{name}", standard(halo, **kw))

    # compile: each force strategy, both flags, graph_padder (not serialized), via with_compile.
    from nvalchemi.distributed.graph_padder import DenseBatchPadder
    for fs in ForceStrategy:
        for static in (True, False):
            for strain in (False, True):
                add(f"compile_{fs.value}_static{int(static)}_strain{int(strain)}", MLIPSpec(
                    distribution=DistributionSpec(policy=halo),
                    outputs={"energy": OutputSpec(OutputKind.PER_GRAPH), "forces": OutputSpec(OutputKind.PER_NODE)},
                    compile=CompilePolicy(static_shapes=static, force_strategy=fs, stress_via_strain=strain)))
    add("compile_default_policy", SPEC_MPNN_HALO.with_compile(CompilePolicy()))
    add("compile_with_graph_padder", SPEC_MPNN_HALO.with_compile(CompilePolicy(
        graph_padder=DenseBatchPadder(), force_strategy=ForceStrategy.FRAMEWORK_FROM_NODE_ENERGY)))

    # The presets, and what nvalchemi's combinators make of them.
    for name, preset in (("mpnn_halo", SPEC_MPNN_HALO), ("mpnn_gp", SPEC_MPNN_GP), ("uma_halo", SPEC_UMA_HALO),
                         ("lj_halo", SPEC_LJ_HALO), ("ewald_halo", SPEC_EWALD_HALO), ("pme_halo", SPEC_PME_HALO),
                         ("dftd3_halo", SPEC_DFTD3_HALO)):
        add(f"preset_{name}", preset)
    add("merged_lj_ewald", SPEC_LJ_HALO.merge(dataclasses.replace(SPEC_EWALD_HALO, node_energy_key="atomic_energies")))
    add("merged_compile_kept", SPEC_MPNN_GP.merge(SPEC_MPNN_GP))
    add("with_adapters_outputs", SPEC_MPNN_HALO.with_adapters(
        OpAdapter(k_c, all_reduce_outputs=(0,)), PythonAdapter("x.y", "z")).with_outputs(
        {"stress": OutputSpec(OutputKind.PER_GRAPH, Reduce.ALL_REDUCE)}))
    return specs


# ------------------------------------------------------------------ specs of nvalchemi's models


def tiny_dftd3_params(workdir: Path) -> Path:
    """Random D3 reference tables for elements 0-3: the wrapper would otherwise download them."""
    import torch

    g = torch.Generator().manual_seed(0)
    path = workdir / "dftd3_random_params.pt"
    torch.save({"rcov": torch.rand(4, generator=g) + 0.5, "r4r2": torch.rand(4, generator=g) + 1.0,
                "c6ab": torch.rand(4, 4, 5, 5, generator=g), "cn_ref": torch.rand(4, 4, 5, 5, generator=g)}, path)
    return path


def tiny_aimnet2():
    """An AIMNet2 model with random weights: aimnet's own default model config, shrunk."""
    import aimnet
    import torch
    from aimnet.config import build_module, load_yaml

    cfg = load_yaml(os.path.join(os.path.dirname(aimnet.__file__), "models", "aimnet2.yaml"))
    kw = cfg["kwargs"]
    kw.update(nfeature=4, ncomb_v=4, hidden=[[16, 8], [16, 8], [16, 8, 8]], aim_size=8,
              aev={"rc_s": 4.0, "nshifts_s": 4})
    kw["outputs"]["energy_mlp"]["kwargs"].update(
        n_in=8, mlp={"activation_fn": "torch.nn.GELU", "last_linear": True, "hidden": [8]})
    torch.manual_seed(0)
    return build_module(cfg).eval()


def tiny_mace():
    """A 2-interaction MACE with random weights (two elements, small irreps)."""
    import numpy as np
    import torch
    from e3nn import o3
    from mace import modules

    torch.manual_seed(0)
    model = modules.ScaleShiftMACE(
        r_max=4.0, num_bessel=4, num_polynomial_cutoff=5, max_ell=2,
        interaction_cls=modules.interaction_classes["RealAgnosticResidualInteractionBlock"],
        interaction_cls_first=modules.interaction_classes["RealAgnosticResidualInteractionBlock"],
        num_interactions=2, num_elements=2, hidden_irreps=o3.Irreps("4x0e + 4x1o"),
        MLP_irreps=o3.Irreps("4x0e"), gate=torch.nn.functional.silu,
        atomic_energies=np.zeros(2), avg_num_neighbors=6.0, atomic_numbers=[1, 8], correlation=2,
        radial_type="bessel", atomic_inter_scale=1.0, atomic_inter_shift=0.0,
    )
    return model.to(torch.float64)


def model_specs(which: str, workdir: Path) -> tuple[list[tuple[str, object]], list[str], list[str]]:
    """(name, spec) from nvalchemi's own model classes; a line per class made or left out, with
    the reason; and the failures: a class whose package is in the environment must be made."""
    specs: list[tuple[str, object]] = []
    notes: list[str] = []
    failures: list[str] = []

    def attempt(label: str, build) -> None:
        try:
            made = build()
        except Exception:  # noqa: BLE001 - a failure of this model, the others go on
            failures.append(f"nvalchemi's {label} wrapper could not be made:\n{traceback.format_exc()}")
            return
        specs.extend(made)
        notes.append(f"model {label}: instantiated (small, random weights): {', '.join(n for n, _ in made)}")

    if which == "mace":
        os.environ.setdefault("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")  # mace-torch under torch >= 2.6

        def mace():
            from nvalchemi.models.mace import MACEWrapper, _mace_cueq_spec

            wrapper = MACEWrapper(tiny_mace())
            # A cuEquivariance-converted model needs cuequivariance's CUDA ops; its spec is the
            # cueq base spec (declared by op name) with the same per-checkpoint adapters.
            return [("model_mace", wrapper.distribution_spec()),
                    ("model_mace_cueq_base", _mace_cueq_spec())]
        attempt("MACE", mace)
        return specs, notes, failures

    from nvalchemi.distributed.config import StrategyKind

    def lj():
        from nvalchemi.models.lj import LennardJonesModelWrapper
        return [("model_lj", LennardJonesModelWrapper(epsilon=0.0104, sigma=3.4, cutoff=8.5).distribution_spec())]

    def ewald():
        from nvalchemi.models.ewald import EwaldModelWrapper
        m = EwaldModelWrapper(cutoff=9.0)
        return [("model_ewald_halo", m.distribution_spec()),
                ("model_ewald_gp", m.distribution_spec(StrategyKind.GRAPH_PARTITION)),
                ("model_ewald_slab_halo", EwaldModelWrapper(cutoff=9.0, slab_correction=True).distribution_spec())]

    def pme():
        from nvalchemi.models.pme import PMEModelWrapper
        m = PMEModelWrapper(cutoff=9.0, mesh_spacing=1.0)
        return [("model_pme_halo", m.distribution_spec()),
                ("model_pme_gp", m.distribution_spec(StrategyKind.GRAPH_PARTITION))]

    def dftd3():
        from nvalchemi.models.dftd3 import DFTD3ModelWrapper
        m = DFTD3ModelWrapper(a1=0.4, a2=4.8, s8=0.8, auto_download=False, param_file=tiny_dftd3_params(workdir))
        return [("model_dftd3", m.distribution_spec())]

    def aimnet2():
        from nvalchemi.models.aimnet2 import AIMNet2Wrapper
        return [("model_aimnet2", AIMNet2Wrapper(tiny_aimnet2()).distribution_spec())]

    for label, build in (("LJ", lj), ("Ewald", ewald), ("PME", pme), ("DFTD3", dftd3), ("AIMNet2", aimnet2)):
        attempt(label, build)
    notes.append("model UMA: not instantiated: fairchem-core, which UMAWrapper needs, pins a torch other "
                 "than the environment's; its wheel-written specs are among the golden files")
    notes.append("model MACE: checked by the separate MACE run (mace-torch pins e3nn 0.4.4)")
    return specs, notes, failures


# ------------------------------------------------------------------ the checks


def check_case(case: Case, tool: str, outdir: Path, ops: StandInOps) -> list[str]:
    from nvalchemi.distributed.spec import MLIPSpec

    problems: list[str] = []
    original = case.path.read_bytes()
    r = subprocess.run([tool, "check", str(case.path)], capture_output=True)
    if r.returncode != 0:
        problems.append(f"distspec-spec check rejects it: {(r.stderr or r.stdout).decode(errors='replace').strip()}")
    r = subprocess.run([tool, "format", str(case.path)], capture_output=True)
    if r.returncode != 0:
        problems.append(f"distspec-spec format failed: {r.stderr.decode(errors='replace').strip()}")
        return problems
    written = r.stdout
    if written != original:
        problems.append(f"(a) format is not byte-identical: {byte_difference(original, written)}")
    rewritten = outdir / f"{case.name}.distspec.json"
    rewritten.write_bytes(written)

    def nvalchemi_load(data: bytes) -> dict:
        d = json.loads(data.decode("utf-8"))
        ops.ensure_for(d)
        return MLIPSpec.from_dict(d).to_dict()

    try:
        reference = nvalchemi_load(original)
    except Exception as e:  # noqa: BLE001
        problems.append(f"nvalchemi cannot load the file itself: {type(e).__name__}: {e}")
        return problems
    try:
        loaded = nvalchemi_load(written)
    except Exception as e:  # noqa: BLE001
        problems.append(f"(b) nvalchemi cannot load what distspec-spec wrote: {type(e).__name__}: {e}")
        return problems
    diff = first_difference(reference, loaded)
    if diff:
        problems.append(f"(b) nvalchemi loads what distspec-spec wrote as a different spec: {diff}")
    return problems


def run_in_env(args: argparse.Namespace) -> int:
    import warnings

    t0 = time.monotonic()
    workdir = Path(args.workdir).resolve()
    saved, rewritten = workdir / "saved", workdir / "rewritten"
    for d in (saved, rewritten):
        d.mkdir(parents=True, exist_ok=True)
        for f in d.glob("*.json"):
            f.unlink()
    tool = os.path.abspath(args.tool)
    if not os.access(tool, os.X_OK):
        print(f"FAIL: no distspec-spec at {os.path.relpath(tool)}")
        print("0 passed, 1 failed")
        return 1

    import nvalchemi
    import torch

    # Paths are printed relative to the working directory: logs name no folder of this machine.
    print(f"nvalchemi-toolkit {getattr(nvalchemi, '__version__', '?')}, torch {torch.__version__}, "
          f"python {sys.version.split()[0]} (the environment of {args.python_var})")
    ops = StandInOps()
    for err in ops.import_errors:
        print(f"note: op module not importable, its ops get stand-ins: {err}")

    cases: list[Case] = []
    made: list[tuple[str, object, str]] = []
    if args.models == "base":
        made += [(n, s, "api") for n, s in api_specs(workdir, ops)]
    with warnings.catch_warnings():  # deprecations of torch.jit and the like, from the models
        warnings.simplefilter("ignore")
        model_made, notes, failures_outside_cases = model_specs(args.models, workdir)
    made += [(n, s, "model") for n, s in model_made]
    for name, spec, origin in made:
        path = saved / f"{name}.json"
        with warnings.catch_warnings():  # graph_padder is not serialized: nvalchemi says so
            warnings.simplefilter("ignore")
            spec.save(path)  # nvalchemi's own writer: json.dumps(to_dict(), indent=2)
        cases.append(Case(name, path, origin))
    for folder in args.golden:
        for path in sorted(Path(folder).glob("*.json")):
            cases.append(Case(f"golden_{Path(folder).name}_{path.stem}", path, "golden"))

    for note in notes:
        print(note)
    if args.reference:
        for case in cases:
            ref = Path(args.reference) / case.path.name
            if case.origin == "model" and ref.is_file():
                same = ref.read_bytes() == case.path.read_bytes()
                print(f"note: {case.name} as saved now {'has the same bytes as' if same else 'DIFFERS from'} "
                      f"the wheel's {ref.name}")
    passed = failed = 0
    for case in cases:
        with warnings.catch_warnings():  # replacements that cannot resolve, as documented above
            warnings.simplefilter("ignore")
            problems = check_case(case, tool, rewritten, ops)
        if problems:
            failed += 1
            print(f"FAIL {case.origin:6} {case.name}  ({os.path.relpath(case.path)})")
            for p in problems:
                print(f"       {p}")
        else:
            passed += 1
            print(f"ok   {case.origin:6} {case.name}")
    for msg in failures_outside_cases:
        failed += 1
        print(f"FAIL {msg}")
    if ops.stand_ins:
        print(f"stand-in op schemas (extension not importable here): {', '.join(sorted(set(ops.stand_ins)))}")
    by_origin = {o: sum(1 for c in cases if c.origin == o) for o in ("api", "model", "golden")}
    print(f"\nnvalchemi interop ({args.models}): {len(cases)} specs "
          f"({by_origin['api']} from the API, {by_origin['model']} from model classes, "
          f"{by_origin['golden']} golden files), {passed} passed, {failed} failed "
          f"in {time.monotonic() - t0:.1f} s; files under {os.path.relpath(workdir)}")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 and passed > 0 else 1


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    if not args.in_env:
        return relaunch(args, argv)
    return run_in_env(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
