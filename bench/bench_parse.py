"""CPU cost of one Snakemake start (parse the Snakefile, validate the config, build the DAG) against a
baseline revision (issue 35).

Every ``make run``, every dry run (``snakemake -n``) and each of the ~60 workflow runs and bad-config
checks of ``make test`` starts a Snakemake process that parses the Snakefile, validates the config
against ``workflow/schemas/config.schema.yaml`` and builds the DAG before any job runs. This times
``snakemake -n -q <target>`` in fresh processes, alternately in a copy of a baseline revision
(``--base-rev``, exported with ``git archive``) and in this checkout (A B A B …, ``--repeat`` pairs),
and prints the median CPU seconds (user + system of the process) of each, their ratio and the
difference. Both trees run with this checkout's venv and without results, so both build the same
whole DAG.

Run: ``.venv/bin/python bench/bench_parse.py [--base-rev HEAD~1] [--repeat 5] [--target all]``.

Measured on the 2-core dev machine on 29 Nov 2026 (score_s 0.16–0.18), base 8684f6e, 5 pairs:
``snakemake -n all`` 4.62 → 3.39 CPU-s (1.36×, 3 pairs): the
config schema read with libyaml (0.44 → 0.05 s), the figure registry too (0.10 → 0.01 s), and the
synthetic figures' titles without importing matplotlib.pyplot (0.45 s).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _cpu_of(cmd: list[str], cwd: Path, env: dict) -> float:
    """User + system CPU seconds of one child process (and its children)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed in {cwd}:\n{proc.stderr[-2000:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _export(rev: str, dest: Path) -> None:
    """``git archive rev`` of the files a Snakemake parse reads, unpacked in ``dest``."""
    archive = subprocess.run(["git", "archive", rev, "Snakefile", "config", "workflow", "src"], cwd=REPO,
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base-rev", default="HEAD~1", help="baseline revision (default HEAD~1)")
    ap.add_argument("--repeat", type=int, default=5, help="A/B pairs (default 5)")
    ap.add_argument("--target", default="all", help="Snakemake target of the dry run (default all)")
    args = ap.parse_args(argv)
    if args.repeat < 1:
        ap.error(f"--repeat must be >= 1, got {args.repeat}")
    snakemake = Path(sys.executable).with_name("snakemake")
    if not snakemake.exists():
        raise SystemExit(f"no snakemake beside {sys.executable}: run with the project's venv (.venv/bin/python)")
    with tempfile.TemporaryDirectory() as tmp:
        base, new = Path(tmp) / "base", Path(tmp) / "new"
        base.mkdir()
        new.mkdir()
        _export(args.base_rev, base)
        for name in ("Snakefile", "config", "workflow", "src"):
            src = REPO / name
            (new / name).symlink_to(src) if src.is_file() else subprocess.run(["cp", "-r", str(src), str(new / name)], check=True)
        cmd = [str(snakemake), "-n", "-q", args.target, "--cores", "1"]
        times = {"base": [], "new": []}
        for i in range(args.repeat):
            for label, tree in (("base", base), ("new", new)):
                # each tree's own src first on sys.path (the venv's installed ppaudit would win otherwise)
                env = {**os.environ, "PYTHONPATH": str(tree / "src"), "OPENBLAS_NUM_THREADS": "1"}
                times[label].append(_cpu_of(cmd, tree, env))
            print(f"pair {i + 1}: base {times['base'][-1]:.2f} CPU-s, new {times['new'][-1]:.2f} CPU-s", flush=True)
    b, n = statistics.median(times["base"]), statistics.median(times["new"])
    print(f"snakemake -n {args.target}: base ({args.base_rev}) {b:.2f} CPU-s, this checkout {n:.2f} CPU-s: "
          f"ratio {b / n:.2f}x, {b - n:+.2f} CPU-s per Snakemake start")
    return 0


if __name__ == "__main__":
    sys.exit(main())
