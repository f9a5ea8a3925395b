#!/usr/bin/env bash
# NequIP (NequIP-OAM-L's architecture, nequip_oam_l.py) and Allegro (Allegro-OAM-L's size,
# allegro_published.py), random weights, through `pair_style distspec device cuda`, beside
# nequip's own fastest compiled call on the same GPU, in one job:
#
#   bench/accelerators/nequip_run.sh [--dry-run] [prepare|bench|all]      (default all)
#     prepare  per model: the checkpoint, DISTSPEC's export (`--from nequip`; NequIP with
#              `--accelerate oeq`, nequip's own enable_OpenEquivariance; Allegro plain: its Triton
#              kernel is an op the plugin has no registration of) and nequip-compile's AOTInductor
#              package with nequip's accelerations (NequIP: OpenEquivariance; Allegro: its Triton
#              contracter), all at once; each is kept in BENCH_OUT and skipped when there, so a
#              call that ran out of time resumes.
#     bench    per model: the forces of 512 rattled Si atoms on 1 rank and on 2 ranks sharing
#              the GPU against nequip's eager evaluation; seconds per step and peak GPU memory
#              (nvidia-smi) per size until one does not fit; nequip's compiled call on the same
#              crystals (nequip_model_call.py); then BENCH_OUT/results.csv (results.py, replaced)
#              and BENCH_OUT/table.md.
#     --dry-run  the same on the CPU at 64 and 216 atoms with the builders' tiny models (the same
#              modules and elements; TorchScript graphs checked by the exporter against nequip's
#              own evaluation, no accelerator, nequip's eager call in place of its compiled one):
#              finds a bug of this script before GPU time is spent.
#
# Environment:
#   DISTSPEC_LMP, DISTSPEC_PLUGIN  lmp and a libdistspec.so with torch (and CUDA: scripts/gpu_build.sh)
#   DISTSPEC_PYTHON         a Python with torch, nequip, nequip-allegro and ase; for oeq the
#                           OpenEquivariance package (scripts/build_openequivariance.sh; OUT/site on PYTHONPATH)
#   DISTSPEC_OPENEQUIVARIANCE_LIBRARY  the library the plugin loads for oeq graphs
#   DISTSPEC_SPECS          where nvalchemi does not import: the folder with sevennet.spec.json
#                           (bench/sevennet_gpu/specs.py), the halo spec NequIP's export takes
#   BENCH_MODELS ("nequip allegro"), BENCH_CELLS_nequip ("11 17 20 22"), BENCH_CELLS_allegro
#   ("8 11 14 17"), BENCH_STEPS (5), BENCH_OUT (build/bench/nequip, or build/bench/nequip-dry),
#   BENCH_COMMIT (the commit results.csv names; default git's HEAD, where the checkout has .git)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
dry=0 stage=all
for arg in "$@"; do
  case $arg in
    --dry-run) dry=1 ;;
    prepare|bench|all) stage=$arg ;;
    *) echo "nequip_run.sh: unknown argument '$arg' (expected --dry-run, prepare, bench or all)" >&2; exit 2 ;;
  esac
done
python=${DISTSPEC_PYTHON:-${DISTSPEC_PYTHON_NEQUIP:-python3}}
models=${BENCH_MODELS:-nequip allegro}
steps=${BENCH_STEPS:-5}
if [ $dry = 1 ]; then
  device=cpu format=torchscript check=() out=$(realpath -m "${BENCH_OUT:-$repo/build/bench/nequip-dry}")
else
  device=cuda format=aoti check=(--no-check) out=$(realpath -m "${BENCH_OUT:-$repo/build/bench/nequip}")
fi
mkdir -p "$out"
start=$(date +%s)
say() { echo "nequip_run [$(( $(date +%s) - start )) s]: $*" >&2; }

# model NAME: what each model is built, exported, compiled and sized with.
model() {
  case $1 in
    nequip) builder=nequip_oam_l.py label="NequIP (NequIP-OAM-L architecture)" acc=oeq
            modifiers=enable_OpenEquivariance call="nequip AOTInductor + OpenEquivariance" cells="11 17 20 22" ;;
    allegro) builder=allegro_published.py label="Allegro (Allegro-OAM-L size)" acc=none
             modifiers=enable_TritonContracter call="nequip AOTInductor + Triton TP" cells="8 11 14 17" ;;
    *) echo "nequip_run.sh: BENCH_MODELS names '$1': expected nequip or allegro" >&2; exit 2 ;;
  esac
  local var=BENCH_CELLS_$1
  cells=${!var:-$cells}
  check_cells=4
  if [ $dry = 1 ]; then acc=none modifiers= call="nequip eager (cpu)" cells="2 3" check_cells=2; fi
  dir=$out/$1
}

