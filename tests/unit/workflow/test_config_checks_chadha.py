"""Cross-key checks of the PATE/CaPC and Private-kNN config sections (ppaudit.workflow.config_checks).

One bad value per case; the message names the dotted config key. The shipped configs pass
(tests/unit/workflow/test_config_checks.py::test_shipped_configs_pass runs every check).
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml
from snakemake.utils import validate

from ppaudit.experiments.chadha2024.private_knn import (
    KNN_DATASETS,
    KNN_ENCODER_MODALITY,
    KNN_MODALITY,
    KNN_PACKAGED_DATASETS,
)
from ppaudit.models.encoders import ENCODERS
from ppaudit.workflow.config_checks import apply_audit_defaults, check_config, check_knn, check_pate_capc

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def default() -> dict:
    cfg = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    validate(cfg, str(REPO / "workflow" / "schemas" / "config.schema.yaml"))
    return apply_audit_defaults(cfg)  # chadha2024.audit_defaults into each section, as common.smk does


def _with(default, section, **changes):
    cfg = copy.deepcopy(default)
    for dotted, value in changes.items():
        node = cfg["chadha2024"][section]
        *path, last = dotted.split("__")
        for k in path:
            node = node[k]
        node[last] = value
    return cfg


@pytest.mark.parametrize(
    "changes, words",
    [
        ({"datasets": ["digits", "svhn"]}, ["chadha2024.pate_capc.datasets", "'svhn'", "dataset_settings"]),
        ({"datasets": ["cifar10"], "source": "packaged"}, ["'cifar10'", "no packaged copy", "source: download"]),
        ({"datasets": ["digits"], "source": "download"}, ["'digits'", "packaged only", "source: packaged"]),
        ({"rdp_panel_dataset": "mnist", "datasets": ["digits"]}, ["chadha2024.pate_capc.rdp_panel_dataset", "'mnist'"]),
        ({"candidates__pois-advq": 10**6}, ["chadha2024.pate_capc.candidates.pois-advq", "1000000", "num_queries"]),
        ({"orders": [2, 8, 16]}, ["chadha2024.pate_capc.orders", "16", "at least 32"]),
        ({"repeated_query_example__p_q": [0.5, 0.6]}, ["chadha2024.pate_capc.repeated_query_example.p_q", "[0.5, 0.6]", "sum to 1"]),
        ({"repeated_query_example__p_q_prime": [0.5, 0.25, 0.25]}, ["chadha2024.pate_capc.repeated_query_example", "2 classes", "3"]),
    ],
    ids=["unknown-dataset", "cifar-packaged", "digits-download", "panel", "candidates", "orders", "example-law", "example-length"],
)
def test_pate_capc_check_names_the_key(default, changes, words):
    check_pate_capc(default)
    if "datasets" in changes and "cifar10" in changes["datasets"]:
        default = _with(default, "pate_capc", dataset_settings={**default["chadha2024"]["pate_capc"]["dataset_settings"],
                                                                "cifar10": default["chadha2024"]["pate_capc"]["dataset_settings"]["digits"]})
    cfg = _with(default, "pate_capc", **changes)
    with pytest.raises(ValueError) as exc:
        check_pate_capc(cfg)
    for w in words:
        assert w in str(exc.value), (w, str(exc.value))
    with pytest.raises(ValueError, match=r"chadha2024\.pate_capc"):
        check_config(cfg)


@pytest.mark.parametrize(
    "changes, words",
    [
        ({"dataset_settings__rotten-tomatoes__encoder": "efficientnet-lite0"},
         ["chadha2024.knn.dataset_settings.rotten-tomatoes.encoder", "'efficientnet-lite0'", "image encoder", "text dataset"]),
        ({"dataset_settings__rotten-tomatoes__num_test": 3}, ["chadha2024.knn.num_queries", "num_test = 3"]),
        ({"dataset_settings__rotten-tomatoes__num_train": 10}, ["num_train = 10", "too small", "1.5·k"]),
        ({"rdp_panel_dataset": "sst2"}, ["chadha2024.knn.rdp_panel_dataset", "'sst2'"]),
        ({"advq_candidates": 10**6}, ["chadha2024.knn.advq_candidates = 1000000", "num_queries"]),
        ({"dataset_settings__rotten-tomatoes__advq_candidates": 10**6},
         ["chadha2024.knn.dataset_settings.rotten-tomatoes.advq_candidates = 1000000"]),
        ({"orders": [2, 4, 31]}, ["chadha2024.knn.orders ends at 31", "at least 32"]),
    ],
    ids=["encoder-modality", "num-test", "num-train", "panel", "advq", "advq-dataset", "orders"],
)
def test_knn_check_names_the_key(default, changes, words):
    check_knn(default)
    cfg = _with(default, "knn", **changes)
    with pytest.raises(ValueError) as exc:
        check_knn(cfg)
    for w in words:
        assert w in str(exc.value), (w, str(exc.value))
    with pytest.raises(ValueError, match=r"chadha2024\.knn"):
        check_config(cfg)


def test_knn_dataset_needs_settings(default):
    settings = dict(default["chadha2024"]["knn"]["dataset_settings"])
    del settings["fashion-mnist"]
    cfg = _with(default, "knn", dataset_settings=settings)
    with pytest.raises(ValueError, match=r"chadha2024\.knn\.datasets names 'fashion-mnist', which has no entry in chadha2024\.knn\.dataset_settings"):
        check_knn(cfg)


def test_knn_unpackaged_dataset_needs_download(default):
    settings = default["chadha2024"]["knn"]["dataset_settings"]
    sst2 = {**settings["rotten-tomatoes"], "encoder": "all-minilm-l6-v2"}
    cfg = _with(default, "knn", datasets=["sst2"], source="packaged", rdp_panel_dataset=None, dataset_settings={**settings, "sst2": sst2})
    with pytest.raises(ValueError, match=r"chadha2024\.knn\.datasets holds 'sst2', which has no packaged \(offline\) copy"):
        check_knn(cfg)
    check_knn(_with(cfg, "knn", source="download"))


def test_knn_tables_cover_the_datasets_and_encoders():
    assert set(KNN_MODALITY) == set(KNN_DATASETS)
    assert set(KNN_MODALITY.values()) == {"image", "text"}
    assert set(KNN_ENCODER_MODALITY) == set(ENCODERS)
    assert set(KNN_PACKAGED_DATASETS) < set(KNN_DATASETS)
    assert KNN_MODALITY["rotten-tomatoes"] == "text" and KNN_ENCODER_MODALITY["vit-l16-in21k"] == "image"
