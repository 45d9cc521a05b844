"""PATE / CaPC stage of the workflow end to end (Chadha et al. 2024, Figs. 3, 4, findings).

`snakemake chadha_fig3 chadha_fig4 chadha_findings` runs in a temporary directory on
tests/configs/tiny.yaml (sklearn digits, 20 logreg teachers, σ = 2, n_Q = 12, T = 2e4);
the figures, their CSVs, the per-query audits and the findings table are checked against
closed forms and the orderings that must hold by construction. The library is tested in
tests/test_private_prediction.py and friends; nothing here repeats those tests.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from ppaudit.accounting import rdp_to_dp
from ppaudit.plots.pate_capc import REAL_EPS_COLUMNS
from tiny_llm import build_tiny_model  # tests/tiny_llm.py
from workflow_runner import run_snakemake  # tests/workflow_runner.py

REPO = Path(__file__).resolve().parents[1]
TINY = REPO / "tests" / "configs" / "tiny.yaml"
TARGETS = ("chadha_fig3", "chadha_fig4", "chadha_findings")


def tiny_pc() -> dict:
    """chadha2024.pate_capc of the tiny config over its shared chadha2024.audit_defaults (e.g. orders)."""
    chadha = yaml.safe_load(TINY.read_text())["chadha2024"]
    return {**chadha.get("audit_defaults", {}), **chadha["pate_capc"]}


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    workdir = tmp_path_factory.mktemp("pate_capc")
    # chadha_fig3/4 and the findings include the PromptPATE panel: its teachers are the tiny random
    # Llama here (the packaged Gemma-3-270M is converted and scored in tests/unit/models/test_llm.py,
    # and its PromptPATE stage in tests/test_workflow_promptpate.py's layout).
    build_tiny_model(workdir / "tiny-llama")
    (workdir / "llm.yaml").write_text(yaml.safe_dump({"chadha2024": {"promptpate": {
        "model": str(workdir / "tiny-llama"), "model_name": "tiny-llama", "device": "cpu"}}}))
    proc = run_snakemake(*TARGETS, "--cores", "2", "--directory", str(workdir), "--configfile", str(TINY), str(workdir / "llm.yaml"), timeout=900)
    assert proc.returncode == 0, f"{proc.stdout}\n{proc.stderr}"
    return workdir


def audit_dir(run_dir: Path, algo: str, adversary: str) -> Path:
    cfg = tiny_pc()
    sigma = cfg["dataset_settings"]["digits"]["sigma"]
    seed = yaml.safe_load(TINY.read_text())["seed"]
    return run_dir / "results" / "audits" / algo / "digits" / "logreg" / f"seed{seed}" / adversary / f"sigma{sigma:g}"


@pytest.mark.workflow
@pytest.mark.timeout(900)
def test_fig3_fig4_files_and_panels(run_dir):
    for fig, advs in (("fig3", {"nat-advq", "pois-advq"}), ("fig4", {"pois-natq"})):
        base = run_dir / "results" / "figures" / "chadha2024" / fig
        assert base.with_suffix(".pdf").read_bytes().startswith(b"%PDF")
        assert base.with_suffix(".png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
        csv = pd.read_csv(base.with_suffix(".csv"))
        assert list(csv.columns) == ["algo", "dataset", "bar", "adversary", "column", "epsilon"]
        # the PromptPATE stage adds its panel to the same figures (tests/test_workflow_promptpate.py)
        assert set(csv["algo"]) == {"pate", "capc", "promptpate"}
        csv = csv[csv["algo"].isin(["pate", "capc"])]
        assert set(csv["dataset"]) == {"digits"}
        assert set(csv["adversary"]) == advs
        assert np.isfinite(csv["epsilon"]).all(), csv
        # Thm 1 conversions of RDP curves are never below the floor ε of the zero curve (> 0);
        # the exact ε (PLD) and the valid ε lower bound are real ε values (≥ 0, 0 = nothing)
        real = csv["column"].isin(REAL_EPS_COLUMNS)
        assert (csv.loc[~real, "epsilon"] > 0).all() and (csv.loc[real, "epsilon"] >= 0).all(), csv
        # per algorithm: one data-independent bar, then per adversary the paper's and the sound bars
        per_adv = {"data_dependent", "exact", "exact_transcript", "two_cut_cp", "two_cut_transcript", "valid_eps_lower"}
        for algo, g in csv.groupby("algo"):
            assert (g["column"] == "data_independent").sum() == 1, g
            for adv in advs:
                have = set(g.loc[g["adversary"] == adv, "column"])
                assert per_adv <= have, (algo, adv, have)
                assert ("exact_eps_pld" in have) == adv.endswith("advq"), (algo, adv, have)  # one query: PLD of its transcript
        assert csv["bar"].str.contains("paper: per-query composition").any() and csv["bar"].str.contains("sound: transcript").any()
        # Fig. 4: the joint transcript (all natural queries on one training draw) beside the per-query sum
        assert ("two_cut_joint" in set(csv["column"])) == (fig == "fig4")


@pytest.mark.workflow
@pytest.mark.timeout(900)
def test_data_independent_bar_is_the_closed_form(run_dir):
    # n_Q repetitions (AdvQ) or n_Q natural queries (Pois-NatQ) of α/σ² each, then Thm 1.
    cfg = tiny_pc()
    sigma, nq = cfg["dataset_settings"]["digits"]["sigma"], cfg["num_queries"]
    orders = np.asarray(cfg["orders"], dtype=float)
    expected = rdp_to_dp(nq * orders / sigma**2, orders, 1e-6)
    for fig in ("fig3", "fig4"):
        csv = pd.read_csv(run_dir / "results" / "figures" / "chadha2024" / f"{fig}.csv")
        csv = csv[csv["algo"].isin(["pate", "capc"])]
        di = csv.loc[csv["column"] == "data_independent", "epsilon"]
        np.testing.assert_allclose(di, expected, rtol=1e-10)


@pytest.mark.workflow
@pytest.mark.timeout(900)
def test_per_query_audits_are_lower_bounds_and_theory_upper_bounds(run_dir):
    for algo in ("pate", "capc"):
        for adv in ("nat-advq", "pois-advq", "pois-natq"):
            d = audit_dir(run_dir, algo, adv)
            pq = pd.read_csv(d / "per_query.csv")
            assert (pq[["two_cut_cp", "k_cut", "exact", "data_dependent", "data_independent"]] >= 0).all().all()
            # the 2-cut audit never exceeds the certified upper end of the exact RDP, nor theory
            enum = pq["exact_method"].isin(["enumerate", "identical"])
            assert (pq.loc[enum, "two_cut_cp"] <= pq.loc[enum, "exact_hi"] + 1e-9).all(), pq[enum]
            assert (pq["two_cut_cp"] <= pq["data_independent"] + 1e-12).all()
            np.testing.assert_allclose(pq["data_independent"], pq["order"] / 2.0**2, rtol=1e-12)
            # composition: the composed RDP is repetitions × per-query RDP summed over queries
            rdp = pd.read_csv(d / "rdp.csv")
            for cand, g in pq[~pq["control"]].groupby("candidate"):
                comp = (g["exact"] * g["repetitions"]).groupby(g["order"]).sum()
                got = rdp[(rdp["candidate"] == cand) & ~rdp["control"]].set_index("order")["exact"]
                np.testing.assert_allclose(got.loc[comp.index], comp, rtol=1e-9, atol=1e-12)
            # paper (per-query composition) and sound (transcript) values side by side
            tr = pq[~pq["control"]]
            ex = tr[tr["exact_transcript"].notna()]  # NaN: support too large, only the cap ("histogram cap only")
            assert (ex["exact_transcript"] <= ex["transcript_cap"] * (1 + 1e-6) + 1e-9 + 5 * ex["transcript_se"].fillna(0)).all()
            assert set(tr.loc[tr["exact_transcript"].isna(), "transcript_method"]) <= {"histogram cap only", "vote cap only"}
            assert (tr["two_cut_transcript"] <= tr["transcript_cap"] * (1 + 1e-6) + 1e-9).all()
            assert (pq["multiplicity"] == "bonferroni").all() and (pq["fit_procedure"] == "ours").all()
            summary = pd.read_csv(d / "summary.csv")
            assert set(summary["case"]) == {"worst", "max", "average", "control"}
            # Bonferroni over candidates × queries: all per-query audits hold at once at 95 % less the pruning slack
            n = pq.groupby(["candidate", "query"]).ngroups
            eff = pq.groupby(["candidate", "query"])["effective_confidence"].min()
            np.testing.assert_allclose(summary["simultaneous_confidence"], 1 - (1 - eff).sum(), rtol=1e-12)
            assert 0.95 - 1e-3 <= summary["simultaneous_confidence"].iloc[0] <= 0.95 + 1e-12 and n >= 1
            # the joint Pois-NatQ audit: a lower bound never above its certified cap nor the enumerated exact value
            joint = pd.read_csv(d / "joint.csv")
            assert joint.empty == (adv != "pois-natq"), joint
            if not joint.empty:
                assert (joint["procedure"] == "ours").all()
                assert (joint["two_cut_joint"] <= joint["joint_cap"].fillna(np.inf) * (1 + 1e-6) + 1e-9).all(), joint
                enum = joint["joint_method"] == "enumerate"
                assert (joint.loc[enum, "two_cut_joint"] <= joint.loc[enum, "exact_joint"] * (1 + 1e-6) + 1e-9).all(), joint
                assert (joint.loc[enum, "exact_joint"] <= joint.loc[enum, "joint_cap"] * (1 + 1e-6) + 1e-9).all(), joint
                assert {"two_cut_joint", "exact_joint", "joint_cap", "valid_eps_lower_joint"} <= set(summary["column"])
            # the null canary (a canary not in the training data) audits at the floor
            ctl = summary[(summary["case"] == "control") & summary["column"].isin(["two_cut_cp", "exact", "two_cut_transcript"])]
            np.testing.assert_allclose(ctl["epsilon"], ctl["eps_floor"], rtol=1e-9)
            assert (summary["num_canary_instantiations"] == tiny_pc()["canary_instantiations"]).all()
    # CaPC with a deterministic learner: point-mass teachers, exact RDP by enumeration
    pq = pd.read_csv(audit_dir(run_dir, "capc", "pois-advq") / "per_query.csv")
    assert set(pq["exact_method"]) <= {"enumerate", "identical"}
    # at σ = 2 the poisoned CaPC teacher is detected by the audit (ε above the zero-RDP floor)
    s = pd.read_csv(audit_dir(run_dir, "capc", "pois-advq") / "summary.csv")
    worst = s[(s["case"] == "worst") & (s["column"] == "two_cut_cp")].iloc[0]
    assert worst["epsilon"] > worst["eps_floor"] * 5, s


@pytest.mark.workflow
@pytest.mark.timeout(900)
def test_findings_table_concatenates_the_parts(run_dir):
    table = pd.read_csv(run_dir / "results" / "tables" / "chadha2024_findings.csv")
    assert list(table.columns) == ["dataset", "algo", "finding", "adversary", "case", "values", "holds", "at_floor", "note"]
    # one part per algorithm
    algos = ("pate", "capc", "promptpate", "knn")
    assert set(table["algo"]) == set(algos)
    assert table["holds"].dtype == bool and table["at_floor"].dtype == bool
    findings = set(table["finding"])
    assert {"audit<=exact<=dd<=di", "pois-advq>=nat-advq", "capc>=pate", "pois-natq<<advq"} <= findings
    # the parts in the order common.smk lists them (CHADHA_FINDINGS_PARTS), issue 13's example last
    order = ("pate", "capc", "knn", "promptpate", "repeated_query_example")
    parts = [pd.read_csv(run_dir / "results" / "tables" / "findings" / f"{a}.csv") for a in order]
    pd.testing.assert_frame_equal(pd.concat(parts, ignore_index=True), table)
    # issue 13 §1's example, audited by the stage's code: the paper's composition above the cap, ours below
    ex = table[table["dataset"] == "synthetic (repeated query)"].set_index("finding")
    assert not ex.loc["paper audit<=transcript cap", "holds"] and ex.loc["transcript audit<=transcript cap", "holds"]
    # the soundness rows of issue 13: paper audit vs transcript cap, and the null-canary control at the floor
    for algo in ("pate", "capc"):
        t = table[table["algo"] == algo]
        assert {"paper audit<=transcript cap", "null canary at floor", "joint transcript audit<=joint cap",
                "stand-in teachers (accuracy, consensus)"} <= set(t["finding"])
        assert t.loc[t["finding"] == "null canary at floor", "holds"].all()
        assert t.loc[t["finding"] == "joint transcript audit<=joint cap", "holds"].all()
        # the stand-in teachers: accuracy and consensus per dataset, the paper states none of them
        teach = t[t["finding"] == "stand-in teachers (accuracy, consensus)"]
        assert set(teach["dataset"]) == {"digits"} and teach["note"].str.contains("paper: not stated").all()
        acc = float(teach["values"].iloc[0].split(";")[0].split("=")[1])
        assert 0.0 <= acc <= 1.0
    # the data-independent bound is the top of every chain
    chain = table[(table["finding"] == "audit<=exact<=dd<=di") & table["algo"].isin(["pate", "capc"])]
    for values in chain["values"]:
        nums = [float(v.split("=")[1]) for v in values.split(" ≤ ")]
        assert nums[-1] == max(nums), values


@pytest.mark.workflow
@pytest.mark.timeout(900)
def test_second_run_is_a_no_op(run_dir):
    proc = run_snakemake(*TARGETS, "--cores", "1", "--directory", str(run_dir), "--configfile", str(TINY), str(run_dir / "llm.yaml"), "-n", timeout=900)
    assert proc.returncode == 0, proc.stderr
    assert "Nothing to be done" in proc.stdout + proc.stderr, proc.stdout


def test_pate_capc_config_errors_name_the_key(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({"chadha2024": {"pate_capc": {"datasets": ["digits"], "rdp_panel_dataset": "mnist"}}}))
    proc = run_snakemake("-n", "chadha_fig3", "--directory", str(tmp_path), "--configfile", str(TINY), str(bad), timeout=120)
    assert proc.returncode != 0
    assert "chadha2024.pate_capc.rdp_panel_dataset" in proc.stdout + proc.stderr
