"""The runnable examples in examples/ (README "Audit your own mechanism") run and find what they claim."""

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def run_example(name, *args):
    return subprocess.run([sys.executable, str(EXAMPLES / name), *args], capture_output=True, text=True, timeout=300)


def test_report_noisy_max_bug_is_found():
    res = run_example("audit_report_noisy_max.py")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "buggy: " in res.stdout and "-> violation" in res.stdout
    assert "fixed: " in res.stdout and "-> consistent" in res.stdout


def test_pate_votes_file_via_cli():
    res = run_example("audit_pate_votes_cli.py")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "confident_gnmax" in res.stdout and "verdict consistent" in res.stdout


def test_one_run_mia_scores(tmp_path):
    pytest.importorskip("matplotlib")
    res = run_example("one_run_mia_scores.py", str(tmp_path / "t.png"))
    assert res.returncode == 0, res.stdout + res.stderr
    assert (tmp_path / "t.png").stat().st_size > 1000


def test_readme_audit_section_snippet_runs(capsys):
    readme = (EXAMPLES.parent / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Audit your own mechanism", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    exec(compile(code, "README.md", "exec"), {})
    assert capsys.readouterr().out.startswith("violation")
