"""Chadha et al. 2024's private-prediction stages end to end through Snakemake on the tiny config: PATE / CaPC (Figs. 3, 4, findings) and Private-kNN (§6, App. E.4).

One run, in a temporary directory on tests/configs/tiny.yaml, of ``chadha_fig3``,
``chadha_fig4``, ``chadha_findings`` (whose Private-kNN and PromptPATE parts run their stages)
``chadha_fig5`` and ``chadha_fig25``: one run because the findings table needs the Private-kNN
stage anyway. The same run also builds the targets of test_workflow_promptpate.py (fixture
``tiny_llm_run``, tests/workflow/conftest.py: once per session, also across xdist workers).

* PATE / CaPC: sklearn digits, 20 logreg teachers, σ = 2, n_Q = 12, T = 1e5 exact counts (2e4 sampled); the figures,
  their CSVs, the per-query audits and the findings table are checked against closed forms and
  the orderings that must hold by construction. The library is tested in
  tests/unit/experiments/test_private_prediction.py and friends; nothing here repeats those tests.
* Private-kNN: 300 Rotten Tomatoes snippets through all-MiniLM-L6-v2 and 200 Fashion-MNIST
  images through EfficientNet-Lite0 (both packaged, offline), k = 20, γ = 0.3, σ = 3, 30
  queries. Checked: the files, the feature shapes, the columns of every table, and the
  orderings that must hold whatever the data — the 2-cut audit is a lower bound of the exact
  RDP of the model, which is below the data-independent theory, per query and composed. Also:
  the config checks of the chadha2024.knn section.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from ppaudit.accounting import rdp_to_dp
from ppaudit.audit import TRUNCATION_RESERVE, bonferroni_confidence, count_audits, epsilon_floor, simultaneous_confidence
from ppaudit.plots.knn import KNN_ADVERSARY_LABELS
from ppaudit.plots.pate_capc import REAL_EPS_COLUMNS
from shared_runs import PRIVATE_PREDICTION_TARGETS  # tests/shared_runs.py: the run shared with test_workflow_promptpate.py
from workflow_runner import assert_figure_files, output_of, run_snakemake, run_snakemake_many, tiny_section  # tests/workflow_runner.py

REPO = Path(__file__).resolve().parents[2]
TINY = REPO / "tests" / "configs" / "tiny.yaml"
#: PATE/CaPC: Figs. 3/4 and the findings table, which also builds the Private-kNN part (and the
#: PromptPATE one); Private-kNN: Fig. 5 and the worst-case Nat-AdvQ appendix figure.
TARGETS = PRIVATE_PREDICTION_TARGETS


@pytest.fixture(scope="module")
def run_dir(tiny_llm_run) -> Path:
    """The tiny config's run of :data:`TARGETS` (read-only here). chadha_fig3/4 and the findings include
    the PromptPATE panel: its teachers are the tiny random Llama (the packaged Gemma-3-270M is converted
    and scored in tests/unit/models/test_llm.py). The run is shared with test_workflow_promptpate.py,
    whose targets it also builds (tests/shared_runs.py, built once per session)."""
    return tiny_llm_run


def audit_dir(run_dir: Path, algo: str, adversary: str) -> Path:
    cfg = tiny_section("pate_capc")
    sigma = cfg["dataset_settings"]["digits"]["sigma"]
    seed = yaml.safe_load(TINY.read_text())["seed"]
    return run_dir / "results" / "audits" / algo / "digits" / "logreg" / f"seed{seed}" / adversary / f"sigma{sigma:g}"


@pytest.mark.workflow
@pytest.mark.timeout(900)
def test_fig3_fig4_files_and_panels(run_dir):
    for fig, advs in (("fig3", {"nat-advq", "pois-advq"}), ("fig4", {"pois-natq"})):
        base = run_dir / "results" / "figures" / "chadha2024" / fig
        assert_figure_files(base)
        csv = pd.read_csv(base.with_suffix(".csv"))
        assert list(csv.columns) == ["algo", "dataset", "bar", "adversary", "column", "epsilon"]
        # the PromptPATE stage adds its panel to the same figures (tests/workflow/test_workflow_promptpate.py)
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
    cfg = tiny_section("pate_capc")
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
    sims = {}  # (algo, adversary) → (simultaneous confidence, number of audits)
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
            # Bonferroni over every audit run (issue 27 §1): per (candidate, query) the 2-cut, the k-cut and the
            # transcript audit, for the canary and its null-canary control, plus the joint Pois-NatQ audits; all
            # of them hold at once at 95 % less the pruning slack, and summary.csv says so
            joint = pd.read_csv(d / "joint.csv")
            pairs = pq.groupby(["candidate", "query"]).ngroups
            n = pairs * 3 * 2 + (joint["candidate"].nunique() if not joint.empty else 0)
            assert count_audits(pq, joint) == n and (summary["num_audits"] == n).all() and pairs >= 1
            np.testing.assert_allclose(pq["confidence_per_audit"], bonferroni_confidence(0.95, n, TRUNCATION_RESERVE), rtol=1e-12)
            if not joint.empty:
                np.testing.assert_allclose(joint["confidence_per_audit"], bonferroni_confidence(0.95, n, TRUNCATION_RESERVE), rtol=1e-12)
            np.testing.assert_allclose(summary["simultaneous_confidence"], simultaneous_confidence(pq, joint), rtol=1e-12)
            # issue 34 §5: the pruning slack is inside the budget, every panel at ≥ the configured 95 %
            assert 0.95 <= summary["simultaneous_confidence"].min() <= 0.95 + TRUNCATION_RESERVE * 0.05 + 1e-12
            sims[algo, adv] = (float(summary["simultaneous_confidence"].min()), n)
            # the joint Pois-NatQ audit: a lower bound never above its certified cap nor the enumerated exact value
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
            assert (summary["num_canary_instantiations"] == tiny_section("pate_capc")["canary_instantiations"]).all()
    # the footer of Figs. 3/4 (logged as printed) states that union bound over those N audits
    for fig, advs in (("fig3", ("nat-advq", "pois-advq")), ("fig4", ("pois-natq",))):
        footer = [ln for ln in (run_dir / "logs" / "plot_chadha_fig34" / f"{fig}.log").read_text().splitlines() if "footer: " in ln]
        assert len(footer) == 1, footer
        text = footer[0].split("footer: ", 1)[1]
        assert text.startswith("per algorithm, dataset and adversary, every audit run (2-cut, k-cut and transcript audits of each "
                               "candidate and query, again for the null-canary controls, and the joint audits) holds at once"), text
        for algo in ("pate", "capc"):
            label = {"nat-advq": "Nat-AdvQ", "pois-advq": "Pois-AdvQ", "pois-natq": "Pois-NatQ"}
            each = ", ".join(f"{label[a]} ≥ {sims[algo, a][0]:.4f} (N = {sims[algo, a][1]})" for a in advs)
            assert f"{algo}: {each} (bonferroni)" in text, text
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
    assert list(table.columns) == ["dataset", "algo", "finding", "adversary", "case", "values", "holds", "at_floor", "note", "cause", "cause_detail"]
    # issue #34 §3: no unexplained False — every row that does not hold has a computed cause, with numbers
    from ppaudit.experiments.findings_causes import CAUSES, require_causes

    require_causes(table, "chadha2024_findings.csv")
    failing = table[~table["holds"]]
    assert failing["cause"].isin(CAUSES).all() and failing["cause_detail"].str.contains(r"\d").all()
    assert table.loc[table["holds"], "cause"].isna().all()
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
        # issue 34 §1: the canary teachers' poison success rate, one row per adversary, and in the pois-advq>=nat-advq notes
        canary = t[t["finding"] == "canary teachers learn their canary"].set_index("adversary")
        assert set(canary.index) == {"nat-advq", "pois-advq", "pois-natq"}
        for adv in ("pois-advq", "pois-natq"):
            rate = float(canary.loc[adv, "values"].split(";")[0].removeprefix("poison_success_rate="))
            assert 0.0 <= rate <= 1.0 and bool(canary.loc[adv, "holds"]) == (rate >= 0.9)
        if algo == "pate":
            assert t.loc[t["finding"] == "pois-advq>=nat-advq", "note"].str.contains("poison_success_rate=").all()
    # the data-independent bound is the top of every chain
    chain = table[(table["finding"] == "audit<=exact<=dd<=di") & table["algo"].isin(["pate", "capc"])]
    for values in chain["values"]:
        nums = [float(v.split("=")[1]) for v in values.split(" ≤ ")]
        assert nums[-1] == max(nums), values


@pytest.mark.workflow
@pytest.mark.timeout(900)
def test_chadha_rows_of_the_paper_comparison_find_their_numbers(run_dir):
    """Issue #34 §4: the paper comparison's Chadha et al. rows read this run's findings table; every
    row on a dataset the tiny config has (and the cross-algorithm rows, dataset 'all') finds its one number."""
    from ppaudit.experiments.paper_comparison import compare_with_paper, read_paper_numbers

    table = read_paper_numbers(REPO / "workflow" / "data" / "paper_numbers.csv")
    chadha = table[(table["paper"] == "Chadha et al. 2024") & (table["result_file"] == "results/tables/chadha2024_findings.csv")]
    assert len(chadha) >= 20
    findings = pd.read_csv(run_dir / "results" / "tables" / "chadha2024_findings.csv")
    ran = set(zip(findings["dataset"], findings["algo"])) | {("all", "")}
    mine = chadha[[any(f"'{d}'" in q and (f"algo == '{a}'" in q or not a) for d, a in ran) for q in chadha["query"]]]
    assert len(mine) >= 10
    out = compare_with_paper(mine, run_dir, ["results/tables/chadha2024_findings.csv"])
    assert (out["status"] == "computed").all(), out.loc[out["status"] != "computed", ["id", "status", "detail"]].to_string()
    assert out["ours"].between(0, 1).sum() >= len(out) - 1  # orderings: 1 or 0; the 'doubling' a ratio


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


# --- Private-kNN ---------------------------------------------------------------------

ADVERSARIES = ("nat-advq", "pois-advq", "pois-natq-test", "pois-natq-train", "pois-natq-embedding")


def _summary(run_dir: Path) -> pd.DataFrame:
    return pd.read_csv(run_dir / "results" / "chadha2024" / "private_prediction" / "knn" / "summary.csv")


@pytest.mark.workflow
@pytest.mark.timeout(900)
def test_figures_and_features_written(run_dir):
    for fig in ("fig5", "fig25"):
        base = run_dir / "results" / "figures" / "chadha2024" / fig
        assert_figure_files(base)
    cfg = tiny_section("knn")
    for ds, dim in (("rotten-tomatoes", 384), ("fashion-mnist", 1280)):
        st = cfg["dataset_settings"][ds]
        folder = run_dir / "results" / "features" / ds / st["encoder"] / "seed7"
        tr, te = np.load(folder / "train.npy"), np.load(folder / "test.npy")
        assert tr.shape == (st["num_train"], dim) and te.shape == (st["num_test"], dim) and tr.dtype == np.float32
        with np.load(folder / "labels.npz") as z:
            assert z["y_train"].shape == (st["num_train"],) and z["y_test"].shape == (st["num_test"],)
        # the library's feature cache (reused by a rerun of the rule) sits beside the results
        assert (run_dir / "resources" / "features" / ds / st["encoder"] / "train-seed7.npy").is_file()
        assert (run_dir / "benchmarks" / "extract_features" / ds / st["encoder"] / "seed7.tsv").is_file()
    text = np.load(run_dir / "results" / "features" / "rotten-tomatoes" / "all-minilm-l6-v2" / "seed7" / "train.npy")
    assert np.allclose(np.linalg.norm(text, axis=1), 1.0, atol=1e-4)  # MiniLM features: unit norm


@pytest.mark.workflow
@pytest.mark.timeout(900)
def test_audits_are_ordered_per_query_and_composed(run_dir):
    cfg = tiny_section("knn")
    s = _summary(run_dir)
    assert set(s["dataset"]) == set(cfg["datasets"]) and set(s["adversary"]) == set(ADVERSARIES)
    assert set(s["case"]) == {"worst", "max", "average"} and (s["algo"] == "knn").all()
    for col in ("audit_method", "trials_used", "paper_trials", "multiplicity", "confidence_per_audit", "effective_confidence_min",
                "num_audits", "simultaneous_confidence"):
        assert col in s, col
    # issue 27 §1: every audit run holds at once at 95 % less the pruning slack (the union bound over num_audits)
    conf = cfg.get("confidence", 0.95)  # issue 34 §5: the slack inside the budget, every panel at ≥ the configured level
    assert (s["simultaneous_confidence"] >= conf).all(), s.groupby(["dataset", "adversary"])["simultaneous_confidence"].min()
    assert (s["simultaneous_confidence"] <= conf + TRUNCATION_RESERVE * (1 - conf) + 1e-12).all()
    assert {"two_cut_paper", "valid_eps_lower"} <= set(s["column"])
    assert set(s["sigma"]) == {3.0} and (s["k"] == cfg["k"]).all() and (s["num_queries"] == cfg["num_queries"]).all()
    w = s[s["case"] == "worst"].pivot_table(index=["dataset", "adversary"], columns="column", values="epsilon")
    floor = float(s["eps_floor"].iloc[0])
    assert 0 < floor < 0.1  # orders up to 256 at δ = 1e-6
    np.testing.assert_allclose(floor, epsilon_floor(cfg["orders"], cfg.get("delta", 1e-6)), rtol=1e-12)
    # theory ≥ exact ≥ audit (exact: certified enumeration or a Monte Carlo mixture → small slack)
    assert (w["data_independent"] >= w["exact"]).all(), w
    assert (w["two_cut_cp"] <= w["exact"] * 1.05 + 1e-9).all(), w
    assert w["data_independent"].nunique() == 1  # n_Q queries of the same theory for every adversary
    # Rotten Tomatoes (two classes, exact counts with T = 1e6, σ = 3): every audit detects leakage
    rt = w.loc["rotten-tomatoes"]
    assert (rt["two_cut_cp"] > 3 * floor).all(), rt
    assert (rt["exact_lo"] <= rt["exact"] + 1e-12).all() and (rt["exact"] <= rt["exact_hi"] + 1e-12).all()
    for ds in cfg["datasets"]:
        st = cfg["dataset_settings"][ds]
        for adv in ADVERSARIES:
            d = run_dir / "results" / "knn" / ds / st["encoder"] / "seed7" / adv / "sigma3"
            pq = pd.read_csv(d / "per_query.csv")
            for col in ("adversary", "candidate", "query", "repetitions", "order", "two_cut_cp", "k_cut", "exact", "exact_se",
                        "data_independent", "nu", "count_mode", "effective_confidence", "expected_inclusions"):
                assert col in pq, (ds, adv, col)
            ncand = cfg["advq_candidates"] if adv.endswith("advq") else 1
            assert pq["candidate"].nunique() == ncand
            assert len(pq) == pq[["candidate", "query"]].drop_duplicates().shape[0] * len(cfg["orders"])
            assert (pq["two_cut_cp"] >= 0).all() and (pq["two_cut_cp"] <= pq["exact"] + 5 * pq["exact_se"] + 1e-9).all()
            assert (pq["exact"] <= pq["data_independent"] * (1 + 1e-9)).all()
            # Bonferroni over every audit run for the adversary (issue 13 §3, issue 27 §1): per (candidate, query)
            # the 2-cut, the k-cut and the per-query ε bound (+ whole-transcript audits, off in the tiny config)
            pairs = pq[["candidate", "query"]].drop_duplicates().shape[0]
            n_audits = 3 * pairs + (pq.drop_duplicates("candidate")["candidate_audits"].sum() if "candidate_audits" in pq else 0)
            assert (pq["multiplicity"] == "bonferroni").all() and (pq["bonferroni_audits"] == n_audits).all()
            np.testing.assert_allclose(pq["confidence_per_audit"], bonferroni_confidence(cfg.get("confidence", 0.95), n_audits, TRUNCATION_RESERVE),
                                       rtol=1e-12)
            prov = s[(s["dataset"] == ds) & (s["adversary"] == adv)]
            assert (prov["num_audits"] == n_audits).all() and count_audits(pq) == n_audits
            np.testing.assert_allclose(prov["simultaneous_confidence"], simultaneous_confidence(pq), rtol=1e-12)
            assert pq["nu"].between(0, cfg["gamma"] + 1e-12).all()
            # how each audit was made (issue 13 §3-4): sound column + the paper's procedure beside it
            assert set(pq["audit_method"]) <= {"exact-enumerated", "rao-blackwellised", "sampled", "none"}
            rbq = pq[pq["audit_method"] == "rao-blackwellised"]
            assert (rbq["trials"] == cfg["rb_draws_advq" if adv.endswith("advq") else "rb_draws_natq"]).all()
            assert (rbq["paper_trials"] == cfg["trials"]).all() and (pq["valid_eps_lower"] >= 0).all()
            same = pq[pq["audit_method"] != "rao-blackwellised"]
            np.testing.assert_array_equal(same["two_cut_cp"], same["two_cut_paper"])
            if adv.endswith("advq"):
                assert (pq["repetitions"] == cfg["num_queries"]).all() and np.allclose(pq["nu"], cfg["gamma"])
            else:
                assert (pq["repetitions"] == 1).all() and pq["query"].nunique() == cfg["num_queries"]
                assert (pq["expected_inclusions"] <= cfg["gamma"] * cfg["num_queries"] + 1e-9).all()
            rdp = pd.read_csv(d / "rdp.csv")
            assert (rdp["data_independent"] >= rdp["exact"] * (1 - 1e-9)).all()


@pytest.mark.workflow
@pytest.mark.timeout(900)
def test_findings_and_figure_tables(run_dir):
    from ppaudit.experiments.chadha2024.pate_capc_findings import FINDINGS_COLUMNS

    f = pd.read_csv(run_dir / "results" / "tables" / "findings" / "knn.csv")
    assert list(f.columns) == [*FINDINGS_COLUMNS, "cause", "cause_detail"] and (f["algo"] == "knn").all()
    cfg = tiny_section("knn")
    for ds in cfg["datasets"]:
        g = f[f["dataset"] == ds]
        assert set(g.loc[g["finding"] == "audit<=exact<=di", "adversary"]) == set(ADVERSARIES)
        for claim in ("theory >> audits", "advq similar", "advq > natq", "embedding >= test/train"):
            assert {f"{claim} (audit)", f"{claim} (exact)"} <= set(g["finding"]), claim
        assert g.loc[g["finding"] == "audit<=exact<=di", "holds"].all(), g
        assert g.loc[g["finding"] == "theory >> audits (audit)", "holds"].all(), g
    fig5 = pd.read_csv(run_dir / "results" / "figures" / "chadha2024" / "fig5.csv")
    assert list(fig5.columns) == ["panel", "dataset", "bar", "adversary", "column", "epsilon"]
    assert set(fig5["panel"]) == {"left", "right"} and set(fig5["dataset"]) == set(cfg["datasets"])
    right = fig5[fig5["panel"] == "right"]
    assert set(right["adversary"]) == {"pois-natq-test", "pois-natq-train", "pois-natq-embedding"}
    s = _summary(run_dir)
    worst = s[(s["case"] == "worst") & (s["column"] == "two_cut_cp")].set_index(["dataset", "adversary"])["epsilon"]
    for r in fig5[(fig5["column"] == "two_cut_cp")].itertuples():
        assert r.epsilon == pytest.approx(worst[(r.dataset, r.adversary)])
    # Fig. 5's footer (logged as printed): the union bound over every kNN audit run, with N, per adversary
    footer = [ln for ln in (run_dir / "logs" / "plot_chadha_fig5" / "fig5.log").read_text().splitlines() if "footer: " in ln]
    assert len(footer) == 1, footer
    text = footer[0].split("footer: ", 1)[1]
    assert text.startswith("per algorithm, dataset and adversary, every audit run (2-cut, k-cut and per-query valid ε lower "
                           "bound of each candidate and query"), text
    each = []
    for adv, h in s.groupby("adversary", sort=False):
        each.append(f"{KNN_ADVERSARY_LABELS.get(adv, adv)} ≥ {h['simultaneous_confidence'].min():.4f} (N = {int(h['num_audits'].max())})")
    assert f"knn: {', '.join(each)} (bonferroni)" in text, text
    app = pd.read_csv(run_dir / "results" / "figures" / "chadha2024" / "fig25.csv")
    assert list(app.columns) == ["panel", "dataset", "bar", "order", "value"]
    assert set(app["panel"]) == {"bars", "rdp"}
    curve = app[app["panel"] == "rdp"].pivot(index="order", columns="bar", values="value")
    assert list(curve.index) == sorted(cfg["orders"])
    assert (curve["2-cut audit"] <= curve["exact"] * (1 + 1e-9) + 1e-12).all() and (curve["exact"] <= curve["data-independent theory"]).all()


#: (bad chadha2024.knn section, a part of the error message naming it)
KNN_BAD_SECTIONS = [
    ({"datasets": ["rotten-tomatoes"], "rdp_panel_dataset": "fashion-mnist"}, "chadha2024.knn.rdp_panel_dataset"),
    ({"dataset_settings": {"rotten-tomatoes": {"encoder": "efficientnet-lite0"}}}, "chadha2024.knn.dataset_settings.rotten-tomatoes.encoder"),
    ({"datasets": ["sst2"], "rdp_panel_dataset": "sst2"}, "no packaged (offline) copy"),
    ({"num_queries": 61}, "chadha2024.knn.num_queries"),
    ({"advq_candidates": 31}, "chadha2024.knn.advq_candidates"),
    ({"dataset_settings": {"rotten-tomatoes": {"advq_candidates": 99}}}, "chadha2024.knn.dataset_settings.rotten-tomatoes.advq_candidates"),
    ({"dataset_settings": {"rotten-tomatoes": {"advq_candidates": "most"}}}, "chadha2024.knn.dataset_settings.rotten-tomatoes.advq_candidates"),
    ({"k": 200}, "too small for k = 200"),
    ({"gamma": 0}, "chadha2024.knn.gamma"),
    ({"sigma": {"text": -1}}, "chadha2024.knn.sigma.text"),
    ({"encoder": "vit"}, "unknown config key 'chadha2024.knn.encoder'"),
]


@pytest.fixture(scope="module")
def knn_bad_runs(tmp_path_factory) -> list:
    """``snakemake -n chadha_fig5`` on each bad section, from one interpreter that imports Snakemake once
    (``workflow_runner.run_snakemake_many``: each a forked ``snakemake.cli.main`` of the same arguments)."""
    runs = []
    for section, _ in KNN_BAD_SECTIONS:
        d = tmp_path_factory.mktemp("knn_bad")
        (d / "bad.yaml").write_text(yaml.safe_dump({"chadha2024": {"knn": section}}))
        runs.append((("-n", "chadha_fig5", "--directory", str(d), "--configfile", str(TINY), str(d / "bad.yaml")), REPO))
    return [(proc, Path(args[3])) for proc, (args, _) in zip(run_snakemake_many(runs, timeout=600), runs)]


@pytest.mark.parametrize("index", range(len(KNN_BAD_SECTIONS)), ids=[n for _, n in KNN_BAD_SECTIONS])
def test_knn_config_errors_name_the_key(knn_bad_runs, index):
    needle = KNN_BAD_SECTIONS[index][1]
    proc, workdir = knn_bad_runs[index]
    assert proc.returncode != 0
    assert needle in proc.stdout + proc.stderr, output_of(proc)
    assert not (workdir / "results").exists()


# ----------------------------------------------------------------------------- library helpers of the workflow


def test_select_knn_candidates():
    from ppaudit.experiments.chadha2024.private_knn import select_knn_candidates

    P = np.array([[0.9, 0.1], [0.55, 0.45], [0.5, 0.5], [0.7, 0.3], [0.52, 0.48]])
    assert select_knn_candidates(P, None) is None
    # margins 0.8, 0.1, 0.0, 0.4, 0.04 → the three smallest are queries 2, 4, 1 (returned sorted)
    np.testing.assert_array_equal(select_knn_candidates(P, 3, "margin"), [1, 2, 4])
    np.testing.assert_array_equal(select_knn_candidates(P, 2, "first"), [0, 1])
    np.testing.assert_array_equal(select_knn_candidates(P, 99, "margin"), np.arange(5))
    with pytest.raises(ValueError, match="how must be"):
        select_knn_candidates(P, 2, "best")
    with pytest.raises(ValueError, match="num_candidates must be"):
        select_knn_candidates(P, 0)


def _made_up_summary(vals: dict, exact_factor: float = 1.5, theory: float = 5.0) -> pd.DataFrame:
    rows = []
    for adv, v in vals.items():
        for col, e in (("two_cut_cp", v), ("exact", v * exact_factor), ("data_independent", theory)):
            rows.append({"dataset": "d", "adversary": adv, "case": "worst", "column": col, "epsilon": e, "candidate": 0})
    return pd.DataFrame(rows)


def test_knn_findings_table_columns_and_values():
    from ppaudit.experiments.chadha2024.pate_capc_findings import FINDINGS_COLUMNS
    from ppaudit.experiments.chadha2024.private_knn import knn_findings_table

    vals = {"nat-advq": 1.0, "pois-advq": 1.2, "pois-natq-test": 0.2, "pois-natq-train": 0.3, "pois-natq-embedding": 0.5}
    f = knn_findings_table(_made_up_summary(vals), floor=0.03)
    assert list(f.columns) == list(FINDINGS_COLUMNS) and len(f) == 5 + 4 + 4
    assert f["holds"].all() and not f["at_floor"].any()
    row = f[f["finding"] == "advq > natq (audit)"].iloc[0]
    assert row["values"] == "lhs=1 vs rhs=0.5" and row["adversary"] == "advq+pois-natq"
    # failing claims are kept with their numbers; missing adversaries are reported, not dropped
    vals["pois-natq-embedding"] = 0.1
    del vals["pois-advq"]
    f = knn_findings_table(_made_up_summary(vals), floor=0.03).set_index("finding")
    assert not f.loc["embedding >= test/train (audit)", "holds"] and "0.1" in f.loc["embedding >= test/train (audit)", "values"]
    # the poisons' expected top-k inclusions beside their ε, and the cause they give (issue #34 §3)
    from ppaudit.experiments.findings_causes import chadha_causes

    incl = {("d", "pois-natq-embedding"): 200.0, ("d", "pois-natq-test"): 147.0, ("d", "pois-natq-train"): 167.0}
    g = chadha_causes(knn_findings_table(_made_up_summary(vals), floor=0.03, inclusions=incl)).set_index("finding")
    assert g.loc["embedding >= test/train (audit)", "values"].endswith("; inclusions embedding=200, inclusions test/train=167")
    assert g.loc["embedding >= test/train (audit)", "cause"] == "open"
    assert "inclusions 200 ≥ 167" in g.loc["embedding >= test/train (audit)", "cause_detail"]
    assert not f.loc["advq similar (exact)", "holds"] and f.loc["advq similar (exact)", "note"].startswith("adversaries missing")
    # audit above exact fails the per-adversary ordering
    bad = _made_up_summary({"nat-advq": 1.0}, exact_factor=0.5)
    assert not knn_findings_table(bad, floor=0.03).set_index("finding").loc["audit<=exact<=di", "holds"]
    # the paper's procedure beside ours: a row per adversary, failing where it over-claims
    s = _made_up_summary({"nat-advq": 1.0, "pois-advq": 1.2}, exact_factor=2.0)
    w = s[s["column"] == "two_cut_cp"]
    paper = w.assign(column="two_cut_paper", epsilon=w["adversary"].map({"nat-advq": 0.5, "pois-advq": 3.0}))
    f = knn_findings_table(pd.concat([s, paper], ignore_index=True), floor=0.03)
    rows = f[f["finding"] == "paper procedure<=exact"].set_index("adversary")
    assert bool(rows.loc["nat-advq", "holds"]) and not bool(rows.loc["pois-advq", "holds"])
    assert "paper=3 vs ours=1.2 vs exact=2.4" == rows.loc["pois-advq", "values"]
    # the valid ε lower bound against the exact ε (PLD): a row where both exist, failing when the bound is above
    extra = pd.DataFrame([{"dataset": "d", "adversary": a, "case": "worst", "column": c, "epsilon": e, "candidate": 0}
                          for a, c, e in (("nat-advq", "valid_eps_lower", 0.4), ("nat-advq", "exact_eps_pld", 0.6),
                                          ("pois-advq", "valid_eps_lower", 0.9), ("pois-advq", "exact_eps_pld", 0.7))])
    f = knn_findings_table(pd.concat([s, extra], ignore_index=True), floor=0.03)
    rows = f[f["finding"] == "valid eps lower<=exact eps (PLD)"].set_index("adversary")
    assert bool(rows.loc["nat-advq", "holds"]) and not bool(rows.loc["pois-advq", "holds"])


def test_paper_text_datasets_fail_clearly_offline(monkeypatch, tmp_path):
    from ppaudit.experiments.chadha2024 import private_knn as pk

    from ppaudit import data

    def offline(url, timeout=None):
        raise OSError("network unreachable (test)")

    # the real registry entry (pinned MD5, GLUE URL); offline the error names the URL
    with pytest.raises(data.DownloadError, match="SST-2.zip"):
        data.load_text_dataset("sst2", tmp_path, opener=offline, retries=1, backoff=0.0)
    assert not any(tmp_path.rglob("*.zip"))  # nothing left behind
    with pytest.raises(ValueError, match="give root="):
        pk.load_knn_inputs("sst2", 10, 10, seed=0, root=None)
