"""The shared audit block ``chadha2024.audit_defaults`` and one spelling per dataset (issue 12, item 4).

* ``apply_audit_defaults`` (ppaudit.workflow.config_checks): a section's own value wins, an
  absent or null key takes the shared value, keys reach only the sections that take them,
  copies are independent, a second call changes nothing; bad input raises ``ValueError``
  naming the key.
* The shipped configs (embedded default, tiny on top of it, paper on top of it) give every
  mechanism section exactly the audit values it had before the block existed (the literals
  below were read from the effective configs of the three files before the change).
* The schema and ``AUDIT_DEFAULT_KEYS`` agree (each override is nullable with default null,
  the shared block is closed and holds exactly the audit keys).
* No dataset is spelled with an underscore: ``rotten-tomatoes`` and ``fashion-mnist`` are the
  only spellings in the schema, and the old ones fail validation naming the bad value.
"""

from __future__ import annotations

import copy
from pathlib import Path

import jsonschema
import pytest
import yaml
from test_config_checks import (
    _load,  # shipped configs merged as --configfile does, validated, audit defaults applied
)

from ppaudit.workflow.config_checks import AUDIT_DEFAULT_KEYS, apply_audit_defaults

REPO = Path(__file__).resolve().parents[3]
SCHEMA = yaml.safe_load(
    (REPO / "workflow" / "schemas" / "config.schema.yaml").read_text()
)
SECTIONS = ("pate_capc", "knn", "promptpate")

# --- the effective per-mechanism audit values of today's configs (snapshot before the block) --

ORDERS_DEFAULT = [1.5, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256]
ORDERS_TINY = [1.5, 2, 4, 8, 16, 32, 64, 128, 256]
ORDERS_PAPER = [
    1.1,
    1.25,
    1.5,
    2,
    3,
    4,
    5,
    6,
    8,
    10,
    12,
    16,
    20,
    24,
    32,
    48,
    64,
    96,
    128,
    192,
    256,
    384,
    512,
]
SHARED = {"confidence": 0.95, "delta": 1.0e-6}
TWO = {
    "bonferroni": True,
    "exact": "auto",
    "candidate_selection": "margin",
}  # pate_capc and knn only

EXPECTED = {
    "default": {
        "pate_capc": {
            "trials": 100_000_000,
            "orders": ORDERS_DEFAULT,
            **SHARED,
            **TWO,
            "audit_device": "cpu",
        },
        "knn": {
            "trials": 100_000_000,
            "orders": ORDERS_DEFAULT,
            **SHARED,
            **TWO,
            "audit_device": "cpu",
        },
        "promptpate": {"trials": 100_000_000, "orders": ORDERS_DEFAULT, **SHARED},
    },
    "tiny": {
        "pate_capc": {
            "trials": 100_000,
            "orders": ORDERS_TINY,
            **SHARED,
            **TWO,
            "audit_device": "cpu",
        },
        "knn": {
            "trials": 1_000_000,
            "orders": ORDERS_TINY,
            **SHARED,
            **TWO,
            "audit_device": "cpu",
        },
        "promptpate": {"trials": 100_000, "orders": ORDERS_TINY, **SHARED},
    },
    "paper": {
        "pate_capc": {
            "trials": 100_000_000,
            "orders": ORDERS_PAPER,
            **SHARED,
            **TWO,
            "audit_device": "cuda",
        },
        "knn": {
            "trials": 100_000_000,
            "orders": ORDERS_PAPER,
            **SHARED,
            **TWO,
            "audit_device": "cuda",
        },
        "promptpate": {"trials": 100_000_000, "orders": ORDERS_PAPER, **SHARED},
    },
}
FILES = {
    "default": ("config/config.yaml",),
    "tiny": ("config/config.yaml", "tests/configs/tiny.yaml"),
    "paper": ("config/config.yaml", "config/paper.yaml"),
}


@pytest.fixture(scope="module")
def effective() -> dict[str, dict]:
    return {name: _load(*files) for name, files in FILES.items()}


@pytest.mark.parametrize("name", list(FILES))
def test_shipped_configs_keep_their_effective_audit_values(effective, name):
    cfg = effective[name]["chadha2024"]
    for section in SECTIONS:
        got = {
            key: cfg[section][key] for key in AUDIT_DEFAULT_KEYS if key in cfg[section]
        }
        assert got == EXPECTED[name][section], f"{name}: chadha2024.{section}"


