"""The ``ppaudit`` command. A few calls go through the installed entry point (as users call it);
the detailed checks call :func:`ppaudit.cli.main` in-process (same code, no interpreter start-up)."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from cli_runner import call

REPO = Path(__file__).resolve().parents[3]
COMMANDS = ["audit-votes", "audit-counts", "one-run", "selfcheck", "figure"]


def _exe() -> str:
    cand = Path(sys.executable).with_name("ppaudit")
    if cand.is_file():
        return str(cand)
    found = shutil.which("ppaudit", path=str(Path(sys.executable).parent))
    if found is None:
        pytest.fail("the ppaudit entry point is not installed next to the interpreter; run pip install -e .")
    return found


def run(*args, cwd=None):
    """The installed entry point in a subprocess."""
    return subprocess.run([_exe(), *map(str, args)], capture_output=True, text=True, cwd=cwd or REPO, timeout=300)


@pytest.fixture()
def votes_file(tmp_path):
    rng = np.random.default_rng(0)
    votes = rng.choice(4, size=(50, 6), p=[0.7, 0.2, 0.05, 0.05])  # 50 teachers, 6 queries
    np.savez(tmp_path / "votes.npz", votes=votes, num_classes=4)
    return tmp_path / "votes.npz"


def _write_counts(path, c0, c1):
    path.write_text("output,counts0,counts1\n" + "".join(f"o{i},{a},{b}\n" for i, (a, b) in enumerate(zip(c0, c1))))


# ---------------------------------------------------------------------------------- entry point


def test_entry_point_help_and_votes_json(votes_file):
    res = run("--help")
    assert res.returncode == 0 and all(c in res.stdout for c in COMMANDS)
    res = run("audit-votes", votes_file, "--sigma", 5, "--trials", 20000, "--json")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["mechanism"] == "gnmax" and out["num_queries"] == 6 and out["verdict"] == "consistent"
    assert 0 < out["epsilon_data_dependent"] <= out["epsilon_data_independent"] + 1e-9
    assert sum(out["most_exposed_histogram"]) == 50


def test_entry_point_exit_codes(tmp_path):
    _write_counts(tmp_path / "c.csv", [7300, 2700], [2700, 7300])  # binary RR with eps = 1
    bad = run("audit-counts", tmp_path / "c.csv", "--claim-dp", 0.5, "--json")
    assert bad.returncode == 1, bad.stderr
    out = json.loads(bad.stdout)
    assert out["verdict"] == "violation" and out["epsilon_lower_bound"] > 0.5
    res = run("one-run", "--guesses", 10, "--correct", 20, "--samples", 100)
    assert res.returncode == 2 and "--correct" in res.stderr and "20" in res.stderr  # the flag, not a Python name


@pytest.mark.parametrize("results", ["empty", "populated"])
def test_entry_point_figure_dry_run_wraps_snakemake(tmp_path, results):
    # In a temporary checkout (tests/workflow_runner.temp_checkout), as `ppaudit figure` is run from a
    # checkout's root: what the real checkout's results/ holds (e.g. after `make run`) cannot change
    # the outcome; "populated" holds what `make run` leaves there (issue 27, item 7).
    from workflow_runner import POPULATED_RESULTS, temp_checkout

    checkout = temp_checkout(tmp_path / "checkout", POPULATED_RESULTS if results == "populated" else ())
    res = run("figure", "chadha_fig2", "--dry-run", "--json", cwd=checkout)
    assert res.returncode == 0, res.stdout + res.stderr
    out = json.loads(res.stdout)
    assert out["command"][-2:] == ["chadha_fig2", "--dry-run"] and "--profile" in out["command"]
    assert out["cwd"] == str(checkout)
    text = out["stdout_tail"] + out["stderr_tail"]
    if results == "empty":
        assert "plot_chadha_synthetic" in text and "Nothing to be done" not in text, text
    else:
        assert "Nothing to be done" in text, text


# ---------------------------------------------------------------------------------- in-process


@pytest.mark.parametrize("cmd", COMMANDS)
def test_help_of_every_subcommand(capsys, cmd):
    code, out, _ = call(capsys, cmd, "--help")
    assert code == 0 and "usage: ppaudit " + cmd in out


def test_audit_votes_confident_gnmax(capsys, votes_file):
    code, out, err = call(capsys, "audit-votes", votes_file, "--sigma", 5, "--threshold", 30, "--sigma1", 10,
                          "--trials", 5000, "--json")
    assert code == 0, err
    assert json.loads(out)["mechanism"] == "confident_gnmax"


def test_audit_votes_bad_input_exit_2(capsys, tmp_path):
    code, _, err = call(capsys, "audit-votes", tmp_path / "missing.npz", "--sigma", 40)
    assert code == 2 and "missing.npz" in err
    np.savez(tmp_path / "v.npz", votes=np.zeros((3, 2), dtype=int))
    code, _, err = call(capsys, "audit-votes", tmp_path / "v.npz", "--sigma", -1)
    assert code == 2 and "--sigma" in err and "-1" in err
    code, _, err = call(capsys, "audit-votes", tmp_path / "v.npz", "--sigma", 4, "--threshold", 3)
    assert code == 2 and "sigma1" in err
    np.savez(tmp_path / "w.npz", labels=np.zeros((3, 2), dtype=int))
    code, _, err = call(capsys, "audit-votes", tmp_path / "w.npz", "--sigma", 4)
    assert code == 2 and "'votes'" in err


def test_audit_counts_consistent_and_bad_values(capsys, tmp_path):
    _write_counts(tmp_path / "c.csv", [7300, 2700], [2700, 7300])
    code, out, _ = call(capsys, "audit-counts", tmp_path / "c.csv", "--claim-dp", 1.2)
    assert code == 0 and "verdict: consistent" in out
    (tmp_path / "bad.csv").write_text("counts0,counts1\n10,5\n-3,5\n")
    code, _, err = call(capsys, "audit-counts", tmp_path / "bad.csv")
    assert code == 2 and "-3" in err and "counts0" in err
    code, _, err = call(capsys, "audit-counts", tmp_path / "c.csv", "--orders", "0.5,2")
    assert code == 2 and "--orders" in err
    code, _, err = call(capsys, "audit-counts", tmp_path / "c.csv", "--claim-dp", 1, "--claim-gdp", 1)
    assert code == 2 and "at most one claim" in err


def test_one_run_json_and_verdicts(capsys):
    code, out, _ = call(capsys, "one-run", "--guesses", 1000, "--correct", 990, "--samples", 100000, "--json",
                        "--claim-gdp", 0.5)
    res = json.loads(out)
    assert code == 1 and res["verdict"] == "violation" and res["mu_lower_bound"] > 0.5
    code, out, _ = call(capsys, "one-run", "--guesses", 1000, "--correct", 600, "--samples", 100000, "--claim-gdp", 2.0)
    assert code == 0 and "consistent" in out
    code, _, err = call(capsys, "one-run", "--guesses", 10, "--correct", 5, "--samples", 100, "--tau", 1.5)
    assert code == 2 and "--tau" in err


def test_selfcheck_small_run_json(capsys, tmp_path):
    code, out, err = call(capsys, "selfcheck", "--repetitions", 4, "--trials", 4000, "--cases", "gnmax,gnmax_sigma_halved",
                          "--json", "--csv", tmp_path / "t.csv")
    assert code == 0, out + err
    rows = {r["case"]: r for r in json.loads(out)["table"]}
    assert rows["gnmax"]["flagged"] <= 1 and rows["gnmax_sigma_halved"]["flagged"] == 4
    assert (tmp_path / "t.csv").read_text().startswith("case,")
    code, _, err = call(capsys, "selfcheck", "--cases", "nonsense", "--repetitions", 1)
    assert code == 2 and "nonsense" in err
