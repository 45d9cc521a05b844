"""ppaudit.workflow.gpu_budget and bench/gpu_hours.py (issue 17, item 4): the GPU work of a
paper-scale run per target group, and its hours at measured rates.

* The counts of ``config/paper.yaml`` against the papers' numbers worked out by hand (Chadha et
  al. 2024 App. D.1–D.3: k, N_g, candidates, n_Q, T; the label-DP image section), so a change of
  the formulas or of paper.yaml that moves them fails here.
* Which groups count: only CUDA-configured ones by default; ``gpu_only=False`` and
  ``split_rows`` for CPU runs of the same shape (the paper-shape workflow test compares those
  counts with the teachers its run trained).
* Hours: exact rates, the two named fallbacks and what they make of the hours, missing rates.
* Config errors name the key; the bench script's table, README splice and bad ``--rates``.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest
import yaml

from ppaudit.workflow.gpu_budget import (
    ISSUE17_H100,
    Work,
    gpu_hours,
    load_workflow_config,
    paper_work,
)

REPO = Path(__file__).resolve().parents[3]
DEFAULT, PAPER = REPO / "config" / "config.yaml", REPO / "config" / "paper.yaml"


@pytest.fixture(scope="module")
def paper_config() -> dict:
    return load_workflow_config(DEFAULT, PAPER)


def _by_unit(work):
    return {w.unit: w for w in work}


def test_paper_teachers_match_the_paper_settings(paper_config):
    work = _by_unit(paper_work(paper_config))
    # MNIST, LeNet-5, k = 250, N_g = 8 for PATE and for CaPC, N_g' = 8, candidates 1000 / 1000 / 10 of n_Q = 1000
    lenet = work["lenet5 teacher image-epochs"]
    assert lenet.counts == {"teachers_S": 2 * 8 * 250, "canary_teachers": 2 * (1000 + 1000 + 10) * 8,
                            "twins_max": 2 * (2 * min(1000 * 8, 8 * 250) + min(10 * 8, 8 * 250))}
    # 60,000 MNIST images / 250 = 240 per teacher (+1 with the canary), 10 epochs
    assert lenet.amount == ((4000 + 8160) * 240 + 32160 * 241) * 10
    assert lenet.rate_key == "teacher_s_per_image_epoch:lenet5:block" and lenet.bound
    # Fashion-MNIST (k = 250) and CIFAR-10 (k = 200), WRN-16-4
    wrn = work["wrn16-4 teacher image-epochs"]
    assert wrn.counts["teachers_S"] == 16 * 250 + 16 * 200
    assert wrn.counts["canary_teachers"] == 2 * 2 * 2010 * 8
    assert wrn.counts["twins_max"] == 2 * (2 * 2000 + 80) + 2 * (2 * 1600 + 80)


def test_paper_audits_prompts_features_and_labeldp(paper_config):
    work = _by_unit(paper_work(paper_config))
    mc = work["Monte Carlo trials"]
    # 2 algorithms × 3 datasets × (1000 Nat-AdvQ + 1000 Pois-AdvQ + 10 Pois-NatQ poisons × 1000 queries) pairs, 2 × 1e8 trials each
    assert mc.counts == {"pairs_max": 6 * (1000 + 1000 + 10 * 1000)} and mc.amount == 2 * 1e8 * 72000 and mc.bound
    # CIFAR-10 50k + 10k and Fashion-MNIST 60k + 10k through ViT-L/16; SST-2 (67,349, 5 % held out) and AG News 120k + 7.6k through RoBERTa-large
    assert work["vit-l16-in21k inputs"].amount == 130000
    assert work["roberta-large inputs"].amount == 67349 + 127600
    # n_Q (k + 2 + 3 NatQ rows + C All-same rows), C = 2, 4, 14, 6
    assert work["mistral-7b prompts"].amount == sum(200 * (200 + 2 + 3 + c) for c in (2, 4, 14, 6))
    # 25,000 images × 100 epochs: reference + 3 ε × (LP-1ST, LP-1ST OOD, ALIBI, PATE-FM teachers) + 3 levels × 12 games,
    # + 2 finite ε × 1 prior model (LP-1ST OOD's) of 1,000 images, + 3 FixMatch students of 5,000 steps × 64 × (1 + 2·7)
    full = 25000 * 100
    assert work["image passes"].amount == full * (1 + 3 * 4 + 3 * 12) + 2 * 1 * 1000 * 100 + 3 * 5000 * 64 * 15


def test_only_cuda_groups_count_by_default():
    default = load_workflow_config(DEFAULT)
    assert paper_work(default) == []  # the embedded default runs on the CPU
    units = [w.unit for w in paper_work(default, gpu_only=False)]
    assert "Monte Carlo trials" in units and not any("teacher" in u for u in units)  # logreg teachers are not torch


def test_split_rows_override(paper_config):
    w = _by_unit(paper_work(paper_config, split_rows={"mnist": (96, 32)}))["lenet5 teacher image-epochs"]
    assert w.amount == ((4000 + 8160) * (96 / 250) + 32160 * (96 / 250 + 1)) * 10


def test_hours_exact_fallbacks_and_missing():
    teachers = Work("T", "t", "u", 1000.0, "teacher_s_per_image_epoch:lenet5:block", False, "")
    trials = Work("M", "t", "u", 3.6e12, "mc_model_trials_per_s", True, "")
    prompts = Work("P", "t", "u", 10.0, "llm_prompts_per_s:x", False, "")
    rows = gpu_hours([teachers, trials, prompts], {"teacher_s_per_image_epoch:lenet5:block": 3.6, "mc_model_trials_per_s": 1e9})
    assert [r["gpu_hours"] for r in rows] == [pytest.approx(1.0), pytest.approx(1.0), None]
    assert [r["hours_are"] for r in rows] == ["exact", "upper", None]
    rows = gpu_hours([teachers, trials], {"teacher_s_per_image_epoch:lenet5:one_at_a_time": 36.0, "mc_raw_trials_per_s": 1e10})
    assert rows[0]["rate_used"] == "teacher_s_per_image_epoch:lenet5:one_at_a_time" and rows[0]["gpu_hours"] == pytest.approx(10.0)
    assert rows[0]["hours_are"] == "upper"  # one at a time is slower than blocks
    assert rows[1]["rate_used"] == "mc_raw_trials_per_s" and rows[1]["hours_are"] == "neither"  # bound amount, too fast a rate
    assert gpu_hours([Work("M", "t", "u", 1.0, "mc_model_trials_per_s", False, "")], {"mc_raw_trials_per_s": 1.0})[0]["hours_are"] == "lower"


def test_issue17_rates_are_the_quoted_h100_figures():
    r = ISSUE17_H100["rates"]
    assert r["teacher_s_per_image_epoch:wrn16-4:one_at_a_time"] * 240 * 10 == pytest.approx(1.1)
    assert r["mc_raw_trials_per_s"] == pytest.approx(3.7e9, rel=0.01)


def test_config_errors_name_the_key(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({"chadha2024": {"pate_capc": {"num_queries": -3}}}))
    with pytest.raises(ValueError, match="num_queries"):
        load_workflow_config(DEFAULT, bad)
    with pytest.raises(FileNotFoundError):
        load_workflow_config(tmp_path / "missing.yaml")
    (tmp_path / "list.yaml").write_text("- 1\n")
    with pytest.raises(TypeError, match="mapping"):
        load_workflow_config(tmp_path / "list.yaml")


def _bench():
    sys.path.insert(0, str(REPO / "bench"))
    spec = importlib.util.spec_from_file_location("gpu_hours", REPO / "bench" / "gpu_hours.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_bench_script_table_readme_and_bad_rates(tmp_path, capsys, monkeypatch):
    gh = _bench()
    rates = tmp_path / "rates.json"
    rates.write_text(json.dumps({"source": "test GPU", "device": "Test GPU", "torch": "9.9.9", "date": "2026-01-02",
                                 "rates": {"teacher_s_per_image_epoch:lenet5:block": 1e-5, "mc_model_trials_per_s": 2e9}}))
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{gh.BEGIN_MARKER}\nold\n{gh.END_MARKER}\noutro\n")
    monkeypatch.setattr(gh, "README", readme)
    assert gh.main(["--rates", str(rates), "--write-readme", "--csv", str(tmp_path / "h.csv")]) == 0
    out = capsys.readouterr().out
    assert "Rates: measured on Test GPU, torch 9.9.9, 2026-01-02 (`rates.json`: test GPU)." in out and "| PATE / CaPC teachers |" in out
    # Without a rate in the file, the encoders and the LLM are projected (PROJECTED_H200), and say so.
    assert "projected, not measured (llm_prompts_per_s:mistral-7b)" in out and "(projected) |" in out
    # LeNet-5 at 1e-5 s per image-epoch: ≤ 1.07e8 image-epochs → ≤ 0.296 h; trials at 2e9/s: ≤ 1.44e13 → ≤ 2 h
    assert "≤ 0.296 |" in out and "≤ 2 |" in out
    text = readme.read_text()
    assert text.startswith("intro\n") and text.endswith("outro\n") and "\nold\n" not in text and "| PATE / CaPC sampled audits |" in text
    assert "Made by `bench/gpu_hours.py` `--rates rates.json`." in text
    (tmp_path / "bad.json").write_text(json.dumps({"mc": 1}))
    assert gh.main(["--rates", str(tmp_path / "bad.json")]) == 2
    assert "rates" in capsys.readouterr().err


def test_repository_readme_holds_the_table_once():
    gh = _bench()
    text = (REPO / "docs" / "paper_scale.md").read_text(encoding="utf-8")  # the page gpu_hours.py writes
    assert text.count(gh.BEGIN_MARKER) == 1 and text.count(gh.END_MARKER) == 1
    block = text.split(gh.BEGIN_MARKER)[1].split(gh.END_MARKER)[0]
    assert "| PATE / CaPC teachers |" in block and "Made by `bench/gpu_hours.py`" in block


def test_rates_label_from_the_source_text_and_file_name():
    """Rates files without device/torch/date keys (``rates_h200_2026-11-26.json``): read from the
    source text and the file name."""
    gh = _bench()
    doc = {"source": "bench/bench_gpu.py on NVIDIA H200 (torch 2.11.0+cu130), two runs", "rates": {}}
    label = gh.rates_label(doc, "../shared/gpu/rates_h200_2026-11-26.json")
    assert label.startswith("measured on NVIDIA H200, torch 2.11.0+cu130, 2026-11-26 (`rates_h200_2026-11-26.json`")
    assert gh.rates_label({"source": "H100 quotes", "rates": {}}, None) == "H100 quotes"


def test_projection_only_where_no_rate_is_measured():
    from ppaudit.workflow.gpu_budget import PROJECTED_H200

    enc = Work("F", "t", "vit inputs", 3600.0, "encoder_inputs_per_s:vit-l16-in21k", False, "")
    measured = gpu_hours([enc], {"encoder_inputs_per_s:vit-l16-in21k": 1.0}, projected=PROJECTED_H200["rates"])[0]
    assert measured["hours_are"] == "exact" and measured["gpu_hours"] == pytest.approx(1.0)
    row = gpu_hours([enc], {}, projected=PROJECTED_H200["rates"])[0]
    # 2 · 304e6 · 197 FLOPs per image at 0.4 · 989e12 FLOP/s: 3,303 images/s
    assert row["hours_are"] == "projected" and row["gpu_hours"] == pytest.approx(3600.0 / (0.4 * 989e12 / (2 * 304e6 * 197)) / 3600.0)
    assert gpu_hours([enc], {})[0]["gpu_hours"] is None
