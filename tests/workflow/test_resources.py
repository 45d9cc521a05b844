"""Per-rule resources: set in the rules, overridable in the profiles and on the command line.

* Every rule with a ``benchmark:`` (the expensive ones) sets ``threads``, ``mem_mb`` and
  ``runtime``; the GPU rules (teachers, encoders, the LLM) request a GPU in the rule or
  in the SLURM profile.
* The SLURM profile's ``set-resources`` reach the jobs, and ``--set-resources`` /
  ``--set-threads`` on the command line override both rule and profile (dry runs).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
PROFILE = REPO / "workflow" / "profiles" / "slurm"
TINY = REPO / "tests" / "configs" / "tiny.yaml"
GPU_RULES = ("train_teachers", "train_canary_teachers", "extract_features", "prompt_teachers")


def _rules() -> dict[str, str]:
    """{rule name: its text} of every rule in workflow/rules/*.smk."""
    rules = {}
    for smk in sorted((REPO / "workflow" / "rules").glob("*.smk")):
        for block in re.split(r"^rule\s+", smk.read_text(), flags=re.M)[1:]:
            name = block.split(":", 1)[0].strip()
            rules[name] = re.split(r"^\S", block.split("\n", 1)[1], maxsplit=1, flags=re.M)[0]
    return rules


def _resource_keys(block: str) -> set[str]:
    m = re.search(r"^    resources:\n((?:        .*\n?)+)", block, flags=re.M)
    return set(re.findall(r"^        (\w+)\s*=", m.group(1), flags=re.M)) if m else set()


def test_expensive_rules_set_threads_memory_and_runtime():
    rules = _rules()
    benchmarked = {n: b for n, b in rules.items() if re.search(r"^    benchmark:", b, flags=re.M)}
    assert "audit_synthetic_pair" in benchmarked
    for name, block in benchmarked.items():
        assert re.search(r"^    threads:", block, flags=re.M), f"{name} has a benchmark but no threads:"
        assert {"mem_mb", "runtime"} <= _resource_keys(block), f"{name}: resources {_resource_keys(block)}"


def test_gpu_rules_request_a_gpu():
    rules = _rules()
    profile = yaml.safe_load((PROFILE / "config.yaml").read_text())
    for name in GPU_RULES:
        in_profile = "gpu" in profile["set-resources"].get(name, {})
        in_rule = name in rules and "gpu" in _resource_keys(rules[name])
        assert in_profile or in_rule, f"{name} requests no GPU"


def _dry_run(tmp_path: Path, *extra: str, target: str = "chadha_fig6") -> str:
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "-n", "--profile", str(PROFILE),
           target, "--directory", str(tmp_path), "--configfile", str(TINY), *extra]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    return proc.stdout + proc.stderr


def _job_resources(out: str, rule: str) -> dict[str, str]:
    m = re.search(rf"^rule {rule}:\n(?:    .*\n)*?    resources: (.*)$", out, flags=re.M)
    assert m, f"no resources line for {rule}:\n{out}"
    return dict(item.split("=", 1) for item in m.group(1).split(", "))


@pytest.mark.workflow
@pytest.mark.timeout(300)
def test_profile_set_resources_reach_the_jobs(tmp_path):
    profile = yaml.safe_load((PROFILE / "config.yaml").read_text())["set-resources"]
    out = _dry_run(tmp_path)
    for rule in ("audit_synthetic_pair", "plot_chadha_synthetic"):
        res = _job_resources(out, rule)
        assert int(res["mem_mb"]) == profile[rule]["mem_mb"] and int(res["runtime"]) == profile[rule]["runtime"], res


@pytest.mark.workflow
@pytest.mark.timeout(300)
def test_command_line_overrides_rule_and_profile(tmp_path):
    out = _dry_run(
        tmp_path, "--set-resources", "audit_synthetic_pair:mem_mb=1234", "audit_synthetic_pair:runtime=7",
        "audit_synthetic_pair:slurm_partition=gpu", "--set-threads", "audit_synthetic_pair=2",
    )
    res = _job_resources(out, "audit_synthetic_pair")
    assert res["mem_mb"] == "1234" and res["runtime"] == "7" and res["slurm_partition"] == "gpu", res


def test_every_job_rule_sets_memory_and_runtime():
    """Rules that run a job (they have a log:) tell the scheduler their memory and runtime."""
    missing = {
        name: sorted(_resource_keys(block))
        for name, block in _rules().items()
        if re.search(r"^    log:", block, flags=re.M) and not {"mem_mb", "runtime"} <= _resource_keys(block)
    }
    assert not missing, f"rules without mem_mb/runtime: {missing}"


@pytest.mark.workflow
@pytest.mark.timeout(300)
def test_knn_audit_requests_a_gpu_only_where_it_samples_on_one(tmp_path):
    """audit_knn samples on the GPU only with nonenumerable: sample; paper.yaml's Rao–Blackwellised
    audit runs no sampler, so with audit_device: cuda it neither asks for a GPU nor enters CUDA."""
    target = "results/chadha2024/private_prediction/knn/summary.csv"
    for nonenumerable, gpu in (("rao-blackwell", "0"), ("sample", "1")):
        out = _dry_run(tmp_path / nonenumerable, "--config", "chadha2024={'knn': {'audit_device': 'cuda', 'nonenumerable': '%s'}}" % nonenumerable,
                       target=target)
        assert _job_resources(out, "audit_knn")["gpu"] == gpu, (nonenumerable, _job_resources(out, "audit_knn"))
