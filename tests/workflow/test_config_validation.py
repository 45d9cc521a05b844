"""A bad config stops `snakemake` at parse time, naming the key, before any job runs.

Each case writes one bad config, runs ``snakemake -n`` on it in an empty directory and
checks: a non-zero exit, a message naming the offending key (and value), and no
``results/`` directory. The config is validated by workflow/rules/common.smk against
workflow/schemas/config.schema.yaml.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from workflow_runner import run_snakemake_many

REPO = Path(__file__).resolve().parents[2]

# (id, config text, substrings the error message must contain)
BAD_CONFIGS = [
    ("unknown-top-level-key", "seed: 1\nbogus: 3\n", ["unknown config key 'bogus'"]),
    (
        "unknown-nested-key",
        "chadha2024: {synthetic: {fig2: {sigmaa: 3}}}\n",
        ["unknown config key 'chadha2024.synthetic.fig2.sigmaa'", "sigma"],
    ),
    ("negative-sigma", "chadha2024: {synthetic: {fig2: {sigma: -1}}}\n", ["chadha2024.synthetic.fig2.sigma", "-1"]),
    ("zero-sigma", "chadha2024: {synthetic: {fig6: {sigma: 0}}}\n", ["chadha2024.synthetic.fig6.sigma", "0"]),
    ("order-equal-to-one", "chadha2024: {synthetic: {orders: [2, 1]}}\n", ["chadha2024.synthetic.orders[1]", "> 1"]),
    ("order-below-one", "chadha2024: {synthetic: {orders: [0.5]}}\n", ["chadha2024.synthetic.orders[0]", "0.5"]),
    ("non-integer-trials", "chadha2024: {synthetic: {trials: 2.5}}\n", ["chadha2024.synthetic.trials", "2.5", "integer"]),
    ("trials-written-1e8", "chadha2024: {synthetic: {trials: 1e8}}\n", ["chadha2024.synthetic.trials", "100000000"]),
    ("zero-trials", "chadha2024: {synthetic: {trials: 0}}\n", ["chadha2024.synthetic.trials", "0"]),
    ("confidence-above-one", "chadha2024: {synthetic: {confidence: 1.5}}\n", ["chadha2024.synthetic.confidence", "1.5"]),
    (
        "negative-histogram-count",
        "chadha2024: {synthetic: {fig6: {h_s: [14, -12, 10, 8, 6]}}}\n",
        ["chadha2024.synthetic.fig6.h_s[1]", "-12"],
    ),
    (
        "mismatched-histogram-lengths",
        "chadha2024: {synthetic: {fig6: {h_s_prime: [13, 13, 10]}}}\n",
        ["chadha2024.synthetic.fig6.h_s", "chadha2024.synthetic.fig6.h_s_prime", "same length"],
    ),
    ("unknown-mode", "chadha2024: {synthetic: {mode: fast}}\n", ["chadha2024.synthetic.mode", "'fast'", "exact", "sample"]),
    (
        "unknown-method",
        "chadha2024: {synthetic: {fig2: {methods: [exact, magic]}}}\n",
        ["chadha2024.synthetic.fig2.methods[1]", "'magic'"],
    ),
    ("negative-seed", "seed: -3\n", ["'seed'", "-3"]),
    # One spelling per dataset (issue 12): the old underscore name fails, naming the value (the
    # other places and the closed chadha2024.audit_defaults: tests/unit/workflow/test_audit_defaults.py).
    (
        "old-dataset-spelling",
        "chadha2024: {promptpate: {datasets: [rotten_tomatoes]}}\n",
        ["chadha2024.promptpate.datasets[0]", "'rotten_tomatoes'", "'rotten-tomatoes'"],
    ),
    ("section-not-a-mapping", "chadha2024: 3\n", ["'chadha2024'", "object"]),
    # The config key targets (rule all of a slice) names ids of workflow/figures.yaml only.
    ("unknown-target", "targets: [chadha_fig3, chadha_fig99]\n", ["'targets'", "chadha_fig99"]),
]


def dry_run_args(config_text: str, workdir: Path) -> list[str]:
    """Writes the config into ``workdir``; the arguments (after ``--snakefile Snakefile``) of its dry run."""
    config = workdir / "config.yaml"
    config.write_text(config_text)
    return ["-n", "--cores", "1", "--directory", str(workdir), "--configfile", str(config)]


def dry_run(config_text: str, workdir: Path) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), *dry_run_args(config_text, workdir)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def bad_config_runs(tmp_path_factory) -> dict[str, tuple[subprocess.CompletedProcess, Path]]:
    """Dry-run every bad config once, two at a time, from one interpreter that imports Snakemake once
    (``workflow_runner.run_snakemake_many``: each run a forked ``snakemake.cli.main`` of the same
    arguments, with the same output and exit code as a separate ``python -m snakemake``)."""
    dirs = {case: tmp_path_factory.mktemp(case) for case, _, _ in BAD_CONFIGS}
    runs = [(dry_run_args(text, dirs[case]), Path.cwd()) for case, text, _ in BAD_CONFIGS]
    assert all("--directory" in args for args, _ in runs)  # each in its own directory, never the checkout's results/
    procs = run_snakemake_many(runs, timeout=600)
    return {case: (proc, dirs[case]) for (case, _, _), proc in zip(BAD_CONFIGS, procs)}


@pytest.mark.workflow
@pytest.mark.timeout(600)
@pytest.mark.parametrize("case, expected", [(c[0], c[2]) for c in BAD_CONFIGS], ids=[c[0] for c in BAD_CONFIGS])
def test_bad_config_stops_before_any_job(bad_config_runs, case, expected):
    proc, workdir = bad_config_runs[case]
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert "Invalid configuration" in out, out
    for part in expected:
        assert part in out, f"{part!r} not in the error message:\n{out}"
    assert "Building DAG of jobs" not in out, out
    assert not (workdir / "results").exists()


@pytest.mark.workflow
@pytest.mark.timeout(300)
def test_partial_config_takes_schema_defaults(tmp_path):
    proc = dry_run("chadha2024: {synthetic: {trials: 1000}}\n", tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "audit_synthetic_pair" in proc.stdout + proc.stderr


def test_schema_keys_have_description_and_default():
    """Every config key of the schema has a description and a default; objects are closed."""
    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
    defs = schema.get("$defs", {})

    def resolve(node):
        if "$ref" in node:
            return {**defs[node["$ref"].rsplit("/", 1)[-1]], **{k: v for k, v in node.items() if k != "$ref"}}
        return node

    def walk(node, path, inherited=None):
        node = resolve(node)
        if node.get("type") == "object":
            closed = node.get("additionalProperties") is False
            # A map with user-chosen names (e.g. accuracy levels) constrains its values instead.
            is_map = isinstance(node.get("additionalProperties"), dict) and not node.get("properties")
            assert closed or is_map, f"{path or '<top>'} allows unknown keys"
            if is_map:
                default = node.get("default", inherited)
                first = next(iter(default.values()), None) if isinstance(default, dict) and default else None
                walk(node["additionalProperties"], f"{path}.<name>", first)
                return
            # A shared $defs object (e.g. one dataset's settings) may take its defaults from
            # the default of the object that uses it, where they differ per instance.
            parent_default = node.get("default", inherited)
            parent_default = parent_default if isinstance(parent_default, dict) else {}
            for key, sub in node["properties"].items():
                full = resolve(sub)
                name = f"{path}.{key}" if path else key
                assert full.get("description"), f"{name} has no description"
                assert "default" in full or key in parent_default, f"{name} has no default"
                walk(full, name, parent_default.get(key))

    walk(schema, "")


def test_default_config_is_the_schema_default():
    """config/config.yaml spells out exactly the schema's defaults (one source of truth)."""
    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    synthetic_schema = schema["properties"]["chadha2024"]["properties"]["synthetic"]["properties"]
    assert config["seed"] == schema["properties"]["seed"]["default"]
    synthetic = config["chadha2024"]["synthetic"]
    for key, sub in synthetic_schema.items():
        if key in ("fig2", "fig6"):
            for k, v in sub["properties"].items():
                assert synthetic[key][k] == v["default"], f"chadha2024.synthetic.{key}.{k}"
        else:
            assert synthetic[key] == sub["default"], f"chadha2024.synthetic.{key}"


def test_readme_documents_every_key_of_the_default_config():
    """config/README.md documents every key of config/config.yaml."""
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    readme = (REPO / "config" / "README.md").read_text()

    def keys(node, path=""):
        for key, value in node.items():
            name = f"{path}.{key}" if path else key
            yield name
            if isinstance(value, dict):
                yield from keys(value, name)

    # A section "### `a.b`" may document its keys relative to it (`c`, `c.d`, or `.d` after `c.x`).
    sections = dict(re.findall(r"^### `([^`]+)`\n(.*?)(?=^### |\Z)", readme, flags=re.S | re.M))

    def documented(name):
        if f"`{name}`" in readme:
            return True
        parts = name.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            prefix, rest = ".".join(parts[:cut]), parts[cut:]
            if prefix in sections:
                text = sections[prefix]
                return f"`{'.'.join(rest)}`" in text or f"`.{rest[-1]}`" in text or f"`{rest[0]}" in text
        return False

    for name in keys(config):
        assert documented(name), f"config/README.md does not document `{name}`"
