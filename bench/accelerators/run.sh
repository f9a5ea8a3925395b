#!/usr/bin/env bash
# A trained-size equivariant model through `pair_style distspec device cuda`, per accelerator
# (none: e3nn's tensor products; oeq: OpenEquivariance's fused convolution; mace-kernels, MACE
# only: DISTSPEC's fast MACE forward with its distspec_mace ops, doc/mace_kernels.md; each bound
# through the spec's op adapters): the forces of 512 rattled Si atoms of each export against the
# model's own evaluation on the cpu and 2 ranks sharing the GPU against 1, then seconds per step and
# peak GPU memory from 10 648 atoms to the largest size that fits.
#
#   bench/accelerators/run.sh                      SevenNet-0 (reference: SevenNet's calculator, ref.py)
#   BENCH_MODEL=mace bench/accelerators/run.sh     MACE-MP-0 medium's architecture, random weights
#                                                  (mace_mp0_medium.py; reference: mace-torch's calculator)
#
# A model file already in BENCH_OUT/model (${stem}_ACC.json: 7net0_ACC.json, mace_ACC.json, with its
# graph and spec beside it) is used as it is, not exported again. The GPU machine has no mace-torch,
# so for MACE export every accelerator's model beforehand, on a machine with mace-torch and the GPU
# machine's torch version (2.11.0: a TorchScript file saved by a newer torch may not load in an older
# LibTorch), with the command the loop below runs but for the format and device (for mace-kernels,
# DISTSPEC_MACE_OPS_LIBRARY names a libdistspec_mace_ops.so built against that torch):
#   python tools/distspec-export --module bench/accelerators/mace_mp0_medium.py:build --module-args '{}' \
#     --elements Si --cutoff 6.0 --units metal --precision fp32 --no-check --accelerate mace-kernels \
#     --format torchscript --out BENCH_OUT/model --name mace_mace-kernels
# (TorchScript runs on the device LAMMPS gives it; `--format aoti --device cuda` needs that torch on a
# machine with a GPU; oeq's export needs a GPU and OpenEquivariance.) The reference, mace-torch's
# calculator, then cannot run on the GPU machine: run.sh says so, and it is made where mace-torch is,
# `python bench/accelerators/mace_mp0_medium.py ref BENCH_OUT/forces.ACC.1 BENCH_OUT/forces.ref --args
# '{}'` (the same --module-args), before `report.py BENCH_OUT "ACCELERATORS" mace` again. The plugin
# finds libdistspec_mace_ops.so beside itself (scripts/pack_gpu_torch_run.sh packs it there).
#
# Environment:
#   DISTSPEC_LMP, DISTSPEC_PLUGIN  lmp and a libdistspec.so with CUDA and torch (scripts/gpu_build.sh)
#   DISTSPEC_PYTHON         a Python with torch and sevenn (or mace-torch), and for oeq OpenEquivariance
#                           (scripts/build_openequivariance.sh; OUT/site on PYTHONPATH)
#   DISTSPEC_OPENEQUIVARIANCE_LIBRARY  the library the plugin loads for oeq graphs
#   DISTSPEC_SPECS          where nvalchemi does not import: the folder with sevennet.spec.json / mace.spec.json
#   BENCH_ACCELERATORS ("none oeq"; MACE "mace-kernels oeq"), BENCH_CELLS_none ("11 17"),
#   BENCH_CELLS_oeq, BENCH_CELLS_mace_kernels ("11 17 23 25 30"),
#   BENCH_STEPS (5), BENCH_OUT (build/bench/accelerators[/mace])
#   BENCH_MACE_ARGS         build()'s arguments for the MACE, a JSON object (e.g. '{"inter_scale": 3000}'),
#                           given to the export and to the reference alike
#   BENCH_TIMING_CELLS      sizes rerun with `timing yes` for DISTSPEC's breakdown of the step ("11")
#   BENCH_EXPORT_ARGS       more options of distspec-export (e.g. --no-radial-spline), split at spaces
#   BENCH_EXPORT_CHECK      1: the exports run their check against the eager model on the GPU
#   BENCH_OWN_CALL          1: also SevenNet's own model call (sevennet_model_call.py) into
#                           model_call.log, which results.py puts beside DISTSPEC's rows
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
lmp=${DISTSPEC_LMP:-lmp}
plugin=${DISTSPEC_PLUGIN:?set DISTSPEC_PLUGIN to a libdistspec.so built with CUDA and torch}
python=${DISTSPEC_PYTHON:-${DISTSPEC_PYTHON_SEVENN:-python3}}
steps=${BENCH_STEPS:-5}
model=${BENCH_MODEL:-sevennet}
# known: the accelerators distspec-export's --accelerate builds the model with.
case $model in
  sevennet) stem=7net0 cutoff=5.0 folder= known="none oeq" default_accelerators="none oeq"
            source=(--module distspec_export.sevennet:checkpoint --module-args '{"name": "7net-0"}')
            reference=("$here/ref.py") ;;
  mace)     stem=mace cutoff=6.0 folder=/mace mace_args=${BENCH_MACE_ARGS:-"{}"}
            known="none oeq mace-kernels" default_accelerators="mace-kernels oeq"
            source=(--module "$here/mace_mp0_medium.py:build" --module-args "$mace_args")
            reference=("$here/mace_mp0_medium.py" ref --args "$mace_args") ;;
  *) echo "BENCH_MODEL=$model: expected sevennet or mace" >&2; exit 2 ;;
