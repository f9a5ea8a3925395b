#!/usr/bin/env bash
# On a GPU machine: the stream-ordered halo of an exported graph (doc/torch_models.md, "A step
# without host waits") under `pair_style distspec device cuda`, on bench/stream/in.stream (NVE,
# reneighbouring every 10 steps, so most steps reuse a build's edge set):
#   1. 1 rank against 2 ranks sharing the GPU (gpu_share yes), and `edges skin` against
#      `edges cutoff` where the graph takes it: pe, press and sum of f^2 after STEPS steps, to
#      TOL relative (default 1e-10; pass 1e-5 for an fp32 graph);
#   2. host waits per step, where Nsight Systems (nsys) is installed: the synchronising CUDA
#      calls (every *Synchronize, and cudaMemcpy, which is synchronous, either direction) of two
#      runs of S1 and S2 steps on one rank, differenced, per step. The plain style uploads
#      positions and downloads forces and energy every step (about 2 waits); before the stream-
#      ordered halo each halo op added one, and a call one more (run the same command at an
#      older commit for the comparison);
#   3. seconds per step on 1 rank under both `edges` settings, and with the step captured in a
#      CUDA graph (`edges skin cuda_graph yes`, which must equal the eager run), from LAMMPS'
#      loop time: the benchmark switch that decides whether capture pays.
# Prints PASS / FAIL / INFO lines, a table of the numbers, and exits non-zero on a FAIL.
#   scripts/gpu_check_stream.sh LMP PLUGIN MODEL_JSON ELEMENT [OUT]
# Environment: STEPS (50), TOL (1e-10), CELLS (6: 1728 atoms of a diamond lattice; LATTICE,
# MASS for another element, e.g. LATTICE="fcc 3.6" MASS=63.546 for the toy MPNN's Cu), S1 / S2
# (10 / 30), NSYS (the nsys to use).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
lmp=$(realpath "${1:?usage: gpu_check_stream.sh LMP PLUGIN MODEL_JSON ELEMENT [OUT]}")
plugin=$(realpath "${2:?PLUGIN}")
model=$(realpath "${3:?MODEL_JSON}")
element=${4:?ELEMENT}
out=$(realpath -m "${5:-$root/build/gpu_check_stream}")
steps=${STEPS:-50} tol=${TOL:-1e-10} cells=${CELLS:-6} s1=${S1:-10} s2=${S2:-30}
lattice=${LATTICE:-diamond 5.431} mass=${MASS:-28.0855}
mkdir -p "$out"
plugin_dir=$(dirname "$plugin")
export LD_LIBRARY_PATH="$plugin_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export OMP_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
failed=0
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/INFO gpu: /'

# run NP EDGES STEPS TAG [launcher...]: LAMMPS on the deck; the log is $out/TAG.log. EDGES
# "graph" is edges skin with the step captured (cuda_graph yes).
run() {
  local np=$1 edges=$2 n=$3 tag=$4 graph=no
  shift 4
  [ "$edges" = graph ] && edges=skin graph=yes
  "$@" mpirun --oversubscribe -np "$np" "$lmp" -in "$root/bench/stream/in.stream" -var plugin "$(basename "$plugin")" \
    -var model "$model" -var element "$element" -var steps "$n" -var edges "$edges" -var cuda_graph "$graph" -var tag "$tag" \
    -var cells "$cells" -var lattice "$lattice" -var mass "$mass" -log "$out/$tag.log" -screen none > "$out/$tag.out" 2>&1
}
check_line() { awk -v tag="$1" '$1 == "CHECK" && $2 == tag { print $3, $4, $5 }' "$out/$1.log"; }
seconds_per_step() {  # the second run's loop time over its steps
  awk -v n="$2" '/^Loop time of/ { t = $4 } END { if (t != "") printf "%.6f", t / n }' "$out/$1.log"
}
# compare NAME TAG_A TAG_B: the CHECK numbers of two runs to TOL relative.
compare() {
  local a b
  a=$(check_line "$2") b=$(check_line "$3")
  if [ -z "$a" ] || [ -z "$b" ]; then
    echo "FAIL $1: a run stopped ($(grep -h -m1 ERROR "$out/$2.log" "$out/$3.log" 2>/dev/null || echo "see $out"))"
    failed=1
    return
  fi
  awk -v name="$1" -v tol="$tol" -v a="$a" -v b="$b" 'BEGIN {
    n = split(a, x, " "); split(b, y, " "); worst = 0
    for (i = 1; i <= n; ++i) { s = x[i] < 0 ? -x[i] : x[i]; if (s < 1e-6) s = 1e-6
                               d = (x[i] - y[i]) / s; d = d < 0 ? -d : d; if (d > worst) worst = d }
    printf "%s %s: worst relative deviation %.3g (bound %g): pe press sum_f2 %s | %s\n",
           worst <= tol ? "PASS" : "FAIL", name, worst, tol, a, b
    exit worst > tol }' || failed=1
}

