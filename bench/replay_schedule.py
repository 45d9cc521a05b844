"""Replay a ``make run`` log on N cores with other ``threads:`` settings: what packing costs (issue 30 §1).

Snakemake prints, per job, its rule, inputs, outputs, ``threads`` and the times it started and
finished. This rebuilds the job DAG from those files (a job depends on the jobs that wrote its
inputs), takes each job's measured duration, and list-schedules the jobs on ``--cores`` cores:
whenever cores are free, the ready jobs start in the order the real run started them (the
tie-break of Snakemake's scheduler, whose objective is only "use the cores") as long as their
threads fit. With the log's own settings the replay lands within seconds of the real run (it
checks that and prints both); ``--threads1 rule,rule`` replays those rules' multi-threaded jobs
on one thread, with their one-thread duration taken as ``--cpu rule=seconds`` (default: the
job's wall time × its threads, all its cores' time done by one — a ceiling; with
``--benchmarks`` the larger of that and the ``cpu_time`` of its ``benchmarks/`` TSV. Snakemake's
``cpu_time`` samples the process tree and can miss most of it — 15.2 s reported for an
``audit_knn`` job whose own ``os.times`` read 38.4 s at 100 % of a core — so it is never the
estimate alone), ``--speed rule=factor`` divides a rule's durations (``--scale``
all of them: ``--scale 0.5`` replays the log as a 2× slower machine would run it, issue 35), and
``--priority rule=N`` starts that rule's ready jobs before the others (Snakemake's
``priority:``; higher first, then the real start order).

Output: the replayed makespan of the log as it ran and of each scenario, and their ratio.

Run (the log of ``make bench-default BENCH_ARGS=--whole``)::

    .venv/bin/python bench/replay_schedule.py RUN_DIR/bench-default-logs/whole.log \\
        --benchmarks RUN_DIR/benchmarks --threads1 convert_llm,extract_features,prompt_teachers
"""

from __future__ import annotations

import argparse
import datetime as dt
import heapq
import re
from dataclasses import dataclass, field
from pathlib import Path

_STAMP = re.compile(r"^\[(\w{3} \w{3} +\d+ [\d:]+ \d{4})\]$")
_RULE = re.compile(r"^(?:local)?rule (\w+):$")
_FIELD = re.compile(r"^\s+(input|output|jobid|threads|benchmark): (.*)$")
_DONE = re.compile(r"^Finished jobid: (\d+)")


@dataclass
class Job:
    """One job of the log."""

    jobid: int
    rule: str
    start: float
    end: float = 0.0
    threads: int = 1
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    benchmark: str | None = None

    @property
    def seconds(self) -> float:
        return max(0.5, self.end - self.start)  # the log has 1-s resolution


def parse_log(text: str) -> dict[int, Job]:
    """The jobs of a snakemake run log (start/finish times in seconds after the first job)."""
    jobs: dict[int, Job] = {}
    stamp: dt.datetime | None = None
    t0: dt.datetime | None = None
    current: dict | None = None
    for line in text.splitlines():
        if m := _STAMP.match(line):
            stamp = dt.datetime.strptime(m[1], "%a %b %d %H:%M:%S %Y")
            t0 = t0 or stamp
            continue
        if m := _RULE.match(line):
            current = {"rule": m[1], "start": (stamp - t0).total_seconds() if stamp and t0 else 0.0}
            continue
        if current is not None and (m := _FIELD.match(line)):
            key, value = m[1], m[2].strip()
            if key == "jobid":
                job = Job(int(value), current["rule"], current["start"], inputs=current.get("input", []),
                          outputs=current.get("output", []))
                jobs[job.jobid] = job
                current["job"] = job
            elif key in ("input", "output"):
                current[key] = [v.strip() for v in value.split(", ")]
            elif "job" in current and key == "threads":
                current["job"].threads = int(value)
            elif "job" in current and key == "benchmark":
                current["job"].benchmark = value
            continue
        if (m := _DONE.match(line)) and stamp and t0 and int(m[1]) in jobs:
            jobs[int(m[1])].end = (stamp - t0).total_seconds()
    return jobs


def dependencies(jobs: dict[int, Job]) -> dict[int, set[int]]:
    """``{job: the jobs that wrote its inputs}`` (a directory output covers the files below it)."""
    writer = {out.rstrip("/"): j.jobid for j in jobs.values() for out in j.outputs}
    deps: dict[int, set[int]] = {j: set() for j in jobs}
    for job in jobs.values():
        for path in job.inputs:
            path = path.rstrip("/")
            if path in writer:
                deps[job.jobid].add(writer[path])
                continue
            parent = Path(path).parent
            while str(parent) not in (".", "/", ""):
                if str(parent) in writer:
                    deps[job.jobid].add(writer[str(parent)])
                    break
                parent = parent.parent
    return deps


