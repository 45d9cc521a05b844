"""Before/after timings of the slow audit rules of the default run, on a finished run's inputs (issue 30 §1).

Each job below is one Snakemake job of ``config/config.yaml`` (its rule script, with the params the
rule gives it at the default config), run twice in fresh processes on the same inputs: with the
library of a baseline revision (``--base-rev``, exported with ``git archive``) and with this
checkout's ``src``. The script prints per job the wall and CPU seconds of both, their ratio, and
whether the outputs are byte-identical (else the largest relative difference of the numeric
columns). The baseline is measured in the same run, on the same machine.

Run (after a default run, e.g. ``make run`` or ``make bench-default``, left its results)::

    PYTHONPATH=src .venv/bin/python bench/bench_audit_jobs.py --results . \\
        --jobs pate-mnist-pois-natq wang-caching-pate

Without a finished run (no inputs under ``--results``) it says so and exits (``make bench``).

Measured on the 2-core dev machine (shared, so the CPU seconds are the figure to read), inputs of
the 26 Nov 2026 default run, base 5a42ffb: every output byte-identical; CPU s old → new:
PATE MNIST Pois-NatQ 101.7 → 57.4 (1.77×), Pois-AdvQ 39.5 → 20.4 (1.94×), Nat-AdvQ 35.3 → 18.7
(1.89×); PATE Fashion-MNIST Pois-NatQ 65.5 → 58.4 (1.12×), Nat-AdvQ 17.2 → 8.7, Pois-AdvQ
19.6 → 9.6; CaPC 31.8 → 31.8 (six jobs); kNN Rotten Tomatoes Pois-NatQ 16.5 → 11.6 (1.42×),
Nat-AdvQ 29.9 → 28.3, Fashion-MNIST Pois-NatQ 46.7 → 45.2; the caching defence 101.9 → 94.6.

``--jobs all`` runs every job listed in :data:`JOBS` (≈ 10 CPU-minutes for both revisions);
``--only new`` skips the baseline.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
ORDERS = [1.5, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256]
SEED = 2024

#: PATE/CaPC audit params of the default config (chadha2024.audit_defaults + pate_capc).
PATE_CAPC = dict(
    trials=100_000_000, sample_trials=200_000, orders=ORDERS, confidence=0.95, count_mode="auto", exact="auto",
    bonferroni=True, transcript=True, transcript_max_work=2e8, transcript_mc_draws=20_000, transcript_trials=50_000,
    transcript_audit="rao-blackwell", transcript_draws=100_000, joint_draws=20_000, delta=1e-6, audit_device="cpu", seed=SEED,
)

#: Private-kNN audit params of the default config (chadha2024.knn).
KNN = dict(
    gamma=0.2, trials=100_000_000, orders=ORDERS, confidence=0.95, min_nu=0.001, bonferroni=True, exact="auto",
    exact_draws=300, max_support=100_000, nonenumerable="rao-blackwell", rb_displaced="sample",
    transcript_event_audit=False, audit_device="cpu", delta=1e-6, seed=SEED,
)


def noisy_argmax_job(algo: str, dataset: str, adversary: str) -> dict:
    pre = f"{algo}/{dataset}/logreg/seed{SEED}"
    out = f"results/audits/{pre}/{adversary}/sigma40"
    return dict(
        rule="audit_noisy_argmax",
        input=dict(fit=f"results/fits/{pre}/{adversary}.npz", canaries=f"results/canaries/{pre}/{adversary}.npz",
                   votes_S_prime=f"results/votes/{pre}/{adversary}/votes_S_prime.npz"),
        output=dict(per_query=f"{out}/per_query.csv", joint=f"{out}/joint.csv"),
        params=dict(sigma=40.0, **PATE_CAPC),
        wildcards=dict(algo=algo, dataset=dataset, model="logreg", seed=str(SEED), adversary=adversary, sigma="40"),
    )


def knn_job(dataset: str, adversary: str) -> dict:
    enc, sigma = ("efficientnet-lite0", 30) if dataset == "fashion-mnist" else ("all-minilm-l6-v2", 20)
    pre = f"results/knn/{dataset}/{enc}/seed{SEED}"
    advq = adversary.endswith("advq")
    return dict(
        rule="audit_knn",
        input=dict(crafted=f"{pre}/crafted/{adversary}.npz"),
        output=dict(per_query=f"{pre}/{adversary}/sigma{sigma}/per_query.csv"),
        params=dict(sigma=float(sigma), sample_trials=1_000_000 if advq else 10_000, rb_draws=50_000 if advq else 5_000, **KNN),
        wildcards=dict(dataset=dataset, encoder=enc, seed=str(SEED), adversary=adversary, sigma=str(sigma)),
    )


def wang_caching_pate_job() -> dict:
    pre = f"pate/fashion-mnist/logreg/seed{SEED}"
    advs = ["nat-advq", "pois-advq"]
    return dict(
        rule="audit_wang_caching_pate",
        input=dict(fits=[f"results/fits/{pre}/{a}.npz" for a in advs], canaries=[f"results/canaries/{pre}/{a}.npz" for a in advs],
                   rdp=[f"results/audits/{pre}/{a}/sigma40/rdp.csv" for a in advs]),
        output=dict(transcripts="results/wang2022/defence/pate_transcripts.csv"),
        params=dict(settings=dict(algo="pate", trials=2_000_000, candidates="worst", num_bins=64), adversaries=advs,
                    dataset="fashion-mnist", sigma=40.0, orders=ORDERS, confidence=0.95, delta=1e-6, seed=SEED),
        wildcards={},
    )


JOBS = {
    **{f"{a}-{d}-{adv}": noisy_argmax_job(a, d, adv) for a in ("pate", "capc") for d in ("mnist", "fashion-mnist")
       for adv in ("nat-advq", "pois-advq", "pois-natq")},
    **{f"knn-{d}-{adv}": knn_job(d, adv) for d in ("fashion-mnist", "rotten-tomatoes")
       for adv in ("nat-advq", "pois-advq", "pois-natq-embedding", "pois-natq-test", "pois-natq-train")},
    "wang-caching-pate": wang_caching_pate_job(),
}

#: The jobs that take most of the default run's audit time (issue 30 §1).
DEFAULT_JOBS = ["pate-mnist-pois-natq", "pate-fashion-mnist-pois-natq", "pate-mnist-pois-advq", "pate-mnist-nat-advq",
                "knn-fashion-mnist-pois-natq-train", "knn-rotten-tomatoes-nat-advq", "wang-caching-pate"]

RUNNER = r"""
import json, sys, types
spec = json.loads(sys.argv[1])

