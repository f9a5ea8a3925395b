#!/usr/bin/env bash
# Sets everything up and runs the main example (examples/mpnn: a message-passing potential on
# 2 MPI ranks) with LAMMPS 29 Sep 2021 and the DISTSPEC plugin.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
"$here/scripts/bootstrap.sh"
"$here/scripts/build.sh" > /dev/null
CACHE=${DISTSPEC_CACHE:-$HOME/.cache/distspec}
# shellcheck source=/dev/null
source "$CACHE/env.sh"
example=${1:-mpnn}
cd "$here/examples/$example"
# `plugin load libdistspec.so` finds the plugin through the loader path; LAMMPS_PLUGIN_PATH
# lets LAMMPS auto-load it (as distspecplugin.so) at start-up.
export LD_LIBRARY_PATH="$here/build/lammps-20210929${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
exec mpirun --oversubscribe -np "${DISTSPEC_EXAMPLE_RANKS:-2}" "$DISTSPEC_LAMMPS_2021/build/lmp" -in "in.$example" -log none