def test_shipped_configs_set_each_audit_key_once():
    """No shipped file repeats a shared key in a section with the shared value (only real overrides)."""
    for files in FILES.values():
        raw = yaml.safe_load((REPO / files[-1]).read_text())["chadha2024"]
        shared = raw.get("audit_defaults", {})
        assert shared, f"{files[-1]} has no chadha2024.audit_defaults"
        for section in SECTIONS:
            for key, value in raw.get(section, {}).items():
                if key in AUDIT_DEFAULT_KEYS:
                    assert key not in shared or value != shared[key], (
                        f"{files[-1]}: chadha2024.{section}.{key} repeats the shared value"
                    )


# --- apply_audit_defaults -----------------------------------------------------------------


def _config(**sections) -> dict:
    shared = {
        "trials": 1000,
        "orders": [2, 64],
        "confidence": 0.9,
        "delta": 1e-5,
        "bonferroni": True,
        "exact": "auto",
        "audit_device": "cpu",
        "candidate_selection": "margin",
    }
    blocks = {s: {} for s in SECTIONS}
    blocks.update(sections)
    return {"chadha2024": {"audit_defaults": shared, **blocks}}


def test_section_value_overrides_and_absent_or_null_inherits():
    cfg = apply_audit_defaults(
        _config(knn={"trials": 7, "audit_device": "cuda"}, promptpate={"orders": None})
    )
    c = cfg["chadha2024"]
    assert c["knn"]["trials"] == 7 and c["knn"]["audit_device"] == "cuda"
    assert c["pate_capc"]["trials"] == 1000 and c["pate_capc"]["audit_device"] == "cpu"
    assert c["promptpate"]["orders"] == [2, 64] and c["promptpate"]["delta"] == 1e-5
    assert (
        c["audit_defaults"]["trials"] == 1000
    )  # the shared block itself is left as it is


def test_short_shared_orders_are_fine_when_every_section_overrides_them():
    own = [2, 256]
    cfg = _config(**{s: {"orders": own} for s in SECTIONS})
    cfg["chadha2024"]["audit_defaults"]["orders"] = [2, 4]
    apply_audit_defaults(cfg)  # no section takes the shared orders: nothing to check
    assert all(cfg["chadha2024"][s]["orders"] == own for s in SECTIONS)


def test_keys_reach_only_the_sections_that_take_them():
    c = apply_audit_defaults(_config())["chadha2024"]
    for key, sections in AUDIT_DEFAULT_KEYS.items():
        for section in SECTIONS:
            assert (key in c[section]) == (section in sections), (
                f"chadha2024.{section}.{key}"
            )
    assert not {"bonferroni", "exact", "audit_device", "candidate_selection"} & set(
        c["promptpate"]
    )


def test_copies_are_independent_and_second_call_is_a_no_op():
    cfg = apply_audit_defaults(_config())
    c = cfg["chadha2024"]
    c["knn"]["orders"].append(512)
    assert c["pate_capc"]["orders"] == [2, 64] and c["audit_defaults"]["orders"] == [
        2,
        64,
    ]
    before = copy.deepcopy(cfg)
    assert apply_audit_defaults(cfg) is cfg and cfg == before


@pytest.mark.parametrize(
    "mutate, words",
    [
        (
            lambda c: c["chadha2024"].pop("audit_defaults"),
            ["chadha2024.audit_defaults", "does not exist"],
        ),
        (lambda c: c["chadha2024"].pop("knn"), ["chadha2024.knn", "does not exist"]),
        (
            lambda c: c["chadha2024"]["audit_defaults"].update(trails=5),
            ["chadha2024.audit_defaults", "'trails'"],
        ),
        (
            lambda c: c["chadha2024"]["audit_defaults"].pop("delta"),
            ["chadha2024.pate_capc.delta", "chadha2024.audit_defaults.delta"],
        ),
        (
            lambda c: c["chadha2024"].update(audit_defaults=[1]),
            ["chadha2024.audit_defaults", "mapping", "[1]"],
        ),
        (
            lambda c: c["chadha2024"].update(promptpate=3),
            ["chadha2024.promptpate", "mapping", "3"],
        ),
        (
            lambda c: c["chadha2024"]["audit_defaults"].update(orders=[2, 4]),
            ["chadha2024.audit_defaults.orders", "ends at 4", "32"],
        ),
    ],
    ids=[
        "no-block",
        "no-section",
        "unknown-key",
        "missing-value",
        "block-not-mapping",
        "section-not-mapping",
        "short-orders",
    ],
)
def test_bad_input_names_the_key(mutate, words):
    cfg = _config()
    mutate(cfg)
    with pytest.raises(ValueError) as err:
        apply_audit_defaults(cfg)
    for w in words:
        assert w in str(err.value), (w, str(err.value))