def replay(jobs: dict[int, Job], deps: dict[int, set[int]], seconds: dict[int, float], threads: dict[int, int],
           cores: int, priority: dict[str, float] | None = None) -> float:
    """Makespan of a list schedule: ready jobs start in the order of their real start, as cores allow.

    ``priority`` (rule → number, default 0) puts the ready jobs of higher-priority rules first,
    as Snakemake's ``priority:`` does; ties keep the real start order."""
    prio = priority or {}

    def order(k: int) -> tuple[float, float]:
        return (-prio.get(jobs[k].rule, 0.0), jobs[k].start)

    waiting = {j: set(d) for j, d in deps.items()}
    children: dict[int, list[int]] = {j: [] for j in jobs}
    for j, d in deps.items():
        for p in d:
            children[p].append(j)
    ready = sorted((j for j, d in waiting.items() if not d), key=order)
    running: list[tuple[float, int]] = []
    free, now, done = cores, 0.0, 0
    while done < len(jobs):
        started = True
        while started:
            started = False
            for j in ready:
                if min(threads[j], cores) <= free:
                    free -= min(threads[j], cores)
                    heapq.heappush(running, (now + seconds[j], j))
                    ready.remove(j)
                    started = True
                    break
        now, j = heapq.heappop(running)
        finished = [j]
        while running and running[0][0] == now:
            finished.append(heapq.heappop(running)[1])
        for j in finished:
            free += min(threads[j], cores)
            done += 1
            for c in children[j]:
                waiting[c].discard(j)
                if not waiting[c]:
                    ready.append(c)
        ready.sort(key=order)
    return now


def benchmark_cpu(job: Job, root: Path | None) -> float | None:
    """CPU seconds of a job from its benchmark TSV (column ``cpu_time``), if there is one."""
    if root is None or job.benchmark is None:
        return None
    path = root.parent / job.benchmark if not Path(job.benchmark).is_absolute() else Path(job.benchmark)
    if not path.is_file():
        return None
    head, row = path.read_text().splitlines()[:2]
    return float(dict(zip(head.split("\t"), row.split("\t")))["cpu_time"])


def _pairs(text: str) -> dict[str, float]:
    out = {}
    for item in filter(None, (t.strip() for t in text.split(","))):
        key, value = item.split("=")
        out[key] = float(value)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("log", help="snakemake output of the run (bench-default-logs/whole.log)")
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--benchmarks", default=None, help="the run's benchmarks/ folder (cpu_time of --threads1 jobs, taken only above wall x threads: it undercounts)")
    ap.add_argument("--threads1", default="", help="comma-separated rules replayed on one thread")
    ap.add_argument("--cpu", default="", help="rule=seconds: one-thread duration of a --threads1 rule's jobs (overrides the TSV)")
    ap.add_argument("--speed", default="", help="rule=factor: divide the rule's durations (a measured speed-up)")
    ap.add_argument("--scale", type=float, default=1.0, help="divide every duration by this (0.5: a 2x slower machine)")
    ap.add_argument("--priority", default="", help="rule=N: Snakemake priority of the rule's jobs (higher starts first)")
    args = ap.parse_args(argv)
    if not args.scale > 0:
        raise ValueError(f"--scale must be > 0, got {args.scale}")

    jobs = parse_log(Path(args.log).read_text(encoding="utf-8"))
    deps = dependencies(jobs)
    real = max(j.end for j in jobs.values())
    base_seconds = {j: job.seconds / args.scale for j, job in jobs.items()}
    base_threads = {j: job.threads for j, job in jobs.items()}
    as_ran = replay(jobs, deps, base_seconds, base_threads, args.cores)

    root = Path(args.benchmarks).resolve() if args.benchmarks else None
    one = {r for r in args.threads1.split(",") if r}
    cpu, speed, priority = _pairs(args.cpu), _pairs(args.speed), _pairs(args.priority)
    seconds, threads, changed = dict(base_seconds), dict(base_threads), []
    for j, job in jobs.items():
        if job.rule in one and job.threads > 1:
            single = (cpu.get(job.rule) or max(benchmark_cpu(job, root) or 0.0, job.seconds * job.threads)) / args.scale
            changed.append(f"{job.rule} ({base_seconds[j]:.0f} s on {job.threads} → {single:.0f} s on 1)")
            seconds[j], threads[j] = single, 1
        if job.rule in speed:
            seconds[j] /= speed[job.rule]
    scenario = replay(jobs, deps, seconds, threads, args.cores, priority)
    scaled = f" (durations ÷{args.scale:g})" if args.scale != 1.0 else ""
    print(f"{len(jobs)} jobs, {args.cores} cores; the real run ended after {real:.0f} s; replayed as it ran{scaled}: {as_ran:.0f} s")
    if changed:
        print("one thread: " + "; ".join(changed))
    if speed:
        print("speed-ups: " + ", ".join(f"{k} ÷{v:g}" for k, v in speed.items()))
    if priority:
        print("priorities: " + ", ".join(f"{k}={v:g}" for k, v in priority.items()))
    print(f"replayed scenario: {scenario:.0f} s (as ran / scenario = {as_ran / scenario:.2f}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
