"""The Snakemake workflow end to end on a tiny config, and its delivery files.

* ``chadha_fig2`` and ``chadha_fig6`` run in a temporary directory (``--directory``) with
  tests/configs/tiny.yaml; the figures, their CSVs and the report are checked; a second
  run is a no-op.
* ``snakemake --lint`` is clean; the SLURM profile dry-runs without SLURM installed; the
  paper-scale config is valid.
* Every conda env in envs/ lists (pinned, at the venv's versions) every third-party
  package that the scripts of its rules import, directly or through ppaudit.
* The Makefile's Debian-package check and its install stamp.
"""

from __future__ import annotations

import ast
import functools
import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from workflow_runner import assert_figure_files, output_of, run_snakemake  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
TINY = REPO / "tests" / "configs" / "tiny.yaml"
FIGURES = ("fig2", "fig6")
AUDITS = ("two_cut_cp", "k_cut_goodman", "k_cut_sison_glaz", "two_cut_bootstrap", "k_cut_bootstrap")


def schema_defaults() -> dict:
    """Defaults of chadha2024.synthetic.fig2 / fig6 from the config schema."""
    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
    synthetic = schema["properties"]["chadha2024"]["properties"]["synthetic"]["properties"]
    return {fig: {k: v["default"] for k, v in synthetic[fig]["properties"].items()} for fig in FIGURES}


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory) -> Path:
    """Work directory after `snakemake chadha_fig2 chadha_fig6 --cores 2` on the tiny config.

    With an hour-long job-rate timespan: Snakemake's scheduler leaves one pending timer of that
    length per scheduling round, and the run ends with its last job only because the Snakefile's
    onsuccess cancels them (ppaudit.workflow.scheduler_timers); without it this run would wait an
    hour and time out here. The job server (ppaudit.workflow.job_server) is stopped there too, and
    the run's jobs go through it."""
    workdir = tmp_path_factory.mktemp("workflow")
    proc = run_snakemake(
        "chadha_fig2", "chadha_fig6", "--cores", "2", "--directory", str(workdir), "--configfile", str(TINY),
        "--max-jobs-per-timespan", "10000/1h",
    )
    assert "jobs fork from the ppaudit job server" in proc.stderr, output_of(proc)
    assert proc.returncode == 0, output_of(proc)
    return workdir


@pytest.mark.workflow
@pytest.mark.timeout(600)
def test_figure_targets_write_pdf_png_csv_and_logs(tiny_run):
    for fig in FIGURES:
        base = tiny_run / "results" / "figures" / "chadha2024" / fig
        assert_figure_files(base)
        assert (tiny_run / "logs" / "audit_synthetic_pair" / f"{fig}.log").stat().st_size > 0
        assert (tiny_run / "logs" / "plot_chadha_synthetic" / f"{fig}.log").exists()
        assert (tiny_run / "benchmarks" / "audit_synthetic_pair" / f"{fig}.tsv").exists()


@pytest.mark.workflow
@pytest.mark.timeout(600)
def test_figure_csv_has_every_curve_and_sane_numbers(tiny_run):
    tiny = yaml.safe_load(TINY.read_text())["chadha2024"]["synthetic"]
    defaults = schema_defaults()
    for fig in FIGURES:
        csv = pd.read_csv(tiny_run / "results" / "figures" / "chadha2024" / f"{fig}.csv")
        methods = defaults[fig]["methods"]
        assert list(csv.columns) == ["order", *methods]
        np.testing.assert_allclose(csv["order"], tiny["orders"], rtol=0, atol=0)
        values = csv[methods].to_numpy()
        assert np.isfinite(values).all() and (values >= 0).all(), csv
        # Closed form: the data-independent GNMax bound is α/σ² (Papernot et al. 2018).
        sigma = defaults[fig]["sigma"]
        np.testing.assert_allclose(csv["data_independent"], csv["order"] / sigma**2, rtol=1e-12, atol=0)
        # Upper bounds lie above the exact RDP at every order.
        assert (csv["data_independent"] >= csv["exact"] - 1e-12).all(), csv
        assert (csv["data_dependent"] >= csv["exact"] - 1e-12).all(), csv
        # Audits are lower bounds: at or below the exact RDP at most orders (bootstrap
        # audits are only asymptotically valid, so not necessarily at all of them).
        for audit in (m for m in methods if m in AUDITS):
            below = (csv[audit] <= csv["exact"] + 1e-12).mean()
            assert below >= 0.8, f"{fig}: {audit} exceeds the exact RDP at {1 - below:.0%} of orders\n{csv}"
        # The 2-cut Clopper–Pearson audit is valid at every sample size.
        assert (csv["two_cut_cp"] <= csv["exact"] + 1e-12).all(), csv
        # The figure CSV holds exactly the plotted columns of the audit table.
        table = pd.read_csv(tiny_run / "results" / "chadha2024" / "synthetic" / f"{fig}.csv")
        pd.testing.assert_frame_equal(table[csv.columns], csv)
    # With σ = 2 and T = 1e5 the audits of Fig. 6 detect leakage at every order.
    fig6 = pd.read_csv(tiny_run / "results" / "figures" / "chadha2024" / "fig6.csv")
    assert (fig6[list(AUDITS)] > 0).all().all(), fig6


