"""Wang et al. 2022 targets end to end through Snakemake on the tiny config.

``wang_fig6`` (MNIST-subset histograms → L/M/H selection → 10^4-style query-limit and
budget attacks → figure) and ``wang_fig1`` (UCI Adult partition forests → consensus of
true and reconstructed histograms → figure) run in a temporary directory with
tests/configs/tiny.yaml; the figures, CSVs and the numbers in them are checked. Also:
config validation of the wang2022 section, and the UCI Adult loader.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from workflow_runner import assert_figure_files, output_of, run_snakemake  # noqa: E402

from ppaudit.attacks.histogram.cost import normalised_l1_error

REPO = Path(__file__).resolve().parents[2]
TINY = REPO / "tests" / "configs" / "tiny.yaml"


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory) -> Path:
    workdir = tmp_path_factory.mktemp("wang_workflow")
    proc = run_snakemake("wang_fig6", "wang_fig1", "--cores", "2", "--directory", str(workdir), "--configfile", str(TINY))
    assert proc.returncode == 0, output_of(proc)
    return workdir


@pytest.mark.workflow
@pytest.mark.timeout(600)
def test_figures_written(tiny_run):
    for fig in ("fig6", "fig1"):
        base = tiny_run / "results" / "figures" / "wang2022" / fig
        assert_figure_files(base)
    assert (tiny_run / "logs" / "train_wang_teachers" / "mnist.log").stat().st_size > 0
    # one script per rule (workflow/scripts/<rule>.py), each logging to logs/<rule>/
    for rule, name in (("plot_wang_error_per_sigma", "fig6"), ("plot_wang_fig1", "fig1"), ("attack_adult_histograms", "adult"), ("attack_wang_histograms", "mnist")):
        assert (tiny_run / "logs" / rule / f"{name}.log").exists(), rule
    assert (tiny_run / "benchmarks" / "train_wang_teachers" / "mnist.tsv").exists()


@pytest.mark.workflow
@pytest.mark.timeout(600)
def test_fig6_numbers_are_sane(tiny_run):
    tiny = yaml.safe_load(TINY.read_text())["wang2022"]
    per_level, sigmas = tiny["attack"]["per_level"], tiny["attack"]["sigmas"]
    hist = np.load(tiny_run / "results" / "wang2022" / "histograms" / "mnist.npz")["histograms"]
    assert hist.shape == (tiny["datasets"]["mnist"]["test_size"], 10)
    assert np.all(hist.sum(1) == tiny["histograms"]["num_teachers"])
    fig = pd.read_csv(tiny_run / "results" / "figures" / "wang2022" / "fig6.csv")
    assert set(fig["procedure"]) == {"paper", "ours"}  # solver: both
    assert len(fig) == 2 * 3 * per_level * len(sigmas)
    assert set(fig["sigma"]) == set(map(float, sigmas))
    assert (fig["num_queries"] == tiny["attack"]["num_queries"]).all()
    assert (fig["accountant"] == "confident_gnmax").all()
    # Confident-GNMax answers only the queries that pass the threshold check
    assert (fig["num_answered"] <= fig["num_queries"]).all() and (fig["num_answered"] > 0).all()
    # our estimate is a histogram (Ĥ ≥ 0, ΣĤ = N): error in [0, 1]; the paper's loop is
    # unconstrained, so with σ ≫ N (20 teachers here) its shifted estimate can go negative
    # and its error exceed 1
    ours = fig[fig["procedure"] == "ours"]
    assert ours["error"].between(0, 1).all() and fig["error"].ge(0).all() and np.isfinite(fig["error"]).all()
    assert fig["privacy_cost"].ge(0).all()
    attacks = pd.read_csv(tiny_run / "results" / "wang2022" / "attacks" / "mnist.csv")
    # 2000 queries: our solver recovers a 20-teacher histogram much better than knowing nothing: its mean
    # error is under half that of the uniform estimate N/C on the same histograms (≈ 0.6–0.85 each; the
    # absolute bar 0.3 of the 4,000-image MNIST subset read 0.31 against 0.72 on the full MNIST's draw)
    ours_q = attacks[(attacks["attack"] == "query_limit") & (attacks["procedure"] == "ours")]
    picked = hist[ours_q["index"].to_numpy()]
    uniform = normalised_l1_error(picked, np.full(picked.shape, picked.sum(1, keepdims=True) / picked.shape[1]))
    assert fig.loc[fig["procedure"] == "ours", "error"].mean() < 0.5 * float(np.mean(uniform))
    budget = attacks[attacks["attack"] == "budget"]
    assert len(budget) == 2 * 3 * per_level
    assert (budget["privacy_cost"] <= budget["budget"] + 1e-9).all()
    # both solvers see the same answers
    for _, g in budget.groupby("label"):
        assert g["num_answered"].nunique() == 1 and g["num_queries"].nunique() == 1
    labels = list(dict.fromkeys(fig["label"]))
    assert labels == [f"{lev}{i}" for lev in "LMH" for i in range(1, per_level + 1)]
    # consensus levels are ordered
    sel = pd.read_csv(tiny_run / "results" / "wang2022" / "selection" / "mnist.csv")
    means = sel.groupby("level")["max_vote_share"].mean()
    assert means["low"] <= means["medium"] <= means["high"]


@pytest.mark.workflow
@pytest.mark.timeout(600)
def test_fig1_numbers_are_sane(tiny_run):
    cons = pd.read_csv(tiny_run / "results" / "wang2022" / "adult" / "consensus.csv")
    assert cons["phd"].sum() == (~cons["phd"]).sum() > 50  # balanced test set
    assert ((cons["votes_le50k"] + cons["votes_gt50k"]) == 20).all()
    assert cons["consensus_true"].between(0.5, 1).all() and cons["consensus_reconstructed"].between(0.5, 1).all()
    assert (cons["consensus_true"] - cons["consensus_reconstructed"]).abs().mean() < 0.15
    fig = pd.read_csv(tiny_run / "results" / "figures" / "wang2022" / "fig1.csv")
    assert len(fig) == 4
    for _, grp in fig.groupby("variant"):
        assert (grp["high_consensus"] + grp["low_consensus"]).sum() == len(cons)
        p = grp["precision"].iloc[0]
        assert np.isnan(p) or 0 <= p <= 1


@pytest.mark.workflow
@pytest.mark.timeout(600)
def test_caching_defence_on_fitted_pate_models(tiny_llm_run):
    """wang_defence_caching builds on the PATE stage's fits (tiny: digits, σ = 2): panel (c)
    holds the measured transcript audits and the stage's own audits for both AdvQ
    adversaries; the cached audit never exceeds the exact ε of one answer.

    The target is built in the session's shared tiny-config run (fixture ``tiny_llm_run``,
    tests/shared_runs.py), whose PATE stage on digits (teachers, canaries, fits and audits of both
    AdvQ adversaries) test_workflow_private_prediction.py checks: the same jobs, not run twice."""
    tmp_path = tiny_llm_run
    base = tmp_path / "results" / "figures" / "wang2022" / "defence_caching"
    assert base.with_suffix(".png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    fig = pd.read_csv(base.with_suffix(".csv"))
    c = fig[fig["panel"] == "c_fitted_model"]
    assert set(c["adversary"]) == {"nat-advq", "pois-advq"}
    for adv, g in c.groupby("adversary"):
        eps = g.set_index("view")["epsilon"]
        assert eps["cache"] <= eps["stage_exact_single"] + 1e-9, (adv, eps.to_dict())
        assert eps["single_answer"] <= eps["stage_exact_single"] + 1e-9, (adv, eps.to_dict())
        assert eps["stage_cached_audit"] <= eps["stage_composed_audit"] + 1e-12
        # composing n_Q > 1 answers raises the exact ε unless the stage's exact RDP is zero
        # (on the tiny config every Nat-AdvQ candidate leaves the vote law unchanged: both
        # equal the ε of a zero RDP curve)
        assert eps["stage_exact_single"] < eps["stage_exact_composed"] or eps["stage_exact_composed"] == eps["stage_exact_single"] == g.set_index("view")["epsilon"].min()
    tr = pd.read_csv(tmp_path / "results" / "wang2022" / "defence" / "pate_transcripts.csv")
    assert set(tr["view"]) == {"single_answer", "cache", "no_cache"}
    assert (tr["trials"] == 200000).all() and (tr["dataset"] == "digits").all()
    assert (tmp_path / "benchmarks" / "audit_wang_caching_pate" / "defence.tsv").exists()


@pytest.mark.workflow
@pytest.mark.timeout(120)
def test_bad_wang_config_names_the_key(tmp_path):
    cfg = tmp_path / "bad.yaml"
    cfg.write_text("wang2022:\n  attack:\n    num_queries: 0\n")
    proc = run_snakemake("-n", "wang_fig6", "--configfile", str(cfg))
    assert proc.returncode != 0
    assert "wang2022.attack.num_queries" in proc.stdout + proc.stderr
    cfg.write_text("wang2022:\n  attack:\n    per_level: 5\n  datasets:\n    mnist: {test_size: 10}\n")
    proc = run_snakemake("-n", "wang_fig6", "--configfile", str(cfg))
    assert proc.returncode != 0
    assert "wang2022.datasets.mnist.test_size" in proc.stdout + proc.stderr


def test_adult_loader():
    from ppaudit.data.adult import adult_features, load_adult
    from ppaudit.experiments.wang2022.adult import consensus_rule_summary

    df = load_adult()
    assert len(df) == 45222
    assert 0.005 < df["phd"].mean() < 0.02 and 0.2 < df["label"].mean() < 0.3
    x = adult_features(df.head(50))
    assert x.shape[0] == 50 and np.isfinite(x).all()
    s = consensus_rule_summary(np.array([0.6, 0.9, 0.7, 1.0]), np.array([True, True, False, False]), 0.75)
    assert (s["phd_low"], s["phd_high"], s["nonphd_low"], s["nonphd_high"]) == (1, 1, 1, 1)
    assert s["precision"] == 0.5


def test_caching_defence_functions():
    from ppaudit.experiments.wang2022.caching import caching_audits, caching_reconstruction, neighbouring_pair

    h0, h1 = neighbouring_pair([14, 12, 10, 8, 6], "nat_advq")
    assert list(h1) == [15, 11, 10, 8, 6] and list(h0) == [14, 12, 10, 8, 6]
    assert list(neighbouring_pair([14, 12, 10], "pois_advq")[1]) == [13, 13, 10]
    rng = np.random.default_rng(0)
    audits = caching_audits([14, 12, 10, 8, 6], 2.0, 10**6, [2.0, 8.0], 50, 0.95, rng)
    assert (audits["audit_cache"] <= audits["exact_cache"] + 1e-9).all()  # a valid lower bound
    assert (audits["audit_cache"] > 0).all()
    recon = caching_reconstruction([[150, 60, 25, 10, 5]], 40.0, [1, 2000], 3, rng)
    cached = recon[recon["cache_answers"]]
    assert (cached["fresh_answers"] == 1).all()
    fresh = recon[~recon["cache_answers"] & (recon["num_queries"] == 2000)]
    assert fresh["mean_error"].iloc[0] < 0.5 * fresh["single_answer_error"].iloc[0]


def test_sigma_findings_reports_failures():
    from ppaudit.experiments.wang2022.reconstruction import sigma_findings

    rows = [{"attack": "query_limit", "label": f"L{i}", "sigma": s, "error": e}
            for i in range(3) for s, e in ((40, 0.03), (100, 0.01 if i else 0.05))]
    out = sigma_findings(pd.DataFrame(rows), "toy").set_index("check")
    assert bool(out.loc["mean_error_at_max_sigma_below_min_sigma", "holds"])
    assert bool(out.loc["share_histograms_improving", "holds"])
    rows = [{**r, "error": 0.1 if r["sigma"] == 100 else 0.01} for r in rows]
    out = sigma_findings(pd.DataFrame(rows), "toy").set_index("check")
    assert not out["holds"].any()
    # one block of checks per solver, each judged on its own rows
    both = pd.DataFrame([{**r, "procedure": "ours"} for r in rows] + [{**r, "procedure": "paper", "error": 0.2 - r["error"]} for r in rows])
    out = sigma_findings(both, "toy")
    assert list(dict.fromkeys(out["procedure"])) == ["ours", "paper"]
    assert not out[out["procedure"] == "ours"]["holds"].any() and out[out["procedure"] == "paper"]["holds"].all()


def test_budget_findings_face_the_papers_number():
    from ppaudit.experiments.wang2022.reconstruction import budget_findings

    rows = [{"attack": "budget", "procedure": p, "accountant": "confident_gnmax", "label": f"L{i}", "sigma": 40.0, "budget": 4.96,
             "delta": 1e-6, "num_queries": 4000 + i, "num_answered": 2000 + i, "error": e}
            for i in range(3) for p, e in (("ours", 0.04), ("paper", 0.08))]
    out = budget_findings(pd.DataFrame(rows), "fashion-mnist", 0.05, "SVHN").set_index(["procedure", "check"])
    assert out.loc[("ours", "budget_attack_mean_error_at_most_paper"), "reference"] == 0.05
    assert bool(out.loc[("ours", "budget_attack_mean_error_at_most_paper"), "holds"])
    assert not bool(out.loc[("paper", "budget_attack_mean_error_at_most_paper"), "holds"])
    assert out.loc[("ours", "budget_attack_mean_queries"), "value"] == 4001
    assert out.loc[("paper", "budget_attack_mean_answered"), "value"] == 2001


def test_adult_download_verifies_checksums(tmp_path):
    """download_adult fetches both UCI files (served here from the packaged copies) and
    load_adult(source="download") reads them; a corrupted body is rejected."""
    import io

    from ppaudit.data.adult import ADULT_FILES, adult_package_dir, download_adult, load_adult
    from ppaudit.data import DownloadError

    folder = adult_package_dir()
    urls = []

    class Resp(io.BytesIO):
        headers = None

    def opener(url, timeout=None):
        urls.append(url)
        return Resp((folder / url.rsplit("/", 1)[1]).read_bytes())

    dest = download_adult(tmp_path, opener=opener)
    assert urls == [f.url for f in ADULT_FILES]
    assert all(u.startswith("https://archive.ics.uci.edu/") for u in urls)
    assert len(load_adult("download", root=tmp_path, opener=opener)) == 45222
    assert (dest / "adult.data").is_file()

    def bad_opener(url, timeout=None):
        return Resp(b"not the adult data")

    with pytest.raises(DownloadError):
        download_adult(tmp_path / "bad", opener=bad_opener, retries=1, backoff=0)
