"""bench/replay_schedule.py (issue 30 §1): parsing a snakemake run log and replaying it on N cores."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
_spec = importlib.util.spec_from_file_location("replay_schedule", REPO / "bench" / "replay_schedule.py")
rs = importlib.util.module_from_spec(_spec)
sys.modules["replay_schedule"] = rs  # dataclasses look the module up by name
_spec.loader.exec_module(rs)

# Three jobs as snakemake prints them: prep (2 threads, 0 → 10 s) writes a folder that
# train reads below (10 → 40 s); tab runs beside nothing (40 → 45 s) and reads a file of train.
LOG = """[Thu Nov 26 20:00:00 2026]
localrule prep:
    output: results/prep
    log: logs/prep.log
    jobid: 3
    benchmark: benchmarks/prep.tsv
    threads: 2
Shell command: None
[Thu Nov 26 20:00:10 2026]
Finished jobid: 3 (Rule: prep)
[Thu Nov 26 20:00:10 2026]
localrule train:
    input: results/prep/x.npy, data/raw.csv
    output: results/model.npz
    jobid: 2
Shell command: None
[Thu Nov 26 20:00:40 2026]
Finished jobid: 2 (Rule: train)
[Thu Nov 26 20:00:40 2026]
localrule tab:
    input: results/model.npz
    output: results/tab.csv
    jobid: 1
[Thu Nov 26 20:00:45 2026]
Finished jobid: 1 (Rule: tab)
"""


def test_parse_log_and_dependencies():
    jobs = rs.parse_log(LOG)
    assert sorted(jobs) == [1, 2, 3]
    prep, train, tab = jobs[3], jobs[2], jobs[1]
    assert (prep.rule, prep.threads, prep.start, prep.end, prep.benchmark) == ("prep", 2, 0.0, 10.0, "benchmarks/prep.tsv")
    assert (train.threads, train.seconds, tab.seconds) == (1, 30.0, 5.0)
    assert rs.dependencies(jobs) == {3: set(), 2: {3}, 1: {2}}  # a file below a directory output depends on it


def test_replay_reproduces_the_log_and_packs_one_thread_jobs():
    jobs = rs.parse_log(LOG)
    deps = rs.dependencies(jobs)
    seconds = {j: job.seconds for j, job in jobs.items()}
    threads = {j: job.threads for j, job in jobs.items()}
    assert rs.replay(jobs, deps, seconds, threads, cores=2) == pytest.approx(45.0)
    # without the dependencies, prep on one thread lets train start beside it
    free = {j: set() for j in jobs}
    assert rs.replay(jobs, free, seconds, {j: 1 for j in jobs}, cores=2) == pytest.approx(30.0)
    assert rs.replay(jobs, free, seconds, threads, cores=2) == pytest.approx(40.0)  # prep holds both cores first


def test_main_prints_both_makespans(tmp_path, capsys):
    log = tmp_path / "whole.log"
    log.write_text(LOG)
    rs.main([str(log), "--threads1", "prep", "--cpu", "prep=16", "--speed", "train=2"])
    out = capsys.readouterr().out
    assert "replayed as it ran: 45 s" in out
    assert "prep (10 s on 2 → 16 s on 1)" in out
    assert "replayed scenario: 36 s" in out  # 16 + 30 / 2 + 5


def test_one_thread_default_is_the_wall_times_threads_ceiling_not_an_undercounted_tsv(tmp_path, capsys):
    """Snakemake's benchmark ``cpu_time`` can miss most of a job's CPU (issue 35): below the wall ×
    threads ceiling it is not used; above it (a job that used more cores than it declared) it is."""
    log = tmp_path / "whole.log"
    log.write_text(LOG)
    bench = tmp_path / "benchmarks"
    bench.mkdir()
    head = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
    (bench / "prep.tsv").write_text(head + "10.0\t0:00:10\t1\t1\t1\t1\t0\t0\t40\t8.0\n")
    rs.main([str(log), "--benchmarks", str(bench), "--threads1", "prep"])
    assert "prep (10 s on 2 → 20 s on 1)" in capsys.readouterr().out  # max(8, 10 × 2)
    (bench / "prep.tsv").write_text(head + "10.0\t0:00:10\t1\t1\t1\t1\t0\t0\t240\t24.0\n")
    rs.main([str(log), "--benchmarks", str(bench), "--threads1", "prep"])
    assert "prep (10 s on 2 → 24 s on 1)" in capsys.readouterr().out


def test_priority_and_scale():
    """Issue 35: ``priority`` (Snakemake's ``priority:``) reorders the ready jobs; ``--scale`` divides every duration."""
    jobs = rs.parse_log(LOG)
    free = {j: set() for j in jobs}
    seconds = {j: job.seconds for j, job in jobs.items()}
    ones = {j: 1 for j in jobs}
    # real order prep (10 s) + train (30 s) on the two cores, tab (5 s) after prep: 30 s
    assert rs.replay(jobs, free, seconds, ones, cores=2) == pytest.approx(30.0)
    # tab first: tab + prep at 0, train starts when tab ends at 5: 35 s
    assert rs.replay(jobs, free, seconds, ones, cores=2, priority={"tab": 10}) == pytest.approx(35.0)


def test_main_scale_and_priority(tmp_path, capsys):
    log = tmp_path / "whole.log"
    log.write_text(LOG)
    rs.main([str(log), "--scale", "0.5", "--priority", "tab=3"])
    out = capsys.readouterr().out
    assert "replayed as it ran (durations ÷0.5): 90 s" in out and "priorities: tab=3" in out
    assert "replayed scenario: 90 s" in out  # the chain prep → train → tab cannot reorder
    with pytest.raises(ValueError, match="--scale"):
        rs.main([str(log), "--scale", "0"])
