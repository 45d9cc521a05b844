"""bench/bench_default.py (issue 16, item 1): the parts that need no snakemake run.

* Grouping of the repository's figure registry: every row in exactly one named group (none
  falls through to ``other``), the papers/stages land where the README says, fixed run order,
  ``all`` last; ``--groups`` filtering and its errors; target-rule counting.
* Grouping rules on small hand-made registries (a ``group`` row follows its includes; an
  unknown paper goes to ``other``).
* Job counts parsed from snakemake's dry-run / run output; the Markdown table and its totals;
  splicing the README between the markers (prose kept, idempotent, bad markers rejected); the
  repository README holds the markers once.
* ``main`` refuses ``--write-readme`` with ``--groups`` and a non-empty ``--directory`` before
  running anything.
* Calibration (issue 35 §1): ``calibrate.py`` run as a subprocess (a stand-in script here, so the
  test costs one interpreter start, ~0.1 s), a missing script skipped with a message, the
  calibration units and the README's what-to-expect line checked against hand-computed numbers.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from ppaudit.workflow import load_registry, parse_registry

REPO = Path(__file__).resolve().parents[3]
_spec = importlib.util.spec_from_file_location("bench_default", REPO / "bench" / "bench_default.py")
bd = importlib.util.module_from_spec(_spec)
sys.modules["bench_default"] = bd  # dataclasses look the module up by name
_spec.loader.exec_module(bd)

REGISTRY = load_registry(REPO / "workflow" / "figures.yaml")


def test_every_registry_row_in_exactly_one_named_group():
    groups = bd.target_groups(REGISTRY)
    ids = [i for _, members in groups for i in members]
    assert sorted(ids) == sorted(REGISTRY.ids() + ["all"])  # each row once, plus `all`
    keys = [g.key for g, _ in groups]
    assert "other" not in keys, "a registry row matched no paper/stage: extend bench_default.stage_of"
    assert keys == [g.key for g in bd.GROUPS if g.key in keys]  # fixed run order
    assert keys[-1] == "all" and groups[-1][1] == ["all"]


@pytest.mark.parametrize(
    ("target", "group"),
    [
        ("chadha_fig2", "chadha_synthetic"),
        ("chadha_fig6", "chadha_synthetic"),
        ("chadha_worstcase", "chadha_synthetic"),
        ("chadha_fig3", "chadha_pate_capc"),
        ("chadha_fig16", "chadha_pate_capc"),
        ("chadha_fig17", "chadha_promptpate"),
        ("chadha_promptpate", "chadha_promptpate"),
        ("chadha_fig5", "chadha_knn"),
        ("chadha_fig31", "chadha_knn"),
        ("wang_fig1", "wang2022"),
        ("wang_defence_caching", "wang2022"),
        ("obs_table1", "observational"),
        ("obs_fig5", "observational"),
        ("malek_table5", "malek2021"),
        ("selfcheck", "selfcheck"),
        ("chadha_findings", "findings"),
        ("wang_findings", "findings"),
        ("labeldp_findings", "findings"),
        ("paper_comparison", "findings"),
    ],
)
def test_stage_of_repository_rows(target, group):
    assert bd.stage_of(REGISTRY[target], REGISTRY) == group


def _small_registry():
    def row(tid, paper):
        return {"id": tid, "paper": paper, "kind": "figure", "rule": f"make_{tid}", "outputs": {"csv": f"results/{tid}.csv"}}

    data = {
        "papers": {"chadha2024": "C", "wang2022": "W", "newpaper": "N"},
        "targets": [
            row("c_a", "chadha2024"),
            row("c_b", "chadha2024"),
            row("w_a", "wang2022"),
            row("n_a", "newpaper"),
            {"id": "mixed", "paper": "chadha2024", "kind": "group", "outputs": {}, "includes": ["c_a", "w_a"]},
            {"id": "only_w", "paper": "chadha2024", "kind": "group", "outputs": {}, "includes": ["w_a"]},
        ],
    }
    return parse_registry(data)


def test_stage_of_rules_on_a_small_registry():
    reg = _small_registry()
    assert bd.stage_of(reg["c_a"], reg) == "chadha_pate_capc"  # Chadha row naming no other stage
    assert bd.stage_of(reg["w_a"], reg) == "wang2022"
    assert bd.stage_of(reg["n_a"], reg) == "other"  # a paper the bench does not know is not lost
    assert bd.stage_of(reg["only_w"], reg) == "wang2022"  # a group row follows its includes
    assert bd.stage_of(reg["mixed"], reg) == "chadha_pate_capc"  # includes disagree: the row's own paper
    groups = {g.key: ids for g, ids in bd.target_groups(reg)}
    assert groups["other"] == ["n_a"] and groups["all"] == ["all"]


def test_group_filter_and_errors():
    groups = bd.target_groups(REGISTRY, ["wang2022", "chadha_synthetic"])
    assert [g.key for g, _ in groups] == ["chadha_synthetic", "wang2022"]  # run order, not the order given
    with pytest.raises(ValueError, match="nosuch"):
        bd.target_groups(REGISTRY, ["nosuch"])
    with pytest.raises(ValueError, match="other"):  # exists as a key but has no targets here
        bd.target_groups(REGISTRY, ["other"])


def test_target_rule_count():
    # paper_comparison is its own producing rule (no generated target rule); `all` is no row
    assert bd.target_rule_count(REGISTRY, ["chadha_fig2", "paper_comparison", "all"]) == 1
    assert bd.target_rule_count(REGISTRY, REGISTRY.ids()) == len(REGISTRY.generated_targets())


def test_compress_ids():
    ids = ["chadha_fig3", "chadha_fig4", "chadha_fig7", "chadha_fig8", "chadha_fig9", "chadha_findings"]
    assert bd.compress_ids(ids) == "`chadha_fig3` `chadha_fig4` `chadha_fig7` … `chadha_fig9` `chadha_findings`"
    assert bd.compress_ids(["a1", "a2", "b3"]) == "`a1` `a2` `b3`"
    assert bd.compress_ids([]) == ""


DRY_RUN_OUTPUT = """Building DAG of jobs...
Job stats:
job                  count
-----------------  -------
chadha_fig2              1
plot_chadha_synthetic    1
audit_synthetic_pair     2
total                    4

