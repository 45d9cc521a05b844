"""`pip install ppaudit` (the lean core, no extras) into a fresh venv; the black-box API and the CLI run there.

Needs network access to PyPI (skipped otherwise). The package is built from a copy of
pyproject.toml, README.md, LICENSE and src/ so the build leaves nothing in the checkout.
"""

import json
import os
import shutil
import socket
import subprocess
import venv
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]

API_SNIPPET = r"""
import importlib.util, json, sys
import numpy as np
from ppaudit.blackbox import Claim, audit_mechanism, one_run_audit
import ppaudit, ppaudit.audit, ppaudit.accounting, ppaudit.cli, ppaudit.selfcheck

def rr(bit, n, rng):
    return np.where(rng.random(n) < np.e / (1 + np.e), bit, 1 - bit)

bug = audit_mechanism(rr, 0, 1, 20000, [2.0, 8.0], rng=0, claim=Claim.dp(0.5))
ok = audit_mechanism(rr, 0, 1, 20000, [2.0, 8.0], rng=0, claim=Claim.dp(1.0))
rng = np.random.default_rng(0)
b = rng.random(2000) < 0.5
mia = one_run_audit(2.0 * b + rng.standard_normal(2000), b, claim=Claim.gdp(0.5), rng=0)
heavy = [m for m in ("matplotlib", "torch", "sklearn", "snakemake") if importlib.util.find_spec(m) is not None]
print(json.dumps({"bug": bug.verdict, "ok": ok.verdict, "mia": mia.verdict, "heavy": heavy, "file": ppaudit.__file__}))
"""


def _pypi_reachable() -> bool:
    try:
        socket.create_connection(("pypi.org", 443), timeout=5).close()
        return True
    except OSError:
        return False


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_lean_core_installs_and_runs(tmp_path):
    if not _pypi_reachable():
        pytest.skip("PyPI is not reachable")
    src = tmp_path / "ppaudit-src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(REPO / name, src / name)
    shutil.copytree(REPO / "src", src / "src", ignore=shutil.ignore_patterns("*.egg-info", "__pycache__"))
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    # --no-compile: pip byte-compiles every installed module one after another (13 of 27 CPU-s of this
    # install, measured); the few the checks import are compiled when first imported, as any .py is.
    pip = subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-compile", "--disable-pip-version-check", str(src)],
                         capture_output=True, text=True, env=env, timeout=540)
    assert pip.returncode == 0, pip.stdout[-3000:] + pip.stderr[-3000:]

    api = subprocess.run([str(py), "-c", API_SNIPPET], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert api.returncode == 0, api.stderr[-3000:]
    out = json.loads(api.stdout.strip().splitlines()[-1])
    assert out == {**out, "bug": "violation", "ok": "consistent", "mia": "violation", "heavy": []}
    assert str(env_dir) in out["file"]  # the installed copy, not the checkout

    exe = str(env_dir / "bin" / "ppaudit")
    res = subprocess.run([exe, "one-run", "--guesses", "1000", "--correct", "990", "--samples", "100000",
                          "--claim-gdp", "0.5", "--json"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert res.returncode == 1 and json.loads(res.stdout)["verdict"] == "violation"
    (tmp_path / "c.csv").write_text("counts0,counts1\n7300,2700\n2700,7300\n")
    res = subprocess.run([exe, "audit-counts", "c.csv", "--claim-dp", "0.5"], capture_output=True, text=True, env=env,
                         cwd=tmp_path)
    assert res.returncode == 1 and "verdict: violation" in res.stdout
    res = subprocess.run([exe, "selfcheck", "--repetitions", "3", "--trials", "5000", "--cases",
                          "randomized_response,laplace_rnm_wrong_scale"], capture_output=True, text=True, env=env,
                         cwd=tmp_path)
    assert res.returncode == 0 and "passed: True" in res.stdout
    res = subprocess.run([exe, "figure", "selfcheck", "--dry-run"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert res.returncode == 2 and ("Snakefile" in res.stderr or "snakemake" in res.stderr)
