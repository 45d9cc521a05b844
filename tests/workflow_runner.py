"""How the workflow tests run Snakemake: this interpreter's Snakemake on the repository's
Snakefile, output captured, never raising on failure (the tests assert on the result)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SNAKEFILE = REPO / "Snakefile"


def run_snakemake(*args: str, cwd: Path = REPO, timeout: float = 600, env: dict | None = None) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(SNAKEFILE), *args]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)


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