# --- the schema ---------------------------------------------------------------------------


def test_schema_documents_the_block_and_every_override():
    chadha = SCHEMA["properties"]["chadha2024"]["properties"]
    block = chadha["audit_defaults"]
    assert block["additionalProperties"] is False and set(block["properties"]) == set(
        AUDIT_DEFAULT_KEYS
    )
    for key, sub in block["properties"].items():
        assert sub.get("description") and sub.get("default") is not None, (
            f"chadha2024.audit_defaults.{key}"
        )
        for section in SECTIONS:
            props = chadha[section]["properties"]
            if section not in AUDIT_DEFAULT_KEYS[key]:
                assert key not in props, (
                    f"chadha2024.{section}.{key} exists but AUDIT_DEFAULT_KEYS skips it"
                )
                continue
            override = props[key]
            assert override["default"] is None and "null" in override["type"], (
                f"chadha2024.{section}.{key}"
            )
            assert f"audit_defaults.{key}" in " ".join(
                override["description"].split()
            ), f"chadha2024.{section}.{key}"
            if "enum" in sub:
                assert override["enum"] == [*sub["enum"], None], (
                    f"chadha2024.{section}.{key}"
                )


@pytest.mark.parametrize(
    "config, words",
    [
        ({"chadha2024": {"audit_defaults": {"trails": 5}}}, ["'trails'"]),
        ({"chadha2024": {"audit_defaults": {"confidence": 1.5}}}, ["1.5"]),
        ({"chadha2024": {"knn": {"audit_device": "gpu"}}}, ["'gpu'"]),
        ({"chadha2024": {"promptpate": {"bonferroni": False}}}, ["'bonferroni'"]),
    ],
    ids=[
        "unknown-shared-key",
        "bad-shared-value",
        "bad-override",
        "key-the-section-does-not-take",
    ],
)
def test_schema_rejects_bad_shared_and_override_values(config, words):
    errors = [
        e.message for e in jsonschema.Draft202012Validator(SCHEMA).iter_errors(config)
    ]
    assert errors and all(any(w in m for m in errors) for w in words), errors


def test_readme_documents_the_block_and_the_override_rule():
    readme = " ".join((REPO / "config" / "README.md").read_text().split())
    assert "`chadha2024.audit_defaults`" in readme
    for key in AUDIT_DEFAULT_KEYS:
        assert f"`{key}`" in readme
    assert "override" in readme


# --- one spelling per dataset --------------------------------------------------------------

OLD_SPELLINGS = ("rotten_tomatoes", "fashion_mnist")


def test_schema_has_one_spelling_per_dataset():
    found = []

    def walk(node, path):
        if isinstance(node, dict):
            for k, v in node.items():
                if k in OLD_SPELLINGS:
                    found.append(f"{path}.{k}")
                walk(v, f"{path}.{k}")
        elif isinstance(node, list):
            found.extend(f"{path}: {v}" for v in node if v in OLD_SPELLINGS)
            for v in node:
                walk(v, path)
        elif node in OLD_SPELLINGS:
            found.append(f"{path}: {node}")

    walk(SCHEMA, "")
    assert not found


@pytest.mark.parametrize(
    "config, bad",
    [
        (
            {"chadha2024": {"promptpate": {"datasets": ["rotten_tomatoes"]}}},
            "'rotten_tomatoes'",
        ),
        ({"chadha2024": {"knn": {"datasets": ["fashion_mnist"]}}}, "'fashion_mnist'"),
        (
            {"chadha2024": {"pate_capc": {"datasets": ["fashion_mnist"]}}},
            "'fashion_mnist'",
        ),
        (
            {"wang2022": {"figure_datasets": ["mnist", "fashion_mnist"]}},
            "'fashion_mnist'",
        ),
        ({"wang2022": {"datasets": {"fashion_mnist": {}}}}, "'fashion_mnist'"),
    ],
    ids=["promptpate", "knn", "pate_capc", "wang-figure-datasets", "wang-datasets-key"],
)
def test_old_spelling_fails_validation_naming_it(config, bad):
    errors = list(jsonschema.Draft202012Validator(SCHEMA).iter_errors(config))
    assert errors and any(bad in e.message for e in errors), [e.message for e in errors]
