"""The README's two commands in the README's order: `make test` after `make run` (issue 27, item 7).

`make run` fills results/ in the checkout; a test that runs Snakemake in the checkout's root and
expects jobs to be scheduled then sees "Nothing to be done". Two checks keep every test
independent of what results/ holds:

* a scan of the tests: every test or fixture that runs Snakemake (or ``ppaudit figure``) does so
  in its own directory (``--directory``, a temporary checkout) — or is listed in
  :data:`REPO_ROOT_RUNS` with the reason its outcome cannot depend on results/;
* those listed tests are run again, by pytest, in a temporary checkout whose results/ holds what
  `make run` leaves there (:data:`workflow_runner.POPULATED_RESULTS`).
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from workflow_runner import POPULATED_RESULTS, REPO, temp_checkout

TESTS = REPO / "tests"

#: Tests that run Snakemake in the checkout's root, and why results/ cannot change their outcome.
REPO_ROOT_RUNS = {
    "tests/workflow/test_workflow.py::test_lint_is_clean": "--lint reads the rules, never the DAG's files",
    "tests/workflow/test_workflow_wang.py::test_bad_wang_config_names_the_key":
        "the config check fails while the Snakefile is parsed, before any DAG is built",
}

_MARKERS = ("run_snakemake(", "run_snakemake_many(", '"snakemake"', "'snakemake'", 'run("figure"', "run('figure'")
_OWN_DIRECTORY = ("--directory", "temp_checkout(", "cwd=tmp_path")


def _snakemake_runs() -> dict[str, str]:
    """``{node id: how it chooses its directory}`` for every test function or fixture that runs Snakemake."""
    found = {}
    for path in sorted(TESTS.rglob("test_*.py")):
        if path.name == Path(__file__).name:
            continue
        source = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(source)):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            body = ast.get_source_segment(source, node) or ""
            is_fixture = any("fixture" in ast.unparse(d) for d in node.decorator_list)
            if not (node.name.startswith("test_") or is_fixture) or not any(m in body for m in _MARKERS):
                continue
            own = next((m for m in _OWN_DIRECTORY if m in body), None)
            found[f"{path.relative_to(REPO).as_posix()}::{node.name}"] = own or "checkout root"
    return found


def test_every_snakemake_run_of_the_tests_uses_its_own_directory():
    runs = _snakemake_runs()
    assert len(runs) >= 10, runs  # the scan finds the workflow tests
    in_root = sorted(k for k, v in runs.items() if v == "checkout root")
    unexplained = [k for k in in_root if k not in REPO_ROOT_RUNS]
    assert not unexplained, (
        "these tests run Snakemake in the checkout's root, so `make run` before `make test` can change their "
        f"outcome; give them --directory or workflow_runner.temp_checkout, or list them in REPO_ROOT_RUNS: {unexplained}"
    )
    stale = [k for k in REPO_ROOT_RUNS if k not in in_root]
    assert not stale, f"REPO_ROOT_RUNS lists tests that no longer run in the root: {stale}"


@pytest.mark.workflow
@pytest.mark.timeout(900)
def test_repo_root_runs_pass_with_a_populated_results(tmp_path):
    # A checkout whose results/ holds what `make run` leaves there; tests/ is a copy, so the
    # tests' REPO (Path(__file__).resolve().parents[...]) is this checkout, not the real one.
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    shutil.copytree(TESTS, checkout / "tests", ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    temp_checkout(checkout, POPULATED_RESULTS)
    node_ids = [*REPO_ROOT_RUNS, "tests/unit/cli/test_cli_commands.py::test_entry_point_figure_dry_run_wraps_snakemake"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *node_ids],
                          cwd=checkout, capture_output=True, text=True, timeout=880, env=env)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
    assert f"{len(node_ids) + 1} passed" in proc.stdout, proc.stdout[-3000:]  # the figure test runs twice (empty, populated)
    assert (checkout / POPULATED_RESULTS[0]).is_file()
