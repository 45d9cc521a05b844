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
