#!/usr/bin/env bash
# test_user_build.sh SOURCE LAMMPS_SOURCE LAMMPS_BUILD LMP WORK (ctest install.user_build)
# Builds the plugin as the README's "Building the plugin against your own LAMMPS" says, with
# GoogleTest hidden (CMAKE_DISABLE_FIND_PACKAGE_GTest), installs it, and runs an installed model
# file found through LAMMPS_POTENTIALS beside LAMMPS' own eam on the same potential file.
set -euo pipefail
src=$1 lammps_src=$2 lammps_build=$3 lmp=$4 work=$5
rm -rf "$work" && mkdir -p "$work/run"
fail() { echo "FAIL: $*"; exit 1; }

# The README's recipe (CPU), with what a user's machine may lack taken away.
cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release \
  -DLAMMPS_SOURCE_DIR="$lammps_src" -DLAMMPS_BUILD_DIR="$lammps_build" \
  -DDISTSPEC_ENABLE_CUDA=OFF -DDISTSPEC_ENABLE_TORCH=OFF -DDISTSPEC_BUILD_BENCH=OFF \
  -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON -DCMAKE_INSTALL_PREFIX="$work/prefix" > "$work/configure.log" 2>&1 ||
  { tail -20 "$work/configure.log"; fail "configure without GoogleTest"; }
grep -q "GoogleTest not found, so no tests are built" "$work/configure.log" ||
  fail "configure did not say that the tests are left out ($work/configure.log)"
cmake --build "$work/build" -j "${DISTSPEC_JOBS:-2}" > "$work/build.log" 2>&1 ||
  { tail -20 "$work/build.log"; fail "build without GoogleTest"; }
[ ! -e "$work/build/unittest" ] || fail "tests were configured although GoogleTest is missing"
cmake --install "$work/build" > "$work/install.log" 2>&1 || { tail -20 "$work/install.log"; fail "cmake --install"; }
prefix=$work/prefix
pots=$prefix/share/distspec/potentials
plugin=$(ls "$prefix"/lib*/libdistspec.so 2>/dev/null | head -1)
for f in "$plugin" "$pots/cu_eam_u3.json" "$pots/Cu_u3.eam" "$pots/specs/eam_halo.json" \
         "$prefix/share/distspec/tools/pyproject.toml" "$prefix/share/distspec/tools/distspec_export/cli.py"; do
  [ -f "$f" ] || fail "the install lacks ${f#"$prefix"/}"
done
echo "installed: ${plugin#"$prefix"/}, $(ls "$pots"/*.json | wc -l) model files with their specs and potential files"

# From an empty folder, model and potential files found as LAMMPS finds them.
deck() {
  cat <<IN
units metal
lattice fcc 3.615
region box block 0 4 0 4 0 4
create_box 1 box
create_atoms 1 box
displace_atoms all random 0.05 0.05 0.05 4321
mass 1 63.546
$1
variable e equal pe
run 0
print "PE \${e}" universe no
IN
}
run_deck() {
  (cd "$work/run" && deck "$1" > in.$2 && LAMMPS_POTENTIALS="$pots" "$lmp" -nocite -log log.$2 -in in.$2 > out.$2 2>&1) ||
    { tail -5 "$work/run/out.$2"; fail "$2 run"; }
  sed -n 's/^PE //p' "$work/run/out.$2" | tail -1
}
ours=$(run_deck "plugin load $plugin
pair_style distspec
pair_coeff * * cu_eam_u3.json Cu" distspec)
theirs=$(run_deck "pair_style eam
pair_coeff 1 1 Cu_u3.eam" eam)
grep -c "^Loading plugin" "$work/run/out.distspec" | grep -qx 1 || fail "the plugin announced itself more than once"
python3 - "$ours" "$theirs" <<'PY' || fail "energies differ"
import sys
ours, theirs = map(float, sys.argv[1:])
rel = abs(ours - theirs) / abs(theirs)
print(f"energy: distspec {ours:.10f} eV, LAMMPS eam {theirs:.10f} eV, relative difference {rel:.1e}")
sys.exit(0 if rel < 1e-10 else 1)
PY
echo "PASS"
