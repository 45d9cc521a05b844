"""PromptPATE stage of the workflow end to end (Chadha et al. 2024, §5.3–5.4, Figs. 3/4, 17–24).

Figs. 17–24 and the PromptPATE summaries run in a temporary directory on
tests/configs/tiny.yaml (the run of test_workflow_private_prediction.py, which builds these targets
too: fixture ``tiny_llm_run`` of tests/workflow/conftest.py, once per session; this module works on a copy) (6 teachers × 5 Rotten Tomatoes queries, σ = 1, T = 1e5), with the
model replaced by a tiny random Llama and a character tokenizer built here (no download,
seconds on CPU). The scripts of Fig. 4 (plot_chadha_fig34.py) and of the PromptPATE
findings (tabulate_promptpate_findings.py) then run outside Snakemake on the PromptPATE summary and
stand-in PATE/CaPC summaries (their targets would build the PATE/CaPC and Private-kNN stages).
The library is tested in tests/unit/models/test_llm.py and tests/unit/mechanisms/test_promptpate.py; this checks the
wiring: files, the summary's columns (exactly those of the PATE/CaPC summaries), closed
forms, the prediction cache on a rerun, the Fig. 4 panel and the findings rows.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from ppaudit.accounting import gnmax_rdp_data_independent, rdp_to_dp
from shared_runs import LLM_OVERRIDE, PROMPTPATE_TARGETS, copy_run  # tests/shared_runs.py
from workflow_runner import assert_figure_files, output_of, tiny_section

REPO = Path(__file__).resolve().parents[2]
SNAKEFILE = REPO / "Snakefile"
TINY = REPO / "tests" / "configs" / "tiny.yaml"
SUMMARY = "results/chadha2024/private_prediction/promptpate/summary.csv"
assert SUMMARY in PROMPTPATE_TARGETS
VARIANTS = "results/chadha2024/private_prediction/promptpate/summary_variants.csv"
# The columns of results/chadha2024/private_prediction/{pate,capc}/summary.csv (rule compose_audit).
PC_COLUMNS = ["algo", "dataset", "model", "adversary", "sigma", "num_teachers", "trials", "num_queries", "source", "delta",
              "eps_floor", "case", "column", "epsilon", "candidate"]
MODEL_NAME = "tiny-llama"


def run_snakemake(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(SNAKEFILE), *args]
    return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "OMP_WAIT_POLICY": "PASSIVE"})


@pytest.fixture(scope="module")
def run_dir(tiny_llm_run, tmp_path_factory) -> Path:
    """A copy (mtimes and Snakemake's metadata kept) of the tiny config's run of Figs. 17–24 and the
    summaries, shared with test_workflow_private_prediction.py (tests/shared_runs.py: it also builds
    the PATE/CaPC and Private-kNN stages there); this module's rerun and stand-in files change the copy only."""
    return copy_run(tiny_llm_run, tmp_path_factory.mktemp("promptpate") / "run")


def prefix(run_dir: Path) -> Path:
    """promptpate/rotten-tomatoes/<model>/seed<seed> (relative to results/votes, results/audits)."""
    seed = yaml.safe_load(TINY.read_text())["seed"]
    return Path("promptpate") / "rotten-tomatoes" / MODEL_NAME / f"seed{seed}"


@pytest.mark.workflow
@pytest.mark.timeout(600)
def test_appendix_figures_written(run_dir):
    for i in range(17, 25):
        base = run_dir / "results" / "figures" / "chadha2024" / f"fig{i}"
        assert_figure_files(base)
        csv = pd.read_csv(base.with_suffix(".csv"))
        assert set(csv["panel"]) == {"bars", "rdp"}
        assert set(csv.loc[csv["panel"] == "bars", "bar"]) == {
            "data-independent theory", "data-dependent theory", "exact", "2-cut audit", "k-cut audit"}
    job = prefix(run_dir).relative_to("promptpate").as_posix()  # rotten-tomatoes/tiny-llama/seed7
    assert "teacher votes" in (run_dir / "logs" / "prompt_teachers" / f"{job}.log").read_text()  # tqdm progress
    assert (run_dir / "benchmarks" / "prompt_teachers" / f"{job}.tsv").exists()


@pytest.mark.workflow
@pytest.mark.timeout(600)
def test_summary_has_the_pate_columns_and_closed_forms(run_dir):
    cfg = tiny_section("promptpate")
    s = pd.read_csv(run_dir / SUMMARY)
    assert list(s.columns) == PC_COLUMNS
    assert set(s["algo"]) == {"promptpate"} and set(s["model"]) == {MODEL_NAME}
    assert set(s["adversary"]) == {"nat-advq", "pois-advq", "pois-natq"}
    assert set(s["case"]) == {"worst", "average", "max"}
    assert {"two_cut_cp", "exact", "data_dependent", "data_independent"} <= set(s["column"])
    assert not s.duplicated(["dataset", "adversary", "case", "column"]).any()
    assert (s["num_teachers"] == cfg["num_teachers"]).all() and (s["num_queries"] == cfg["num_queries"]).all()
    # Data-independent theory, composed over the n_Q queries (AdvQ: one query n_Q times).
    orders = np.asarray(cfg["orders"], dtype=float)
    di = float(rdp_to_dp(cfg["num_queries"] * gnmax_rdp_data_independent(cfg["sigma"], orders), orders, 1e-6))
    for adv in ("nat-advq", "pois-advq", "pois-natq"):
        w = s[(s["adversary"] == adv) & (s["case"] == "worst")].set_index("column")["epsilon"]
        assert w["data_independent"] == pytest.approx(di, rel=1e-9)
        assert w["exact"] <= w["data_dependent"] * (1 + 1e-9) <= w["data_independent"] * (1 + 1e-6)
        assert w["two_cut_cp"] <= w["exact"] * 1.05  # a 95 % lower bound, composed
    # The Pois-NatQ rows are the best variant's (fig4_variant: best), recorded in the variants file.
    v = pd.read_csv(run_dir / VARIANTS, keep_default_na=False)
    best = v[(v["adversary"] == "pois-natq") & (v["variant"] == "best")]
    assert best["best_variant"].nunique() == 1 and best["best_variant"].iloc[0] in {"confident", "unconfident", "all-same", "mapping"}
    worst = v[(v["adversary"] == "pois-natq") & (v["case"] == "worst") & (v["column"] == "two_cut_cp")].set_index("variant")["epsilon"]
    assert worst["best"] == pytest.approx(worst.drop("best").max())
    natq = s[s["adversary"] == "pois-natq"].set_index(["case", "column"])["epsilon"]
    np.testing.assert_allclose(natq.sort_index().to_numpy(), best.set_index(["case", "column"])["epsilon"].sort_index().to_numpy())


@pytest.mark.workflow
@pytest.mark.timeout(600)
def test_votes_and_prediction_cache_on_rerun(run_dir):
    cfg = tiny_section("promptpate")
    votes = np.load(run_dir / "results" / "votes" / prefix(run_dir) / "votes.npz")
    assert votes["teacher_votes"].shape == (cfg["num_teachers"], cfg["num_queries"])
    assert votes["nat_advq_votes"].shape == votes["pois_advq_votes"].shape == (cfg["num_queries"],)
    # 3 named variants + All same per label (2 labels).
    assert votes["natq_votes"].shape == (5, cfg["num_queries"])
    before = votes["teacher_votes"].copy()
    proc = run_snakemake(f"results/votes/{prefix(run_dir).as_posix()}/votes.npz", "--forcerun", "prompt_teachers", "--cores", "1",
                         "--directory", str(run_dir), "--configfile", str(TINY), str(run_dir / LLM_OVERRIDE))
    assert proc.returncode == 0, output_of(proc)
    log = (run_dir / "logs" / "prompt_teachers" / f"{prefix(run_dir).relative_to('promptpate').as_posix()}.log").read_text()
    assert "prompts: 0 evaluated" in log, log[-2000:]
    np.testing.assert_array_equal(np.load(run_dir / "results" / "votes" / prefix(run_dir) / "votes.npz")["teacher_votes"], before)


# Runs a workflow script outside Snakemake with a stand-in `snakemake` object (in a
# subprocess: the scripts redirect stdout/stderr to their log).
SCRIPT_STUB = """
import json, runpy, sys, types
scripts, script, spec = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
sys.path.insert(0, scripts)
ns = {k: types.SimpleNamespace(**v) if isinstance(v, dict) else v for k, v in spec.items()}
runpy.run_path(scripts + "/" + script, init_globals={"snakemake": types.SimpleNamespace(**ns)})
"""


def run_script(script: str, **spec) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", SCRIPT_STUB, str(REPO / "workflow" / "scripts"), script, json.dumps(spec)],
                          capture_output=True, text=True, timeout=300)