[Tue Nov 24 09:00:11 2026]
rule audit_synthetic_pair:
"""

RUN_OUTPUT = """Building DAG of jobs...
Select jobs to execute...
1 of 5 steps (20%) done
Select jobs to execute...
4 of 5 steps (80%) done
5 of 5 steps (100%) done
Complete log(s): .snakemake/log/x.snakemake.log
"""


def test_parse_job_count():
    assert bd.parse_job_count(DRY_RUN_OUTPUT) == 4
    assert bd.parse_job_count(RUN_OUTPUT) == 5
    assert bd.parse_job_count("Building DAG of jobs...\nNothing to be done (all requested files are present and up to date).\n") == 0
    with pytest.raises(ValueError, match="no job count"):
        bd.parse_job_count("WorkflowError: config invalid\n")


def _results():
    return [
        bd.GroupResult("chadha_synthetic", "Chadha synthetic", ["chadha_fig2", "chadha_fig6"], 6, 20.4, 35.0, 3.0, 7.5, 6),
        bd.GroupResult("wang2022", "Wang et al. 2022", ["wang_fig1"], 24, 194.0, 300.2, 12.4, 30.0, 24),
    ]


def test_markdown_table_rows_and_totals():
    table = bd.markdown_table(_results())
    lines = table.strip().splitlines()
    assert len(lines) == 2 + 2 + 1  # header, separator, two groups, total
    assert lines[0].endswith("| start-up per job (CPU) | jobs × start-up |")
    assert lines[2] == "| Chadha synthetic | `chadha_fig2` `chadha_fig6` | 6 | 20 s | 35 s | 3 s | 1.25 s | 8 s |"
    assert lines[3] == "| Wang et al. 2022 | `wang_fig1` | 24 | 194 s ≈ 3.2 min | 300 s ≈ 5.0 min | 12 s | 1.25 s | 30 s |"
    assert lines[-1] == "| **total** | | **30** | **214 s ≈ 3.6 min** | **335 s ≈ 5.6 min** | **15 s** | **1.25 s** | **38 s** |"
    # without /proc the scheduler's share is unknown, and so is its total; start-up not measured: –
    unknown = bd.markdown_table([_results()[0], bd.GroupResult("x", "X", ["x1"], 1, 1.0, 1.0, None)])
    assert unknown.strip().splitlines()[-1].endswith("| **–** | **–** | **–** |")
    assert unknown.strip().splitlines()[-2].endswith("| – | – | – |")


def test_jobs_per_rule_from_run_output():
    out = (
        "[Thu Nov 26 20:20:56 2026]\nlocalrule audit_synthetic_pair:\n    jobid: 3\n"
        "[Thu Nov 26 20:20:57 2026]\nrule audit_synthetic_pair:\n    jobid: 4\n"
        "localrule plot_chadha_synthetic:\n    jobid: 1\nlocalrule chadha_fig2:\n"
        "    reason: rule audit_synthetic_pair: not a job line\n"
    )
    assert bd.jobs_per_rule(out) == {"audit_synthetic_pair": 2, "plot_chadha_synthetic": 1, "chadha_fig2": 1}
    assert bd.jobs_per_rule(RUN_OUTPUT) == {}


def test_startup_code_is_preamble_plus_the_scripts_imports():
    code = bd.startup_code("plot_chadha_appendix")
    assert code.startswith(bd.PREAMBLE)
    assert "import _ppaudit_path" in code and "from ppaudit.plots.appendix import appendix_figure" in code
    assert "snakemake.params" not in code  # imports only, no work
    assert bd.startup_code("chadha_fig7") is None  # a target rule: no script, no process
    assert bd.startup_code("all") is None


def test_startup_total_and_table():
    costs = {"fit_vote_model": (0.9, 0.8), "plot_chadha_appendix": (1.6, 1.5)}
    per_rule = {"fit_vote_model": 12, "plot_chadha_appendix": 2, "chadha_fig7": 1}
    total, jobs = bd.startup_total(per_rule, costs)
    assert jobs == 14 and total == pytest.approx(12 * 0.8 + 2 * 1.5)
    table = bd.startup_table(per_rule, costs).strip().splitlines()
    assert table[2] == "| fit_vote_model | 12 | 0.90 s | 0.80 s | 9.6 s |"  # largest sum first
    assert table[-1] == "| **all script jobs** | **14** | | **0.90 s** | **13 s** |"


def test_measure_startup_runs_a_fresh_process():
    wall, cpu = bd.measure_startup("import json\n", repeat=1)
    assert 0.0 < wall < 30.0 and 0.0 <= cpu < 30.0
    with pytest.raises(RuntimeError, match="start-up probe failed"):
        bd.measure_startup("import no_such_module_ppaudit\n", repeat=1)


README_TEXT = f"""# title

