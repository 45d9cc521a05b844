"""Per-job start-up cost of every workflow script: interpreter + Snakemake preamble + imports (issue 30, §1).

Every job of a ``script:`` rule is one fresh Python process (Snakemake writes the script with its
preamble to a temporary file and runs ``python <file>``), so each of the ~200 jobs of ``make run``
pays the interpreter's start-up, the preamble's ``snakemake`` imports and the script's own imports
before it does any work. This measures the three, per script ``workflow/scripts/<rule>.py``:

* the script's module-level import statements are parsed (``ast``) and run, in a fresh process
  under ``python -X importtime`` (``workflow/scripts`` on ``sys.path`` as Snakemake puts it, so
  ``import _ppaudit_path`` is measured too), ``--repeat`` times; the import time is the median of
  the per-run sums of the top-level cumulative times;
* the heavy modules are the third-party modules imported *directly* by a ``ppaudit`` module or
  the script (the entry points of the import tree that are not ``ppaudit``), largest cumulative
  time first, each with the module that imported it;
* the interpreter's start-up (``python -c pass``) and the preamble's imports (``pickle``,
  ``snakemake.script``, ``snakemake.logging``, ``snakemake.iocontainers``) are measured once
  the same way.

With ``--jobs`` (default on) the job count of each rule comes from ``snakemake -n`` on the
default config (``--configfile`` to change it), and the table ends with the sum over the jobs of
the per-job start-up: what the whole ``make run`` spends on start-up, in CPU-seconds.

Timings are wall seconds on a possibly busy machine: compare scripts within one run, and
before/after only side by side (same machine, same moment).

``--baseline ROOT`` compares with another tree (e.g. ``git archive <rev> src workflow | tar -x -C
ROOT``): each script's imports are timed alternately with ``ROOT/src`` and with this tree's
``src`` (A B A B …, ``--repeat`` pairs), and the table gives before, after and the ratio of the
medians, and the start-up saved over the jobs of ``make run``.

Run: ``.venv/bin/python bench/bench_imports.py [--repeat 3] [--scripts audit_knn,fit_vote_model]
[--no-jobs] [--baseline ROOT] [--json out.json]``.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = REPO / "workflow" / "scripts"
sys.path.insert(0, str(REPO / "src"))  # a checkout without the editable install still works

from ppaudit.workflow.job_server import module_level_imports  # noqa: E402
SENTINEL = "@@bench_imports:start@@"
PREAMBLE = (
    "import pickle\n"
    "import snakemake.script\n"
    "from snakemake.logging import logger\n"
    "from snakemake.iocontainers import Snakemake\n"
)
_LINE = re.compile(r"^import time:\s+(\d+)\s+\|\s+(\d+)\s+\|(\s*)(\S+)\s*$")


def script_imports(path: Path) -> str:
    """The module-level import statements of a script (also those inside ``if``/``try``/``with``), as code."""
    return "\n".join(ast.unparse(node) for node in module_level_imports(path))


def parse_importtime(stderr: str) -> tuple[float, list[tuple[str, float, str]]]:
    """Total seconds of the imports after the sentinel, and the non-ppaudit entry points.

    Returns:
        ``(total, entries)``: ``total`` the sum of the top-level cumulative times; ``entries``
        ``(module, cumulative seconds, importer)`` of every module that is not ``ppaudit`` and
        was imported directly by a ``ppaudit`` module, ``_ppaudit_path`` or the script itself.
    """
    lines = stderr.split(SENTINEL, 1)[-1].splitlines()
    parsed = []
    for line in lines:
        m = _LINE.match(line)
        if m:
            parsed.append((int(m.group(2)) / 1e6, len(m.group(3)) - 1, m.group(4)))
    # importtime prints children before their parent, one level deeper (2 spaces): walk backwards.
    total = 0.0
    entries = []
    stack: list[tuple[int, str]] = []  # (level, name) of the ancestors of the current line
    for cum, indent, name in reversed(parsed):
        level = indent // 2
        while stack and stack[-1][0] >= level:
            stack.pop()
        parent = stack[-1][1] if stack else "<script>"
        if level == 0:
            total += cum
        ours = name.split(".")[0] in ("ppaudit", "_ppaudit_path")
        parent_ours = parent == "<script>" or parent.split(".")[0] in ("ppaudit", "_ppaudit_path")
        if not ours and parent_ours:
            entries.append((name, cum, parent))
        stack.append((level, name))
    entries.sort(key=lambda e: -e[1])
    return total, entries


def run_importtime(code: str, python: str, env: dict[str, str]) -> tuple[float, list[tuple[str, float, str]]]:
    prog = f"import sys\nsys.stderr.write({SENTINEL!r} + '\\n')\nsys.stderr.flush()\n{code}\n"
    proc = subprocess.run([python, "-X", "importtime", "-c", prog], capture_output=True, text=True, env=env,
                          cwd=SCRIPTS)
    if proc.returncode != 0:
        raise RuntimeError(f"imports failed:\n{code}\n{proc.stderr[-2000:]}")
    return parse_importtime(proc.stderr)


def measure(code: str, python: str, env: dict[str, str], repeat: int) -> tuple[float, list[tuple[str, float, str]]]:
    """Median total over ``repeat`` runs; the entries of the run with the median total."""
    runs = sorted((run_importtime(code, python, env) for _ in range(repeat)), key=lambda r: r[0])
    return statistics.median(r[0] for r in runs), runs[len(runs) // 2][1]


def measure_pair(code: str, python: str, env_a: dict[str, str], env_b: dict[str, str], repeat: int):
    """``measure`` for two environments, runs interleaved (A B, B A, A B, …) so drift hits both alike."""
    runs_a, runs_b = [], []
    for i in range(repeat):
        order = ((env_a, runs_a), (env_b, runs_b)) if i % 2 == 0 else ((env_b, runs_b), (env_a, runs_a))
        for env, runs in order:
            runs.append(run_importtime(code, python, env))
    out = []
    for runs in (runs_a, runs_b):
        runs.sort(key=lambda r: r[0])
        out.append((statistics.median(r[0] for r in runs), runs[len(runs) // 2][1]))
    return out[0], out[1]


def interpreter_startup(python: str, env: dict[str, str], repeat: int) -> float:
    """Median wall seconds of ``python -c pass`` (start-up and shutdown, site imports included)."""
    import time

    times = []
    for _ in range(max(repeat, 3)):
        t0 = time.perf_counter()
        subprocess.run([python, "-c", "pass"], check=True, env=env)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def job_counts(python: str, env: dict[str, str], configfile: str | None) -> dict[str, int]:
    """Jobs per rule of ``make run`` from ``snakemake -n`` (its "Job stats" table)."""
    cmd = [python, "-m", "snakemake", "-n", "--quiet", "rules", "--cores", "2"]
    if configfile:
        cmd += ["--configfile", configfile]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, env=env).stdout
    counts: dict[str, int] = {}
    in_table = False
    for line in out.splitlines():
        if line.startswith("job ") and "count" in line:
            in_table, counts = True, {}
            continue
        if in_table:
            parts = line.split()
            if len(parts) == 2 and parts[1].isdigit() and parts[0] != "total":
                counts[parts[0]] = int(parts[1])
            elif parts and parts[0] == "total":
                in_table = False
    return counts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--repeat", type=int, default=1, help="runs per script (median); default 1")
    ap.add_argument("--scripts", default="", help="comma-separated script (rule) names; default all")
    ap.add_argument("--no-jobs", action="store_true", help="skip the job counts of snakemake -n")
    ap.add_argument("--configfile", default=None, help="config for snakemake -n (default: the embedded one)")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--json", default=None, help="also write the numbers to this file")
    ap.add_argument("--baseline", default=None, help="a tree (src/, workflow/scripts/) to compare with, side by side")
    args = ap.parse_args(argv)
    if args.baseline:
        return compare(args)

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), str(SCRIPTS), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    wanted = {s for s in args.scripts.split(",") if s}
    scripts = sorted(p for p in SCRIPTS.glob("*.py") if not p.name.startswith("_") and (not wanted or p.stem in wanted))

    startup = interpreter_startup(args.python, env, args.repeat)
    preamble, _ = measure(PREAMBLE, args.python, env, args.repeat)
    counts = {} if args.no_jobs else job_counts(args.python, env, args.configfile)

    rows = []
    for path in scripts:
        seconds, entries = measure(script_imports(path), args.python, env, args.repeat)
        rows.append({"script": path.stem, "imports_s": seconds, "jobs": counts.get(path.stem, 0),
                     "heavy": [{"module": m, "s": s, "imported_by": by} for m, s, by in entries[:3]]})
        print(f"  {path.stem}: {seconds:.2f} s", file=sys.stderr, flush=True)

    per_job_fixed = startup + preamble
    print(f"interpreter start-up (python -c pass): {startup:.3f} s; Snakemake preamble imports: {preamble:.3f} s")
    print()
    print("| script (rule) | jobs | imports (s) | start-up per job (s) | all jobs (s) | heaviest third-party imports (s, imported by) |")
    print("| --- | ---: | ---: | ---: | ---: | --- |")
    total_jobs = total_s = 0.0
    for r in sorted(rows, key=lambda r: -r["imports_s"] * max(r["jobs"], 1)):
        per_job = per_job_fixed + r["imports_s"]
        all_jobs = per_job * r["jobs"]
        total_jobs += r["jobs"]
        total_s += all_jobs
        heavy = ", ".join(f"{h['module']} {h['s']:.2f} ({h['imported_by']})" for h in r["heavy"])
        print(f"| {r['script']} | {r['jobs']} | {r['imports_s']:.2f} | {per_job:.2f} | {all_jobs:.1f} | {heavy} |")
    if counts:
        print(f"| **all script jobs** | {int(total_jobs)} | | | **{total_s:.0f}** | |")
        unmatched = sorted(set(counts) - {r["script"] for r in rows})
        print()
        print(f"{int(total_jobs)} script jobs of {sum(counts.values())} in `snakemake -n` (rules without a script of "
              f"their name: {', '.join(unmatched) or 'none'}); start-up of all script jobs: {total_s:.0f} s "
              f"(interpreter + preamble {per_job_fixed:.2f} s per job).")
    if args.json:
        Path(args.json).write_text(json.dumps({"startup_s": startup, "preamble_s": preamble, "rows": rows},
                                              indent=1) + "\n", encoding="utf-8")
    return 0


def _env_for(root: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(root / "src"), str(root / "workflow" / "scripts")])
    return env


def compare(args: argparse.Namespace) -> int:
    """Before (``--baseline``) and after (this tree), per script, timed alternately."""
    base = Path(args.baseline).resolve()
    env_new, env_old = _env_for(REPO), _env_for(base)
    wanted = {s for s in args.scripts.split(",") if s}
    scripts = sorted(p for p in SCRIPTS.glob("*.py") if not p.name.startswith("_") and (not wanted or p.stem in wanted))
    counts = {} if args.no_jobs else job_counts(args.python, env_new, args.configfile)
    startup = interpreter_startup(args.python, env_new, args.repeat)
    (pre_old, _), (pre_new, _) = measure_pair(PREAMBLE, args.python, env_old, env_new, args.repeat)
    rows = []
    for path in scripts:
        old_path = base / "workflow" / "scripts" / path.name
        code_new = script_imports(path)
        code_old = script_imports(old_path) if old_path.is_file() else code_new
        if code_old != code_new:  # different import lines: time each tree with its own script
            old = measure(code_old, args.python, env_old, args.repeat)
            new = measure(code_new, args.python, env_new, args.repeat)
        else:
            old, new = measure_pair(code_new, args.python, env_old, env_new, args.repeat)
        rows.append({"script": path.stem, "jobs": counts.get(path.stem, 0), "before_s": old[0], "after_s": new[0],
                     "heavy_before": [m for m, _, _ in old[1][:3]], "heavy_after": [m for m, _, _ in new[1][:3]]})
        print(f"  {path.stem}: {old[0]:.2f} -> {new[0]:.2f} s", file=sys.stderr, flush=True)
    fixed = startup + pre_new
    print(f"interpreter start-up: {startup:.3f} s; Snakemake preamble imports: {pre_old:.3f} s before, {pre_new:.3f} s after; "
          f"{args.repeat} interleaved runs per script, medians")
    print()
    print("| script (rule) | jobs | imports before (s) | after (s) | after/before | saved over its jobs (s) | heavy before → after |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
    tot_before = tot_after = tot_jobs = 0.0
    for r in sorted(rows, key=lambda r: -(r["before_s"] - r["after_s"]) * max(r["jobs"], 1)):
        saved = (r["before_s"] - r["after_s"]) * r["jobs"]
        tot_before += (fixed + r["before_s"]) * r["jobs"]
        tot_after += (fixed + r["after_s"]) * r["jobs"]
        tot_jobs += r["jobs"]
        ratio = r["after_s"] / r["before_s"] if r["before_s"] > 0 else float("nan")
        print(f"| {r['script']} | {r['jobs']} | {r['before_s']:.2f} | {r['after_s']:.2f} | {ratio:.2f} | {saved:.1f} | "
              f"{', '.join(r['heavy_before'])} → {', '.join(r['heavy_after'])} |")
    if counts:
        print()
        print(f"start-up (interpreter + preamble + imports) over the {int(tot_jobs)} script jobs of `snakemake -n`: "
              f"{tot_before:.0f} s before, {tot_after:.0f} s after, {tot_before - tot_after:.0f} s saved "
              f"(CPU-seconds; at most that in wall time on 2 cores)")
    if args.json:
        Path(args.json).write_text(json.dumps({"startup_s": startup, "preamble_before_s": pre_old, "preamble_after_s": pre_new,
                                              "rows": rows}, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
