#!/usr/bin/env bash
# The Fashion-MNIST slice on one GPU node (issue 29 items 3 + 4), with only python3, the node's
# torch and a wheelhouse:
#
#   bench/gpu_slice.sh WHEELHOUSE [OUT] [DATA_DIR]
#
# 1. install: bench/offline_node.sh's venv from WHEELHOUSE (pip --no-index --no-deps), no target;
# 2. slice:   chadha_fig3 of config/paper.yaml + config/slices/fmnist_gpu.yaml (PATE and CaPC on
#             Fashion-MNIST, WRN-16-4 teachers in blocks of 250, T = 1e8 sampled on cuda; projected
#             ≤ 6 H200-minutes by bench/gpu_hours.py), in OUT/run;
# 3. bench:   bench/bench_gpu.py --json OUT/rates.json (the rates bench/gpu_hours.py --rates reads).
#
# Each step's wall time is printed and written to OUT/times.tsv; every file lands under OUT
# (default gpu-slice-<date>): the venv, the workflow's results/logs/benchmarks, rates.json and
# each step's log. DATA_DIR (default: OUT/data) is the datasets folder (offline_node.sh); where it
# has no fashion-mnist/, the Debian package's idx files (/usr/share/datasets/fashion-mnist) or
# $PPAUDIT_FASHION_MNIST_DIR are linked in. Exit status 2 on bad arguments; otherwise the first
# failing step's status (the later steps still run, so the bench is measured even if the slice fails).
set -uo pipefail

usage() {
  sed -n '5,5s/^# \{0,1\}//p' "$0" >&2
  [ $# -gt 0 ] && echo "error: $*" >&2
  exit 2
}

[ $# -ge 1 ] && [ $# -le 3 ] || usage "need WHEELHOUSE [OUT] [DATA_DIR], got $# argument(s)"
WHEELHOUSE=$1
[ -f "$WHEELHOUSE/requirements.txt" ] || usage "WHEELHOUSE $WHEELHOUSE holds no requirements.txt (make wheelhouse)"
OUT=${2:-gpu-slice-$(date -u +%Y-%m-%dT%H%M%S)}
mkdir -p "$OUT" || usage "cannot create OUT $OUT"
OUT=$(cd "$OUT" && pwd)
DATA_DIR=${3:-$OUT/data}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WHEELHOUSE=$(cd "$WHEELHOUSE" && pwd)

mkdir -p "$DATA_DIR"
if [ ! -e "$DATA_DIR/fashion-mnist" ]; then
  for d in "${PPAUDIT_FASHION_MNIST_DIR:-}" /usr/share/datasets/fashion-mnist; do
    if [ -n "$d" ] && [ -f "$d/train-images-idx3-ubyte.gz" ]; then ln -s "$d" "$DATA_DIR/fashion-mnist"; break; fi
  done
fi
[ -f "$DATA_DIR/fashion-mnist/train-images-idx3-ubyte.gz" ] \
  || echo "warning: no Fashion-MNIST idx files in $DATA_DIR/fashion-mnist (Debian's dataset-fashion-mnist, or copy them there): the slice will stop at its first job" >&2

export OFFLINE_PREFIX=$OUT/venv OFFLINE_WORKDIR=$OUT/run
printf 'step\tseconds\tstatus\n' > "$OUT/times.tsv"
status=0
run_step() {  # name, command...: runs it, logs to OUT/<name>.log, prints and records its wall time
  local name=$1 start end rc
  shift
  echo "==> $name: $*"
  start=$(date +%s.%N)
  "$@" > >(tee "$OUT/$name.log") 2>&1
  rc=$?
  end=$(date +%s.%N)
  local secs
  secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
  printf '%s\t%s\t%s\n' "$name" "$secs" "$rc" >> "$OUT/times.tsv"
  echo "==> $name: ${secs} s (exit $rc)"
  [ "$rc" -eq 0 ] || { [ "$status" -ne 0 ] || status=$rc; }
  return "$rc"
}

# 1. The install: offline_node.sh makes the venv from the wheelhouse; its target run is a dry run
#    of the slice (it resolves the jobs; none runs).
run_step install "$REPO/bench/offline_node.sh" "$WHEELHOUSE" "$DATA_DIR" \
  "$REPO/config/paper.yaml,$REPO/config/slices/fmnist_gpu.yaml" chadha_fig3 --dry-run --quiet
# 2. The slice, in the venv just made (no reinstall).
if [ "$status" -eq 0 ]; then
  export PPAUDIT_FASHION_MNIST_DIR=$DATA_DIR/fashion-mnist
  run_step slice bash -c 'cd "$1" && exec "$2/bin/snakemake" --snakefile "$3/Snakefile" --directory "$1" \
      --profile "$3/workflow/profiles/default" --cores all \
      --configfile "$3/config/config.yaml" "$3/config/paper.yaml" "$3/config/slices/fmnist_gpu.yaml" -- chadha_fig3' \
    _ "$OFFLINE_WORKDIR" "$OFFLINE_PREFIX" "$REPO"
  # 3. The GPU rates of this node.
  run_step bench "$OFFLINE_PREFIX/bin/python" "$REPO/bench/bench_gpu.py" --json "$OUT/rates.json"
fi
echo "==> times (s):"
column -t "$OUT/times.tsv" 2> /dev/null || cat "$OUT/times.tsv"
echo "==> everything under $OUT"
exit "$status"
