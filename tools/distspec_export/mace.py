"""nvalchemi's MACE (`nvalchemi.models.mace.MACEWrapper`) or a `mace.modules.MACE` model.

Two routes. By default (`--accelerate auto`, or `mace-kernels` by name) a model the fast forward
rebuilds (mace_kernels/model.py `why_unsupported`: MACE or ScaleShiftMACE, correlation <= 3,
l <= 3, RealAgnostic(Residual)InteractionBlock, a radial embedding of r alone) is exported as
DISTSPEC's fast MACE forward: node work on owned rows, one forward exchange per interaction after
the first, the `distspec_mace` ops for the convolution and the symmetric contraction where their
library loads (else mace's own modules, and the export says why); its check is held to the
splines' bound (SPLINE_TOLERANCE). Any other model, and `--accelerate none` or `oeq`, takes the
route below, mace's module traced whole; under `auto` the export says why in its output and in the
graph's metadata (`choices`).

MACE calls no halo op itself: under nvalchemi's compiled domain decomposition its graph pass
`compile_refresh.insert_halo_refresh` puts `halo_scatter_correct_static` after every
message-passing scatter (one per interaction: the scatter whose index comes from
`edge_index`). The same is done here:

1. the model is rebuilt without e3nn's TorchScript code generation (mace's own
   `extract_model` under `disable_e3nn_codegen`), since TorchScript knows no symbolic sizes;
   with the model's own dtype as torch's default, so that its weights load exactly (precision.py);
2. an energy-only graph of the contract's inputs is traced with make_fx: node attributes are
   the one-hot rows of MACE's atomic-number table for each species, every halo row carries
   its image coordinates (so the edge shifts are the exporter's zero `edge_shift`, whose
   gradient is mace's per-edge force and gives the per-atom virial), one system; the output is MACE's
   `node_energy`, the per-atom energy nvalchemi's wrapper calls `atomic_energies`;
3. nvalchemi's pass inserts the corrections, with the routing inputs named as it expects
   (`_halo_si`, `_halo_rd`, `_halo_rr`, `_halo_no`) and `world_size` 1 (DISTSPEC's kernels
   ignore it).

The exporter then differentiates that graph like any other energy function, and checks the
graph against MACE's own evaluation of the model as given (`package_evaluation`), not the
rebuild. The spec, when
none is given, is the wrapper's own `distribution_spec()`. A multi-head model (a foundation
model fine-tuned with mace's multihead fine-tuning, `heads` ["Default", "pt_head"] and the like)
is exported for one head, `--head NAME` (MACE's `data["head"]`, the same for every atom).

`--accelerate oeq`: each interaction's edge tensor product becomes OpenEquivariance's fused
convolution (`TensorProductConv`: gather of the sender rows, tensor product and scatter onto the
receivers in one kernel, no per-edge message tensor), built from the same irreps and instructions
(so the same path weights) and fed the same per-edge weights, as sevenn's OEQ convolution is.
mace-torch's own switch (`convert_e3nn_oeq`, 0.3.15) builds its config with `enabled=False`
and so gives back an e3nn model that calls a plain tensor product with the fused arguments.
nvalchemi's pass looks for aten scatters only; the fused kernel's scatter is inside the op, so
the correction goes after each `libtorch_tp_jit::jit_conv_forward` whose receivers come from
`edge_index` (`insert_fused_conv_corrections`), the same place the pass would put it.
"""

from __future__ import annotations

import copy
import dataclasses
import os
from typing import Any, Callable

import torch

from . import element_linears, ops, packages, precision
from .accelerators import Accelerator
from .adapted import Adapted, Reference
from .mace_kernels import model as fast_model
from .trace import ExportError, trace_symbolic

FUSED_CONV_OP = "libtorch_tp_jit::jit_conv_forward"
FUSED_CONV_ROWS = 6  # argument index of the receivers (OEQ's `rows`) in FUSED_CONV_OP's schema
ROUTING_NAMES = ("_halo_si", "_halo_rd", "_halo_rr", "_halo_no")  # nvalchemi's, in the correction's order
FAST_ACCELERATOR = "mace-kernels"  # accelerators.py: the fast forward with the distspec_mace ops
WHOLE_MODULE = "mace's module traced whole, nvalchemi's scatter corrections"
# The check's bound (relative to max(1, |reference|)) where the radial MLP is splines of r: the
# spline's own error, not arithmetic's (doc/mace_kernels.md).
SPLINE_TOLERANCE = 1e-4