@pytest.mark.workflow
@pytest.mark.timeout(600)
def test_counts_json_records_counts_and_settings(tiny_run):
    import json

    tiny = yaml.safe_load(TINY.read_text())
    for fig in FIGURES:
        record = json.loads((tiny_run / "results" / "chadha2024" / "synthetic" / f"{fig}.counts.json").read_text())
        assert sum(record["counts_h_s"]) == tiny["chadha2024"]["synthetic"]["trials"]
        assert sum(record["counts_h_s_prime"]) == tiny["chadha2024"]["synthetic"]["trials"]
        assert record["seed"] == tiny["seed"]
        assert record["h_s"] == schema_defaults()[fig]["h_s"]


@pytest.mark.workflow
@pytest.mark.timeout(600)
def test_second_run_is_a_no_op(tiny_run):
    files = sorted(p for p in (tiny_run / "results").rglob("*") if p.is_file() and p.suffix != ".html")
    before = {p: p.stat().st_mtime_ns for p in files}
    proc = run_snakemake(
        "chadha_fig2", "chadha_fig6", "--cores", "2", "--directory", str(tiny_run), "--configfile", str(TINY)
    )
    assert proc.returncode == 0, output_of(proc)
    assert "Nothing to be done" in proc.stdout + proc.stderr, output_of(proc)
    assert {p: p.stat().st_mtime_ns for p in files} == before


@pytest.mark.workflow
@pytest.mark.timeout(600)
def test_report_builds(tiny_run):
    report = tiny_run / "results" / "report.html"
    proc = run_snakemake(
        "chadha_fig2", "chadha_fig6", "--directory", str(tiny_run), "--configfile", str(TINY),
        "--report", str(report),
    )
    assert proc.returncode == 0, output_of(proc)
    html = report.read_text(encoding="utf-8")
    assert "Chadha et al. 2024" in html
    for name in ("fig2.png", "fig6.png", "fig2.pdf", "fig6.csv"):
        assert name in html
    # The caption templates were rendered with the run's config.
    assert "[14, 12, 10, 8, 6]" in html and "snakemake.config" not in html
    # one caption for both figures of rule plot_chadha_synthetic: each job gets its own branch
    assert "RDP audit of the Gaussian noisy argmax on a synthetic histogram pair" in html and "every RDP audit of the noisy argmax" in html


@pytest.mark.workflow
@pytest.mark.timeout(300)
def test_lint_is_clean():
    proc = run_snakemake("--lint")
    assert proc.returncode == 0, output_of(proc)
    assert "in a good condition" in proc.stdout + proc.stderr, output_of(proc)


@pytest.mark.workflow
@pytest.mark.timeout(300)
def test_slurm_profile_dry_run(tmp_path):
    proc = run_snakemake(
        "-n", "--profile", str(REPO / "workflow" / "profiles" / "slurm"), "chadha_fig6",
        "--directory", str(tmp_path), "--configfile", str(TINY),
    )
    assert proc.returncode == 0, output_of(proc)
    out = proc.stdout + proc.stderr
    assert "audit_synthetic_pair" in out and "plot_chadha_synthetic" in out, output_of(proc)
    assert not (tmp_path / "results").exists()


def test_slurm_profile_sets_the_required_options():
    profile = yaml.safe_load((REPO / "workflow" / "profiles" / "slurm" / "config.yaml").read_text())
    assert profile["executor"] == "slurm"
    assert profile["slurm-status-command"] == "squeue"
    assert profile["slurm-no-account"] is True
    assert 1 <= profile["slurm-init-seconds-before-status-checks"] <= 60
    assert {"mem_mb", "runtime"} <= set(profile["default-resources"])
    for rule in ("train_teachers", "extract_features", "prompt_teachers"):
        assert profile["set-resources"][rule]["gpu"] >= 1


