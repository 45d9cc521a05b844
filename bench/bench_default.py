"""Wall and CPU time of ``make run`` per target group, on a fresh directory (issue 16, item 1).

The groups come from the figure registry ``workflow/figures.yaml`` (loaded with
:func:`ppaudit.workflow.registry.load_registry`): one group per paper and stage — Chadha et al.
2024 synthetic figures, PATE/CaPC, PromptPATE, Private-kNN; Wang et al. 2022; the observational
label-DP audit; Malek et al. 2021; the auditor's self-check; the findings tables with the
paper comparison — then ``all`` for whatever ``rule all`` still needs. The groups run one after
another, in that fixed order, into ONE fresh directory with the command of ``make run``::

    snakemake --profile workflow/profiles/default --cores N --configfile CONFIG \\
        --directory FRESH_DIR <targets of the group>

so each group's time is its **incremental** cost after the groups before it (a group reuses
what earlier groups built; e.g. Wang's PATE caching panel reuses the PATE/CaPC vote fits), and
the sum over the groups is the cost of ``make run`` on a fresh clone. Wall time is measured
around each ``snakemake`` call; CPU time is user + system time of the whole snakemake process
tree (``resource.getrusage(RUSAGE_CHILDREN)`` before and after, which counts every descendant
that was waited for: the scheduler and every job's script).

Output: progress lines while it runs, each group's snakemake output in
``<log-dir>/<nn>_<group>.log``, a Markdown table (and ``bench_default.json`` with the raw numbers
in the log folder) at the end. ``--write-readme`` splices the table into ``README.md`` between
the markers ``<!-- bench-default:begin -->`` and ``<!-- bench-default:end -->`` (the prose around
them is kept). ``--dry-run`` prints the groups and their incremental job counts from
``snakemake -n`` (cumulative target lists, differenced) without running anything.

Run: ``make bench-default`` or ``.venv/bin/python bench/bench_default.py [--cores 2]
[--configfile config/config.yaml] [--groups chadha_synthetic,wang2022] [--dry-run]
[--write-readme]``.

``--whole`` times ``make run`` itself instead: ONE snakemake call for every target (``rule
all``) into a fresh directory, so the two cores overlap jobs of different groups as ``make run``
does (the per-group sum above cannot); with ``--write-readme`` its line goes between the markers
``<!-- bench-default-whole:begin -->`` and ``<!-- bench-default-whole:end -->``.

Per-job start-up (issue 30 §1). Every job of a ``script:`` rule run as a fresh Python process
(``PPAUDIT_FORK_JOBS=0``, and always on SLURM) pays the interpreter, Snakemake's preamble
(unpickling the ``snakemake`` object) and the script's imports before its first line of work; with
the job server of a local run (``ppaudit.workflow.job_server``, issue 35) a job forks from a process
that has imported them, and pays the interpreter and the preamble only. After the snakemake call(s), the bench counts the jobs
each rule ran (the ``rule X:`` blocks of the group's log) and times, per rule, a fresh
``python -c`` of exactly that preamble + the module-level imports of ``workflow/scripts/<rule>.py``
(:func:`bench_imports.script_imports`), ``--startup-repeats`` times (median; the machine is idle
by then). The table gets "start-up per job" (CPU seconds, user + sys, mean over the group's
jobs) and "jobs × start-up" (the sum over the group's jobs: CPU time the jobs spent before
working, part of the CPU column); the ``--whole`` line the same over the whole run.
``--startup-repeats 0`` skips it.

Calibration (issue 35 §1). Right before and right after the snakemake call(s) the bench runs
``../shared/calibrate.py`` (beside the checkout; ``--calibrate PATH`` names another) with the
venv's interpreter: three fixed single-thread workloads whose geometric mean ``score_s`` is the
machine's speed at that moment (lower = faster). Both scores and the load average are printed,
and wall and CPU time are also given in calibration units (time / mean of the two scores), so a
timing from one machine scales to another: expected time ≈ units × that machine's ``score_s``.
The README lines carry the figure; ``--whole --write-readme`` also writes the "what to expect"
line of the README's "Two commands" section (markers ``<!-- bench-default-expect:begin/end -->``):
the range of calibration units over this run and every earlier measured run of
``bench/measured_runs.csv`` (:data:`MEASURED_RUNS`: date, commit, wall time and the two scores of each
run of `make run`'s workflow part), scaled to every machine score in ``--expect-scores`` (the machines
it was measured on; default :data:`MEASURED_SCORES`), to the record's and to this one; the run is then
appended to the record. A range, because machines of the class with the same score_s ran the same
commit up to 1.5× apart (issue 35). Without the script the bench says so and runs without calibration.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import re
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))  # a checkout without the editable install still works

from ppaudit.workflow.job_server import THREAD_VARIABLES
from ppaudit.workflow.registry import Registry, Target, load_registry

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_imports import PREAMBLE, script_imports  # noqa: E402  (bench/bench_imports.py)

REGISTRY_FILE = REPO / "workflow" / "figures.yaml"
SCRIPTS = REPO / "workflow" / "scripts"
PROFILE = "workflow/profiles/default"
README = REPO / "README.md"
BEGIN_MARKER = "<!-- bench-default:begin -->"
END_MARKER = "<!-- bench-default:end -->"
WHOLE_BEGIN_MARKER = "<!-- bench-default-whole:begin -->"
WHOLE_END_MARKER = "<!-- bench-default-whole:end -->"
EXPECT_BEGIN_MARKER = "<!-- bench-default-expect:begin -->"
EXPECT_END_MARKER = "<!-- bench-default-expect:end -->"
CALIBRATE = REPO.parent / "shared" / "calibrate.py"
# score_s of ../shared/calibrate.py on the machines `make run` was measured on (issue 35: the
# 2-core machine of its table, 0.344 s; the 2-core development machine of 28 Nov 2026, 0.188 s).
MEASURED_SCORES: tuple[float, ...] = (0.188, 0.344)
#: Every measured wall time of `make run`'s workflow part (one snakemake call, 2 cores), with the
#: calibration of its machine: the what-to-expect line gives the range of their calibration units
#: (the spread is how far calibrate.py's score_s carries a timing between machines of the class).
#: ``--whole --write-readme`` appends its own run.
MEASURED_RUNS = REPO / "bench" / "measured_runs.csv"
MEASURED_RUN_FIELDS = ("date", "commit", "wall_s", "score_before", "score_after", "how")


@dataclass(frozen=True)
class Group:
    """One target group: a key (for ``--groups`` and log names) and a title for the table."""

    key: str
    title: str


# The fixed run order. Each registry row belongs to exactly one group (see stage_of); "all"
# is last and builds whatever ``rule all`` still needs (nothing but the rule itself when the
# groups cover the registry).
GROUPS: tuple[Group, ...] = (
    Group("chadha_synthetic", "Chadha synthetic (Figs. 2, 6, worst case)"),
    Group("chadha_pate_capc", "Chadha PATE/CaPC (Figs. 3–4, App. E.1–E.2)"),
    Group("chadha_promptpate", "Chadha PromptPATE (App. E.3)"),
    Group("chadha_knn", "Chadha Private-kNN (Fig. 5, App. E.4)"),
    Group("wang2022", "Wang et al. 2022"),
    Group("observational", "label DP, observational audit"),
    Group("malek2021", "label DP, Malek et al. 2021"),
    Group("selfcheck", "auditor self-check"),
    Group("findings", "findings tables + paper comparison"),
    Group("other", "other registry rows"),
    Group("all", "the rest of `all`"),
)
GROUP_BY_KEY = {g.key: g for g in GROUPS}

# Registry papers that are one group each.
_PAPER_GROUPS = {"wang2022": "wang2022", "observational": "observational", "malek2021": "malek2021", "ppaudit": "selfcheck"}
# Chadha et al. 2024: the stage is named in the row's report subcategory.
_CHADHA_STAGES = (
    ("PromptPATE", "chadha_promptpate"),
    ("Private-kNN", "chadha_knn"),
    ("Fig. 2", "chadha_synthetic"),
    ("Fig. 6", "chadha_synthetic"),
    ("Worst-case", "chadha_synthetic"),
)


def stage_of(target: Target, registry: Registry) -> str:
    """The group key of one registry row.

    Rules, in order: a ``group`` row (e.g. ``chadha_promptpate``) belongs where all its
    ``includes`` belong; a findings table (id ending in ``_findings``) or a row of paper
    ``all`` (the paper comparison) is in ``findings``; Chadha rows by the stage their report
    subcategory names (PromptPATE, Private-kNN, Figs. 2 / 6 / worst case = synthetic, else
    PATE/CaPC); the other papers are one group each; anything else is ``other``.

    Args:
        target: a row of ``registry``.
        registry: the figure registry (for the rows a ``group`` row includes).

    Returns:
        A key of :data:`GROUP_BY_KEY`.
    """
    if target.kind == "group" and target.includes:
        stages = {stage_of(registry[i], registry) for i in target.includes}
        if len(stages) == 1:
            return stages.pop()
    if target.id.endswith("_findings") or target.paper == "all":
        return "findings"
    if target.paper == "chadha2024":
        sub = target.subcategory or ""
        for needle, key in _CHADHA_STAGES:
            if needle in sub:
                return key
        return "chadha_pate_capc"
    return _PAPER_GROUPS.get(target.paper, "other")


def target_groups(registry: Registry, only: Sequence[str] | None = None) -> list[tuple[Group, list[str]]]:
    """The non-empty target groups of the registry, in run order.

    Args:
        registry: the figure registry.
        only: group keys to keep (run order is kept, not the order given); ``None``: all.

    Returns:
        ``[(group, [target ids in registry order])]``; the last group is ``all`` (target ``all``)
        unless ``only`` leaves it out.

    Raises:
        ValueError: if ``only`` names a group that does not exist or has no targets.
    """
    members: dict[str, list[str]] = {g.key: [] for g in GROUPS}
    for t in registry.targets:
        members[stage_of(t, registry)].append(t.id)
    members["all"] = ["all"]
    groups = [(g, members[g.key]) for g in GROUPS if members[g.key]]
    if only is not None:
        have = {g.key for g, _ in groups}
        bad = [k for k in only if k not in have]
        if bad:
            raise ValueError(f"unknown or empty group(s) {bad}; groups are {sorted(have)}")
        groups = [(g, ids) for g, ids in groups if g.key in set(only)]
    return groups


def target_rule_count(registry: Registry, ids: Iterable[str]) -> int:
    """How many of ``ids`` are generated target rules (no-op local jobs that ``make run`` does not run).

    ``snakemake chadha_fig2`` runs the target rule ``chadha_fig2`` as one job besides the jobs
    that build its files; ``make run`` (``rule all``) does not. Subtracting these makes the
    groups' job counts add up to the job count of ``make run``.

    Args:
        registry: the figure registry.
        ids: target ids of a group (``all`` is not a registry row and is not counted).

    Returns:
        The number of ids whose row needs a generated target rule.
    """
    return sum(1 for i in ids if i in registry and registry[i].needs_target_rule)


def compress_ids(ids: Sequence[str], min_run: int = 3) -> str:
    """Target ids for the table, runs of consecutive numbers shortened (``a7`` … ``a16``).

    Args:
        ids: target ids in order.
        min_run: shortest run of consecutive numbers with one prefix that is shortened.

    Returns:
        The ids in backticks, separated by spaces.
    """
    parts: list[str] = []
    run: list[tuple[str, int, str]] = []

    def flush() -> None:
        if len(run) >= min_run:
            parts.append(f"`{run[0][2]}` … `{run[-1][2]}`")
        else:
            parts.extend(f"`{r[2]}`" for r in run)
        run.clear()

    for tid in ids:
        m = re.fullmatch(r"(.*?)(\d+)", tid)
        if m and run and run[-1][0] == m[1] and run[-1][1] + 1 == int(m[2]):
            run.append((m[1], int(m[2]), tid))
            continue
        flush()
        if m:
            run.append((m[1], int(m[2]), tid))
        else:
            parts.append(f"`{tid}`")
    flush()
    return " ".join(parts)


_STEPS = re.compile(r"^(\d+) of (\d+) steps \(")
_TOTAL = re.compile(r"^total\s+(\d+)\s*$", re.MULTILINE)


def parse_job_count(output: str) -> int:
    """Number of jobs snakemake ran or would run, from its output.

    Args:
        output: stdout + stderr of ``snakemake`` (a run or a dry-run).

    Returns:
        The ``total`` of the job-stats table (dry-run), else the ``Y`` of the last
        ``X of Y steps`` line (run); 0 when snakemake had nothing to do.

    Raises:
        ValueError: if the output holds neither (snakemake failed before scheduling).
    """
    totals = _TOTAL.findall(output)
    if totals:
        return int(totals[0])
    steps = [int(m[2]) for line in output.splitlines() if (m := _STEPS.match(line.strip()))]
    if steps:
        return steps[-1]
    if "Nothing to be done" in output:
        return 0
    raise ValueError("no job count in the snakemake output (no 'total N' job stats, no 'X of Y steps' line)")


def format_seconds(seconds: float) -> str:
    """``"95 s"`` below 2 minutes, else ``"1685 s ≈ 28.1 min"``."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds:.0f} s ≈ {seconds / 60:.1f} min"