prose before the table

{bd.BEGIN_MARKER}
| old | table |
| --- | --- |
{bd.END_MARKER}

prose after the table
"""


def test_splice_readme_keeps_prose_and_is_idempotent():
    block = bd.readme_block(_results(), when="24 Nov 2026 10:00", cores=2, configfile="config/config.yaml", load="0.1 / 0.2 / 0.3")
    out = bd.splice_readme(README_TEXT, block)
    assert "| old | table |" not in out
    assert out.startswith("# title\n\nprose before the table\n\n" + bd.BEGIN_MARKER + "\nGenerated by `make bench-default`")
    assert out.endswith(bd.END_MARKER + "\n\nprose after the table\n")
    assert bd.markdown_table(_results()) in out
    assert bd.splice_readme(out, block) == out


@pytest.mark.parametrize(
    "text",
    [
        "no markers at all\n",
        f"{bd.BEGIN_MARKER}\nonly the begin marker\n",
        f"{bd.END_MARKER}\nx\n{bd.BEGIN_MARKER}\n",
        f"{bd.BEGIN_MARKER}\n{bd.END_MARKER}\n{bd.BEGIN_MARKER}\n{bd.END_MARKER}\n",
    ],
)
def test_splice_readme_rejects_bad_markers(text):
    with pytest.raises(ValueError, match="marker|comes before"):
        bd.splice_readme(text, "| x |\n")


def test_repository_readme_has_the_markers_once():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    out = bd.splice_readme(text, "| new | table |\n")
    assert out.count("| new | table |") == 1
    # everything outside the markers is unchanged
    assert out.split(bd.BEGIN_MARKER)[0] == text.split(bd.BEGIN_MARKER)[0]
    assert out.split(bd.END_MARKER)[1] == text.split(bd.END_MARKER)[1]


def test_own_cpu_of_this_process():
    import os
    import time

    before = bd._own_cpu(os.getpid())
    if before is None:
        pytest.skip("no /proc on this platform")
    t = time.process_time()
    while time.process_time() - t < 0.2:  # burn 0.2 s of CPU in this process
        pass
    after = bd._own_cpu(os.getpid())
    assert 0.1 <= after - before <= 5.0
    assert bd._own_cpu(2**22 + 12345) is None  # no such process


def test_snakemake_command_is_make_runs(tmp_path):
    cmd = bd.snakemake_command(["chadha_fig2"], directory=tmp_path, configfile=Path("/c.yaml"), cores="2", dry_run=True)
    assert cmd[cmd.index("--profile") + 1] == "workflow/profiles/default"
    assert cmd[cmd.index("--directory") + 1] == str(tmp_path)
    assert cmd[cmd.index("--configfile") + 1] == "/c.yaml"
    assert cmd[cmd.index("--cores") + 1] == "2"
    assert "-n" in cmd and cmd[-1] == "chadha_fig2"


def test_main_refuses_bad_arguments_before_running(tmp_path):
    with pytest.raises(ValueError, match="--write-readme needs every group"):
        bd.main(["--groups", "wang2022", "--write-readme", "--directory", str(tmp_path / "new")])
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "file").write_text("x")
    with pytest.raises(ValueError, match="fresh"):
        bd.main(["--dry-run", "--directory", str(tmp_path / "used")])
    with pytest.raises(ValueError, match="does not exist"):
        bd.main(["--configfile", str(tmp_path / "missing.yaml")])


def test_whole_run_line_and_its_own_markers():
    line = bd.whole_block(1230.0, 1900.0, 40.0, 196, when="24 Nov 2026 10:00", cores=2, configfile="config/config.yaml", load="0.0 / 0.0 / 0.0")
    assert f"**{bd.format_seconds(1230.0)} wall**" in line and "196 jobs" in line
    assert "start-up" not in line  # not measured
    with_startup = bd.whole_block(1230.0, 1900.0, 40.0, 196, when="24 Nov 2026 10:00", cores=2, configfile="config/config.yaml",
                                  load="0.0 / 0.0 / 0.0", startup_cpu=190.0, script_jobs=190)
    assert "1.00 s CPU per job, 190 jobs × start-up = 190 s ≈ 3.2 min (10 % of the CPU time)" in with_startup
    text = (REPO / "README.md").read_text(encoding="utf-8")
    out = bd.splice_readme(text, line, bd.WHOLE_BEGIN_MARKER, bd.WHOLE_END_MARKER)
    assert out.count(line.strip()) == 1
    # the per-group table between the other markers is untouched
    assert out.split(bd.BEGIN_MARKER)[1] == text.split(bd.BEGIN_MARKER)[1]
    with pytest.raises(ValueError, match="--whole"):
        bd.main(["--whole", "--groups", "wang2022"])
    with pytest.raises(ValueError, match="--whole"):
        bd.main(["--whole", "--dry-run"])


def _calibration_script(tmp_path, score):
    script = tmp_path / "calibrate.py"
    script.write_text("import json, sys\nassert sys.argv[1:] == ['--json']\n"
                      f"print(json.dumps({{'score_s': {score}, 'load_avg_1m': 0.5, 'cpus': 2}}))\n")
    return script


def test_calibration_runs_the_script_and_skips_a_missing_one(tmp_path, capsys):
    out = bd.run_calibration(_calibration_script(tmp_path, 0.25))
    assert out == {"score_s": 0.25, "load_avg_1m": 0.5, "cpus": 2}
    assert "score_s=0.25" in capsys.readouterr().out
    assert bd.run_calibration(tmp_path / "absent.py") is None
    assert "absent.py not found" in capsys.readouterr().out
    broken = tmp_path / "broken.py"
    broken.write_text("raise SystemExit(3)\n")
    with pytest.raises(RuntimeError, match="exit 3"):
        bd.run_calibration(broken)
    assert bd.calibration_of(out, None) is None


def test_calibration_units_and_the_expect_line():
    cal = bd.calibration_of({"score_s": 0.18, "load_avg_1m": 1.0}, {"score_s": 0.22, "load_avg_1m": 2.0})
    assert cal.score == pytest.approx(0.2) and cal.units(600.0) == pytest.approx(3000.0)
    text = bd.calibration_text(cal, 600.0, 1000.0)
    # wall 600 s / 0.2 = 3000 units, CPU 1000 s / 0.2 = 5000 units
    assert "score_s 0.180 before / 0.220 after" in text and "wall 3000 and CPU 5000 calibration units" in text
    assert bd.calibration_text(None, 600.0, 1000.0) == ""
    assert "differ by 22 %" in text  # 0.22 / 0.18 − 1: flagged as a run whose load changed
    steady = bd.Calibration(0.2, 0.21, 0.1, 0.1)
    assert "differ" not in bd.calibration_text(steady, 600.0, 1000.0)
    line = bd.whole_block(600.0, 1000.0, 10.0, 199, when="28 Nov 2026 17:00", cores=2, configfile="config/config.yaml",
                          load="0.0 / 0.0 / 0.0", calibration=cal)
    assert text.strip() in line
    expect = bd.expect_line(600.0, cal, (0.1, 0.4), when="28 Nov 2026 17:00")
    # 3000 units × 0.1 s = 5.0 min, × 0.2 (this run) = 10.0 min, × 0.4 = 20.0 min
    assert "**5–20 min**" in expect and "5.0 min at score_s 0.100, 10.0 min at score_s 0.200, 20.0 min at score_s 0.400" in expect
    with pytest.raises(ValueError, match="> 0"):
        bd.expect_line(600.0, cal, (0.0,))
    text = (REPO / "README.md").read_text(encoding="utf-8")
    out = bd.splice_readme(text, expect, bd.EXPECT_BEGIN_MARKER, bd.EXPECT_END_MARKER)
    assert out.count(expect.strip()) == 1
    two_commands = out.split("## Two commands")[1].split("\n## ")[0]
    assert expect.strip() in two_commands  # the line sits in the "Two commands" section
    with pytest.raises(ValueError, match="--expect-scores"):
        bd.main(["--expect-scores", "0.2,x"])


def test_the_expect_line_gives_the_range_of_the_measured_runs(tmp_path):
    """With the measured runs, the what-to-expect line gives the range of calibration units over them and this
    run, scaled to every machine's score (issue 35 §1: a range over the machines measured, not the fastest one)."""
    cal = bd.Calibration(0.2, 0.2, 0.1, 0.1)  # this run: 600 s / 0.2 = 3000 units
    history = [bd.MeasuredRun("2026-11-29", "abc1234", 500.0, 0.1, 0.1, "make run"),  # 5000 units
               bd.MeasuredRun("2026-11-29", "def5678", 400.0, 0.2, 0.2, "bench-default --whole")]  # 2000 units
    assert [r.units for r in history] == [pytest.approx(5000.0), pytest.approx(2000.0)]
    line = bd.expect_line(600.0, cal, (0.4,), when="29 Nov 2026 21:00", history=history, commit="0123abc")
    # units 2000–5000; scores 0.1, 0.2 (history and this run) and 0.4: 3.3–8.3 min at the fastest, 13.3–33.3 at the slowest
    assert "**3–33 min**" in line and "**2000–5000 calibration units**" in line
    assert "3.3–8.3 min at score_s 0.100, the fastest machine measured; 13.3–33.3 min at score_s 0.400, the slowest" in line
    assert "over the 3 measured runs" in line and "commits 0123abc, abc1234, def5678; the newest: 29 Nov 2026 21:00, 3000 units" in line
    assert "expect 2000–5000 × score_s seconds" in line
    # the repo's record: every row valid, and the README's line was written from it
    runs = bd.read_measured_runs()
    assert len(runs) >= 2 and all(r.units > 0 for r in runs)
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    expect = readme.split(bd.EXPECT_BEGIN_MARKER)[1].split(bd.EXPECT_END_MARKER)[0]
    lo, hi = min(r.units for r in runs), max(r.units for r in runs)
    assert f"**{lo:.0f}–{hi:.0f} calibration units**" in expect
    # append / read round trip, and a bad row named by its line
    rec = tmp_path / "runs.csv"
    assert bd.read_measured_runs(rec) == []
    bd.append_measured_run(history[0], rec)
    bd.append_measured_run(history[1], rec)
    assert bd.read_measured_runs(rec) == history
    rec.write_text(rec.read_text() + "2026-11-30,x,0,0.2,0.2,bad\n")
    with pytest.raises(ValueError, match="line 4: wall_s, score_before and score_after must be positive"):
        bd.read_measured_runs(rec)
    (tmp_path / "cols.csv").write_text("date,commit,wall_s\n")
    with pytest.raises(ValueError, match="missing column"):
        bd.read_measured_runs(tmp_path / "cols.csv")