@pytest.mark.workflow
@pytest.mark.timeout(300)
def test_paper_config_is_valid(tmp_path):
    proc = run_snakemake("-n", "--directory", str(tmp_path), "--configfile", str(REPO / "config" / "paper.yaml"))
    assert proc.returncode == 0, output_of(proc)
    assert "plot_chadha_synthetic" in proc.stdout + proc.stderr


# --- conda envs -------------------------------------------------------------------

def _rules_with_env_and_script() -> list[tuple[str, Path, Path]]:
    """(rule, env file, script) of every rule in workflow/rules/*.smk with conda: and script:."""
    found = []
    for smk in sorted((REPO / "workflow" / "rules").glob("*.smk")):
        blocks = re.split(r"^rule\s+", smk.read_text(), flags=re.M)[1:]
        for block in blocks:
            name = block.split(":", 1)[0].strip()
            conda = re.search(r"^\s+conda:\s*\n\s+\"([^\"]+)\"", block, flags=re.M)
            script = re.search(r"^\s+script:\s*\n\s+\"([^\"]+)\"", block, flags=re.M)
            if conda and script:
                found.append((name, (smk.parent / conda.group(1)).resolve(), (smk.parent / script.group(1)).resolve()))
    return found


def _module_file(module: str) -> Path | None:
    """Source file of a ppaudit module or of a helper module in workflow/scripts."""
    parts = module.split(".")
    if parts[0] == "ppaudit":
        base = REPO / "src" / Path(*parts)
    else:
        base = REPO / "workflow" / "scripts" / Path(*parts)
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _runtime_nodes(tree: ast.AST):
    """Every node of ``tree`` except those under ``if TYPE_CHECKING:``, which never run: a lazy
    package's ``__init__`` shows its modules' star imports to static analysers there, and a
    script that imports one module of it does not import the others."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
            todo.extend(node.orelse)
            continue
        todo.extend(ast.iter_child_nodes(node))


@functools.lru_cache(maxsize=None)  # each module parsed once, not once per script that reaches it
def _imports(path: Path, module: str) -> frozenset[str]:
    """Absolute names of everything ``path`` (module ``module``) imports, lazily or not."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names = set()
    for node in _runtime_nodes(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module
            names.add(prefix)
            names.update(f"{prefix}.{alias.name}" for alias in node.names)  # `from pkg import submodule`
        elif (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "LazyImport" and node.args
              and isinstance(node.args[0], ast.Constant)):  # binom = LazyImport("scipy.stats", "binom"), issue 30
            names.add(node.args[0].value)
    return frozenset(names)


@functools.lru_cache(maxsize=None)
def _lazy_exporters(package_parts: tuple[str, ...] | list[str], name: str) -> tuple[str, ...]:
    """Modules of a lazy package (``_lazy.attach_modules``) whose ``__all__`` holds ``name``: the
    package's ``__init__`` names them only under ``if TYPE_CHECKING:`` (``from .mod import *``),
    which never runs, but ``from pkg import name`` imports the defining module at run time."""
    package = ".".join(package_parts)
    init = _module_file(package)
    if init is None or init.name != "__init__.py":
        return ()
    found = []
    for node in ast.walk(ast.parse(init.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module and any(a.name == "*" for a in node.names):
            module = f"{package}.{node.module}"
            path = _module_file(module)
            if path is None:
                continue
            for stmt in ast.parse(path.read_text()).body:
                if (isinstance(stmt, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in stmt.targets)
                        and isinstance(stmt.value, (ast.List, ast.Tuple))
                        and name in [getattr(e, "value", None) for e in stmt.value.elts]):
                    found.append(module)
    return tuple(found)


def third_party_imports(script: Path) -> set[str]:
    """Top-level third-party modules the script imports, followed through ppaudit and helpers."""
    local = {p.stem for p in (REPO / "workflow" / "scripts").glob("*.py")}
    todo, seen, third = [(script, "__script__")], set(), set()
    while todo:
        path, module = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        for name in _imports(path, module):
            top = name.split(".")[0]
            if top == "ppaudit" or top in local:
                parts = name.split(".")
                for i in range(1, len(parts) + 1):  # importing a.b.c runs a, a.b and a.b.c
                    sub = ".".join(parts[:i])
                    file = _module_file(sub)
                    if file is not None:
                        todo.append((file, sub))
                    elif i > 1:  # `from pkg import name`: the module of pkg's lazy table that defines it
                        todo.extend((_module_file(m), m) for m in _lazy_exporters(tuple(parts[: i - 1]), parts[i - 1]))
            elif top not in sys.stdlib_module_names and top != "__future__":
                third.add(top)
    return third


def _normalise(name: str) -> str:
    name = re.sub(r"[-_.]+", "-", name).lower()
    return {"matplotlib-base": "matplotlib"}.get(name, name)


def _env_packages(env: dict) -> dict[str, str]:
    """{normalised package name: pinned version} of a conda env (conda and pip sections)."""
    pins = {}
    for dep in env["dependencies"]:
        specs = dep["pip"] if isinstance(dep, dict) else [dep]
        for spec in specs:
            m = re.fullmatch(r"([A-Za-z0-9_.\-]+)\s*==?\s*([0-9][A-Za-z0-9.+]*)", spec)
            assert m, f"dependency {spec!r} is not pinned as name=version (conda) or name==version (pip)"
            pins[_normalise(m.group(1))] = m.group(2)
    return pins


def test_every_rule_with_a_script_has_a_conda_env():
    rules = _rules_with_env_and_script()
    assert {r for r, _, _ in rules} >= {"audit_synthetic_pair", "plot_chadha_synthetic"}
    for rule, env, script in rules:
        assert env.is_file() and env.parent == REPO / "envs", (rule, env)
        assert script.is_file(), (rule, script)


def test_conda_envs_list_what_their_scripts_import_pinned_to_the_venv():
    distributions = importlib.metadata.packages_distributions()
    rules = _rules_with_env_and_script()
    for env_file in sorted((REPO / "envs").glob("*.yaml")):
        env = yaml.safe_load(env_file.read_text())
        assert env["channels"] == ["conda-forge", "nodefaults"], env_file
        pins = _env_packages(env)
        assert pins.get("python") == f"{sys.version_info.major}.{sys.version_info.minor}", env_file
        # Pinned at the versions installed in this venv (pip itself may be newer here).
        for name, version in pins.items():
            if name in {"python", "pip"}:
                continue
            assert importlib.metadata.version(name) == version, f"{env_file.name}: {name}={version}"
        scripts = [script for _, env_path, script in rules if env_path == env_file]
        assert scripts, f"{env_file.name} is used by no rule"
        for script in scripts:
            for module in sorted(third_party_imports(script)):
                dists = {_normalise(d) for d in distributions.get(module, [module])}
                assert dists & set(pins), f"{env_file.name} lacks {sorted(dists)}, imported by {script.name}"


def test_import_scan_follows_ppaudit():
    # The plotting script reaches the numerical core through `import ppaudit...`.
    script = REPO / "workflow" / "scripts" / "plot_chadha_synthetic.py"
    assert {"matplotlib", "pandas", "numpy", "scipy", "statsmodels"} <= third_party_imports(script)


# --- Makefile ---------------------------------------------------------------------

needs_make = pytest.mark.skipif(not (shutil.which("make") and shutil.which("dpkg")), reason="needs make and dpkg")


def _make(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAKE")}
    return subprocess.run(["make", "-s", "-C", str(REPO), *args], capture_output=True, text=True, env=env, timeout=120)


@needs_make
def test_make_deb_packages_is_silent_when_installed():
    proc = _make("deb-packages", "DEB_PACKAGES=dpkg")
    assert proc.returncode == 0, output_of(proc)
    assert "apt-get" not in proc.stdout + proc.stderr


@needs_make
def test_make_deb_packages_tells_a_non_root_user_what_to_install():
    proc = _make("deb-packages", "DEB_PACKAGES=dpkg ppaudit-no-such-package", "IS_ROOT=0")
    assert proc.returncode != 0
    assert "sudo apt-get install -y ppaudit-no-such-package" in proc.stderr, output_of(proc)


@needs_make
def test_make_installs_only_when_the_stamp_is_older_than_pyproject(tmp_path):
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(sys.executable)
    fresh = _make("-n", f"VENV={venv}", "test")
    assert "pip install" in fresh.stdout, output_of(fresh)
    stamp = venv / ".installed"
    stamp.touch()
    newer = max(f.stat().st_mtime for f in [REPO / "pyproject.toml", *(REPO / "envs").glob("*.yaml")]) + 10  # the install's prerequisites
    os.utime(stamp, (newer, newer))
    again = _make("-n", f"VENV={venv}", "test")
    assert again.returncode == 0, output_of(again)
    assert "pip install" not in again.stdout and f"{venv}/bin/pytest -q" in again.stdout, output_of(again)
    # the constraints pin every package envs/*.yaml pins (the venv and the conda envs agree)
    assert "envs/*.yaml" in fresh.stdout and "matplotlib-base==/matplotlib==" in fresh.stdout, output_of(fresh)
