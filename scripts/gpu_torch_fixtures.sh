#!/usr/bin/env bash
# Writes, on a GPU machine, the torch fixtures the kk_gpu cases of unittest/torch/cases run (an
# exported model resident on the GPU under distspec/kk against the same model exported for the
# CPU under the plain style), with that machine's own torch: a .pt2 runs only with the torch that
# compiled it. Needs no nvalchemi (the exporter defines nvalchemi's ops from their schemas and
# reads the spec as a file); SevenNet's models need sevenn on PYTHONPATH and, where nvalchemi
# does not import, the specs nvalchemi saved elsewhere in DISTSPEC_SPECS (pack_gpu_source.sh
# --sevenn packs them as BUNDLE/site and BUNDLE/specs).
#   scripts/gpu_torch_fixtures.sh OUT_DIR
# DISTSPEC_GPU_FIXTURES (default "toy serial aoti") picks the groups: the toy MPNN (about 3
# minutes on 16 cores), SevenNet's serial module (under a minute) and SevenNet-0's AOTInductor
# packages (5 minutes or more each; aoti_cpu and aoti_cuda name one of the two, so that two calls
# of this script, in the same OUT_DIR, export them at the same time); a package already in OUT_DIR
# is kept, so a second GPU-machine call resumes where one that ran out of time stopped.
# Writes into OUT_DIR (DISTSPEC_TORCH_FIXTURES for the tests):
#   cuni_fcc.data, toy_mpnn_L2.{json,pt2} (cpu), toy_mpnn_L2_cuda.{json,pt2} (cuda)
#   with sevenn: si_diamond.data, 7net0.{json,pt2} (cpu), 7net0_cuda.{json,pt2} (cuda),
#   7net0_serial.{json,pt} (SevenNet's own serial module, which runs on either)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(realpath -m "${1:?usage: gpu_torch_fixtures.sh OUT_DIR}")
python=${DISTSPEC_PYTHON:-python3}
mkdir -p "$out"
start=$(date +%s)
say() { echo "gpu_torch_fixtures: $* ($(( $(date +%s) - start )) s)" >&2; }
export PYTHONPATH="$root/tools:$root/unittest/torch${PYTHONPATH:+:$PYTHONPATH}"
has_sevenn=$("$python" -c 'import importlib.util as u; print(int(u.find_spec("sevenn") is not None))')

# The data files, as make_fixtures.py writes them.
"$python" - "$out" "$has_sevenn" <<'PY'
import sys
from pathlib import Path
import make_fixtures, periodic
out = Path(sys.argv[1])
periodic.write_data(make_fixtures.crystal(), out / make_fixtures.DATA,
                    "TEST crystal: 108 Cu/Ni atoms, fcc 3x3x3, rattled (make_fixtures.py)")
if sys.argv[2] == "1":
    import sevennet_model
    _, build, title = sevennet_model.STRUCTURES["si_diamond"]
    periodic.write_data(build(), out / "si_diamond.data", f"TEST crystal: {title} (make_fixtures.py)")
PY

# export NAME ARGS...: one exported model, its log in OUT_DIR/NAME.log.
groups=" ${DISTSPEC_GPU_FIXTURES:-toy serial aoti} "
wanted() { [[ "$groups" == *" $1 "* ]]; }
export_model() {
  local name=$1; shift
  [ -f "$out/$name.json" ] && [ -f "$out/$name.pt2" ] && { say "$name (kept)"; return 0; }
  "$python" "$root/tools/distspec-export" "$@" --out "$out" --name "$name" --quick-compile > "$out/$name.log" 2>&1 ||
    { tail -20 "$out/$name.log"; echo "gpu_torch_fixtures: export of $name failed" >&2; exit 1; }
  say "$name"
}
toy=(--module "$root/unittest/torch/toy_mpnn.py:build" --module-args '{"layers": 2}'
     --spec "$root/potentials/specs/mpnn_halo.json" --elements Cu Ni --cutoff 4.5 --units metal --format aoti)
if wanted toy; then
  export_model toy_mpnn_L2 "${toy[@]}" --no-check
  # The exporter's check runs the CUDA package on the GPU against the eager model there (its log
  # names the deviations, or why it failed); the kk_gpu cases also check it against the CPU one.
  export_model toy_mpnn_L2_cuda "${toy[@]}" --device cuda
fi

if [ "$has_sevenn" = 1 ]; then
  sevennet=(--from sevennet 7net-0 --elements Si --precision fp32 --format aoti)
  [ -n "${DISTSPEC_SPECS:-}" ] && sevennet+=(--spec "$DISTSPEC_SPECS/sevennet.spec.json")
  if wanted serial && [ ! -f "$out/7net0_serial.pt" ]; then
  "$python" - "$out" <<'PY'
import sys
from pathlib import Path
import make_fixtures
import os
from distspec_export import sevennet
from sevenn.scripts.deploy import deploy
out = Path(sys.argv[1])
deployed = out / "7net0_deployed_serial.pt"
deploy("7net-0", str(deployed))
specs = os.environ.get("DISTSPEC_SPECS")
sevennet.write_deployed(deployed, ["Si"], make_fixtures.SEVENNET["cutoff"], make_fixtures.UNITS, out, "7net0_serial",
                        license=make_fixtures.SEVENNET["license"], spec=f"{specs}/serial.spec.json" if specs else None)
deployed.unlink()
PY
  say "7net0_serial"
  fi
  # aoti_cpu and aoti_cuda each name one of the two packages, for two processes side by side.
  if wanted aoti || wanted aoti_cpu; then
    export_model 7net0 "${sevennet[@]}" --no-check
  fi
  if wanted aoti || wanted aoti_cuda; then
    export_model 7net0_cuda "${sevennet[@]}" --device cuda --no-check
  fi
fi
echo "FIXTURES $out"
