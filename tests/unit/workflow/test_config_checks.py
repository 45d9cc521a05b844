"""Cross-key config checks (ppaudit.workflow.config_checks) and the config accessor.

* The shipped configs (embedded default, tests/configs/tiny.yaml on top of it, config/paper.yaml)
  pass every check after the schema filled their defaults.
* Each raise: one bad value per case, the message names the config key.
* config_value walks the keys and names a missing one.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml
from snakemake.utils import validate

from ppaudit.workflow.config_checks import (
    STAGE_CHECKS,
    apply_audit_defaults,
    check_config,
    check_dataset_registry,
    check_knn,
    check_labeldp,
    check_orders_reach_floor,
    check_panel_dataset,
    check_pate_capc,
    check_promptpate,
    check_synthetic,
    check_wang2022,
    config_value,
)

REPO = Path(__file__).resolve().parents[3]
SCHEMA = str(REPO / "workflow" / "schemas" / "config.schema.yaml")


def _merge(base: dict, over: dict) -> dict:
    """Snakemake's --configfile semantics: nested mappings are updated key by key."""
    out = dict(base)
    for k, v in over.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def _load(*files: str) -> dict:
    cfg: dict = {}
    for f in files:
        cfg = _merge(cfg, yaml.safe_load((REPO / f).read_text()))
    validate(cfg, SCHEMA)  # fills the defaults, as common.smk does before check_config
    return apply_audit_defaults(cfg)  # chadha2024.audit_defaults into each section, as common.smk does


@pytest.fixture(scope="module")
def default() -> dict:
    return _load("config/config.yaml")


@pytest.mark.parametrize(
    "files",
    [("config/config.yaml",), ("config/config.yaml", "tests/configs/tiny.yaml"), ("config/config.yaml", "config/paper.yaml")],
    ids=["default", "tiny", "paper"],
)
def test_shipped_configs_pass(files):
    check_config(_load(*files))


def _bad(default, path, value):
    cfg = copy.deepcopy(default)
    node = cfg
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    return cfg


@pytest.mark.parametrize(
    "check, path, value, words",
    [
        (check_synthetic, ("chadha2024", "synthetic", "fig6", "h_s_prime"), [13, 13, 10],
         ["chadha2024.synthetic.fig6.h_s ", "chadha2024.synthetic.fig6.h_s_prime", "same length"]),
        (check_promptpate, ("chadha2024", "promptpate", "rdp_panel_dataset"), "agnews",
         ["chadha2024.promptpate.rdp_panel_dataset", "'agnews'"]),
        (check_promptpate, ("chadha2024", "promptpate", "orders"), [2, 4, 16],
         ["chadha2024.promptpate.orders", "16", "at least 32"]),
        (check_promptpate, ("chadha2024", "promptpate", "fig4_variant"), "mapping",
         ["chadha2024.promptpate.fig4_variant", "'mapping'", "natq_variants"]),
        (check_labeldp, ("labeldp", "datasets", "tabular", "algorithms"), ["lp_1st", "lp_1st_ood"],
         ["labeldp.datasets.tabular.algorithms", "lp_1st_ood", "image"]),
        (check_labeldp, ("labeldp", "datasets", "image", "epsilons"), [1, "infinity"],
         ["labeldp.datasets.image.epsilons", "'infinity'"]),
        (check_labeldp, ("labeldp", "datasets", "tabular", "algorithm_epsilons"), {"alibi": [1]},
         ["labeldp.datasets.tabular.algorithm_epsilons", "alibi", "not in its algorithms"]),
        (check_labeldp, ("labeldp", "datasets", "image", "positive_rate"), 0.03,
         ["labeldp.datasets.image.positive_rate", "0.03", "packaged tabular"]),
        (check_labeldp, ("labeldp", "malek", "num_canaries"), 10**7,
         ["labeldp.malek.num_canaries", "10000000", "labeldp.malek.train_size"]),
        (check_labeldp, ("labeldp", "malek", "train_size"), 10**7,
         ["labeldp.malek.train_size", "10000000", "labeldp.datasets.image.train_size"]),
        (check_labeldp, ("labeldp", "synthetic_rr", "guess_fractions"), [0.001, 0.1],
         ["labeldp.synthetic_rr.guess_fractions", "0.01"]),
    ],
    ids=["pair-lengths", "pp-panel", "pp-orders", "pp-fig4-variant", "ld-ood", "ld-eps-string", "ld-algo-eps", "ld-positive-rate", "ld-canaries", "ld-game-size", "ld-guesses"],
)
def test_each_check_names_the_key(default, check, path, value, words):
    cfg = _bad(default, path, value)
    if path[-1] == "fig4_variant":  # a variant that is not run
        cfg["chadha2024"]["promptpate"]["natq_variants"] = ["confident", "unconfident"]
    with pytest.raises(ValueError) as exc:
        check(cfg)
    for w in words:
        assert w in str(exc.value), (w, str(exc.value))
    # check_config runs the same check (and the default config alone passes it).
    check(default)
    with pytest.raises(ValueError, match=path[0]):
        check_config(cfg)


