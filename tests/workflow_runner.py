"""How the workflow tests run Snakemake: this interpreter's Snakemake on the repository's
Snakefile, output captured, never raising on failure (the tests assert on the result)."""

from __future__ import annotations

import functools
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SNAKEFILE = REPO / "Snakefile"


@functools.lru_cache(maxsize=None)
def _local_rate_limit() -> str:
    """``max-jobs-per-timespan`` of workflow/profiles/default (why: ppaudit.workflow.scheduler_timers)."""
    import yaml

    return str(yaml.safe_load((REPO / "workflow" / "profiles" / "default" / "config.yaml").read_text())["max-jobs-per-timespan"])


def run_snakemake(*args: str, cwd: Path = REPO, timeout: float = 600, env: dict | None = None) -> subprocess.CompletedProcess:
    """Snakemake on the repository's Snakefile with ``args``, and the default profile's job-rate
    limit (its scheduler's timers cost CPU at Snakemake's default; ``args`` may override it)."""
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(SNAKEFILE), "--max-jobs-per-timespan", _local_rate_limit(), *args]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)


def run_snakemake_many(runs: list[tuple[tuple[str, ...] | list[str], Path]], timeout: float = 600, parallel: int = 2,
                       env: dict | None = None) -> list[subprocess.CompletedProcess]:
    """``run_snakemake(*args, cwd=cwd)`` for each ``(args, cwd)`` of ``runs``, as one process
    (tests/snakemake_forks.py: Snakemake imported once, each run a forked ``snakemake.cli.main``, at
    most ``parallel`` at once): for the many short runs that stop at the config check (about 1 CPU-s
    less each). Returns one ``CompletedProcess`` per run, in order, with its exit code and output."""
    import json
    import os
    import signal
    import tempfile

    with tempfile.TemporaryDirectory(prefix="snakemake_forks_") as tmp:
        jobs = []
        for i, (args, cwd) in enumerate(runs):
            argv = ["--snakefile", str(SNAKEFILE), *args]
            jobs.append({"argv": argv, "cwd": str(cwd), "stdout": f"{tmp}/{i}.out", "stderr": f"{tmp}/{i}.err"})
        spec = Path(tmp) / "jobs.json"
        spec.write_text(json.dumps({"jobs": jobs, "parallel": parallel}))
        server = subprocess.Popen([sys.executable, str(Path(__file__).with_name("snakemake_forks.py")), str(spec)],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)
        try:
            out, err = server.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.communicate()
            raise
        if server.returncode != 0:
            raise RuntimeError(f"tests/snakemake_forks.py failed (exit {server.returncode}):\n{out[-2000:]}\n{err[-4000:]}")
        codes = json.loads(out.strip().splitlines()[-1])
        return [subprocess.CompletedProcess([sys.executable, "-m", "snakemake", *job["argv"]], code,
                                            Path(job["stdout"]).read_text(errors="replace"), Path(job["stderr"]).read_text(errors="replace"))
                for job, code in zip(jobs, codes)]


def output_of(proc: subprocess.CompletedProcess) -> str:
    """Exit code and the tails of stdout / stderr, for assertion messages."""
    return f"exit code {proc.returncode}\n--- stdout ---\n{proc.stdout[-4000:]}\n--- stderr ---\n{proc.stderr[-6000:]}"


def assert_figure_files(base: Path) -> Path:
    """A figure target's triplet at ``base`` (no suffix): a PDF, a PNG and a non-empty CSV of the
    plotted numbers (ppaudit.io.write_figure_outputs). Returns the CSV's path."""
    assert base.with_suffix(".pdf").read_bytes().startswith(b"%PDF"), base
    assert base.with_suffix(".png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n"), base
    csv = base.with_suffix(".csv")
    assert csv.stat().st_size > 0, csv
    return csv


def tiny_section(name: str) -> dict:
    """``chadha2024.<name>`` of tests/configs/tiny.yaml over its shared ``chadha2024.audit_defaults``
    (e.g. the orders): the values the workflow's jobs see for that mechanism section."""
    import yaml

    chadha = yaml.safe_load((REPO / "tests" / "configs" / "tiny.yaml").read_text())["chadha2024"]
    return {**chadha.get("audit_defaults", {}), **chadha[name]}


#: What ``make run`` leaves under results/ (a sample of the embedded default run's files, as listed
#: in a finished run of the README's `make run`): enough that its targets are up to date for
#: Snakemake, so a test that passes only on an empty results/ fails with it (issue 27, item 7).
POPULATED_RESULTS = (
    "results/chadha2024/synthetic/fig2.csv",
    "results/chadha2024/synthetic/fig2.counts.json",
    "results/chadha2024/synthetic/fig6.csv",
    "results/chadha2024/synthetic/fig6.counts.json",
    "results/figures/chadha2024/fig2.csv",
    "results/figures/chadha2024/fig2.pdf",
    "results/figures/chadha2024/fig2.png",
    "results/figures/chadha2024/fig6.csv",
    "results/figures/chadha2024/fig6.pdf",
    "results/figures/chadha2024/fig6.png",
    "results/chadha2024/worstcase/gnmax_worst_case.csv",
    "results/figures/chadha2024/worstcase.csv",
    "results/figures/chadha2024/worstcase.pdf",
    "results/figures/chadha2024/worstcase.png",
    "results/figures/chadha2024/worstcase_epsilon.csv",
    "results/labeldp/synthetic/rr.csv",
    "results/labeldp/synthetic/rr_summary.csv",
    "results/figures/labeldp/obs_fig3.csv",
    "results/figures/labeldp/obs_fig3.pdf",
    "results/figures/labeldp/obs_fig3.png",
    "results/tables/findings/repeated_query_example.csv",
    "logs/audit_synthetic_pair/fig2.log",
    "logs/plot_chadha_synthetic/fig2.log",
    "benchmarks/audit_synthetic_pair/fig2.tsv",
)

#: Top-level entries a run writes, never linked into a temporary checkout.
RUN_OUTPUTS = ("results", "logs", "benchmarks", ".snakemake")


def temp_checkout(dest: Path, results: tuple[str, ...] | list[str] = ()) -> Path:
    """A checkout of the repository at ``dest`` for tests that run Snakemake in a checkout's root.

    Every top-level entry of the repository is symlinked into ``dest`` (unless ``dest`` already
    has it) except what a run writes (:data:`RUN_OUTPUTS`), ``.git`` and ``.venv``: the checkout's own ``results/`` cannot change what the
    test sees, and the test writes nothing into the real one. ``results``: files to create first
    (paths relative to ``dest``, e.g. :data:`POPULATED_RESULTS`), newer than every source file,
    as after ``make run``.
    """
    dest.mkdir(parents=True, exist_ok=True)
    for entry in REPO.iterdir():
        if entry.name in RUN_OUTPUTS or entry.name in (".git", ".venv", ".pytest_cache") or (dest / entry.name).exists():
            continue
        (dest / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
    for rel in results:
        path = dest / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("written by tests/workflow_runner.temp_checkout\n")
    return dest