def _mace_model(model: Any) -> tuple[torch.nn.Module, Any]:
    """(the MACE module, nvalchemi's wrapper or None)."""
    inner = getattr(model, "model", None)
    if type(model).__name__ == "MACEWrapper" and isinstance(inner, torch.nn.Module):
        return inner, model
    return model, None


def _rebuild_without_codegen(model: torch.nn.Module) -> torch.nn.Module:
    """The model rebuilt from its configuration, in its own dtype, with its weights exactly
    (precision.py: built under float32, an fp64 model's weights are rounded on load)."""
    from mace.tools.compile import disable_e3nn_codegen  # noqa: PLC0415
    from mace.tools.scripts_utils import extract_model  # noqa: PLC0415

    try:
        with disable_e3nn_codegen(), precision.default_dtype(precision.model_dtype(model)):
            rebuilt = extract_model(model)
    except Exception as e:  # noqa: BLE001
        raise ExportError(f"cannot rebuild the MACE model {type(model).__name__} without e3nn's TorchScript code "
                          f"generation (mace.tools.scripts_utils.extract_model): {type(e).__name__}: {e}") from e
    precision.require_same_weights(model, rebuilt, "rebuilding the MACE model (mace.tools.scripts_utils.extract_model)")
    return rebuilt


class _FusedConvolution(torch.nn.Module):
    """OpenEquivariance's fused convolution with the call of mace's fused interactions:
    (node_feats, edge_attrs, tp_weights, edge_index), edge_index rows (sender, receiver)."""

    def __init__(self, tp: torch.nn.Module, dtype: torch.dtype):
        super().__init__()
        import openequivariance as oeq  # noqa: PLC0415

        def problem(path_weights):
            instructions = [(i.i_in1, i.i_in2, i.i_out, i.connection_mode, i.has_weight, w)
                            for i, w in zip(tp.instructions, path_weights)]
            return oeq.TPProblem(tp.irreps_in1, tp.irreps_in2, tp.irreps_out, instructions,
                                 shared_weights=False, internal_weights=False,
                                 irrep_dtype=oeq.torch_to_oeq_dtype(dtype), weight_dtype=oeq.torch_to_oeq_dtype(dtype))

        # e3nn keeps only each path's final coefficient, sqrt(normalisation * path weight); the
        # problem built with unit path weights gives the normalisation, hence the path weights.
        unit = problem([1.0] * len(tp.instructions))
        weights = [(i.path_weight / u.path_weight) ** 2 for i, u in zip(tp.instructions, unit.instructions)]
        self.conv = oeq.TensorProductConv(problem(weights), deterministic=False)
        self.weight_numel = tp.weight_numel

    def forward(self, node_feats, edge_attrs, tp_weights, edge_index):
        return self.conv(node_feats, edge_attrs, tp_weights, edge_index[1], edge_index[0])


def _with_oeq_convolutions(model: torch.nn.Module, dtype: torch.dtype) -> torch.nn.Module:
    try:
        import openequivariance  # noqa: F401, PLC0415
    except Exception as e:  # noqa: BLE001
        raise ExportError("--accelerate oeq: openequivariance does not import here (build it against this torch "
                          f"with scripts/build_openequivariance.sh and put OUT/site on PYTHONPATH): {e}") from e
    for k, interaction in enumerate(model.interactions):
        tp = getattr(interaction, "conv_tp", None)
        if tp is None or not hasattr(tp, "instructions") or getattr(tp, "shared_weights", True):
            raise ExportError(f"--accelerate oeq: interaction {k} ({type(interaction).__name__}) has no e3nn "
                              "tensor product with per-edge weights (conv_tp) to replace; export it with "
                              "--accelerate none")
        interaction.conv_tp = _FusedConvolution(tp, dtype).to(next(model.parameters()).device)
        interaction.conv_fusion = "atomic"  # mace's interactions then call conv_tp(..., edge_index)
    return model


def _placeholder(gm: torch.fx.GraphModule, name: str):
    return next((n for n in gm.graph.nodes if n.op == "placeholder" and name in n.name), None)


