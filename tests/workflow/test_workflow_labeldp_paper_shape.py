"""Label DP at the papers' scale, exercised end to end (issue 17 item 5): config/paper.yaml plus
an override that changes only sizes and the machine (cuda → cpu) runs the observational paper's
Table 1 and Malek et al.'s Tables 5–6 on CIFAR-10 — the real downloader fetching a real-format
``cifar-10-python.tar.gz`` from 127.0.0.1 with its pinned checksum, the paper's WRN-16-4 trained
on (soft) labels for every mechanism (LP-1ST with the uniform and the out-of-domain prior, ALIBI
with its iterative prior, PATE-FM's Confident-GNMax teachers and FixMatch student) and for the
memorisation games. Beside the sizes of tests/workflow/test_workflow_paper_shape.py's override (so both
runs of paper.yaml are checked by one key rule)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest
import yaml
from dataset_fixtures import sha256, write_criteo_day, write_registry
from local_http import LocalServer
from paper_override import assert_sizes_only, leaves
from workflow_runner import REPO, output_of, run_snakemake

from ppaudit.data import criteo_registry_entry

PAPER = REPO / "config" / "paper.yaml"
N_TRAIN, N_TEST = 48, 16  # CIFAR-10 images: 24 per half (a WRN-16-4 on CPU is the cost)
TARGETS = ("obs_table1", "obs_table2", "malek_table5", "malek_table6")
#: Criteo rows per day file of the fixture (the paper: 1 million selected per day).
CRITEO_ROWS = 400

#: The override of config/paper.yaml's label-DP section: sizes, and cpu for cuda.
LABELDP_SIZES = {
    "labeldp": {
        "repetitions": 2,
        "datasets": {
            "image": {
                "train_size": N_TRAIN, "test_size": N_TEST, "prior_size": 12, "pate_queries": 8, "pate_teachers": 2,
                # Confident-GNMax's threshold is a vote count: Table 3's 100 of 200 teachers is 1 of 2
                "pate_threshold": 1,
                "model": {"epochs": 1, "batch_size": 16, "device": "cpu"},
            },
            "tabular": {"train_size": CRITEO_ROWS, "test_size": 64, "prior_size": 20, "pate_queries": 16, "pate_teachers": 2,
                        "model": {"iterations": 20}},
        },
        "fixmatch": {"steps": 2, "batch_size": 4, "mu": 2},
        "malek": {"num_canaries": 10, "games": 1, "canaries_per_game": 10},
    }
}

#: Label-DP keys that are sizes (each only shrinks from paper.yaml's value); the rest of
#: the override is the machine (device).
LABELDP_SIZE_KEYS = {"repetitions", "train_size", "test_size", "prior_size", "pate_queries", "pate_teachers", "pate_threshold",
                     "epochs", "batch_size", "steps", "mu", "num_canaries", "games", "canaries_per_game", "iterations"}
MACHINE_KEYS = {"device"}


def test_override_changes_only_sizes_and_the_device():
    paper = yaml.safe_load(PAPER.read_text())
    for path, _ in leaves(LABELDP_SIZES):  # the leaf itself names the size (labeldp keys are not unique by path)
        assert path[-1] in LABELDP_SIZE_KEYS | MACHINE_KEYS, path
    assert_sizes_only(paper, LABELDP_SIZES, LABELDP_SIZE_KEYS, MACHINE_KEYS)
    assert paper["labeldp"]["datasets"]["tabular"]["source"] == "download"  # Criteo, Day 0 / Day 1
    image = paper["labeldp"]["datasets"]["image"]
    assert image["source"] == "download" and image["model"]["arch"] == "wrn16-4" and image["model"]["device"] == "cuda"
    assert image["algorithms"] == ["lp_1st", "lp_1st_ood", "pate", "alibi"] and paper["labeldp"]["malek"]["model"] is None


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    workdir = tmp_path_factory.mktemp("labeldp_paper_shape")
    with LocalServer() as server:
        registry = json.loads(write_registry(server, workdir / "registry.json", ["cifar10"], n_train=N_TRAIN + 24, n_test=N_TEST + 8).read_text())
        # Criteo publishes no checksum: the registry pins the fixture's days, as a user pins their copy
        digests = {}
        for day in (0, 1):
            path = workdir / f"day_{day}.gz"
            write_criteo_day(path, CRITEO_ROWS + 50, seed=day)
            server.files[f"/criteo/day_{day}.gz"] = path.read_bytes()
            digests[day] = sha256(path.read_bytes())
        registry["criteo"] = criteo_registry_entry(digests, url=server.base + "/criteo/day_{day}.gz")
        (workdir / "registry.json").write_text(json.dumps(registry))
        (workdir / "sizes.yaml").write_text(yaml.safe_dump({**LABELDP_SIZES, "dataset_registry": str(workdir / "registry.json")}))
        env = {**os.environ, "no_proxy": "127.0.0.1,localhost", "NO_PROXY": "127.0.0.1,localhost", "OMP_WAIT_POLICY": "PASSIVE"}
        proc = run_snakemake(*TARGETS, "--cores", "2", "--directory", str(workdir), "--configfile", str(PAPER), str(workdir / "sizes.yaml"),
                             cwd=REPO, timeout=900, env=env)
        requests = list(server.requests)
    assert proc.returncode == 0, output_of(proc)
    # each file fetched once, through the real downloader
    assert sorted(requests) == ["/cifar10/cifar-10-python.tar.gz", "/criteo/day_0.gz", "/criteo/day_1.gz"]
    return workdir


@pytest.mark.workflow
@pytest.mark.timeout(900)
def test_cifar10_tables_come_from_the_wide_resnet(run_dir):
    metrics = json.loads((run_dir / "results" / "labeldp" / "image" / "models.json").read_text())
    text = json.dumps(metrics)
    assert "fixmatch" in text  # PATE-FM's student
    table = pd.read_csv(run_dir / "results" / "tables" / "labeldp" / "obs_table1.csv")
    assert len(table) > 0
    for name in ("malek_table5", "malek_table6"):
        assert len(pd.read_csv(run_dir / "results" / "tables" / "labeldp" / f"{name}.csv")) > 0
    import pickle

    data = pickle.loads((run_dir / "results" / "labeldp" / "image" / "data.pkl").read_bytes())
    assert data.x_target.shape == (N_TRAIN // 2, 3, 32, 32) and data.x_test.shape == (N_TEST, 3, 32, 32)


@pytest.mark.workflow
@pytest.mark.timeout(900)
def test_criteo_table_comes_from_day0_and_day1(run_dir):
    import pickle

    data = pickle.loads((run_dir / "results" / "labeldp" / "tabular" / "data.pkl").read_bytes())
    # the first CRITEO_ROWS rows of each day, 80 % of Day 0 → M', 80 % of Day 1 → M, 16 % of Day 1 → test
    assert len(data.y_ref) == len(data.y_target) == int(0.8 * CRITEO_ROWS) and len(data.y_test) == 64
    assert list(data.x_ref.columns)[:2] == ["I1", "I2"] and len(data.x_ref.columns) == 39
    table = pd.read_csv(run_dir / "results" / "tables" / "labeldp" / "obs_table2.csv")
    assert len(table) > 0
