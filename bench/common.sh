# Sourced by the benchmark scripts: finds LAMMPS and the DISTSPEC plugin the way
# scripts/run_example.sh does, and sets the MPI environment every benchmark runs under.
#   DISTSPEC_BUILD  build folder holding libdistspec.so  (default: build/lammps-20250204, made by
#                   scripts/build.sh)
#   DISTSPEC_LMP    the lmp executable the plugin was built against
#                   (default: $DISTSPEC_LAMMPS_2025/build/lmp from ~/.cache/distspec/env.sh)
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${DISTSPEC_CACHE:-$HOME/.cache/distspec}
if [ ! -f "$CACHE/env.sh" ]; then
  echo "bench: $CACHE/env.sh not found; run scripts/bootstrap.sh (or scripts/run_example.sh) first" >&2
  exit 1
fi
# shellcheck source=/dev/null
source "$CACHE/env.sh"
DISTSPEC_BUILD=${DISTSPEC_BUILD:-$repo/build/lammps-20250204}
DISTSPEC_LMP=${DISTSPEC_LMP:-${DISTSPEC_LAMMPS_2025:-}/build/lmp}
PLUGIN="$DISTSPEC_BUILD/libdistspec.so"
if [ ! -f "$PLUGIN" ]; then
  echo "bench: no plugin at $PLUGIN; run scripts/build.sh, or set DISTSPEC_BUILD to a build folder" >&2
  exit 1
fi
if [ ! -x "$DISTSPEC_LMP" ]; then
  echo "bench: no LAMMPS executable at $DISTSPEC_LMP; set DISTSPEC_LMP to the lmp the plugin was built against" >&2
  exit 1
fi
# Input scripts load the plugin by file name, found on LD_LIBRARY_PATH (LAMMPS dlopen()s it), so
# that LAMMPS' logs, which echo each command, name no path of this machine.
export LD_LIBRARY_PATH="$(cd "$DISTSPEC_BUILD" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
PLUGIN_NAME=$(basename "$PLUGIN")
# Ranks beyond the cores wait in MPI without spinning (yield_when_idle), so oversubscribed runs
# measure work rather than busy-waiting.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1 OMP_NUM_THREADS=1

# The machine, for the tables' header.
machine_line() {
  local cpu
  cpu=$(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)
  echo "$(nproc --all) cores ($cpu), $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo); load average $(cut -d' ' -f1-3 /proc/loadavg)"
}