def _reaches(node, target, seen=None) -> bool:
    seen = set() if seen is None else seen
    if node is target:
        return True
    if not isinstance(node, torch.fx.Node) or node in seen:
        return False
    seen.add(node)
    return any(_reaches(a, target, seen) for a in node.all_input_nodes)


def insert_fused_conv_corrections(gm: torch.fx.GraphModule, correction_op, op: str = FUSED_CONV_OP) -> list[str]:
    """Put `correction_op(out, si, rd, rr, no, 1)` after every call of the fused convolution `op`
    whose receivers come from the `edge_index` input; the names of the calls corrected."""
    edge_index = _placeholder(gm, "edge_index")
    routing = [_placeholder(gm, name) for name in ROUTING_NAMES]
    if edge_index is None or None in routing:
        raise ExportError(f"the MACE energy graph lacks the inputs edge_index and {', '.join(ROUTING_NAMES)}")
    sites = []
    for node in list(gm.graph.nodes):
        target = node.target
        if node.op != "call_function" or not isinstance(target, torch._ops.OpOverload):
            continue
        if f"{target.namespace}::{target._opname}" != op or not _reaches(node.args[FUSED_CONV_ROWS], edge_index):
            continue
        with gm.graph.inserting_after(node):
            new = gm.graph.call_function(correction_op, args=(node, *routing, 1))
        node.replace_all_uses_with(new)
        new.update_arg(0, node)
        sites.append(node.name)
    if sites:
        gm.graph.lint()
        gm.recompile()
    return sites


def _head_index(mace_model: torch.nn.Module, head: str | None) -> int:
    """The index of `head` in the model's heads; a model of several needs one named."""
    heads = [str(h) for h in getattr(mace_model, "heads", None) or ["Default"]]
    if head is None:
        if len(heads) > 1:
            raise ExportError(f"the MACE model has {len(heads)} heads ({', '.join(heads)}): choose the one to export "
                              "with --head NAME")
        return 0
    if head not in heads:
        raise ExportError(f"--head {head}: the MACE model's heads are {', '.join(heads)}")
    return heads.index(head)


def package_evaluation(original: Callable[[], Any], elements: list[str], head_index: int,
                       dtype: torch.dtype) -> Reference:
    """MACE's own evaluation of the model as given (`original()`, cast to the export's dtype as
    mace's calculator casts it): MACE's neighbour list (`mace.data.neighborhood.get_neighborhood`)
    of the example's periodic crystal within r_max, images as edge shifts, no halo; forces from
    its own autograd."""
    cache: dict[str, torch.nn.Module] = {}

    def evaluate(example) -> tuple[torch.Tensor, torch.Tensor]:
        from ase.data import atomic_numbers as z_of  # noqa: PLC0415
        from mace.data.neighborhood import get_neighborhood  # noqa: PLC0415

        if "model" not in cache:
            # A copy: `.to` casts in place, and the model given is the user's.
            cache["model"] = copy.deepcopy(_mace_model(original())[0]).to(dtype).eval()
        model = cache["model"]
        n = example.n_owned
        positions = example.inputs[0][:n].detach().to("cpu", torch.float64)
        edge_index, shifts, unit_shifts, cell = get_neighborhood(
            positions.numpy(), cutoff=float(model.r_max), pbc=(True, True, True), cell=example.cell.numpy())
        table = [int(z) for z in model.atomic_numbers.tolist()]
        index = torch.tensor([table.index(z_of[elements[s]]) for s in example.inputs[1][:n].tolist()],
                             dtype=torch.int64)
        data = {
            "positions": positions.to(dtype),
            "node_attrs": torch.nn.functional.one_hot(index, len(table)).to(dtype),
            "edge_index": torch.as_tensor(edge_index, dtype=torch.int64),
            "shifts": torch.as_tensor(shifts).to(dtype),
            "unit_shifts": torch.as_tensor(unit_shifts).to(dtype),
            "cell": torch.as_tensor(cell).to(dtype).reshape(1, 3, 3),
            "batch": torch.zeros(n, dtype=torch.int64),
            "ptr": torch.tensor([0, n]),
            "head": torch.tensor([head_index]),
        }
        with torch.enable_grad():
            out = model(data, training=False, compute_force=True)
        return out["node_energy"].detach(), out["forces"].detach()

    return Reference("MACE's own evaluation of the model as given (mace's neighbour list, edge shifts, no halo)",
                     evaluate)