@dataclass
class GroupResult:
    """What one group cost: ``jobs`` run, ``wall_s`` seconds, ``cpu_s`` = user + system seconds of
    the process tree, ``scheduler_cpu_s`` = of which the snakemake process itself (``None``
    where ``/proc`` is not available); ``startup_cpu_s`` = the per-job start-up summed over the
    group's script jobs (:func:`startup_total`; ``None``: not measured), ``script_jobs`` = how
    many jobs that sum covers."""

    key: str
    title: str
    targets: list[str]
    jobs: int
    wall_s: float
    cpu_s: float
    scheduler_cpu_s: float | None = None
    startup_cpu_s: float | None = None
    script_jobs: int = 0


def format_startup(total: float | None, jobs: int) -> tuple[str, str]:
    """The two start-up cells: per job (``"1.23 s"``) and over the jobs (``format_seconds``); ``–`` if unknown."""
    if total is None:
        return "–", "–"
    per_job = f"{total / jobs:.2f} s" if jobs else "–"
    return per_job, format_seconds(total)


def markdown_table(results: Sequence[GroupResult]) -> str:
    """The Markdown table of the groups and their total.

    Args:
        results: one entry per group, in run order.

    Returns:
        The table (header, one row per group, a bold total row), newline-terminated.
    """
    def sched(values: Sequence[float | None]) -> str:
        return "–" if any(v is None for v in values) else format_seconds(sum(values))  # type: ignore[arg-type]

    lines = [
        "| target group | targets | jobs | wall time | CPU time (user + sys) | of which the scheduler "
        "| start-up per job (CPU) | jobs × start-up |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in results:
        per_job, over_jobs = format_startup(r.startup_cpu_s, r.script_jobs)
        lines.append(
            f"| {r.title} | {compress_ids(r.targets)} | {r.jobs} | {format_seconds(r.wall_s)} "
            f"| {format_seconds(r.cpu_s)} | {sched([r.scheduler_cpu_s])} | {per_job} | {over_jobs} |"
        )
    jobs = sum(r.jobs for r in results)
    wall = sum(r.wall_s for r in results)
    cpu = sum(r.cpu_s for r in results)
    known = all(r.startup_cpu_s is not None for r in results)
    per_job, over_jobs = format_startup(sum(r.startup_cpu_s for r in results) if known else None,  # type: ignore[misc]
                                        sum(r.script_jobs for r in results))
    lines.append(
        f"| **total** | | **{jobs}** | **{format_seconds(wall)}** | **{format_seconds(cpu)}** "
        f"| **{sched([r.scheduler_cpu_s for r in results])}** | **{per_job}** | **{over_jobs}** |"
    )
    return "\n".join(lines) + "\n"


def readme_block(results: Sequence[GroupResult], *, when: str, cores: int, configfile: str, load: str,
                 calibration: Calibration | None = None) -> str:
    """The text that goes between the README markers: one provenance line (with the calibration when given) and the table."""
    wall, cpu = sum(r.wall_s for r in results), sum(r.cpu_s for r in results)
    return (
        f"Generated by `make bench-default` (`bench/bench_default.py`) on {when}, {cores} cores, "
        f"`--configfile {configfile}`, load average {load} at the start; each group's time is its "
        f"incremental cost after the groups above it (one fresh directory, groups in this order); "
        f"jobs leave out the no-op target rules, so they add up to the jobs of `make run`; every group is one "
        f"snakemake call, so the total holds {len(results)} workflow parses + DAG builds where `make run` has one "
        f"(≈ 4 s CPU each, in the scheduler column). Start-up: what each job spends in a fresh process before its "
        f"first line of work (interpreter, Snakemake's preamble, the script's imports), timed after the run per rule "
        f"as a fresh `python -c` of those imports on the idle machine; per job = mean over the group's jobs, "
        f"jobs × start-up = its part of the CPU column when every job is a fresh process (`PPAUDIT_FORK_JOBS=0`; "
        f"with the job server, the default of a local run, the jobs fork past most of it)."
        f"{calibration_text(calibration, wall, cpu)}\n\n"
        + markdown_table(results)
    )


def whole_block(wall: float, cpu: float, sched: float | None, jobs: int, *, when: str, cores: int, configfile: str, load: str,
                startup_cpu: float | None = None, script_jobs: int = 0, calibration: Calibration | None = None) -> str:
    """The README line of a ``--whole`` run (one snakemake call, as ``make run``), with its calibration when given."""
    sched_text = "–" if sched is None else format_seconds(sched)
    startup = ""
    if startup_cpu is not None and script_jobs:
        startup = (f" Per-job start-up in a fresh process (interpreter + Snakemake preamble + the script's imports; "
                   f"what a job pays with `PPAUDIT_FORK_JOBS=0`, while the job server's jobs fork past most of it): "
                   f"{startup_cpu / script_jobs:.2f} s CPU per job, {script_jobs} jobs × start-up = "
                   f"{format_seconds(startup_cpu)} ({100 * startup_cpu / cpu:.0f} % of the CPU time).")
    return (
        f"Whole run, one `make run`-equivalent snakemake call (`make bench-default BENCH_ARGS=--whole`) on {when}, "
        f"{cores} cores, `--configfile {configfile}`, load average {load} at the start: **{format_seconds(wall)} wall**, "
        f"{jobs} jobs, CPU {format_seconds(cpu)} (user + sys of the process tree), of which the scheduler {sched_text}."
        f"{startup}{calibration_text(calibration, wall, cpu)}\n"
    )


@dataclass(frozen=True)
class Calibration:
    """``score_s`` of ``calibrate.py`` right before and right after the run, and the 1-min load average at each."""

    before: float
    after: float
    load_before: float
    load_after: float

    @property
    def score(self) -> float:
        """The mean of the two scores: the machine's speed over the run."""
        return (self.before + self.after) / 2

    def units(self, seconds: float) -> float:
        """``seconds`` in calibration units (seconds / score_s)."""
        return seconds / self.score


def run_calibration(script: Path = CALIBRATE, *, python: str = sys.executable) -> dict | None:
    """Run ``calibrate.py --json`` with ``python``; ``None`` (and a message saying so) when the script is absent.

    Raises:
        RuntimeError: if the script fails or prints no ``score_s``.
    """
    if not script.is_file():
        print(f"  calibration: {script} not found (../shared/calibrate.py beside the checkout); timings stay uncalibrated",
              flush=True)
        return None
    proc = subprocess.run([python, str(script), "--json"], capture_output=True, text=True, check=False)
    try:
        out = json.loads(proc.stdout.strip().splitlines()[-1])
        float(out["score_s"])
    except (IndexError, ValueError, KeyError, TypeError) as exc:
        raise RuntimeError(f"{script} failed (exit {proc.returncode}): {proc.stdout[-500:]}{proc.stderr[-2000:]}") from exc
    print("  calibration: " + " ".join(f"{k}={v}" for k, v in out.items()), flush=True)
    return out


def calibration_of(before: dict | None, after: dict | None) -> Calibration | None:
    """The :class:`Calibration` of two ``calibrate.py`` outputs (``None`` if either is missing)."""
    if before is None or after is None:
        return None
    return Calibration(float(before["score_s"]), float(after["score_s"]),
                       float(before.get("load_avg_1m", float("nan"))), float(after.get("load_avg_1m", float("nan"))))


def calibration_text(cal: Calibration | None, wall: float, cpu: float) -> str:
    """The sentence that puts a run's wall and CPU time in calibration units ("" without calibration)."""
    if cal is None:
        return ""
    spread = abs(cal.after - cal.before) / min(cal.before, cal.after)
    warn = (f" The two scores differ by {100 * spread:.0f} %: the machine's load changed during the run, so the "
            f"calibrated figures are rough." if spread > 0.15 else "")
    return (f" Calibration (`../shared/calibrate.py`, lower = faster machine): score_s {cal.before:.3f} before / "
            f"{cal.after:.3f} after the run (load average {cal.load_before:.1f} / {cal.load_after:.1f}), so wall "
            f"{cal.units(wall):.0f} and CPU {cal.units(cpu):.0f} calibration units (time / score_s {cal.score:.3f}); "
            f"on a machine of score s expect wall ≈ {cal.units(wall):.0f} × s seconds.{warn}")


@dataclass(frozen=True)
class MeasuredRun:
    """One measured wall time of `make run`'s workflow part and its machine's calibration (a row of :data:`MEASURED_RUNS`)."""

    date: str
    commit: str
    wall_s: float
    score_before: float
    score_after: float
    how: str

    @property
    def units(self) -> float:
        """Wall time in calibration units (seconds / the mean of the two scores)."""
        return Calibration(self.score_before, self.score_after, float("nan"), float("nan")).units(self.wall_s)


def read_measured_runs(path: Path | None = None) -> list[MeasuredRun]:
    """The rows of a measured-runs CSV (default :data:`MEASURED_RUNS`; columns :data:`MEASURED_RUN_FIELDS`); ``[]`` when the file is absent.

    Raises:
        ValueError: a missing column, or a row whose wall time or scores are not positive numbers (named by line).
    """
    import csv

    path = MEASURED_RUNS if path is None else path
    if not path.is_file():
        return []
    with path.open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        missing = [c for c in MEASURED_RUN_FIELDS if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{path}: missing column(s) {missing}; expected {list(MEASURED_RUN_FIELDS)}")
        runs = []
        for line, row in enumerate(reader, start=2):
            try:
                nums = [float(row[k]) for k in ("wall_s", "score_before", "score_after")]
            except (TypeError, ValueError):
                nums = []
            if len(nums) != 3 or not all(x > 0 for x in nums):
                raise ValueError(f"{path}, line {line}: wall_s, score_before and score_after must be positive numbers, "
                                 f"got {[row.get(k) for k in ('wall_s', 'score_before', 'score_after')]}")
            runs.append(MeasuredRun(row["date"], row["commit"], *nums, row["how"]))
    return runs


def append_measured_run(run: MeasuredRun, path: Path | None = None) -> None:
    """Append ``run`` to the measured-runs CSV (default :data:`MEASURED_RUNS`; the header first when the file is new)."""
    import csv

    path = MEASURED_RUNS if path is None else path
    new = not path.is_file()
    with path.open("a", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        if new:
            w.writerow(MEASURED_RUN_FIELDS)
        w.writerow([run.date, run.commit, f"{run.wall_s:.0f}", f"{run.score_before:.3f}", f"{run.score_after:.3f}", run.how])


def expect_line(wall: float, cal: Calibration, scores: Sequence[float] = MEASURED_SCORES, *, when: str = "",
                history: Sequence[MeasuredRun] = (), commit: str = "") -> str:
    """The README's "what to expect" line: the calibrated wall time scaled to each measured machine.

    Without ``history`` the run's calibration units are scaled to every score. With it (the earlier
    runs of :data:`MEASURED_RUNS`), the line gives the *range* of calibration units over this run and
    those: calibrate.py's score_s carries a timing between machines of the class only to within that
    spread (issue 35: one machine rated itself faster and ran the same commit 1.2–1.5× slower), so a
    reader gets the range, slowest machine included, not one run's figure.

    Args:
        wall: wall seconds of the whole run (one snakemake call, as ``make run``).
        cal: the run's calibration.
        scores: ``score_s`` of the machines measured; the run's own score (and the history's) is added.
        when: the date of the run, for the provenance.
        history: earlier measured runs.
        commit: the run's commit (listed with the history's).

    Returns:
        One Markdown paragraph (newline-terminated).

    Raises:
        ValueError: if a score is not positive.
    """
    all_scores = sorted({round(float(x), 3) for x in scores} | {round(cal.score, 3)}
                        | {round((r.score_before + r.score_after) / 2, 3) for r in history})
    bad = [x for x in all_scores if not x > 0]
    if bad:
        raise ValueError(f"machine scores must be > 0, got {bad}")
    units = cal.units(wall)
    ulo, uhi = min([units, *(r.units for r in history)]), max([units, *(r.units for r in history)])
    lo, hi = ulo * all_scores[0] / 60, uhi * all_scores[-1] / 60
    if not history:
        bench = f"`make bench-default BENCH_ARGS=\"--whole --write-readme\"`{' on ' + when if when else ''}"
        each = ", ".join(f"{units * x / 60:.1f} min at score_s {x:.3f}" for x in all_scores)
        return (f"What to expect: the workflow part of `make run` (Snakemake, 2 cores, nothing else running) takes "
                f"**{lo:.0f}–{hi:.0f} min** on the machines it was measured on ({each}; {bench}: {units:.0f} calibration units of wall "
                f"time). Your machine's figure: `.venv/bin/python ../shared/calibrate.py` prints score_s; "
                f"expect ≈ {units:.0f} × score_s seconds, plus the install on a fresh clone.\n")
    each = (f"{ulo * all_scores[0] / 60:.1f}–{uhi * all_scores[0] / 60:.1f} min at score_s {all_scores[0]:.3f}, the fastest "
            f"machine measured; {ulo * all_scores[-1] / 60:.1f}–{uhi * all_scores[-1] / 60:.1f} min at score_s "
            f"{all_scores[-1]:.3f}, the slowest")
    commits = sorted({r.commit for r in history} | ({commit} if commit else set()))
    newest = f"{when}, " if when else ""
    return (f"What to expect: the workflow part of `make run` (Snakemake, 2 cores, nothing else running) takes "
            f"**{lo:.0f}–{hi:.0f} min** on the machines it was measured on ({each}). That is the range of "
            f"**{ulo:.0f}–{uhi:.0f} calibration units** of wall time (seconds / score_s) over the {len(history) + 1} measured runs "
            f"of `bench/measured_runs.csv` (commits {', '.join(commits)}; the newest: {newest}{units:.0f} units). "
            f"Machines of the class with the same score_s differ by that spread, so read the range, not one end. "
            f"Your machine's figure: `.venv/bin/python ../shared/calibrate.py` prints score_s; "
            f"expect {ulo:.0f}–{uhi:.0f} × score_s seconds, plus the install on a fresh clone. (Written by "
            f"`make bench-default BENCH_ARGS=\"--whole --write-readme\"`, which adds its run to the record, or from the "
            f"record alone with `BENCH_ARGS=\"--expect-only --write-readme\"`.)\n")


_JOB_RULE = re.compile(r"^(?:local)?rule (\w+):\s*$", re.MULTILINE)


def jobs_per_rule(output: str) -> dict[str, int]:
    """Jobs per rule that a snakemake run started, from its output (one ``rule X:`` / ``localrule X:`` block per job).

    Args:
        output: stdout + stderr of ``snakemake`` (a run).

    Returns:
        ``{rule: jobs}`` in order of first appearance (target rules and ``all`` included).
    """
    counts: dict[str, int] = {}
    for name in _JOB_RULE.findall(output):
        counts[name] = counts.get(name, 0) + 1
    return counts


def startup_code(rule: str, scripts: Path = SCRIPTS) -> str | None:
    """What a job of ``rule`` runs before its first line of work: the preamble's imports + the script's imports.

    Returns:
        Python source, or ``None`` when ``rule`` has no script ``workflow/scripts/<rule>.py``
        (target rules, ``all``: no process of their own).
    """
    path = scripts / f"{rule}.py"
    if not path.is_file():
        return None
    return PREAMBLE + script_imports(path) + "\n"


def measure_startup(code: str, *, python: str = sys.executable, repeat: int = 3, env: dict[str, str] | None = None) -> tuple[float, float]:
    """Median wall and CPU (user + sys) seconds of ``python -c code`` in a fresh process, ``repeat`` runs.

    The process runs in ``workflow/scripts`` with that folder on ``PYTHONPATH`` (Snakemake puts
    it on ``sys.path`` of every script, for ``import _ppaudit_path``) and the thread variables
    that Snakemake sets for a one-thread job (``OMP_NUM_THREADS=1``, ``OPENBLAS_NUM_THREADS=1``, …;
    most rules have ``threads: 1``; without them the BLAS thread pools started at import cost
    ~0.2 s more CPU per process than a job pays).

    Raises:
        RuntimeError: if the imports fail.
    """
    if env is None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(SCRIPTS), env.get("PYTHONPATH", "")) if p)
        for var in THREAD_VARIABLES:  # as snakemake.shell sets them for threads: 1
            env[var] = "1"
    walls, cpus = [], []
    for _ in range(max(1, repeat)):
        cpu0, t0 = _cpu_children(), time.monotonic()
        proc = subprocess.run([python, "-c", code], cwd=SCRIPTS, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True, check=False)
        walls.append(time.monotonic() - t0)
        cpus.append(_cpu_children() - cpu0)
        if proc.returncode != 0:
            raise RuntimeError(f"start-up probe failed (exit {proc.returncode}):\n{code}\n{proc.stderr[-2000:]}")
    return statistics.median(walls), statistics.median(cpus)


def startup_costs(rules: Iterable[str], *, python: str = sys.executable, repeat: int = 3) -> dict[str, tuple[float, float]]:
    """``{rule: (wall, CPU seconds of one job's start-up)}`` for the rules that have a script (same imports timed once)."""
    by_code: dict[str, tuple[float, float]] = {}
    out: dict[str, tuple[float, float]] = {}
    for rule in rules:
        code = startup_code(rule)
        if code is None:
            continue
        if code not in by_code:
            by_code[code] = measure_startup(code, python=python, repeat=repeat)
        out[rule] = by_code[code]
    return out


def startup_total(per_rule_jobs: dict[str, int], costs: dict[str, tuple[float, float]]) -> tuple[float, int]:
    """CPU seconds of start-up summed over the jobs, and how many jobs (rules without a script count none)."""
    total, jobs = 0.0, 0
    for rule, n in per_rule_jobs.items():
        if rule in costs:
            total += n * costs[rule][1]
            jobs += n
    return total, jobs


def splice_readme(text: str, block: str, begin: str = BEGIN_MARKER, end: str = END_MARKER) -> str:
    """Replace what lies between the bench-default markers of the README by ``block``.

    Args:
        text: the README.
        block: the new content (the markers are kept; surrounding prose is untouched).
        begin, end: the markers (default: the per-group table's).

    Returns:
        The new README text.

    Raises:
        ValueError: if a marker is missing, appears more than once, or the end marker comes
            before the begin marker.
    """
    n_begin, n_end = text.count(begin), text.count(end)
    if n_begin != 1 or n_end != 1:
        raise ValueError(
            f"README must hold each marker exactly once: {begin!r} ×{n_begin}, {end!r} ×{n_end}"
        )
    head, rest = text.split(begin)
    if end not in rest:
        raise ValueError(f"{end!r} comes before {begin!r} in the README")
    _, tail = rest.split(end)
    return f"{head}{begin}\n{block.strip()}\n{end}{tail}"


def snakemake_command(
    targets: Iterable[str], *, directory: Path, configfile: Path, cores: str, dry_run: bool = False
) -> list[str]:
    """The ``snakemake`` call of ``make run`` for ``targets``, into ``directory``."""
    beside = Path(sys.executable).with_name("snakemake")  # the venv's snakemake, as `make run`
    cmd = [
        str(beside) if beside.exists() else "snakemake",
        "--snakefile", str(REPO / "Snakefile"),
        "--profile", PROFILE,
        "--cores", str(cores),
        "--configfile", str(configfile),
        "--directory", str(directory),
    ]
    if dry_run:
        cmd.append("-n")
    return cmd + list(targets)


def _cpu_children() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def _own_cpu(pid: int) -> float | None:
    """User + system seconds of process ``pid`` itself (not its children), from ``/proc``."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class _OwnCpuSampler(threading.Thread):
    """Samples the snakemake process's own CPU time twice a second until it exits."""

    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.pid, self.last, self.done = pid, None, threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            value = _own_cpu(self.pid)
            if value is not None:
                self.last = value
            self.done.wait(0.5)


def run_group(cmd: Sequence[str], log_path: Path, label: str) -> tuple[float, float, float | None, int, dict[str, int]]:
    """Run one snakemake call, its output to ``log_path``, progress to stdout.

    Returns:
        ``(wall seconds, CPU seconds of the process tree, CPU seconds of the snakemake process
        itself — the scheduler, last sampled ≤ 0.5 s before it exits, ``None`` without /proc —,
        jobs, jobs per rule (:func:`jobs_per_rule`))``.

    Raises:
        RuntimeError: if snakemake fails (the tail of its log is in the message).
    """
    cpu0, t0 = _cpu_children(), time.monotonic()
    lines: list[str] = []
    with open(log_path, "w", encoding="utf-8") as log:
        log.write("$ " + shlex.join(cmd) + "\n")
        log.flush()
        proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
        assert proc.stdout is not None
        sampler = _OwnCpuSampler(proc.pid)
        sampler.start()
        for line in proc.stdout:
            log.write(line)
            lines.append(line)
            m = _STEPS.match(line.strip())
            if m:
                print(f"    {label}: {m[1]}/{m[2]} jobs, {time.monotonic() - t0:.0f} s", flush=True)
        rc = proc.wait()
        sampler.done.set()
        sampler.join()
    wall, cpu = time.monotonic() - t0, _cpu_children() - cpu0
    output = "".join(lines)
    if rc != 0:
        tail = "".join(lines[-30:])
        raise RuntimeError(f"snakemake failed (exit {rc}) in group {label}; log {log_path}; last lines:\n{tail}")
    return wall, cpu, sampler.last, parse_job_count(output), jobs_per_rule(output)


def dry_run(groups: Sequence[tuple[Group, list[str]]], directory: Path, configfile: Path, cores: str) -> list[int]:
    """Incremental job counts of the groups: ``snakemake -n`` on cumulative target lists."""
    counts, previous, cumulative = [], 0, []
    for group, ids in groups:
        cumulative += ids
        proc = subprocess.run(
            snakemake_command(cumulative, directory=directory, configfile=configfile, cores=cores, dry_run=True),
            cwd=REPO, capture_output=True, text=True, check=False,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"snakemake -n failed for group {group.key}:\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}")
        total = parse_job_count(proc.stdout + proc.stderr)
        counts.append(total - previous)
        previous = total
    return counts


def startup_table(per_rule: dict[str, int], costs: dict[str, tuple[float, float]]) -> str:
    """Markdown table of the start-up per rule (largest sum over the jobs first), for the console."""
    rows = sorted(((r, n, costs[r]) for r, n in per_rule.items() if r in costs), key=lambda x: -x[1] * x[2][1])
    lines = ["| rule | jobs | start-up per job: wall | CPU | jobs × start-up (CPU) |", "| --- | ---: | ---: | ---: | ---: |"]
    lines += [f"| {r} | {n} | {w:.2f} s | {c:.2f} s | {n * c:.1f} s |" for r, n, (w, c) in rows]
    total, jobs = startup_total(per_rule, costs)
    lines.append(f"| **all script jobs** | **{jobs}** | | **{total / jobs if jobs else 0:.2f} s** | **{total:.0f} s** |")
    return "\n".join(lines) + "\n"


def _startup_costs_verbose(per_rule: dict[str, int], repeats: int) -> dict[str, tuple[float, float]] | None:
    """:func:`startup_costs` of the rules that ran, with a progress line; ``None`` when ``repeats`` is 0."""
    if repeats <= 0:
        return None
    scripted = sum(1 for r in per_rule if startup_code(r) is not None)
    print(f"  start-up per job: timing the imports of {scripted} rules, {repeats} runs each (median) ...", flush=True)
    t0 = time.monotonic()
    costs = startup_costs(per_rule, repeat=repeats)
    print(f"    done in {time.monotonic() - t0:.0f} s\n\n" + startup_table(per_rule, costs), flush=True)
    return costs


def _git_commit() -> str:
    """The checkout's short commit (``+`` when the tree has changes), or ``unknown`` outside git."""
    try:
        head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True,
                               check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+" if dirty else "")


def _fresh_directory(path: str | None) -> Path:
    if path is None:
        return Path(tempfile.mkdtemp(prefix="ppaudit-bench-default-"))
    p = Path(path).resolve()
    if p.exists() and any(p.iterdir()):
        raise ValueError(f"--directory must be a fresh (empty or new) directory, got {p} (not empty)")
    p.mkdir(parents=True, exist_ok=True)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--configfile", default=str(REPO / "config" / "config.yaml"), help="config (default: the embedded config/config.yaml)")
    parser.add_argument("--cores", default="all", help="snakemake --cores (default: all, as `make run`)")
    parser.add_argument("--groups", default=None, help=f"comma-separated group keys to run (default: all); keys: {', '.join(GROUP_BY_KEY)}")
    parser.add_argument("--directory", default=None, help="fresh work directory (default: a new one under $TMPDIR)")
    parser.add_argument("--log-dir", default=None, help="where each group's snakemake log goes (default: <directory>/bench-default-logs)")
    parser.add_argument("--dry-run", action="store_true", help="print the groups and their incremental job counts (snakemake -n); run nothing")
    parser.add_argument("--write-readme", action="store_true", help=f"splice the table into {README.name} between the bench-default markers")
    parser.add_argument("--whole", action="store_true", help="time one snakemake call for every target (as `make run`) instead of the groups")
    parser.add_argument("--startup-repeats", type=int, default=3,
                        help="after the run, time each rule's per-job start-up this many times (median); 0: skip (default 3)")
    parser.add_argument("--calibrate", default=str(CALIBRATE),
                        help="calibrate.py run right before and after the run (default: ../shared/calibrate.py beside the checkout)")
    parser.add_argument("--expect-scores", default=",".join(f"{x:g}" for x in MEASURED_SCORES),
                        help="comma-separated score_s of the machines measured, for the README's what-to-expect line "
                             f"(default {','.join(f'{x:g}' for x in MEASURED_SCORES)})")
    parser.add_argument("--expect-only", action="store_true",
                        help=f"run nothing: print the what-to-expect line from {MEASURED_RUNS.name} alone (its newest row as the run, "
                             "the others as the history); with --write-readme, splice it into the README")
    args = parser.parse_args(argv)
    try:
        expect_scores = [float(x) for x in args.expect_scores.split(",") if x.strip()]
    except ValueError:
        raise ValueError(f"--expect-scores must be comma-separated numbers, got {args.expect_scores!r}") from None
    if not expect_scores or any(not x > 0 for x in expect_scores):
        raise ValueError(f"--expect-scores must be positive numbers, got {args.expect_scores!r}")

    if args.expect_only:
        runs = read_measured_runs()
        if not runs:
            raise ValueError(f"--expect-only needs measured runs in {MEASURED_RUNS}; there are none")
        last = runs[-1]
        expect = expect_line(last.wall_s, Calibration(last.score_before, last.score_after, float("nan"), float("nan")), expect_scores,
                             when=f"{last.date}, {last.how}", history=runs[:-1], commit=last.commit)
        print(expect)
        if args.write_readme:
            README.write_text(splice_readme(README.read_text(encoding="utf-8"), expect, EXPECT_BEGIN_MARKER, EXPECT_END_MARKER),
                              encoding="utf-8")
            print(f"wrote the what-to-expect line into {README}")
        return 0
    commit = _git_commit()  # before the run: --write-readme changes the tree
    configfile = Path(args.configfile).resolve()
    if not configfile.is_file():
        raise ValueError(f"--configfile {args.configfile} does not exist")
    only = [k.strip() for k in args.groups.split(",") if k.strip()] if args.groups else None
    if args.whole and (only is not None or args.dry_run):
        raise ValueError("--whole runs every target in one call: it takes neither --groups nor --dry-run")
    if args.write_readme and only is not None:
        raise ValueError(f"--write-readme needs every group (the README table is the whole run), got --groups {args.groups}")
    registry = load_registry(REGISTRY_FILE)
    groups = target_groups(registry, only)
    directory = _fresh_directory(args.directory)
    cores = os.cpu_count() if args.cores == "all" else int(args.cores)
    try:
        config_label = str(configfile.relative_to(REPO))
    except ValueError:
        config_label = str(configfile)

    if args.whole:
        print(f"bench-default --whole: every target in one call, --cores {args.cores} ({cores}), --configfile {config_label}")
        print(f"  fresh directory: {directory}")
    else:
        print(f"bench-default: {len(groups)} groups, --cores {args.cores} ({cores}), --configfile {config_label}")
        print(f"  fresh directory: {directory}")
    if not args.whole:
        print("  each group's time is its incremental cost after the groups before it (one directory, fixed order);")
        print("  job counts leave out the no-op target rules (one per target), so they add up to `make run`'s;")
        print("  each group is one snakemake call (one workflow parse + DAG build, ≈ 4 s CPU, more than `make run`'s one)")
    if args.dry_run:
        raw = dry_run(groups, directory, configfile, args.cores)
        counts = [n - target_rule_count(registry, ids) for (_, ids), n in zip(groups, raw)]
        print("\n| group | key | targets | jobs (incremental, snakemake -n) |\n| --- | --- | --- | ---: |")
        for (g, ids), n in zip(groups, counts):
            print(f"| {g.title} | `{g.key}` | {compress_ids(ids)} | {n} |")
        print(f"| **total** | | | **{sum(counts)}** |")
        return 0

    log_dir = Path(args.log_dir).resolve() if args.log_dir else directory / "bench-default-logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    load = "{:.1f} / {:.1f} / {:.1f}".format(*os.getloadavg())
    when = _dt.datetime.now().strftime("%d %b %Y %H:%M")
    calibrate = Path(args.calibrate)
    cal_before = run_calibration(calibrate)
    if args.whole:
        log_path = log_dir / "whole.log"
        print(f"[whole] every target in one snakemake call (rule all), log {log_path}", flush=True)
        cmd = snakemake_command([], directory=directory, configfile=configfile, cores=args.cores)
        wall, cpu, sched_cpu, jobs, per_rule = run_group(cmd, log_path, "whole")
        jobs -= 1  # the no-op `all` job (rule all runs no target rule)
        cal = calibration_of(cal_before, run_calibration(calibrate) if cal_before is not None else None)
        costs = _startup_costs_verbose(per_rule, args.startup_repeats)
        startup_cpu, script_jobs = startup_total(per_rule, costs) if costs is not None else (None, 0)
        (log_dir / "bench_default_whole.json").write_text(
            json.dumps({"when": when, "cores": cores, "configfile": config_label, "load_at_start": load, "directory": str(directory),
                        "wall_s": wall, "cpu_s": cpu, "scheduler_cpu_s": sched_cpu, "jobs": jobs,
                        "jobs_per_rule": per_rule, "startup_per_rule_wall_cpu_s": costs,
                        "startup_cpu_s": startup_cpu, "script_jobs": script_jobs,
                        "calibration": None if cal is None else asdict(cal)}, indent=2) + "\n",
            encoding="utf-8",
        )
        block = whole_block(wall, cpu, sched_cpu, jobs, when=when, cores=cores, configfile=config_label, load=load,
                            startup_cpu=startup_cpu, script_jobs=script_jobs, calibration=cal)
        print("\n" + block)
        history = read_measured_runs()
        expect = expect_line(wall, cal, expect_scores, when=when, history=history, commit=commit) if cal is not None else None
        if expect is not None:
            print(expect)
        if args.write_readme:
            text = splice_readme(README.read_text(encoding="utf-8"), block, WHOLE_BEGIN_MARKER, WHOLE_END_MARKER)
            if expect is not None:
                text = splice_readme(text, expect, EXPECT_BEGIN_MARKER, EXPECT_END_MARKER)
            README.write_text(text, encoding="utf-8")
            if cal is not None:
                append_measured_run(MeasuredRun(_dt.date.today().isoformat(), commit, wall, cal.before, cal.after,
                                                "bench-default --whole"))
            print(f"wrote the whole-run line{' and the what-to-expect line' if expect else ''} into {README}"
                  f"{' and the run into ' + str(MEASURED_RUNS) if cal is not None else ''}")
        return 0
    results: list[GroupResult] = []
    group_rules: list[dict[str, int]] = []
    for i, (group, ids) in enumerate(groups, start=1):
        log_path = log_dir / f"{i:02d}_{group.key}.log"
        print(f"[{i}/{len(groups)}] {group.title}: {len(ids)} target{'s' if len(ids) != 1 else ''}, log {log_path}", flush=True)
        cmd = snakemake_command(ids, directory=directory, configfile=configfile, cores=args.cores)
        wall, cpu, sched_cpu, jobs, per_rule = run_group(cmd, log_path, group.key)
        jobs -= target_rule_count(registry, ids)
        results.append(GroupResult(group.key, group.title, ids, jobs, wall, cpu, sched_cpu))
        group_rules.append(per_rule)
        print(f"    done: {jobs} jobs, wall {format_seconds(wall)}, CPU {format_seconds(cpu)}", flush=True)
    cal = calibration_of(cal_before, run_calibration(calibrate) if cal_before is not None else None)
    all_rules: dict[str, int] = {}
    for per_rule in group_rules:
        for rule, n in per_rule.items():
            all_rules[rule] = all_rules.get(rule, 0) + n
    costs = _startup_costs_verbose(all_rules, args.startup_repeats)
    if costs is not None:
        for r, per_rule in zip(results, group_rules):
            r.startup_cpu_s, r.script_jobs = startup_total(per_rule, costs)

    table = markdown_table(results)
    (log_dir / "bench_default.json").write_text(
        json.dumps({"when": when, "cores": cores, "configfile": config_label, "load_at_start": load,
                    "directory": str(directory), "groups": [asdict(r) for r in results],
                    "jobs_per_rule": group_rules, "startup_per_rule_wall_cpu_s": costs,
                    "calibration": None if cal is None else asdict(cal)}, indent=2) + "\n",
        encoding="utf-8",
    )
    print(f"\nWall and CPU time per target group (incremental; load average at start {load}):\n")
    print(table)
    print(calibration_text(cal, sum(r.wall_s for r in results), sum(r.cpu_s for r in results)).strip())
    if args.write_readme:
        block = readme_block(results, when=when, cores=cores, configfile=config_label, load=load, calibration=cal)
        README.write_text(splice_readme(README.read_text(encoding="utf-8"), block), encoding="utf-8")
        print(f"wrote the table into {README}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
