"""Private-kNN targets end to end through Snakemake on the tiny config (Chadha et al. 2024, §6, App. E.4).

``chadha_fig5``, ``chadha_fig25`` (worst-case Nat-AdvQ) and the kNN findings part run in a
temporary directory with tests/configs/tiny.yaml: 300 Rotten Tomatoes snippets through
all-MiniLM-L6-v2 and 200 Fashion-MNIST images through EfficientNet-Lite0 (both packaged,
offline), k = 20, γ = 0.3, σ = 3, 30 queries. Checked: the files, the feature shapes, the
columns of every table, and the orderings that must hold whatever the data — the 2-cut
audit is a lower bound of the exact RDP of the model, which is below the data-independent
theory, per query and composed. Also: the config checks of the chadha2024.knn section.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from ppaudit.audit import epsilon_floor
from workflow_runner import output_of, run_snakemake  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
TINY = REPO / "tests" / "configs" / "tiny.yaml"
TARGETS = ("chadha_fig5", "chadha_fig25", "results/tables/findings/knn.csv")
ADVERSARIES = ("nat-advq", "pois-advq", "pois-natq-test", "pois-natq-train", "pois-natq-embedding")


def tiny_knn() -> dict:
    """chadha2024.knn of the tiny config over its shared chadha2024.audit_defaults (e.g. orders)."""
    chadha = yaml.safe_load(TINY.read_text())["chadha2024"]
    return {**chadha.get("audit_defaults", {}), **chadha["knn"]}


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    workdir = tmp_path_factory.mktemp("knn_workflow")
    proc = run_snakemake(*TARGETS, "--cores", "2", "--directory", str(workdir), "--configfile", str(TINY))
    assert proc.returncode == 0, output_of(proc)
    return workdir


def _summary(run_dir: Path) -> pd.DataFrame:
    return pd.read_csv(run_dir / "results" / "chadha2024" / "private_prediction" / "knn" / "summary.csv")


@pytest.mark.workflow
@pytest.mark.timeout(600)
def test_figures_and_features_written(run_dir):
    for fig in ("fig5", "fig25"):
        base = run_dir / "results" / "figures" / "chadha2024" / fig
        assert base.with_suffix(".pdf").read_bytes().startswith(b"%PDF")
        assert base.with_suffix(".png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
        assert base.with_suffix(".csv").stat().st_size > 0
    cfg = tiny_knn()
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
@pytest.mark.timeout(600)
def test_audits_are_ordered_per_query_and_composed(run_dir):
    cfg = tiny_knn()
    s = _summary(run_dir)
    assert set(s["dataset"]) == set(cfg["datasets"]) and set(s["adversary"]) == set(ADVERSARIES)
    assert set(s["case"]) == {"worst", "max", "average"} and (s["algo"] == "knn").all()
    for col in ("audit_method", "trials_used", "paper_trials", "confidence_per_audit", "effective_confidence"):
        assert col in s, col
    assert (s["effective_confidence"] >= cfg.get("confidence", 0.95) - 1e-3).all()
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
            # Bonferroni over the candidate × query audits of the adversary (issue 13 §3)
            n_audits = pq[["candidate", "query"]].drop_duplicates().shape[0]
            assert (pq["multiplicity"] == "bonferroni").all()
            np.testing.assert_allclose(pq["confidence_per_audit"], 1 - (1 - cfg.get("confidence", 0.95)) / n_audits, rtol=1e-12)
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
@pytest.mark.timeout(600)
def test_findings_and_figure_tables(run_dir):
    from ppaudit.experiments.pate_capc_findings import FINDINGS_COLUMNS

    f = pd.read_csv(run_dir / "results" / "tables" / "findings" / "knn.csv")
    assert list(f.columns) == list(FINDINGS_COLUMNS) and (f["algo"] == "knn").all()
    cfg = tiny_knn()
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
    app = pd.read_csv(run_dir / "results" / "figures" / "chadha2024" / "fig25.csv")
    assert list(app.columns) == ["panel", "dataset", "bar", "order", "value"]
    assert set(app["panel"]) == {"bars", "rdp"}
    curve = app[app["panel"] == "rdp"].pivot(index="order", columns="bar", values="value")
    assert list(curve.index) == sorted(cfg["orders"])
    assert (curve["2-cut audit"] <= curve["exact"] * (1 + 1e-9) + 1e-12).all() and (curve["exact"] <= curve["data-independent theory"]).all()


@pytest.mark.workflow
@pytest.mark.timeout(600)
def test_second_run_is_a_no_op(run_dir):
    proc = run_snakemake(*TARGETS, "--cores", "1", "--directory", str(run_dir), "--configfile", str(TINY), "-n")
    assert proc.returncode == 0, proc.stderr
    assert "Nothing to be done" in proc.stdout + proc.stderr, proc.stdout


@pytest.mark.parametrize(
    "section,needle",
    [
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
    ],
)
def test_knn_config_errors_name_the_key(tmp_path, section, needle):
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({"chadha2024": {"knn": section}}))
    proc = run_snakemake("-n", "chadha_fig5", "--directory", str(tmp_path), "--configfile", str(TINY), str(bad), timeout=120)
    assert proc.returncode != 0
    assert needle in proc.stdout + proc.stderr, output_of(proc)
    assert not (tmp_path / "results").exists()


# ----------------------------------------------------------------------------- library helpers of the workflow


def test_select_knn_candidates():
    from ppaudit.experiments.private_knn import select_knn_candidates

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
    from ppaudit.experiments.pate_capc_findings import FINDINGS_COLUMNS
    from ppaudit.experiments.private_knn import knn_findings_table

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
    from ppaudit.experiments import private_knn as pk

    from ppaudit import data

    def offline(url, timeout=None):
        raise OSError("network unreachable (test)")

    # the real registry entry (pinned MD5, GLUE URL); offline the error names the URL
    with pytest.raises(data.DownloadError, match="SST-2.zip"):
        data.load_text_dataset("sst2", tmp_path, opener=offline, retries=1, backoff=0.0)
    assert not any(tmp_path.rglob("*.zip"))  # nothing left behind
    with pytest.raises(ValueError, match="give root="):
        pk.load_knn_inputs("sst2", 10, 10, seed=0, root=None)