def test_tabular_model_needs_iterations(default):
    cfg = copy.deepcopy(default)
    cfg["labeldp"]["datasets"]["tabular"]["model"].pop("iterations", None)
    cfg["labeldp"]["datasets"]["tabular"]["model"]["iterations"] = None
    with pytest.raises(ValueError, match=r"labeldp\.datasets\.tabular\.model needs iterations"):
        check_labeldp(cfg)


def test_positive_rate_is_the_packaged_tabular_stand_in_s(default):
    """The default subsamples Adult to Criteo's 3 % of positives; Criteo itself (source download) is not subsampled."""
    assert default["labeldp"]["datasets"]["tabular"]["positive_rate"] == 0.03
    cfg = copy.deepcopy(default)
    cfg["labeldp"]["datasets"]["tabular"]["source"] = "download"
    with pytest.raises(ValueError, match=r"labeldp\.datasets\.tabular\.positive_rate = 0\.03: only the packaged tabular"):
        check_labeldp(cfg)
    cfg["labeldp"]["datasets"]["tabular"]["positive_rate"] = None
    check_labeldp(cfg)


def test_fig4_variant_best_and_listed_variants_pass(default):
    for variant in ["best", *default["chadha2024"]["promptpate"]["natq_variants"]]:
        check_promptpate(_bad(default, ("chadha2024", "promptpate", "fig4_variant"), variant))


def test_shared_helpers():
    check_orders_reach_floor([1.5, 32], "x.orders")
    with pytest.raises(ValueError, match=r"x\.orders ends at 31"):
        check_orders_reach_floor([2, 31], "x.orders")
    check_panel_dataset({"rdp_panel_dataset": None, "datasets": ["a"]}, "s")
    check_panel_dataset({"rdp_panel_dataset": "a", "datasets": ["a", "b"]}, "s")
    with pytest.raises(ValueError, match=r"s\.rdp_panel_dataset 'c' is not in s\.datasets \['a'\]"):
        check_panel_dataset({"rdp_panel_dataset": "c", "datasets": ["a"]}, "s")


def test_every_stage_check_is_run_by_check_config():
    assert set(STAGE_CHECKS) == {check_dataset_registry, check_synthetic, check_pate_capc, check_knn, check_promptpate, check_labeldp, check_wang2022}


def test_config_value_walks_keys_and_names_the_missing_one(default):
    assert config_value(default) is default
    assert config_value(default, "chadha2024", "promptpate", "sigma") == default["chadha2024"]["promptpate"]["sigma"]
    assert config_value({"a": [10, 20]}, "a", 1) == 20
    with pytest.raises(ValueError, match=r"config key 'chadha2024\.promptpate\.sigmaa' does not exist \(at chadha2024\.promptpate: \["):
        config_value(default, "chadha2024", "promptpate", "sigmaa")
    with pytest.raises(ValueError, match=r"config key 'a\.b' does not exist \(at a: int\)"):
        config_value({"a": 3}, "a", "b")
    with pytest.raises(ValueError, match=r"config key 'nope' does not exist \(at <top level>"):
        config_value(default, "nope")