class IO(list):
    def __init__(self, d):
        super().__init__(d.values())
        self.__dict__.update(d)

snakemake = types.SimpleNamespace(input=IO(spec["input"]), output=IO(spec["output"]), params=types.SimpleNamespace(**spec["params"]),
                                  wildcards=types.SimpleNamespace(**spec["wildcards"]), log=[spec["log"]], rule=spec["rule"])
sys.path.insert(0, spec["scripts"])
script = f"{spec['scripts']}/{spec['rule']}.py"
exec(compile(open(script).read(), script, "exec"), {"snakemake": snakemake, "__name__": "__main__"})
"""


def run_job(spec: dict, src: Path, results: Path, out_dir: Path) -> tuple[float, float]:
    """One job in a fresh process with ``src`` first on the path; outputs under ``out_dir``. Returns (wall, CPU) seconds."""
    s = json.loads(json.dumps(spec))
    s["input"] = {k: ([str(results / x) for x in v] if isinstance(v, list) else str(results / v)) for k, v in s["input"].items()}
    s["output"] = {k: str(out_dir / Path(v).name) for k, v in s["output"].items()}
    s["log"] = str(out_dir / "job.log")
    s["scripts"] = str(REPO / "workflow" / "scripts")
    out_dir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PYTHONPATH=str(src), OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", RUNNER, json.dumps(s)], env=env, cwd=str(results))
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode:
        raise RuntimeError(f"{spec['rule']} failed with src={src}: see {s['log']}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def compare(a: Path, b: Path) -> str:
    """``identical`` or the largest relative difference of the numeric columns of two CSVs."""
    if a.read_bytes() == b.read_bytes():
        return "identical"
    x, y = pd.read_csv(a), pd.read_csv(b)
    if x.shape != y.shape or list(x.columns) != list(y.columns):
        return f"DIFFERENT SHAPE {x.shape} vs {y.shape}"
    num = x.select_dtypes("number").columns
    other = [c for c in x.columns if c not in num and not x[c].equals(y[c])]
    u, v = x[num].to_numpy(float), y[num].to_numpy(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        rel = np.where(u == v, 0.0, np.abs(u - v) / np.maximum(np.abs(u), np.abs(v)))
    rel = np.where(np.isnan(u) & np.isnan(v), 0.0, rel)
    worst = num[int(np.nanargmax(np.nanmax(rel, axis=0)))] if np.nanmax(rel) > 0 else "-"
    return f"max rel. diff {np.nanmax(rel):.2e} (column {worst})" + (f"; text columns differ: {other}" if other else "")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--results", default=Path("."), type=Path,
                    help="working directory of a finished default run (holds results/; default: here)")
    ap.add_argument("--base-rev", default="5a42ffb", help="baseline revision of src/ (default: before the #30 algorithm round)")
    ap.add_argument("--jobs", nargs="+", default=DEFAULT_JOBS, help=f"job names ({', '.join(JOBS)}) or 'all'")
    ap.add_argument("--only", choices=["both", "new", "old"], default="both")
    ap.add_argument("--keep", type=Path, default=None, help="keep the outputs here (default: a temporary folder)")
    args = ap.parse_args()
    names = list(JOBS) if args.jobs == ["all"] else args.jobs
    unknown = [n for n in names if n not in JOBS]
    if unknown:
        raise SystemExit(f"unknown job(s) {unknown}; choose from {list(JOBS)}")
    def inputs(spec):
        return [args.results / x for v in spec["input"].values() for x in (v if isinstance(v, list) else [v])]

    missing = [n for n in names if not all(p.is_file() for p in inputs(JOBS[n]))]
    if missing:
        print(f"skipping {len(missing)} job(s) whose inputs are not under {args.results.resolve()} (run the default workflow first): "
              f"{', '.join(missing)}")
        names = [n for n in names if n not in missing]
    if not names:
        return
    work = Path(tempfile.mkdtemp(prefix="bench_audit_jobs_")) if args.keep is None else args.keep
    base_src = work / "base"
    if args.only != "new":
        base_src.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "-C", str(REPO), "archive", args.base_rev, "src"], check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(base_src)], input=archive, check=True)
    rows = []
    print(f"{'job':38s} {'old wall':>9s} {'old CPU':>8s} {'new wall':>9s} {'new CPU':>8s} {'CPU ratio':>9s}  outputs")
    for name in names:
        spec = JOBS[name]
        t_old = run_job(spec, base_src / "src", args.results, work / name / "old") if args.only != "new" else (np.nan, np.nan)
        t_new = run_job(spec, REPO / "src", args.results, work / name / "new") if args.only != "old" else (np.nan, np.nan)
        same = "-"
        if args.only == "both":
            same = "; ".join(f"{Path(v).name}: {compare(work / name / 'old' / Path(v).name, work / name / 'new' / Path(v).name)}"
                             for v in spec["output"].values())
        ratio = t_old[1] / t_new[1] if args.only == "both" else np.nan
        print(f"{name:38s} {t_old[0]:9.1f} {t_old[1]:8.1f} {t_new[0]:9.1f} {t_new[1]:8.1f} {ratio:8.2f}x  {same}", flush=True)
        rows.append((name, *t_old, *t_new))
    if args.only == "both" and rows:
        old_cpu, new_cpu = sum(r[2] for r in rows), sum(r[4] for r in rows)
        print(f"{'total':38s} {sum(r[1] for r in rows):9.1f} {old_cpu:8.1f} {sum(r[3] for r in rows):9.1f} {new_cpu:8.1f} {old_cpu / new_cpu:8.2f}x")
    if args.keep is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
