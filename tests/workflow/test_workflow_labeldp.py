"""The label-DP targets end to end through Snakemake on a tiny config in a temp dir.

``obs_fig2`` (RR synthetic audit → figure) and ``malek_table5`` (image data → ALIBI models
with mislabelled canaries → ε_m intervals) run with ``--directory`` and a tiny config
(written next to tests/configs/tiny.yaml's settings); outputs and their numbers are checked.
Also: a bad label-DP config value stops Snakemake at parse time naming the key.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from workflow_runner import assert_figure_files, output_of, run_snakemake  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
TINY = REPO / "tests" / "configs" / "tiny.yaml"

LABELDP_TINY = {
    "labeldp": {
        "repetitions": 3,
        "datasets": {
            "image": {
                "train_size": 1000,
                "test_size": 200,
                "pca_dim": 16,
                "model": {"hidden": 32, "epochs": 3, "lr": 0.003, "batch_size": 64},
                "algorithms": ["alibi"],
                "epsilons": ["inf"],
            }
        },
        "synthetic_rr": {
            "n": 3000,
            "num_classes": [2, 5],
            "epsilons": [1, 4],
            "guess_fractions": [0.001, 0.01],
            "repetitions": 3,
            "proxy_train_size": 2000,
        },
        "malek": {"num_canaries": 100, "games": 2, "canaries_per_game": 50, "levels": {"high": {"alibi": 8, "agibi": 19}},
                  "model": {"hidden": 64, "epochs": 5, "lr": 0.003, "batch_size": 64}},
    }
}


@pytest.fixture(scope="module")
def labeldp_run(tmp_path_factory) -> Path:
    workdir = tmp_path_factory.mktemp("labeldp")
    cfg = workdir / "labeldp_tiny.yaml"
    cfg.write_text(yaml.safe_dump(LABELDP_TINY))
    proc = run_snakemake(
        "obs_fig2", "malek_table5", "--cores", "2", "--directory", str(workdir), "--configfile", str(TINY), str(cfg)
    )
    assert proc.returncode == 0, output_of(proc)
    return workdir


@pytest.mark.workflow
@pytest.mark.timeout(600)
def test_obs_fig2_outputs_and_numbers(labeldp_run):
    base = labeldp_run / "results" / "figures" / "labeldp" / "obs_fig2"
    assert_figure_files(base)
    df = pd.read_csv(base.with_suffix(".csv"))
    assert set(df["num_classes"]) == {2, 5}
    assert set(df["counterfactual"]) == {"true_posterior", "logistic_regression"}
    assert np.allclose(df["guess_fraction"], 0.001)
    assert (df["repetitions"] == 3).all()
    assert np.all(np.isfinite(df["epsilon_mean"])) and (df["epsilon_mean"] >= 0).all()
    # A lower bound at 95 % confidence: on average it must not exceed ε_theory by much.
    assert (df["epsilon_mean"] <= df["epsilon_theory"] + 1.0).all()
    summary = pd.read_csv(labeldp_run / "results" / "labeldp" / "synthetic" / "rr_summary.csv")
    assert set(np.round(summary["guess_fraction"], 6)) == {0.001, 0.01}
    assert (labeldp_run / "logs" / "audit_rr_synthetic" / "rr.log").stat().st_size > 0
    assert (labeldp_run / "benchmarks" / "audit_rr_synthetic" / "rr.tsv").exists()


@pytest.mark.workflow
@pytest.mark.timeout(600)
def test_malek_table5_outputs_and_numbers(labeldp_run):
    t = pd.read_csv(labeldp_run / "results" / "tables" / "labeldp" / "malek_table5.csv")
    # one row per (setting, estimator): the authors' estimator and our two, labelled
    assert list(t["canaries"].astype(str)) == ["1000"] * 3 + ["10x100"] * 3  # the paper's row names
    assert list(t["estimator"]) == ["paper", "ours_normal", "ours_cp"] * 2
    assert list(t["procedure"]) == ["paper", "ours", "ours"] * 2
    assert list(t["num_canaries"]) == [100] * 6  # 1 game of 100, 2 games of 50
    assert (t["epsilon_m_low"] >= 0).all() and (t["epsilon_m_low"] <= t["epsilon_m_high"]).all()
    assert t["interval"].str.contains("–").all()
    assert t["test_accuracy"].between(0.1, 1.0).all() and t["canary_memorisation_rate"].between(0, 1).all()
    assert (t["alibi_prior"] == "iterative").all()
    assert set(t["paper"]) == {"2.9–4.0", "2.7–3.6"}
    # the paper's estimator never reports an infinite lower end (its all-correct correction)
    assert np.isfinite(t.loc[t["estimator"] == "paper", "epsilon_m_low"]).all()
    assert t["intervals_overlap"].dtype == bool
    assert (labeldp_run / "results" / "tables" / "labeldp" / "malek_table5.md").read_text().startswith("# Malek Table 5")
    for run in ("n1000", "g0", "g1"):
        assert (labeldp_run / "results" / "labeldp" / "malek" / f"alibi_eps8_{run}.npz").exists()


@pytest.mark.workflow
@pytest.mark.timeout(300)
def test_bad_labeldp_config_stops_at_parse_time(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({"labeldp": {"datasets": {"tabular": {"train_size": 100, "test_size": 50, "model": {"iterations": 5},
                                                                       "algorithms": ["lp_1st_ood"], "epsilons": [1]}}}}))  # fmt: skip
    proc = run_snakemake("-n", "obs_table2", "--directory", str(tmp_path), "--configfile", str(TINY), str(bad))
    assert proc.returncode != 0
    assert "labeldp.datasets.tabular.algorithms" in proc.stdout + proc.stderr
    bad.write_text(yaml.safe_dump({"labeldp": {"repetitions": 1}}))
    proc = run_snakemake("-n", "obs_fig2", "--directory", str(tmp_path), "--configfile", str(TINY), str(bad))
    assert proc.returncode != 0
    assert "labeldp.repetitions" in proc.stdout + proc.stderr
