#!/usr/bin/env bash
# Where the PME spec's replicated mesh stops scaling: DISTSPEC's PME (nvalchemi's
# model_pme_halo.json: every rank spreads its own ions, the whole mesh is all-reduced and every
# rank runs the whole FFT) against LAMMPS' coul/long + pppm (a distributed mesh, parallel FFTs)
# on the same rock salt at accuracy 1e-5, on 1, 2, 4, ... ranks; the PME runs print the time of
# each op (`timing yes`), so the table splits the step into spread, mesh all-reduce, solve (the
# FFTs), interpolation and real space. Then report.py: the table (table.md) and the plot.
#   bench/pme_scaling/run.sh LMP PLUGIN [OUT_DIR]
# LMP: a LAMMPS with KSPACE (pppm) the plugin was built against; FFTW3 in the plugin for PME on
# the CPU. Environment: BENCH_CELLS (32: 262 144 ions), BENCH_RANKS ("1 2 4 8 16"), BENCH_STEPS
# (5), BENCH_TIMEOUT (300 s per run), DISTSPEC_PYTHON (python3; with matplotlib for the plot);
# mpirun from PATH.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
lmp=$(realpath "${1:?usage: run.sh LMP PLUGIN [OUT_DIR]}")
plugin=$(realpath "${2:?usage: run.sh LMP PLUGIN [OUT_DIR]}")
out=$(realpath -m "${3:-$repo/build/bench/pme_scaling}")
mkdir -p "$out"
export LD_LIBRARY_PATH="$(dirname "$plugin")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1 OMP_NUM_THREADS=1
{ echo "$(nproc --all) cores ($(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo))"; } > "$out/machine.txt"
# The model by a path relative to the run folder: LAMMPS' logs echo it, and name no path of this machine.
ln -sfn "$repo/potentials" "$out/potentials"
n=${BENCH_CELLS:-32}
for ranks in ${BENCH_RANKS:-1 2 4 8 16}; do
  for long in pme pppm; do
    echo "bench: $long on $ranks ranks, $((8 * n * n * n)) ions" >&2
    (cd "$out" && timeout "${BENCH_TIMEOUT:-300}" mpirun --oversubscribe --bind-to core -np "$ranks" "$lmp" -in "$here/in.pme_scaling" \
      -log "log.$long.$ranks" -screen none -var plugin "$(basename "$plugin")" -var model potentials/nacl_pme.json \
      -var long "$long" -var n "$n" -var steps "${BENCH_STEPS:-5}" > /dev/null 2>&1) ||
      echo "bench: $long on $ranks ranks did not finish" >&2
  done
done
"${DISTSPEC_PYTHON:-python3}" "$here/report.py" "$out" "$out/pme_scaling.png" | tee "$out/table.md"
