#!/usr/bin/env bash
# pair_style distspec against LAMMPS' hand-written styles: lj/cut (argon) and eam/alloy (copper)
# at 4 000, 32 000 and 256 000 atoms on 1 and 2 MPI ranks. Each (model, size, ranks) is one LAMMPS
# run alternating native and distspec segments (in.compare), so both see the same machine load;
# the table gives medians over the repeats and the spread of the throughput ratio.
#
#   bench/native_compare/run.sh
#
# Environment: DISTSPEC_BUILD, DISTSPEC_LMP (bench/common.sh); BENCH_MODELS ("lj eam"),
# BENCH_SIZES ("4000 32000 256000", each 4 n^3), BENCH_RANKS ("1 2"), BENCH_REPEATS (3),
# BENCH_ATOM_STEPS (atom-steps per segment, 3e6: the step count follows from it),
# BENCH_OUT (logs; build/bench/native_compare), BENCH_PLOT (bench/native_compare/native_compare.png),
# BENCH_THREADS (threads per rank, 1): with BENCH_KOKKOS=1 the runs are `-k on t N -sf kk -pk
# kokkos newton on neigh half`, lj/cut/kk and eam/alloy/kk against distspec/kk, on LAMMPS 2021
# (the one with KOKKOS; DISTSPEC_BUILD and DISTSPEC_LMP default to it then); without, the
# native styles run on one thread and distspec with `threads N`. Model mpnn (the message-passing
# network, potentials/cu_mpnn_L2.json) runs only with BENCH_THREADS > 1, against itself on one
# thread: BENCH_MPNN_SIZES ("4000 32000"), BENCH_MPNN_STEPS (10 per segment). Model d3 (DFT-D3(BJ)
# for PBE on copper, potentials/dftd3_pbe_bj.json, against dispersion/d3 bj pbe 12.0 8.0) needs
# LAMMPS 2025 or later (BENCH_MODELS=d3 BENCH_SIZES="4000 32000").
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
threads=${BENCH_THREADS:-1}
kokkos=${BENCH_KOKKOS:-0}
if [ "$kokkos" = 1 ]; then
  # shellcheck source=/dev/null
  source "${DISTSPEC_CACHE:-$HOME/.cache/distspec}/env.sh"
  DISTSPEC_BUILD=${DISTSPEC_BUILD:-$(cd "$here/../.." && pwd)/build/lammps-20210929}
  DISTSPEC_LMP=${DISTSPEC_LMP:-$DISTSPEC_LAMMPS_2021/build/lmp}
fi
source "$here/../common.sh"
accel=()
tag=""
# Open MPI binds each rank to one core when there are few: threads of a rank need the others.
bind=()
[ "$threads" = 1 ] || bind=(--bind-to none)
if [ "$kokkos" = 1 ]; then
  accel=(-k on t "$threads" -sf kk -pk kokkos newton on neigh half)
  tag=".kk$threads"
elif [ "$threads" != 1 ]; then
  tag=".t$threads"
fi

models=${BENCH_MODELS:-lj eam}
sizes=${BENCH_SIZES:-4000 32000 256000}
ranks=${BENCH_RANKS:-1 2}
repeats=${BENCH_REPEATS:-3}
budget=${BENCH_ATOM_STEPS:-3000000}
out=${BENCH_OUT:-$repo/build/bench/native_compare}
plot=${BENCH_PLOT:-$here/native_compare.png}
mkdir -p "$out"
rm -f "$out"/log.*"$tag"
machine_line > "$out/machine.txt"

for model in $models; do
  model_sizes=$sizes
  if [ "$model" = mpnn ]; then
    if [ "$threads" = 1 ] || [ "$kokkos" = 1 ]; then
      echo "bench: mpnn runs with BENCH_THREADS > 1 and without BENCH_KOKKOS (against itself on one thread)" >&2
      continue
    fi
    model_sizes=${BENCH_MPNN_SIZES:-4000 32000}
  fi
  for atoms in $model_sizes; do
    n=$(python3 -c "print(round(($atoms / 4) ** (1 / 3)))")
    # At least 20 steps a segment: enough for the medians to mean something at 256 000 atoms.
    steps=$(( budget / atoms > 20 ? budget / atoms : 20 ))
    # The network costs a few hundred times a pair step per atom: ten steps a segment are seconds.
    [ "$model" != mpnn ] || steps=${BENCH_MPNN_STEPS:-10}
    # D3's 12 A cutoff gives each atom about 40 times EAM's neighbours.
    [ "$model" != d3 ] || steps=$(( steps / 40 > 5 ? steps / 40 : 5 ))
    for np in $ranks; do
      echo "bench: $model, $((4 * n * n * n)) atoms, $np rank(s), $repeats x $steps steps per style" >&2
      # From the repository, with its potentials/ relative: logs name no path of this machine.
      (cd "$repo" && mpirun --oversubscribe "${bind[@]}" -np "$np" "$DISTSPEC_LMP" -in "$here/in.compare" \
        -log "$out/log.$model.$atoms.$np$tag" -screen none -var plugin "$PLUGIN_NAME" -var pot potentials \
        -var model "$model" -var n "$n" -var steps "$steps" -var repeats "$repeats" -var threads "$threads" "${accel[@]}")
    done
  done
done
python3 "$here/report.py" "$out" "$plot"
