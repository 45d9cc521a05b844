"""``ppaudit one-run``: the names of its two ε (issue 27 item 4) and ``--scores FILE`` (issue 28 item 6)."""

import json

import numpy as np
import pytest

from ppaudit.attacks.one_run import epsilon_gdp_family, epsilon_lower_bound
from ppaudit.blackbox import auroc, epsilon_interval_from_confusion, one_run_audit, tpr_at_fpr
from cli_runner import call


@pytest.fixture()
def scores_csv(tmp_path):
    rng = np.random.default_rng(7)
    member = rng.random(3000) < 0.5
    scores = 2.0 * member + rng.standard_normal(3000)
    path = tmp_path / "scores.csv"
    path.write_text("score,truth\n" + "".join(f"{float(s)!r},{int(t)}\n" for s, t in zip(scores, member)))
    return path, scores, member


def test_counts_json_names_the_valid_bound_epsilon_lower_bound(capsys):
    code, out, _ = call(capsys, "one-run", "--guesses", 1000, "--correct", 950, "--samples", 100000, "--json")
    res = json.loads(out)
    assert code == 0 and "epsilon_lower_bound_dp" not in res
    assert res["epsilon_lower_bound"] == pytest.approx(float(epsilon_lower_bound(1000, 950, 100000)))
    assert res["epsilon_gdp_family"] == pytest.approx(float(epsilon_gdp_family(1000, 950, 100000)))
    assert res["epsilon_lower_bound"] < res["epsilon_gdp_family"]  # 2.69 vs 3.12 (the audit guide's example, docs/audit_your_mechanism.md)
    assert "Gaussian trade-off curve" in res["epsilon_gdp_family_note"]
    code, out, _ = call(capsys, "one-run", "--guesses", 1000, "--correct", 950, "--samples", 100000)
    first, gdp = out.splitlines()[1:3]
    assert first.startswith("epsilon lower bound 2.686") and "any mechanism" in first
    assert "GDP-family epsilon 3.1195" in gdp and "assumes a Gaussian trade-off curve" in gdp


def test_scores_file_matches_the_library(capsys, scores_csv):
    path, s, b = scores_csv
    code, out, _ = call(capsys, "one-run", "--scores", path, "--json", "--fpr", 0.05, "--seed", 3, "--claim-dp", 0.5)
    res = json.loads(out)
    lib = one_run_audit(s, b, rng=3)
    assert code == 1 and res["verdict"] == "violation"
    assert res["num_guesses"] == lib.num_guesses and res["epsilon_lower_bound"] == pytest.approx(lib.epsilon_lower_bound)
    assert res["epsilon_gdp_family"] == pytest.approx(lib.epsilon_gdp_family)
    assert res["auroc"]["auroc"] == pytest.approx(auroc(s, b).auroc)
    tf = tpr_at_fpr(s, b, 0.05)
    assert res["tpr_at_fpr"]["tpr"] == pytest.approx(tf.tpr) and res["tpr_at_fpr"]["target_fpr"] == 0.05
    ei = epsilon_interval_from_confusion(tf.true_positives, tf.false_positives, tf.negatives - tf.false_positives,
                                         tf.positives - tf.true_positives, delta=1e-5)
    assert res["epsilon_interval"]["epsilon_low"] == pytest.approx(ei.epsilon_low)
    code, out, _ = call(capsys, "one-run", "--scores", path)
    assert code == 0 and "AUROC" in out and "TPR at FPR <= 0.01" in out and "assumes a Gaussian trade-off curve" in out


@pytest.mark.parametrize("content, args, flag", [
    (None, [], "--scores"),  # file missing
    ("a,b\n1,2\n", [], "score,truth"),
    ("score,truth\n0.1,1\n0.2,yes\n", [], "truth"),
    ("score,truth\n0.1,1\nx,0\n", [], "score"),
    ("score,truth\n0.1,1\n0.2,1\n", [], "members"),
    ("score,truth\n0.1,1\n0.2,0\n", ["--guesses", "3"], "--scores replaces"),
    ("score,truth\n0.1,1\n0.2,0\n", ["--fpr", "1.5"], "--fpr"),
])
def test_scores_bad_input_exits_2_naming_the_flag(capsys, tmp_path, content, args, flag):
    path = tmp_path / "s.csv"
    if content is not None:
        path.write_text(content)
    code, _, err = call(capsys, "one-run", "--scores", path, *args)
    assert code == 2 and flag in err and "Traceback" not in err


def test_counts_mode_needs_all_three_counts(capsys):
    code, _, err = call(capsys, "one-run", "--guesses", 5)
    assert code == 2 and "--correct" in err and "--samples" in err
