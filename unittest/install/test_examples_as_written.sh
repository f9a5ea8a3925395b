#!/usr/bin/env bash
# test_examples_as_written.sh REPO WORK (ctest install.examples_as_written)
# The examples' commands exactly as examples/README.md writes them, in a login-like environment
# that holds nothing of the test's own (env -i: no LD_LIBRARY_PATH, no Open MPI root variables,
# no lmp on PATH), as root and with more ranks than this machine's cores: lj, eam, ewald and pme,
# on 4 ranks and on 1, whose thermo output must agree: to every printed digit (lj, eam), to 1e-10
# relative (ewald and pme, whose k-space sums add in another order over 4 ranks: the pressure's
# last printed digit moves).
set -euo pipefail
repo=$1 work=$2
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }
# The README's block: the lines between "```sh" and "```" after the marker line.
block=$(awk '/<!-- examples: as written -->/ {m=1; next} m && /^```sh/ {b=1; next} b && /^```/ {exit} b {print}' \
  "$repo/examples/README.md")
[ -n "$block" ] || fail "examples/README.md has no command block after '<!-- examples: as written -->'"
grep -q 'cd examples/lj' <<< "$block" || fail "the README's block does not run examples/lj: $block"
for example in lj eam ewald pme; do
  for np in 4 1; do
    commands=${block//examples\/lj/examples\/$example}
    commands=${commands//in.lj/in.$example}
    commands=${commands//-np 4/-np $np}
    out="$work/$example.$np.out"
    env -i HOME="$HOME" PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      ${DISTSPEC_CACHE:+DISTSPEC_CACHE="$DISTSPEC_CACHE"} \
      bash -c "set -e; cd '$repo'; $commands" > "$out" 2>&1 || { tail -5 "$out"; fail "$example on $np rank(s)"; }
    grep -q "^Loop time of .* on $np procs" "$out" || fail "$example on $np rank(s): no loop time ($out)"
  done
  # Thermo rows: lines that are all numbers, as LAMMPS prints them between the header and "Loop time".
  rows() { awk '/^ *Step/ {t=1; next} /^Loop time/ {t=0} t && $1 ~ /^[0-9]+$/' "$1"; }
  rows "$work/$example.1.out" > "$work/$example.1.rows"
  rows "$work/$example.4.out" > "$work/$example.4.rows"
  [ -s "$work/$example.1.rows" ] || fail "$example: no thermo rows ($work/$example.1.out)"
  tolerance=0
  case $example in ewald|pme) tolerance=1e-10 ;; esac
  if ! paste -d '|' "$work/$example.1.rows" "$work/$example.4.rows" | awk -F'|' -v tol="$tolerance" '
      { n1 = split($1, a, " "); n2 = split($2, b, " ")
        if (n1 != n2 || n1 == 0) { print "row " NR ": " $1 " | " $2; bad = 1; next }
        for (k = 1; k <= n1; ++k) {
          d = a[k] - b[k]; d = d < 0 ? -d : d; s = a[k] < 0 ? -a[k] : a[k]
          if ((tol == 0 && a[k] != b[k]) || d > tol * (s > 1 ? s : 1)) { print "row " NR ": " $1 " | " $2; bad = 1; next }
        } }
      END { exit bad }' > "$work/$example.diff" \
     || [ "$(wc -l < "$work/$example.1.rows")" != "$(wc -l < "$work/$example.4.rows")" ]; then
    head -5 "$work/$example.diff"; fail "$example: thermo on 4 ranks differs from 1 rank"
  fi
  echo "$example: ran as written on 4 and 1 ranks, $(rows "$work/$example.1.out" | wc -l) thermo rows equal"
done
echo PASS
