"""``ppaudit audit-votes`` reports (issue 27, items 5b and 5c): both RDP → (ε, δ) conversions, each
named, and whether the Monte Carlo audit resolves the exposed query's effect."""

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from ppaudit.accounting import rdp_to_dp
from ppaudit.blackbox.votes import CONVERSIONS, audit_votes, load_votes
from cli_runner import call

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def readme_votes(tmp_path_factory):
    """The votes of examples/audit_pate_votes_cli.py (250 teachers, 100 queries, 10 classes)."""
    spec = importlib.util.spec_from_file_location("votes_example", REPO / "examples" / "audit_pate_votes_cli.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    path = tmp_path_factory.mktemp("votes") / "votes.npz"
    mod.write_votes(path)
    return path


def test_both_conversions_are_printed_and_named(capsys, readme_votes):
    code, out, err = call(capsys, "audit-votes", readme_votes, "--sigma", 40, "--trials", 20000)
    assert code == 0, err
    assert "0.8069 (order 20.3)  RDP → (ε, δ): Balle et al. 2020, Thm 20" in out
    assert "0.9953 (order 23.1)  RDP → (ε, δ): classic" in out and "Papernot et al. 2018" in out
    code, out, _ = call(capsys, "audit-votes", readme_votes, "--sigma", 40, "--trials", 20000, "--json")
    d = json.loads(out)
    conv = {(e["kind"], e["conversion"]): e for e in d["accounted_epsilon"]}
    assert conv[("data_dependent", "balle2020")]["procedure"] == CONVERSIONS["balle2020"]
    assert conv[("data_dependent", "classic")]["epsilon"] == d["epsilon_data_dependent_classic"]
    # the library's own conversion of the same composed RDP curve (no second implementation)
    res = audit_votes(load_votes(readme_votes), 40.0, trials=1000)
    total = res.per_query_rdp.sum(axis=0)
    assert d["epsilon_data_dependent_classic"] == pytest.approx(rdp_to_dp(total, res.orders, 1e-5, method="classic"), rel=1e-12)
    assert d["epsilon_data_dependent"] == pytest.approx(rdp_to_dp(total, res.orders, 1e-5), rel=1e-12)
    assert d["epsilon_data_dependent"] < d["epsilon_data_dependent_classic"]


def test_unresolved_effect_says_so_with_the_trials_needed(capsys, readme_votes):
    code, out, err = call(capsys, "audit-votes", readme_votes, "--sigma", 40, "--trials", 20000, "--json")
    r = json.loads(out)["resolution"]
    assert code == 0 and not r["resolved"] and r["trials"] == 20000
    assert r["trials_needed"] > 20000 and r["trials_suggested"] == 4 * r["trials_needed"]
    code, out, _ = call(capsys, "audit-votes", readme_votes, "--sigma", 40, "--trials", 20000)
    line = next(x for x in out.splitlines() if x.startswith("resolution:"))
    assert "NOT resolved" in line and "--trials" in line and "at least about" in line


def test_resolved_effect_says_so(capsys, tmp_path):
    np.savez(tmp_path / "h.npz", histograms=np.array([[6, 4, 0], [9, 1, 0]]))
    code, out, err = call(capsys, "audit-votes", tmp_path / "h.npz", "--sigma", 2, "--trials", 200000)
    assert code == 0, err
    line = next(x for x in out.splitlines() if x.startswith("resolution:"))
    assert line.startswith("resolution: resolved"), line
