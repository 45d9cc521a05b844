"""The paper configuration exercised end to end (issue 17, item 4), at toy sizes on the CPU.

The workflow runs on ``config/paper.yaml`` plus one override (:data:`SIZES`) that changes only
sizes — teachers, queries, instantiations, candidates, trials, epochs, images — and what a CI
machine without a GPU or the 7B weights must change: ``device: cuda`` becomes ``cpu`` (teachers,
LLM) or ``torch-cpu`` (the same float32 torch Monte Carlo sampler the GPU runs, on the CPU), and
Mistral-7B becomes a 2-layer random Llama (the same transformers code path). Everything else is
the paper's: LeNet-5 (MNIST) and WRN-16-4 (Fashion-MNIST, CIFAR-10) teachers trained as stacked
blocks (``batch_teachers``) with deterministic kernels, σ = 40 / 25, sampled audits, the four
PromptPATE datasets, Wang et al.'s MNIST and SVHN with the Confident-GNMax accountant. Every
dataset goes through the real downloaders (``ppaudit.data``: checksums, atomic rename) from a
server on 127.0.0.1 that serves real-format fixtures (tests/dataset_fixtures.py) under the
registry file of the config key ``dataset_registry``.

Targets: ``chadha_fig3``, ``chadha_fig4`` (PATE, CaPC, PromptPATE panels), ``wang_fig3`` and Wang et al.'s
attacks on SVHN (``results/wang2022/attacks/svhn.csv``).

The one-GPU slice ``config/slices/fmnist_gpu.yaml`` (issue 29 item 4) runs here too, on a copy of
this run's folder: the slice over this run's sizes (:data:`SIZES`: ``cpu`` / ``torch-cpu``) and
:data:`SLICE_CPU` (the registry's fixture Fashion-MNIST for the Debian package's 70,000 images),
target ``chadha_fig3``.
Its Fashion-MNIST teachers, canaries and audits have the same params, code and inputs as this
run's, so Snakemake finds them done and runs only the slice's own summaries and figure (a fresh
run of those WRN-16-4 jobs took about 5 minutes on 2 busy cores; this one adds 10–12 s). The test
asserts exactly that, so an overlay that changes the per-dataset work at these sizes fails here.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from dataset_fixtures import write_registry
from local_http import LocalServer
from paper_override import assert_sizes_only
from tiny_llm import build_tiny_model
from workflow_runner import REPO, assert_figure_files, output_of, run_snakemake

PAPER = REPO / "config" / "paper.yaml"
SLICE = REPO / "config" / "slices" / "fmnist_gpu.yaml"
#: Images per fixture dataset: 96 training images are 12 per teacher (one batch of 16); 32 test images.
N_TRAIN, N_TEST = 96, 32
TARGETS = ("chadha_fig3", "chadha_fig4", "wang_fig3", "results/wang2022/attacks/svhn.csv")

_SMALL_TEACHER = {"epochs": 1, "device": "cpu"}

#: The override of config/paper.yaml: sizes, plus cpu/torch-cpu for cuda and a tiny Llama for Mistral-7B.
SIZES = {
    "chadha2024": {
        "audit_defaults": {"trials": 20000, "audit_device": "torch-cpu"},
        "pate_capc": {
            "num_queries": 6,
            "num_instantiations": {"pate": 2, "capc": 1},
            "canary_instantiations": 1,
            "candidates": {"nat-advq": 1, "pois-advq": 1, "pois-natq": 1},
            "sample_trials": 20000,
            "count_mode": "sample",
            "transcript_draws": 1000,
            "joint_draws": 500,
            "threads": 1,
            "batch_teachers": 4,
            "teacher_params": {"lenet5": _SMALL_TEACHER, "wrn16-4": _SMALL_TEACHER},
            "dataset_settings": {"mnist": {"num_teachers": 8}, "fashion-mnist": {"num_teachers": 8}, "cifar10": {"num_teachers": 8}},
        },
        "promptpate": {
            "model_name": "tiny-llama", "device": "cpu", "batch_size": 8, "threads": 1,
            "num_teachers": 4, "num_queries": 4, "test_size": 40,
        },
    },
    "wang2022": {
        "histograms": {"num_teachers": 10},
        "attack": {"num_queries": 300, "per_level": 1, "paper_max_iterations": 200},
    },
}

#: The slice's CPU run: config/paper.yaml, the slice, :data:`SIZES` (this run's sizes.yaml) and this. Only
#: the data source changes: the registry's real-format fixture of Fashion-MNIST (downloaded as this run
#: did) stands in for the Debian package's full 70,000 images of the slice's ``source: packaged``.
SLICE_CPU = {"chadha2024": {"pate_capc": {"source": "download"}}}

#: Config keys an override may change and still be "the paper configuration at other sizes".
SIZE_KEYS = {
    "trials", "num_queries", "num_instantiations", "canary_instantiations", "candidates", "sample_trials",
    "transcript_draws", "joint_draws", "threads", "batch_teachers", "epochs", "num_teachers", "batch_size",
    "test_size", "per_level", "paper_max_iterations",
}
#: ... and what a CPU-only CI machine without the 7B weights must change (named in the module docstring).
MACHINE_KEYS = {"audit_device", "device", "model", "model_name", "text_data_dir", "dataset_registry"}
#: ... and count_mode: 8 teachers' vote models enumerate where the paper's 250 do not, so
#: ``sample`` keeps the audits on the sampled path that paper.yaml's ``auto`` takes at its sizes.
PATH_KEYS = {"count_mode"}


def test_override_changes_only_sizes_and_machine_keys():
    paper = yaml.safe_load(PAPER.read_text())
    assert_sizes_only(paper, SIZES, SIZE_KEYS, MACHINE_KEYS | PATH_KEYS)
    # the models, σ, accountant and datasets stay the paper's
    pc = paper["chadha2024"]["pate_capc"]
    assert {ds: s["model"] for ds, s in pc["dataset_settings"].items()} == {"mnist": "lenet5", "fashion-mnist": "wrn16-4", "cifar10": "wrn16-4"}
    assert paper["wang2022"]["attack"]["accountant"] == "confident_gnmax" and "svhn" in paper["wang2022"]["figure_datasets"]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    workdir = tmp_path_factory.mktemp("paper_shape")
    build_tiny_model(workdir / "tiny-llama")
    with LocalServer() as server:
        datasets = ["mnist", "fashion-mnist", "cifar10", "svhn", "sst2", "agnews", "dbpedia", "trec"]
        write_registry(server, workdir / "registry.json", datasets, n_train=N_TRAIN, n_test=N_TEST)
        override = {**SIZES, "dataset_registry": str(workdir / "registry.json"),
                    "chadha2024": {**SIZES["chadha2024"], "promptpate": {**SIZES["chadha2024"]["promptpate"], "model": str(workdir / "tiny-llama")}}}
        (workdir / "sizes.yaml").write_text(yaml.safe_dump(override))
        env = {**os.environ, "no_proxy": "127.0.0.1,localhost", "NO_PROXY": "127.0.0.1,localhost", "OMP_WAIT_POLICY": "PASSIVE"}
        proc = run_snakemake(*TARGETS, "--cores", "2", "--directory", str(workdir), "--configfile", str(PAPER),
                             str(workdir / "sizes.yaml"), cwd=REPO, timeout=1500, env=env)
        requests = list(server.requests)
    assert proc.returncode == 0, output_of(proc)
    (workdir / "requests.txt").write_text("\n".join(requests))
    return workdir


@pytest.mark.workflow
@pytest.mark.timeout(1500)
def test_every_dataset_came_through_the_real_downloader(run_dir):
    requests = (run_dir / "requests.txt").read_text().split()
    for name in ("mnist", "fashion-mnist", "cifar10", "svhn", "sst2", "agnews", "dbpedia", "trec"):
        assert any(r.startswith(f"/{name}/") for r in requests), name
    for ds in ("mnist", "fashion-mnist", "cifar10"):
        assert (run_dir / "resources" / "datasets" / ds / ".verified").is_file()
    # each file fetched once: later jobs reuse the verified copies
    assert len(requests) == len(set(requests)), requests


@pytest.mark.workflow
@pytest.mark.timeout(1500)
def test_fig3_fig4_have_the_paper_datasets_models_and_sampled_audits(run_dir):
    paper = yaml.safe_load(PAPER.read_text())["chadha2024"]
    for fig, advs in (("fig3", {"nat-advq", "pois-advq"}), ("fig4", {"pois-natq"})):
        base = run_dir / "results" / "figures" / "chadha2024" / fig
        assert_figure_files(base)
        csv = pd.read_csv(base.with_suffix(".csv"))
        assert set(csv["algo"]) == {"pate", "capc", "promptpate"}
        pc = csv[csv["algo"].isin(["pate", "capc"])]
        assert set(pc["dataset"]) == {"mnist", "fashion-mnist", "cifar10"} and set(pc["adversary"]) == advs
        assert set(csv.loc[csv["algo"] == "promptpate", "dataset"]) == set(paper["promptpate"]["datasets"])
        assert np.isfinite(csv["epsilon"]).all()
    s = pd.read_csv(run_dir / "results" / "chadha2024" / "private_prediction" / "pate" / "summary.csv")
    assert set(s["model"]) == {"lenet5", "wrn16-4"}
    assert dict(zip(s["dataset"], s["model"])) == {"mnist": "lenet5", "fashion-mnist": "wrn16-4", "cifar10": "wrn16-4"}
    assert dict(zip(s["dataset"], s["sigma"])) == {"mnist": 40, "fashion-mnist": 40, "cifar10": 25}
    # sampled audits at the configured T, on the torch sampler
    for algo in ("pate", "capc"):
        s = pd.read_csv(run_dir / "results" / "chadha2024" / "private_prediction" / algo / "summary.csv")
        audited = s[s["count_modes"] != "none"]  # rows of an audit (theory rows have none)
        assert (s["num_teachers"] == 8).all() and len(audited)
        assert (audited["trials_used_max"] == SIZES["chadha2024"]["pate_capc"]["sample_trials"]).all()
        assert audited["count_modes"].str.contains("sample").all(), audited["count_modes"]
    log = next((run_dir / "logs" / "audit_noisy_argmax").rglob("*.log")).read_text()
    assert "torch-cpu" in log, log[-2000:]
    # one PATE instantiation of 8 stacked WRN-16-4 teachers on CIFAR-10: a vote per teacher and query
    votes = np.load(next((run_dir / "results" / "votes" / "pate" / "cifar10" / "wrn16-4").glob("seed*/votes_S.npz")))["votes_S"]
    assert votes.shape == (2, 8, 6) and votes.min() >= 0 and votes.max() <= 9
    assert len(np.unique(votes)) > 1  # the teachers learned the fixture's classes, not one constant label


@pytest.mark.workflow
@pytest.mark.timeout(1500)
def test_wang_svhn_attack_with_confident_gnmax(run_dir):
    fig = pd.read_csv(run_dir / "results" / "figures" / "wang2022" / "fig3.csv")
    assert set(fig["dataset"]) == {"MNIST", "SVHN"}, fig.head()  # the paper's two datasets (paper_dataset names)
    hist = np.load(run_dir / "results" / "wang2022" / "histograms" / "svhn.npz")["histograms"]
    assert hist.shape == (N_TEST, 10) and (hist.sum(axis=1) == SIZES["wang2022"]["histograms"]["num_teachers"]).all()
    attacks = pd.read_csv(run_dir / "results" / "wang2022" / "attacks" / "svhn.csv")
    paper = yaml.safe_load(PAPER.read_text())["wang2022"]["datasets"]["svhn"]
    assert set(attacks["accountant"]) == {"confident_gnmax"} and set(attacks["procedure"]) == {"paper", "ours"}
    assert (attacks["threshold"] == paper["threshold"]).all() and (attacks["sigma_threshold"] == paper["sigma_threshold"]).all()
    assert np.isfinite(attacks["error"]).all() and (attacks["privacy_cost"] > 0).all()


@pytest.mark.workflow
@pytest.mark.timeout(1500)
def test_gpu_budget_counts_the_teachers_this_run_trained(run_dir):
    """ppaudit.workflow.gpu_budget (README "GPU hours at paper scale") counts, on this run's config,
    the teachers the run trained: the teachers of S and the canary teachers exactly, the
    canary-free twins (one per distinct instantiation and cell of a canary file) at most its bound."""
    from ppaudit.workflow.gpu_budget import load_workflow_config, paper_work

    config = load_workflow_config(REPO / "config" / "config.yaml", PAPER, run_dir / "sizes.yaml")
    rows = {ds: (N_TRAIN, N_TEST) for ds in ("mnist", "fashion-mnist", "cifar10")}
    work = {w.unit: w for w in paper_work(config, gpu_only=False, split_rows=rows)}
    trained: dict[str, dict[str, int]] = {}
    image_epochs: dict[str, float] = {}
    k = SIZES["chadha2024"]["pate_capc"]["dataset_settings"]["mnist"]["num_teachers"]
    epochs = _SMALL_TEACHER["epochs"]
    for f in (run_dir / "results" / "votes").rglob("votes_S.npz"):
        model = f.parent.parent.name
        n = int(np.prod(np.load(f)["votes_S"].shape[:2]))  # (N_g, k, n_Q)
        trained.setdefault(model, {"teachers_S": 0, "canary_teachers": 0, "twins": 0})["teachers_S"] += n
        image_epochs[model] = image_epochs.get(model, 0.0) + n * N_TRAIN / k * epochs
    for f in (run_dir / "results" / "votes").rglob("votes_S_prime.npz"):
        model = f.parents[2].name
        z = np.load(f)
        n_c, n_g = z["votes_S_prime"].shape[:2]
        twins = len({(g, int(z["slots"][c, g])) for c in range(n_c) for g in range(n_g)})
        trained[model]["canary_teachers"] += n_c * n_g
        trained[model]["twins"] += twins
        image_epochs[model] += (n_c * n_g * (N_TRAIN / k + 1) + twins * N_TRAIN / k) * epochs
    assert set(trained) == {"lenet5", "wrn16-4"}
    for model, got in trained.items():
        w = work[f"{model} teacher image-epochs"]
        assert got["teachers_S"] == w.counts["teachers_S"] and got["canary_teachers"] == w.counts["canary_teachers"], (model, got, w.counts)
        assert 0 < got["twins"] <= w.counts["twins_max"], (model, got, w.counts)
        assert image_epochs[model] <= w.amount + 1e-9 and w.rate_key == f"teacher_s_per_image_epoch:{model}:block"


@pytest.fixture(scope="module")
def slice_run(run_dir, tmp_path_factory):
    """``chadha_fig3`` of config/slices/fmnist_gpu.yaml at this run's sizes, on a copy of its folder
    (results, logs, Snakemake's metadata, the verified Fashion-MNIST fixture; mtimes kept)."""
    workdir = tmp_path_factory.mktemp("fmnist_slice")
    for name in (".snakemake", "results", "logs", "benchmarks"):
        shutil.copytree(run_dir / name, workdir / name, symlinks=True)
    shutil.copytree(run_dir / "resources" / "datasets" / "fashion-mnist", workdir / "resources" / "datasets" / "fashion-mnist")
    (workdir / "slice_cpu.yaml").write_text(yaml.safe_dump(SLICE_CPU))
    env = {**os.environ, "no_proxy": "127.0.0.1,localhost", "NO_PROXY": "127.0.0.1,localhost", "OMP_WAIT_POLICY": "PASSIVE"}
    proc = run_snakemake("chadha_fig3", "--cores", "2", "--directory", str(workdir), "--configfile", str(PAPER), str(SLICE),
                         str(run_dir / "sizes.yaml"), str(workdir / "slice_cpu.yaml"), cwd=REPO, timeout=600, env=env)
    assert proc.returncode == 0, output_of(proc)
    return workdir, proc


@pytest.mark.workflow
@pytest.mark.timeout(1500)
def test_gpu_slice_runs_chadha_fig3_on_the_cpu_at_these_sizes(slice_run):
    workdir, proc = slice_run
    out = proc.stdout + proc.stderr
    # Only the slice's own jobs ran: its teachers, canaries and audits are this run's, unchanged.
    jobs = dict(re.findall(r"^(\w+)\s+(\d+)$", out.split("Job stats:")[1].split("\n\n")[0], flags=re.M))
    assert jobs == {"collect_summaries": "2", "plot_chadha_fig34": "1", "chadha_fig3": "1", "total": "4"}, out[-4000:]
    csv = pd.read_csv(assert_figure_files(workdir / "results" / "figures" / "chadha2024" / "fig3"))
    assert set(csv["algo"]) == {"pate", "capc"} and set(csv["dataset"]) == {"fashion-mnist"}  # no PromptPATE panel
    assert set(csv["adversary"]) == {"nat-advq", "pois-advq"} and np.isfinite(csv["epsilon"]).all()
    pc = SIZES["chadha2024"]["pate_capc"]
    for algo in ("pate", "capc"):
        s = pd.read_csv(workdir / "results" / "chadha2024" / "private_prediction" / algo / "summary.csv")
        assert set(s["dataset"]) == {"fashion-mnist"} and set(s["model"]) == {"wrn16-4"} and set(s["sigma"]) == {40}
        assert set(s["adversary"]) == set(pc["candidates"]) and (s["num_teachers"] == 8).all()
        teachers = (workdir / "logs" / "train_teachers" / algo / "fashion-mnist" / "wrn16-4" / "seed2024.log").read_text()
        assert "'device': 'cpu'" in teachers and "'batch_teachers': 4" in teachers, teachers[-2000:]
    # Every audit of the slice ran with its Monte Carlo on torch-cpu (the float32 torch sampler that runs
    # on cuda on the GPU). At these sizes Fashion-MNIST's canary teachers vote as their twins (exact
    # method "identical": no trial is drawn); the sampled path is checked on MNIST above.
    logs = sorted((workdir / "logs" / "audit_noisy_argmax").glob("*/fashion-mnist/wrn16-4/seed*/*/sigma40.log"))
    assert len(logs) == 2 * len(pc["candidates"]), logs
    for log in logs:
        assert "Monte Carlo on torch-cpu" in log.read_text(), log