esac
accelerators=${BENCH_ACCELERATORS:-$default_accelerators}
for acc in $accelerators; do
  [[ " $known " == *" $acc "* ]] || {
    echo "BENCH_ACCELERATORS: '$acc' is not an accelerator of BENCH_MODEL=$model; expected some of: $known" >&2
    exit 2; }
done
out=$(realpath -m "${BENCH_OUT:-$repo/build/bench/accelerators$folder}")
mkdir -p "$out/model"
export LD_LIBRARY_PATH="$(cd "$(dirname "$plugin")" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
plugin_name=$(basename "$plugin")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
start=$(date +%s)
say() { echo "bench [$(( $(date +%s) - start )) s]: $*" >&2; }
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null || echo "no nvidia-smi"
  "$python" -c 'import torch; print("torch", torch.__version__)'; } > "$out/machine.txt"

for acc in $accelerators; do
  [ -f "$out/model/${stem}_$acc.json" ] && { say "using $out/model/${stem}_$acc.json as it is"; continue; }
  say "exporting $model for cuda, --accelerate $acc"
  spec=()
  [ -n "${DISTSPEC_SPECS:-}" ] && spec=(--spec "$DISTSPEC_SPECS/$model.spec.json")
  export_cmd=("$python" "$repo/tools/distspec-export" "${source[@]}" "${spec[@]}" --elements Si --cutoff "$cutoff"
    --units metal --precision fp32 --device cuda --accelerate "$acc" --out "$out/model" --name "${stem}_$acc"
    ${BENCH_EXPORT_ARGS:-})
  # BENCH_EXPORT_CHECK=1: the export runs its check on the GPU (the graph against the eager model);
  # where the check fails, its message stays in export.ACC.check.log. Where it could not run the
  # package in Python at all (a crash there, which the exporter reports), the files it wrote are
  # kept (this script's force checks compare them with the model's own calculator); after any
  # other failure the export is made again without the check, so that the timings still run.
  if [ "${BENCH_EXPORT_CHECK:-0}" = 1 ]; then
    "${export_cmd[@]}" > "$out/export.$acc.check.log" 2>&1 && cp "$out/export.$acc.check.log" "$out/export.$acc.log" || {
      say "the checked export failed (export.$acc.check.log):"; tail -3 "$out/export.$acc.check.log" >&2
      if grep -q "cannot run the AOTInductor package in Python" "$out/export.$acc.check.log" &&
        [ -f "$out/model/${stem}_$acc.json" ]; then
        cp "$out/export.$acc.check.log" "$out/export.$acc.log"
      else
        rm -f "$out/model/${stem}_$acc".*
      fi; }
  fi
  [ -f "$out/model/${stem}_$acc.json" ] || "${export_cmd[@]}" --no-check > "$out/export.$acc.log" 2>&1 || {
    tail -20 "$out/export.$acc.log" >&2
    [ "$model" = mace ] && echo "run.sh: without mace-torch here, export mace_$acc.json where it is and place it in" \
      "$out/model beforehand (run.sh's header says how)" >&2
    exit 1; }
  grep -E "^wrote|accelerator ops|times" "$out/export.$acc.log" >&2