def stand_in_summaries(run_dir: Path) -> list[str]:
    """PATE and CaPC summaries (their columns) that leak 10× / 2× less than PromptPATE's."""
    s = pd.read_csv(run_dir / SUMMARY)
    paths = []
    for algo, factor in (("pate", 0.1), ("capc", 0.5)):
        path = run_dir / "stand_in" / f"{algo}.csv"
        path.parent.mkdir(exist_ok=True)
        s.assign(algo=algo, dataset="digits", model="logreg", epsilon=s["epsilon"] * factor).to_csv(path, index=False)
        paths.append(str(path))
    return paths


@pytest.mark.workflow
@pytest.mark.timeout(600)
def test_fig4_panel_and_findings(run_dir):
    # plot_chadha_fig34.py (rule plot_chadha_fig34) on PATE, CaPC and PromptPATE summaries.
    out = run_dir / "stand_in"
    summaries = stand_in_summaries(run_dir) + [str(run_dir / SUMMARY)]
    proc = run_script("plot_chadha_fig34.py", input={"summaries": summaries},
                      output={"pdf": str(out / "fig4.pdf"), "png": str(out / "fig4.png"), "csv": str(out / "fig4.csv")},
                      params={"adversaries": ["pois-natq"], "floor": 0.0285, "title": "Fig. 4"},
                      log=[str(out / "fig4.log")], rule="plot_chadha_fig34")
    assert proc.returncode == 0, proc.stderr + (out / "fig4.log").read_text()
    assert (out / "fig4.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    fig4 = pd.read_csv(out / "fig4.csv")
    assert list(dict.fromkeys(fig4["algo"])) == ["pate", "capc", "promptpate"]
    pp = fig4[fig4["algo"] == "promptpate"]
    assert set(pp["adversary"]) == {"pois-natq"}
    assert {"two_cut_cp", "exact", "data_dependent", "data_independent"} == set(pp["column"])
    s = pd.read_csv(run_dir / SUMMARY)
    w = s[(s["adversary"] == "pois-natq") & (s["case"] == "worst")].set_index("column")["epsilon"]
    for r in pp.itertuples():
        assert r.epsilon == pytest.approx(w[r.column])
    # tabulate_promptpate_findings.py (rule tabulate_promptpate_findings).
    proc = run_script("tabulate_promptpate_findings.py", input={"summary": str(run_dir / SUMMARY), "variants": str(run_dir / VARIANTS),
                                                        "others": summaries[:2],
                                                        "votes": [str(run_dir / "results" / "votes" / prefix(run_dir) / "votes.npz")]},
                      output={"findings": str(out / "findings.csv")},
                      params={"floor": float(s["eps_floor"].iloc[0]), "datasets": ["rotten-tomatoes"]},
                      log=[str(out / "findings.log")], rule="tabulate_promptpate_findings")
    assert proc.returncode == 0, proc.stderr + (out / "findings.log").read_text()
    f = pd.read_csv(out / "findings.csv")
    assert set(f["algo"]) == {"promptpate"}
    from ppaudit.experiments.findings_causes import require_causes

    require_causes(f, "promptpate findings")  # issue #34 §3: no False row without a computed cause
    assert {"audit<=exact<=dd<=di", "audit≈exact", "nat-advq≈pois-advq", "pois-natq best variant",
            "pate<=capc<=promptpate", "promptpate>=others", "teachers classify"} <= set(f["finding"])
    teach = f[f["finding"] == "teachers classify"]
    assert list(teach["dataset"]) == ["rotten-tomatoes"] and teach["values"].str.contains("majority_class_rate=").all()
    assert f["values"].str.len().gt(0).all()
    cross = f[f["finding"] == "pate<=capc<=promptpate"]
    assert set(cross["dataset"]) == {"all"} and cross["values"].str.contains("pate ").all() and cross["values"].str.contains("capc ").all()
    # The stand-ins leak less than PromptPATE, so PromptPATE >= the others wherever defined.
    mine = f[(f["finding"] == "promptpate>=others") & (f["adversary"] == "pois-natq")]
    assert len(mine) == 2 and mine["holds"].all()