def test_expect_only_writes_the_line_from_the_record_alone(tmp_path, monkeypatch, capsys):
    """``--expect-only`` runs nothing: the record's newest row is the run, the others its history."""
    rec = tmp_path / "runs.csv"
    bd.append_measured_run(bd.MeasuredRun("2026-11-28", "abc1234", 500.0, 0.1, 0.1, "make run"), rec)
    bd.append_measured_run(bd.MeasuredRun("2026-11-29", "def5678", 400.0, 0.2, 0.2, "bench-default --whole"), rec)
    readme = tmp_path / "README.md"
    readme.write_text(f"## Two commands\n\n{bd.EXPECT_BEGIN_MARKER}\nold\n{bd.EXPECT_END_MARKER}\n")
    monkeypatch.setattr(bd, "MEASURED_RUNS", rec)
    monkeypatch.setattr(bd, "README", readme)
    assert bd.main(["--expect-only", "--write-readme", "--expect-scores", "0.4"]) == 0
    text = readme.read_text()
    assert "old" not in text and "**2000–5000 calibration units**" in text and "the newest: 2026-11-29, bench-default --whole, 2000 units" in text
    assert "commits abc1234, def5678" in text and len(bd.read_measured_runs(rec)) == 2  # nothing appended
    monkeypatch.setattr(bd, "MEASURED_RUNS", tmp_path / "none.csv")
    with pytest.raises(ValueError, match="--expect-only needs measured runs"):
        bd.main(["--expect-only"])
