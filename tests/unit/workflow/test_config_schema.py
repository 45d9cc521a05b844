"""ppaudit.workflow.config_checks.validate_schema against Snakemake's own validator (issue 35: the
workflow validates its config without Snakemake's pure-Python YAML parse of the schema), and
ppaudit.workflow.config_checks.read_yaml against yaml.safe_load."""

from __future__ import annotations

import copy
from pathlib import Path

import jsonschema
import pytest
import yaml
from snakemake.exceptions import WorkflowError
from snakemake.utils import validate as snakemake_validate

from ppaudit.workflow.config_checks import read_yaml, validate_schema

REPO = Path(__file__).resolve().parents[3]
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
CONFIGS = [REPO / "config" / "config.yaml", REPO / "config" / "paper.yaml", REPO / "tests" / "configs" / "tiny.yaml"]


@pytest.mark.parametrize("path", [SCHEMA, REPO / "workflow" / "figures.yaml", *CONFIGS], ids=lambda p: p.name)
def test_read_yaml_is_safe_load(path):
    assert read_yaml(path) == yaml.safe_load(path.read_text(encoding="utf-8"))


def test_read_yaml_refuses_python_tags(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("x: !!python/object/apply:os.system ['true']\n")
    with pytest.raises(yaml.YAMLError):
        read_yaml(bad)


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_defaults_filled_as_snakemake_fills_them(path):
    ours, theirs = read_yaml(path), read_yaml(path)
    validate_schema(ours, SCHEMA)
    snakemake_validate(theirs, str(SCHEMA))
    assert ours == theirs
    assert ours != read_yaml(path)  # defaults were filled in (the configs leave keys out)


@pytest.mark.parametrize(
    "change, key",
    [
        (lambda c: c["chadha2024"]["knn"].__setitem__("k", -3), ("chadha2024", "knn", "k")),
        (lambda c: c["chadha2024"]["pate_capc"].__setitem__("datasets", "mnist"), ("chadha2024", "pate_capc", "datasets")),
        (lambda c: c.__setitem__("no_such_key", 1), ()),
        (lambda c: c["labeldp"].__setitem__("datasets", [1, 2]), ("labeldp", "datasets")),
    ],
    ids=["out-of-range", "wrong-type", "unknown-key", "list-for-object"],
)
def test_a_bad_config_fails_where_snakemake_fails(change, key):
    base = read_yaml(CONFIGS[0])
    ours, theirs = copy.deepcopy(base), copy.deepcopy(base)
    change(ours)
    change(theirs)
    with pytest.raises(jsonschema.ValidationError) as err:
        validate_schema(ours, SCHEMA)
    assert tuple(err.value.absolute_path)[: len(key)] == key
    with pytest.raises((WorkflowError, AttributeError)):  # Snakemake's default filler calls setdefault on a list
        snakemake_validate(theirs, str(SCHEMA))


def test_load_workflow_config_names_the_bad_key(tmp_path):
    from ppaudit.workflow.gpu_budget import load_workflow_config

    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({"chadha2024": {"knn": {"k": -3}}}))
    with pytest.raises(ValueError, match=r"fails the schema at chadha2024\.knn\.k: -3 is less than the minimum"):
        load_workflow_config(CONFIGS[0], bad)
