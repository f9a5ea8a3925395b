#!/usr/bin/env bash
# Heap growth check: runs LAMMPS with the plugin under valgrind massif on small systems for many
# steps (LJ and EAM 20 000 steps, the message-passing network 2 000: it is ~50x costlier per
# step), and compares the heap over the run: the peak in the second half must not exceed the peak
# in the first half (after start-up) by more than 1% + 64 KiB. One MPI rank: under valgrind,
# ranks that poll for each other's messages run ~100x slower than alone. The halo exchanges
# still run (a rank exchanges with its own periodic images through the same comm buffers).
#
#   scripts/memcheck.sh [STEPS] [PLUGIN_BUILD_DIR]
#
# STEPS: steps for LJ and EAM (default 20000; the network runs STEPS/10). PLUGIN_BUILD_DIR: a
# build against LAMMPS 4 Feb 2025 (default build/lammps-20250204). Prints the heap per tenth
# of each run and exits non-zero on growth. Massif files are kept in build-memcheck/.
set -euo pipefail

steps=${1:-20000}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
plugin_dir=${2:-$repo/build/lammps-20250204}
# shellcheck source=/dev/null
[ -n "${DISTSPEC_LAMMPS_2025:-}" ] || source "${DISTSPEC_CACHE:-$HOME/.cache/distspec}/env.sh"
lmp=$DISTSPEC_LAMMPS_2025/build/lmp
out=$repo/build-memcheck
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1 OMP_NUM_THREADS=1

# The plugin by file name on the loader path, the model relative to $out: logs and decks name no
# path of this machine.
export LD_LIBRARY_PATH="$(cd "$plugin_dir" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# deck NAME LATTICE MASS MODEL ELEMENT TEMPERATURE STEPS: 108 atoms (3 x 3 x 3 fcc cells),
# NVE from TEMPERATURE, reneighbouring whenever an atom moved half the skin.
deck() {
  cat <<IN
plugin load libdistspec.so
units metal
lattice fcc $2
region box block 0 3 0 3 0 3
create_box 1 box
create_atoms 1 box
mass 1 $3
pair_style distspec
pair_coeff * * ../potentials/$4 $5
velocity all create $6 4928 loop geom
neigh_modify every 1 delay 0 check yes
fix nve all nve
timestep 0.002
thermo $(( $7 / 10 ))
run $7
IN
}

status=0
check() {
  local name=$1
  deck "$@" >"$out/in.$name"
  rm -f "$out/massif.$name".*
  (cd "$out" && valgrind --quiet --tool=massif --massif-out-file="massif.$name.%p" \
      "$lmp" -in "in.$name" -log "log.$name" -screen none)
  for file in "$out/massif.$name".*; do
    python3 - "$file" "$name" <<'PY' || status=1
import re, sys
path, name = sys.argv[1], sys.argv[2]
times, heap = [], []
for block in open(path).read().split("snapshot=")[1:]:
    t = int(re.search(r"^time=(\d+)", block, re.M).group(1))
    b = int(re.search(r"^mem_heap_B=(\d+)", block, re.M).group(1)) + int(re.search(r"^mem_heap_extra_B=(\d+)", block, re.M).group(1))
    times.append(t); heap.append(b)
end = times[-1]
# Peak heap per tenth of the run (by instructions executed); the first tenth holds start-up.
tenths = [max([h for t, h in zip(times, heap) if k * end / 10 <= t <= (k + 1) * end / 10] or [0]) for k in range(10)]
first, second = max(tenths[1:5]), max(tenths[5:10])
grows = second > first * 1.01 + 65536
print(f"{name}: heap peak per tenth of the run (KiB): " + " ".join(f"{h / 1024:.0f}" for h in tenths))
print(f"{name}: tenths 2-5 peak {first / 1024:.0f} KiB, tenths 6-10 peak {second / 1024:.0f} KiB: "
      + ("GROWTH" if grows else "no growth"))
sys.exit(1 if grows else 0)
PY
  done
}

check lj 5.26 39.948 lj_argon.json Ar 300 "$steps"
check eam 3.615 63.546 cu_eam_u3.json Cu 600 "$steps"
check mpnn 3.615 63.546 cu_mpnn_L2.json Cu 600 $(( steps / 10 ))
exit $status