def adapt(model: Any, elements: list[str], cutoff: float, dtype: torch.dtype, example,
          accelerator: Accelerator | None = None, head: str | None = None,
          original: Callable[[], Any] | None = None, accelerator_optional: bool = False) -> Adapted:
    """original: the model as the user gave it (its file loaded afresh), for the check's reference;
    None: `model`, which this leaves as it is. accelerator_optional: the accelerator is the kind's
    default (--accelerate auto): where the model or the process cannot use it, the export goes on
    without it and says why (Adapted.declined_accelerator) instead of stopping."""
    os.environ.setdefault("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")  # mace-torch under torch >= 2.6
    if not ops.have_nvalchemi():
        ops.define_standalone_ops()  # before compile_refresh, which defines halo_keepalive if missing
    try:
        from ase.data import atomic_numbers as z_of  # noqa: PLC0415 (mace-torch depends on ase)
        from nvalchemi.distributed.compile_refresh import insert_halo_refresh  # noqa: PLC0415
    except ImportError as e:
        raise packages.missing("exporting MACE", "mace-torch", e) from e
    mace_model, wrapper = _mace_model(model)
    if not hasattr(mace_model, "atomic_numbers") or not hasattr(mace_model, "interactions"):
        raise ExportError(f"{type(model).__name__} is not a MACE model (no atomic_numbers / interactions)")
    r_max = float(mace_model.r_max)
    if cutoff < r_max - 1e-9:
        raise ExportError(f"cutoff {cutoff} is below the MACE model's r_max {r_max}; use --cutoff {r_max:g}")
    head_index = _head_index(mace_model, head)
    table_z = [int(z) for z in mace_model.atomic_numbers.tolist()]
    unknown = [e for e in elements if z_of.get(e) not in table_z]
    if unknown:
        names = [k for k, v in z_of.items() if v in table_z]
        raise ExportError(f"elements {unknown} are not in the MACE model's table of atomic numbers {table_z} "
                          f"({', '.join(names)})")

    def spec():
        own = wrapper.distribution_spec() if wrapper is not None else None
        if own is None:
            from nvalchemi.models.mace import MACEWrapper  # noqa: PLC0415

            own = MACEWrapper(mace_model).distribution_spec()
        return own

    # Rebuilt from its configuration, the model is on the cpu: it and its element table go where
    # the graph runs (the example inputs' device, --device).
    device = example.inputs[0].device
    reference = package_evaluation(original or (lambda: model), elements, head_index, dtype)
    declined = ""
    if accelerator is not None and accelerator.key == FAST_ACCELERATOR:
        why = fast_model.why_unsupported(mace_model)
        if not why:
            element_rows = [table_z.index(z_of[e]) for e in elements]
            return _fast(mace_model, element_rows, head_index, dtype, device, reference, accelerator_optional)
        if not accelerator_optional:
            raise ExportError(f"--accelerate {FAST_ACCELERATOR}: the fast MACE forward does not rebuild this model: "
                              f"{why}; export it with --accelerate none (mace's module traced whole)")
        declined = f"the fast MACE forward does not rebuild this model: {why}"
        accelerator = None
    rebuilt = _rebuild_without_codegen(mace_model).to(device=device, dtype=dtype).eval()
    if accelerator is not None and accelerator.key == "oeq":
        rebuilt = _with_oeq_convolutions(rebuilt, dtype)
    for p in rebuilt.parameters():
        p.requires_grad_(False)
    rebuilt = element_linears.fold(rebuilt, "mace", [table_z.index(z_of[e]) for e in elements])
    one_hot = torch.zeros(len(elements), len(table_z), dtype=dtype, device=device)
    for species, element in enumerate(elements):
        one_hot[species, table_z.index(z_of[element])] = 1.0

    # Every row's node updates: MACE's forward runs its interactions, products and readouts in one
    # loop of its own, and nvalchemi's correction after each message scatter keeps the halo rows
    # valid for the next layer's gather; computing owned rows only would mean writing that forward
    # again here. The exporter's force function sums the owned rows' energies (a slice).
    def energy(positions, species, edge_index, _halo_no, _halo_si, _halo_rd, _halo_rr, edge_shift):
        n_rows = positions.shape[0]
        data = {
            "positions": positions,
            "node_attrs": one_hot.index_select(0, species),
            "edge_index": edge_index,
            # MACE's edge vector is the receiver's row minus the sender's plus the shift, the
            # contract's edge_shift (zero) is added to the sender's minus the receiver's.
            "shifts": -edge_shift,
            "batch": torch.zeros(n_rows, dtype=torch.int64, device=positions.device),
            "ptr": torch.arange(2, device=positions.device) * n_rows,
            "cell": torch.zeros(1, 3, 3, dtype=positions.dtype, device=positions.device),
            "head": torch.full((1,), head_index, dtype=torch.int64, device=positions.device),
        }
        return rebuilt(data, compute_force=False)["node_energy"].to(positions.dtype)

    try:
        shift = torch.zeros(example.inputs[2].shape[1], 3, dtype=dtype, device=device)
        energy_graph = trace_symbolic(energy, (*example.inputs, shift))
    except Exception as e:  # noqa: BLE001
        raise ExportError(f"tracing the MACE energy failed: {type(e).__name__}: {e}") from e
    correction = torch.ops.nvalchemi.halo_scatter_correct_static.default
    report = insert_halo_refresh(energy_graph, correction_op=correction, world_size=1)
    fused = insert_fused_conv_corrections(energy_graph, correction)
    layers = len(mace_model.interactions)
    if report.n_sites + len(fused) != layers:
        raise ExportError(f"the halo corrections found {report.n_sites} message-passing scatters and {len(fused)} "
                          f"fused convolutions in the MACE graph, expected one per interaction ({layers}): {report}")
    heads = list(getattr(mace_model, "heads", None) or [])
    head_note = f", head {heads[head_index]}" if len(heads) > 1 else ""
    return Adapted(energy_graph, "mace",
                   f"MACE ({type(mace_model).__name__}, {layers} interactions, r_max {r_max:g}{head_note})",
                   f"{type(mace_model).__module__}.{type(mace_model).__qualname__}", spec=spec,
                   message_passing_layers=layers, units="metal", reference=reference,
                   choices={"forward": WHOLE_MODULE, **({"why_not_fast": declined} if declined else {})},
                   declined_accelerator=declined)


