"""The offline wheelhouse (issue 29 item 3) and the Fashion-MNIST GPU slice (item 4).

Always on (cheap): bench/wheelhouse.py's platform tags, pins, stub wheel and bad input;
``make -n wheelhouse`` prints the expected pip flags; bench/offline_node.sh and
bench/gpu_slice.sh reject bad arguments with exit status 2; the slice's dry run resolves
``chadha_fig3`` — also as ``rule all``, through the overlay's config key ``targets`` — (PATE and
CaPC on Fashion-MNIST only, WRN-16-4 teachers and audits on cuda); the issue's exact
``bench/gpu_hours.py`` command (no ``--targets``) projects ≤ 6 H200-minutes, and docs/paper_scale.md holds
its table. The slice's CPU run at tiny sizes (``cpu`` / ``torch-cpu``) shares the paper-shape
test's run: tests/workflow/test_workflow_paper_shape.py.

Opt-in (``PPAUDIT_TEST_WHEELHOUSE=1``; it downloads about 270 MB from the index and takes about
5 minutes): ``make wheelhouse`` for this Python, then offline_node.sh in a fresh venv with
``PIP_NO_INDEX=1`` runs ``chadha_fig2`` on tests/configs/tiny.yaml.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SLICE = ["config/config.yaml", "config/paper.yaml", "config/slices/fmnist_gpu.yaml"]
RATES = next((p for p in (REPO.parent / "shared" / "gpu" / "rates_h200_2026-11-26.json", Path("/work/shared/gpu/rates_h200_2026-11-26.json"))
              if p.is_file()), None)


def _load(name: str):
    sys.path.insert(0, str(REPO / "bench"))
    spec = importlib.util.spec_from_file_location(name, REPO / "bench" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# ------------------------------------------------------------------------------ wheelhouse


def test_platform_tags_pins_and_stub(tmp_path):
    wh = _load("wheelhouse")
    tags = wh.platform_tags("manylinux_2_28_x86_64")
    assert tags[0] == "manylinux_2_28_x86_64" and tags[tags.index("manylinux_2_5_x86_64") - 1] == "manylinux_2_6_x86_64"
    assert {"manylinux1_x86_64", "manylinux2010_x86_64", "manylinux2014_x86_64"} <= set(tags) and len(tags) == 24 + 3
    assert "manylinux2014_x86_64" not in wh.platform_tags("manylinux_2_12_x86_64")
    assert wh.platform_tags("linux_x86_64") == ["linux_x86_64"]
    with pytest.raises(ValueError, match="WHEEL_PLATFORM"):
        wh.platform_tags("not a tag")
    report = {"install": [
        {"metadata": {"name": "NumPy", "version": "2.4.6"}, "download_info": {"url": "https://x/numpy-2.4.6-cp311-cp311-manylinux_2_28_x86_64.whl"}},
        {"metadata": {"name": "torch", "version": "2.13.0+wheelhouse.stub"}, "download_info": {"url": "file:///s/torch.whl"}},
        {"metadata": {"name": "nvidia_cublas_cu12", "version": "12.9"}, "download_info": {"url": "https://x/nvidia_cublas_cu12-12.9-py3-none-any.whl"}},
        {"metadata": {"name": "connection_pool", "version": "0.0.3"}, "download_info": {"url": "https://x/connection_pool-0.0.3.tar.gz"}},
        {"metadata": {"name": "ppaudit", "version": "0.1.0"}, "download_info": {"url": "file:///repo"}},
    ]}
    assert wh.pins(report, ["torch", "nvidia-*", "triton"]) == ["connection-pool==0.0.3", "numpy==2.4.6"]
    assert wh.sdists(report) == ["connection-pool==0.0.3"]
    assert wh.write_stub("torch", "2.13.0", str(tmp_path)) == "torch==2.13.0+wheelhouse.stub"
    with zipfile.ZipFile(tmp_path / "torch-2.13.0+wheelhouse.stub-py3-none-any.whl") as zf:
        meta = zf.read("torch-2.13.0+wheelhouse.stub.dist-info/METADATA").decode()
    assert "Version: 2.13.0+wheelhouse.stub" in meta and "Requires-Dist" not in meta
    (tmp_path / "bad.json").write_text(json.dumps({"install": "x"}))
    assert wh.main(["pins", str(tmp_path / "bad.json")]) == 2
    assert wh.main(["stub", "torch", "latest", str(tmp_path)]) == 2


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_wheelhouse_dry_run_prints_the_pip_flags():
    proc = subprocess.run(["make", "-n", "wheelhouse", "WHEEL_PYTHON=3.12", "WHEEL_PLATFORM=manylinux_2_28_x86_64", "WHEELHOUSE=wh"],
                          cwd=REPO, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    target = "--only-binary=:all: --python-version 3.12 --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64"
    download = next(line for line in out.splitlines() if "pip download" in line)
    assert "--no-deps" in download and target in download and "--platform manylinux2014_x86_64" in download
    assert "--dest wh -r wh/requirements.txt" in download
    assert "--exclude 'torch nvidia-* triton'" in out
    assert re.search(r"wheelhouse\.py stub torch [0-9.]+ wh/\.build/stub", out)
    assert "--report wh/.build/target.json " + target in out and "'.[workflow,ml]'" in out


@pytest.mark.parametrize("script, args, words", [
    ("offline_node.sh", [], "need WHEELHOUSE DATA_DIR CONFIG TARGET"),
    ("offline_node.sh", ["{tmp}/none", "{tmp}", "{tmp}/c.yaml", "chadha_fig2"], "is not a folder"),
    ("offline_node.sh", ["{tmp}/wh", "{tmp}", "{tmp}/c.yaml", "chadha_fig2"], "holds no wheels"),
    ("offline_node.sh", ["{tmp}/whok", "{tmp}/nodata", "{tmp}/c.yaml", "chadha_fig2"], "DATA_DIR"),
    ("offline_node.sh", ["{tmp}/whok", "{tmp}", "{tmp}/c.yaml", "chadha fig2; rm"], "TARGET"),
    ("offline_node.sh", ["{tmp}/whok", "{tmp}", "{tmp}/missing.yaml", "chadha_fig2"], "CONFIG"),
    ("gpu_slice.sh", [], "need WHEELHOUSE"),
    ("gpu_slice.sh", ["{tmp}/wh"], "requirements.txt"),
], ids=["none", "no-wheelhouse", "empty-wheelhouse", "no-data", "bad-target", "no-config", "slice-none", "slice-empty"])
def test_scripts_reject_bad_arguments(tmp_path, script, args, words):
    (tmp_path / "wh").mkdir()
    (tmp_path / "whok").mkdir()
    (tmp_path / "whok" / "requirements.txt").write_text("x==1\n")
    (tmp_path / "whok" / "x-1-py3-none-any.whl").write_text("")
    (tmp_path / "c.yaml").write_text("{}\n")
    proc = subprocess.run(["bash", str(REPO / "bench" / script), *[a.format(tmp=tmp_path) for a in args]],
                          capture_output=True, text=True, timeout=30, cwd=tmp_path)
    assert proc.returncode == 2 and words in proc.stderr, proc.stderr
    assert not (tmp_path / "offline-node").exists()


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("PPAUDIT_TEST_WHEELHOUSE") != "1",
                    reason="set PPAUDIT_TEST_WHEELHOUSE=1: downloads the wheelhouse (~270 MB) from the index, ~5 min")
@pytest.mark.timeout(1500)
def test_wheelhouse_and_offline_node_run_a_tiny_target(tmp_path):
    wheelhouse = tmp_path / "wheelhouse"
    proc = subprocess.run(["make", "wheelhouse", f"WHEELHOUSE={wheelhouse}"], cwd=REPO, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    pins = (wheelhouse / "requirements.txt").read_text().split()
    assert pins and not any(re.match(r"(torch|nvidia-|triton)", p) for p in pins)
    (tmp_path / "data").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update(PIP_NO_INDEX="1", PYTHON=sys.executable, OFFLINE_PREFIX=str(tmp_path / "node"), CORES="2")
    proc = subprocess.run(["bash", str(REPO / "bench" / "offline_node.sh"), str(wheelhouse), str(tmp_path / "data"),
                           str(REPO / "tests" / "configs" / "tiny.yaml"), "chadha_fig2"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert (tmp_path / "node" / "run" / "results" / "figures" / "chadha2024" / "fig2.csv").is_file()
    # The pins come from the venv, torch from the node.
    out = subprocess.run([str(tmp_path / "node" / "bin" / "python"), "-c", "import numpy, torch; print(numpy.__file__); print(torch.__file__)"],
                         capture_output=True, text=True, timeout=120).stdout.split()
    assert out[0].startswith(str(tmp_path / "node")) and not out[1].startswith(str(tmp_path / "node"))


# ------------------------------------------------------------------------------ the slice


#: The rules of chadha_fig3 on the slice (and nothing else: rule all is chadha_fig3's files).
SLICE_RULES = {"select_queries", "train_teachers", "craft_canaries", "train_canary_teachers", "fit_vote_model",
               "audit_noisy_argmax", "compose_audit", "collect_summaries", "plot_chadha_fig34", "chadha_fig3", "all"}


@pytest.mark.workflow
@pytest.mark.timeout(300)
def test_slice_dry_run_resolves_chadha_fig3(tmp_path):
    # `all` beside chadha_fig3: the overlay's config key targets makes rule all the slice's figure alone.
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "--directory", str(tmp_path), "-n",
           "--configfile", *[str(REPO / c) for c in SLICE], "--", "chadha_fig3", "all"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-4000:]
    jobs = dict(re.findall(r"^(\w+)\s+(\d+)$", out.split("Job stats:")[1].split("\n\n")[0], flags=re.M))
    assert set(jobs) - {"total"} == SLICE_RULES, jobs
    assert jobs["train_teachers"] == "2" and jobs["collect_summaries"] == "2" and jobs["plot_chadha_fig34"] == "1"
    assert "dataset=fashion-mnist" in out and "dataset=mnist" not in out and "dataset=cifar10" not in out
    teachers = [b for b in out.split("rule train_teachers:")[1:]]
    assert all("model=wrn16-4" in b.split("\n\n")[0] and "gpu=1" in b.split("\n\n")[0] for b in teachers)


@pytest.mark.skipif(RATES is None, reason="the H200 rates file is not in shared/gpu beside the repository")
def test_slice_projects_at_most_six_h200_minutes_and_readme_holds_its_table(capsys, monkeypatch):
    """The issue's exact command: ``bench/gpu_hours.py --configfile config/config.yaml config/paper.yaml
    config/slices/fmnist_gpu.yaml --rates …/rates_h200_2026-11-26.json`` (the overlay's ``targets``
    keeps the slice's work only; ``--targets`` still overrides it)."""
    gh = _load("gpu_hours")
    args = ["--configfile", *SLICE, "--rates", str(RATES)]
    monkeypatch.chdir(REPO)
    assert gh.main(args) == 0
    text = capsys.readouterr().out.strip()
    minutes = float(re.search(r"= ([\d.]+) GPU minutes", text)[1])
    assert 1.0 < minutes <= 6.0, text
    assert "| PATE / CaPC teachers |" in text and "| PATE / CaPC sampled audits |" in text
    assert not any(w in text for w in ("Label-DP", "Private-kNN", "PromptPATE")), text
    readme = (REPO / "docs" / "paper_scale.md").read_text(encoding="utf-8")  # the page gpu_hours.py writes
    block = readme.split("<!-- gpu-slice:begin -->")[1].split("<!-- gpu-slice:end -->")[0].strip()
    assert block == text
    # --targets overrides the config key (here: paper.yaml's label-DP work, which the slice leaves out) ...
    assert gh.main([*args, "--targets", "obs_table1"]) == 0
    other = capsys.readouterr().out
    assert "| Label-DP image models |" in other and "PATE / CaPC" not in other and "obs_table1 (`--targets`)" in other
    # ... and an unknown target is named, exit status 2
    assert gh.main([*args, "--targets", "chadha_fig99"]) == 2
    assert "chadha_fig99" in capsys.readouterr().err