done

lammps() {  # ranks log input vars...
  local np=$1 log=$2 input=$3; shift 3
  (cd "$out" && mpirun --oversubscribe -np "$np" "$lmp" -in "$input" -log "$log" -screen none -var plugin "$plugin_name" "$@")
}
for acc in $accelerators; do
  say "forces on 512 atoms: $acc, 1 and 2 ranks sharing the GPU"
  lammps 1 "log.check.$acc.1" "$here/in.forces" -var model "model/${stem}_$acc.json" -var device cuda -var tag "$acc.1"
  lammps 2 "log.check.$acc.2" "$here/in.forces" -var model "model/${stem}_$acc.json" -var device cuda -var tag "$acc.2"
done
say "reference: $model's own calculator on the cpu, on the same 512 atoms"
first=${accelerators%% *}
[ -f "$out/forces.ref" ] || "$python" "${reference[@]}" "$out/forces.$first.1" "$out/forces.ref" >&2 \
  || say "no reference (${reference[*]} failed)"

timed() {  # accelerator n [timing]
  local log=log.$1.$2${3:+.timing} sampler status=0
  say "$1, $((8 * $2 * $2 * $2)) atoms${3:+, timing yes}"
  nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 100 > "$out/memory.$1.$2${3:+.timing}" 2>/dev/null &
  sampler=$!
  lammps 1 "$log" "$repo/bench/sevennet_cpu/in.bench" -var model "model/${stem}_$1.json" -var n "$2" \
    -var steps "$steps" -var device cuda -var timing "${3:-no}" || status=1
  kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null
  [ $status = 0 ] || { say "$log: LAMMPS stopped"; grep -m1 ERROR "$out/$log" >&2; }
  return $status
}
for acc in $accelerators; do
  var=BENCH_CELLS_${acc//-/_}  # a variable's name has no '-' (mace-kernels: BENCH_CELLS_mace_kernels)
  default="11 17"; [ "$acc" = none ] || default="11 17 23 25 30"
  for n in ${!var:-$default}; do timed "$acc" "$n" || break; done
  for n in ${BENCH_TIMING_CELLS-11}; do timed "$acc" "$n" yes || break; done
done
# For results.py (results.csv): what this folder holds, and with BENCH_OWN_CALL=1 (SevenNet) the
# model's own call on the same GPU and crystals (model_call.log).
case $model in
  sevennet) label=SevenNet-0 own="SevenNet's model call" ;;
  mace) label="MACE (MACE-MP-0 medium architecture)" own="mace-torch's model call" ;;
esac
printf 'model=%s\naccelerators=%s\nown_call=%s\n' "$label" "$accelerators" "$own" > "$out/meta"
if [ "${BENCH_OWN_CALL:-0}" = 1 ] && [ "$model" = sevennet ]; then
  say "SevenNet's own model call"
  "$python" "$here/sevennet_model_call.py" --accelerators e3nn oeq --cells ${BENCH_CELLS_oeq:-11 17} \
    > "$out/model_call.log" 2>&1 || say "SevenNet's own call stopped (model_call.log)"
fi
"$python" "$here/report.py" "$out" "$accelerators" "$model" | tee "$out/table.md"