prepare() {  # NAME: checkpoint, then the export and nequip-compile side by side
  model "$1"
  mkdir -p "$dir/model"
  local size=()
  [ $dry = 1 ] && size=(--args '{"tiny": true}')
  [ -f "$dir/model.ckpt" ] || "$python" "$here/$builder" save "$dir/model.ckpt" "${size[@]}" > "$dir/build.log" 2>&1 ||
    { tail -20 "$dir/build.log" >&2; return 1; }
  local pids=() spec=()
  [ -n "${DISTSPEC_SPECS:-}" ] && spec=(--spec "$DISTSPEC_SPECS/sevennet.spec.json")
  if [ ! -f "$dir/model/$1_$acc.json" ]; then
    "$python" "$repo/tools/distspec-export" --from nequip "$dir/model.ckpt" "${spec[@]}" --elements Si \
      --units metal --precision fp32 --device "$device" --format "$format" "${check[@]}" --accelerate "$acc" \
      --out "$dir/model" --name "$1_$acc" > "$dir/export.log" 2>&1 &
    pids+=($!)
  fi
  if [ $dry = 0 ] && [ ! -f "$dir/model/$1.nequip.pt2" ]; then
    "$python" "$here/nequip_model_call.py" compile "$dir/model.ckpt" "$dir/model/$1.nequip.pt2" --device "$device" \
      --modifiers $modifiers > "$dir/compile.log" 2>&1 &
    pids+=($!)
  fi
  local status=0 pid
  for pid in "${pids[@]}"; do wait "$pid" || status=1; done
  grep -E "^wrote|accelerator ops|times|check against" "$dir/export.log" >&2
  [ $status = 0 ] || { say "$1: export or nequip-compile failed"; tail -5 "$dir/export.log" "$dir/compile.log" >&2; }
  return $status
}

lammps() {  # NAME ranks log input vars...
  local name=$1 np=$2 log=$3 input=$4
  shift 4
  (cd "$out/$name" && mpirun --oversubscribe -np "$np" "$lmp" -in "$input" -log "$log" -screen none \
    -var plugin "$plugin_name" "$@")
}

timed() {  # NAME n: one size, its peak GPU memory sampled by nvidia-smi
  local log=log.$acc.$2 sampler= status=0
  say "$1: $((8 * $2 * $2 * $2)) atoms"
  if [ $dry = 0 ]; then
    nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 100 > "$dir/memory.$acc.$2" 2>/dev/null &
    sampler=$!
  fi
  lammps "$1" 1 "$log" "$repo/bench/sevennet_cpu/in.bench" -var model "model/$1_$acc.json" -var n "$2" \
    -var steps "$steps" -var device "$device" || status=1
  [ -n "$sampler" ] && { kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null; }
  [ $status = 0 ] || { say "$log: LAMMPS stopped"; grep -m1 ERROR "$dir/$log" >&2; }
  return $status
}

bench() {  # NAME
  model "$1"
  printf 'model=%s\naccelerators=%s\nown_call=%s\n' "$label" "$acc" "$call" > "$dir/meta"
  cp "$out/machine.txt" "$dir/machine.txt"
  say "$1: forces on $((8 * check_cells ** 3)) atoms, 1 rank and 2 ranks sharing the device"
  local ranks
  for ranks in 1 2; do
    lammps "$1" $ranks "log.check.$acc.$ranks" "$here/in.forces" -var model "model/$1_$acc.json" \
      -var device "$device" -var tag "$acc.$ranks" -var cells "$check_cells" || say "$1: the $ranks-rank force check stopped"
  done
  say "$1: nequip's eager evaluation of the same atoms ($device)"
  "$python" "$here/nequip_model_call.py" ref "$dir/model.ckpt" "$dir/forces.$acc.1" "$dir/forces.ref" \
    --device "$device" > "$dir/ref.log" 2>&1 || say "$1: no reference (ref.log)"
  local n
  for n in $cells; do timed "$1" "$n" || break; done
  say "$1: nequip's own call"
  local compiled=()
  [ $dry = 0 ] && compiled=(--compiled "$dir/model/$1.nequip.pt2" --label "AOTInductor, $modifiers")
  "$python" "$here/nequip_model_call.py" time "$dir/model.ckpt" "${compiled[@]}" --cells $cells \
    --check-cells "${cells%% *}" --device "$device" > "$dir/model_call.log" 2> "$dir/model_call.err" ||
    say "$1: nequip's call stopped (model_call.err)"
}

if [ "$stage" != bench ]; then
  say "prepare: $models ($device)"
  pids=()
  for m in $models; do prepare "$m" & pids+=($!); done
  failed=0
  for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
  [ $failed = 0 ] || exit 1
fi
[ "$stage" = prepare ] && exit 0

lmp=${DISTSPEC_LMP:-lmp}
plugin=${DISTSPEC_PLUGIN:?set DISTSPEC_PLUGIN to a libdistspec.so built with torch}
export LD_LIBRARY_PATH="$(cd "$(dirname "$plugin")" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
plugin_name=$(basename "$plugin")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 OMPI_MCA_mpi_yield_when_idle=1
{ if [ $dry = 1 ]; then echo "cpu (dry run), $(nproc) cores"
  else nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null || echo "no nvidia-smi"; fi
  "$python" -c 'import torch; print("torch", torch.__version__)'; } > "$out/machine.txt"
for m in $models; do bench "$m"; done
commit=${BENCH_COMMIT:-$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)}
# Every model this BENCH_OUT has run, so that models benched in separate calls share one CSV.
folders=()
for m in nequip allegro; do [ -f "$out/$m/meta" ] && folders+=("$out/$m"); done
"$python" "$here/results.py" csv "${folders[@]}" --commit "$commit" > "$out/results.csv" || exit 1
"$python" "$here/results.py" table "$out/results.csv" | tee "$out/table.md"
say "done: $out/results.csv"
