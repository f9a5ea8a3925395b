# Sourced (bash), from anywhere, after the README's setup: what the examples' commands need.
#   lmp on PATH (LAMMPS 29 Sep 2021 as the bootstrap built it), libdistspec.so on the loader
#   path (for `plugin load libdistspec.so`), the bootstrap's Python environments for the torch
#   and SevenNet examples, and Open MPI allowed to start as root (it refuses otherwise).
# With more ranks than cores, mpirun needs --oversubscribe, as the examples' commands give.
_distspec_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=/dev/null
source "${DISTSPEC_CACHE:-$HOME/.cache/distspec}/env.sh" ||
  { echo "examples/env.sh: run ./scripts/run_example.sh (or scripts/bootstrap.sh and scripts/build.sh) first" >&2; return 1; }
export PATH="$DISTSPEC_LAMMPS_2021/build:$PATH"
export LD_LIBRARY_PATH="$_distspec_root/build/lammps-20210929${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
unset _distspec_root
