"""Workflow runs shared between test files (issue 35 §2: ``make test`` under its goal); the fixture is
``tiny_llm_run`` of ``tests/workflow/conftest.py``.

``test_workflow_private_prediction.py`` and ``test_workflow_promptpate.py`` both need the tiny
config's PromptPATE stage with the tiny random Llama (``tests/tiny_llm.py``): the first for the
PromptPATE panel of Figs. 3/4 and the findings, the second for the appendix figures 17–24 and
the summaries. ``test_workflow_wang.py``'s caching defence builds on the same PATE fits (digits,
σ = 2). The union of their targets runs ONCE per ``pytest`` session, also across
pytest-xdist workers (``make test`` runs ``-n 2 --dist loadfile``: the two files may land on
different workers): the first worker to ask builds it under an exclusive ``fcntl`` lock in the
session's shared temporary folder (:func:`build_once`), the other waits for the lock and reuses
it (a failed build is recorded and re-raised, not retried). A file that changes a run works on a
copy (:func:`copy_run`: mtimes and Snakemake's metadata kept, so a no-op stays a no-op).
"""

from __future__ import annotations

import fcntl
import os
import shutil
from pathlib import Path

import pytest
import yaml

from tiny_llm import build_tiny_model
from workflow_runner import REPO, output_of, run_snakemake

TINY = REPO / "tests" / "configs" / "tiny.yaml"
#: test_workflow_private_prediction.py: Figs. 3/4 and the findings table (which also builds the
#: Private-kNN and PromptPATE parts); Private-kNN: Fig. 5 and the worst-case Nat-AdvQ appendix figure.
PRIVATE_PREDICTION_TARGETS = ("chadha_fig3", "chadha_fig4", "chadha_findings", "chadha_fig5", "chadha_fig25")
#: test_workflow_promptpate.py: Figs. 17–24 and the PromptPATE summaries.
PROMPTPATE_TARGETS = (*(f"chadha_fig{i}" for i in range(17, 25)), "results/chadha2024/private_prediction/promptpate/summary.csv")
#: test_workflow_wang.py: the caching defence on the PATE stage's fits (digits, σ = 2), whose
#: teachers, canaries, fits and audits are those of PRIVATE_PREDICTION_TARGETS.
WANG_CACHING_TARGETS = ("wang_defence_caching",)
#: The config override of the shared run (beside tests/configs/tiny.yaml), file name in the run folder.
LLM_OVERRIDE = "llm.yaml"


def shared_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The temporary folder of this pytest session that every xdist worker sees."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def build_once(folder: Path, build) -> Path:
    """``build(folder)`` once per session under an exclusive lock; later callers get ``folder``.

    Raises:
        RuntimeError: if the build failed (here or in another worker): its message.
    """
    done, failed = folder.with_name(folder.name + ".done"), folder.with_name(folder.name + ".failed")
    with open(folder.with_name(folder.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if failed.exists():
                raise RuntimeError(f"the shared run {folder.name} failed:\n{failed.read_text()}")
            if not done.exists():
                try:
                    build(folder)
                except BaseException as exc:
                    failed.write_text(str(exc))
                    raise
                done.touch()
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return folder


def copy_run(src: Path, dest: Path) -> Path:
    """A copy of a run folder (results, logs, benchmarks, resources, Snakemake's metadata, the
    config files; ``shutil.copytree`` keeps mtimes) to change without touching ``src``."""
    shutil.copytree(src, dest, symlinks=True)
    return dest


def build_tiny_llm_run(workdir: Path) -> None:
    workdir.mkdir(parents=True, exist_ok=True)
    build_tiny_model(workdir / "tiny-llama")
    (workdir / LLM_OVERRIDE).write_text(yaml.safe_dump({"chadha2024": {"promptpate": {
        "model": str(workdir / "tiny-llama"), "model_name": "tiny-llama", "device": "cpu"}}}))
    proc = run_snakemake(*PRIVATE_PREDICTION_TARGETS, *PROMPTPATE_TARGETS, *WANG_CACHING_TARGETS, "--cores", "2", "--directory", str(workdir),
                         "--configfile", str(TINY), str(workdir / LLM_OVERRIDE), timeout=1200,
                         env={**os.environ, "OMP_WAIT_POLICY": "PASSIVE"})
    if proc.returncode != 0:
        raise RuntimeError(output_of(proc))