run 1 cutoff "$steps" np1_cutoff
run 2 cutoff "$steps" np2_cutoff
compare "1 rank vs 2 ranks sharing the GPU (edges cutoff)" np1_cutoff np2_cutoff
skin=no
if run 1 skin "$steps" np1_skin; then
  skin=yes
  run 2 skin "$steps" np2_skin
  compare "edges skin vs edges cutoff (1 rank)" np1_cutoff np1_skin
  compare "1 rank vs 2 ranks sharing the GPU (edges skin)" np1_skin np2_skin
  run 1 graph "$steps" np1_graph
  compare "the step captured in a CUDA graph vs eager (edges skin, 1 rank)" np1_skin np1_graph
else
  echo "INFO edges skin refused for this graph: $(grep -h -m1 -A1 ERROR "$out/np1_skin.log" | tr '\n' ' ')"
fi

nsys=${NSYS:-$(command -v nsys || find /usr/local/cuda*/bin /opt/nvidia -name nsys -type f 2>/dev/null | head -1)}
# waits TAG: synchronising calls (and their count) in an nsys report, summed over the API names.
waits() {
  "$nsys" stats --report cuda_api_sum --format csv --force-export true "$out/$1.nsys-rep" 2>/dev/null |
    awk -F, 'NR > 1 { name = $NF; gsub(/"/, "", name); calls = $3; gsub(/"/, "", calls)
                      if (name ~ /Synchronize/ || name ~ /^cudaMemcpy(_v|$)/ || name ~ /^cudaMemcpy$/) total += calls }
             END { print total + 0 }'
}
if [ -n "$nsys" ] && [ -x "$nsys" ]; then
  for edges in cutoff $([ $skin = yes ] && echo skin graph); do
    for n in "$s1" "$s2"; do
      run 1 "$edges" "$n" "nsys_${edges}_$n" "$nsys" profile --trace=cuda --sample=none --cpuctxsw=none \
        --force-overwrite true -o "$out/nsys_${edges}_$n"
    done
    w1=$(waits "nsys_${edges}_$s1") w2=$(waits "nsys_${edges}_$s2")
    awk -v e="$edges" -v a="$w1" -v b="$w2" -v n=$((s2 - s1)) 'BEGIN {
      printf "INFO host waits per step, edges %s: %.2f (synchronising CUDA calls: %d in %d steps more)\n", e, (b - a) / n, b - a, n }'
  done
  echo "INFO per-call names: $nsys stats --report cuda_api_sum $out/nsys_cutoff_$s2.nsys-rep"
else
  echo "INFO no nsys on this machine: host waits not counted (install Nsight Systems or set NSYS)"
fi

echo
echo "| edges | ranks | atoms | s/step |"
echo "|---|---|---|---|"
for tag in np1_cutoff np2_cutoff $([ $skin = yes ] && echo np1_skin np2_skin np1_graph); do
  e=${tag#*_} r=${tag%%_*}
  [ "$e" = graph ] && e="skin, cuda_graph yes"
  atoms=$(awk '/Created [0-9]+ atoms/ { print $2; exit }' "$out/$tag.log")
  printf "| %s | %s | %s | %s |\n" "$e" "${r#np}" "$atoms" "$(seconds_per_step "$tag" "$steps")"
done
exit $failed