def _fast(mace_model: torch.nn.Module, element_rows: list[int], head_index: int, dtype: torch.dtype, device,
          reference: Reference, optional: bool) -> Adapted:
    """The fast forward (mace_kernels/model.py) of a model it rebuilds, with the distspec_mace ops
    where their library loads; without them (optional: the default accelerator) mace's modules."""
    rebuilt = _rebuild_without_codegen(mace_model).to(dtype=dtype).eval()
    for p in rebuilt.parameters():
        p.requires_grad_(False)
    fast, record = fast_model.build(rebuilt, element_rows, head_index, dtype)
    declined = record.get("why_not_ops", "")
    if declined and not optional:
        raise ExportError(f"--accelerate {FAST_ACCELERATOR}: {declined}")
    if declined:
        declined = f"the distspec_mace ops are not used ({declined}): the fast forward calls mace-torch's modules"
    else:
        reference = dataclasses.replace(reference, tolerance=SPLINE_TOLERANCE)
        record["check_tolerance"] = SPLINE_TOLERANCE
    layers = len(mace_model.interactions)
    heads = list(getattr(mace_model, "heads", None) or [])
    head_note = f", head {heads[head_index]}" if len(heads) > 1 else ""
    from .sevennet import spec as gather_only_spec  # noqa: PLC0415 (nvalchemi's spec of a gather-only MPNN)

    return Adapted(fast.to(device), "mace",
                   f"MACE ({type(mace_model).__name__}, {layers} interactions, r_max {float(mace_model.r_max):g}"
                   f"{head_note}, DISTSPEC's fast forward)",
                   f"{type(mace_model).__module__}.{type(mace_model).__qualname__}",
                   spec=gather_only_spec if ops.have_nvalchemi() else None, message_passing_layers=layers,
                   units="metal", reference=reference, choices=record, declined_accelerator=declined)
