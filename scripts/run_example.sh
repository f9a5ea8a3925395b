#!/usr/bin/env bash
# Sets everything up and runs the main example (examples/mpnn: a message-passing potential on
# 2 MPI ranks) with LAMMPS 29 Sep 2021 and the DISTSPEC plugin.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
"$here/scripts/bootstrap.sh"
"$here/scripts/build.sh" > /dev/null
# shellcheck source=examples/env.sh
source "$here/examples/env.sh"
example=${1:-mpnn}
cd "$here/examples/$example"
exec mpirun --oversubscribe -np "${DISTSPEC_EXAMPLE_RANKS:-2}" lmp -in "in.$example" -log none
