"""Cross-key checks of the wang2022 section (ppaudit.workflow.config_checks.check_wang2022).

The shipped configs pass (default, tiny, paper — the latter uses SVHN with downloads); each
raise names the offending key and value, and check_config runs the check.
"""

from __future__ import annotations

import copy

import pytest
from test_config_checks import (
    _load,  # the shipped configs, defaults filled by the schema
)

from ppaudit.workflow.config_checks import STAGE_CHECKS, check_config, check_wang2022


@pytest.fixture(scope="module")
def default() -> dict:
    return _load("config/config.yaml")


@pytest.mark.parametrize("over", [None, "tests/configs/tiny.yaml", "config/paper.yaml"], ids=["default", "tiny", "paper"])
def test_shipped_configs_pass(over):
    files = ("config/config.yaml",) + ((over,) if over else ())
    check_wang2022(_load(*files))
    assert check_wang2022 in STAGE_CHECKS


def _with(default, path, value):
    cfg = copy.deepcopy(default)
    node = cfg["wang2022"]
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    return cfg


@pytest.mark.parametrize(
    "path, value, words",
    [
        (("attack", "budget_sigma"), 0, ["wang2022.attack.budget_sigma", "0", "> 0"]),
        (("attack", "per_level"), 10**6, ["wang2022.datasets.", "test_size", "3 × wang2022.attack.per_level = 3000000"]),
        (("defence", "histograms"), [[5, 3], [7]], ["wang2022.defence.histograms[1]", "[7]", "2 classes"]),
        (("defence", "histograms"), [[0, 0]], ["wang2022.defence.histograms[0]", "positive total"]),
        (("defence", "audit_histogram"), [9], ["wang2022.defence.audit_histogram", "[9]", "2 classes"]),
        (("defence", "audit_histogram"), [9, 0, 0], ["wang2022.defence.audit_histogram", "[9, 0, 0]", "second class"]),
    ],
    ids=["budget-sigma", "test-size", "defence-one-class", "defence-empty", "audit-one-class", "audit-no-runner-up"],
)
def test_each_raise_names_the_key(default, path, value, words):
    cfg = _with(default, path, value)
    with pytest.raises(ValueError) as exc:
        check_wang2022(cfg)
    for w in words:
        assert w in str(exc.value), (w, str(exc.value))
    with pytest.raises(ValueError, match=r"^wang2022\."):
        check_config(cfg)


def test_figure_dataset_must_be_configured(default):
    cfg = copy.deepcopy(default)
    name = cfg["wang2022"]["figure_datasets"][1]
    del cfg["wang2022"]["datasets"][name]
    with pytest.raises(ValueError, match=rf"wang2022\.figure_datasets names '{name}', which wang2022\.datasets lacks"):
        check_wang2022(cfg)


def test_svhn_needs_downloads(default):
    cfg = _load("config/config.yaml", "config/paper.yaml")
    assert "svhn" in cfg["wang2022"]["figure_datasets"]
    cfg["wang2022"]["histograms"]["data_source"] = "packaged"
    with pytest.raises(ValueError, match=r"svhn.*wang2022\.histograms\.data_source = download"):
        check_wang2022(cfg)


def test_test_size_none_means_the_whole_test_set(default):
    cfg = _with(default, ("attack", "per_level"), 10**6)
    for name in cfg["wang2022"]["figure_datasets"]:
        cfg["wang2022"]["datasets"][name]["test_size"] = None
    check_wang2022(cfg)
