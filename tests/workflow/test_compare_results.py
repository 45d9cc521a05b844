"""bench/compare_results.py, the comparison part (issue 12's byte-identity check), on two tiny
synthetic result trees: identical files pass; a changed cell is named by column and row with
both values; a tolerance admits small numeric differences but never text ones; files on one
side only, added columns and non-table files that differ fail; the exit status says so."""

from __future__ import annotations

import importlib.util
import io
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("compare_results", REPO / "bench" / "compare_results.py")
cr = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("compare_results", cr)  # dataclasses look their module up there
_spec.loader.exec_module(cr)


def _trees(tmp_path: Path, work_files: dict[str, str]) -> tuple[Path, Path]:
    base_files = {
        "figures/fig2.csv": "panel,order,value,bar\nbars,2,0.5,exact\nbars,4,1.25,exact\nrdp,8,nan,k-cut\n",
        "tables/t.md": "| a |\n|---|\n| 1 |\n",
        "tables/x.json": '{"a": 1}\n',
        "figures/fig2.png": "not compared",
    }
    for root, files in (("base", base_files), ("work", {**base_files, **work_files})):
        for rel, text in files.items():
            path = tmp_path / root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    return tmp_path / "base", tmp_path / "work"


def _report(same, diffs) -> tuple[int, str]:
    out = io.StringIO()
    return cr.report(same, diffs, out=out), out.getvalue()


def test_identical_trees_pass(tmp_path):
    same, diffs = cr.compare_trees(*_trees(tmp_path, {"figures/fig2.png": "png bytes are not compared"}))
    assert same == ["figures/fig2.csv", "tables/t.md", "tables/x.json"] and diffs == []
    status, text = _report(same, diffs)
    assert status == 0 and "IDENTICAL" in text


def test_changed_cell_is_named_and_tolerance_admits_only_small_numeric_differences(tmp_path):
    base, work = _trees(tmp_path, {"figures/fig2.csv": "panel,order,value,bar\nbars,2,0.5,exact\nbars,4,1.2500001,exact\nrdp,8,nan,k-cut\n"})
    same, diffs = cr.compare_trees(base, work)
    assert [d.path for d in diffs] == ["figures/fig2.csv"] and diffs[0].fails
    assert diffs[0].details[0].startswith("column 'value': 1 of 3 rows differ; max |Δ| = 1e-07: row 1: 1.25 → 1.2500001")
    status, text = _report(same, diffs)
    assert status == 1 and "DIFFERENT: 1 file(s): figures/fig2.csv" in text
    _, diffs = cr.compare_trees(base, work, rtol=1e-6)
    assert diffs[0].within_tolerance and _report([], diffs)[0] == 0
    # A text cell never passes by tolerance.
    (work / "figures/fig2.csv").write_text("panel,order,value,bar\nbars,2,0.5,exact\nbars,4,1.25,2-cut\nrdp,8,nan,k-cut\n")
    _, diffs = cr.compare_trees(base, work, rtol=1.0, atol=1.0)
    assert diffs[0].fails and "column 'bar': 1 of 3 rows differ: row 1: 'exact' → '2-cut'" in diffs[0].details[0]


def test_reformatted_numbers_fail_without_tolerance_but_are_explained(tmp_path):
    base, work = _trees(tmp_path, {"figures/fig2.csv": "panel,order,value,bar\nbars,2.0,0.50,exact\nbars,4,1.25,exact\nrdp,8,nan,k-cut\n"})
    _, diffs = cr.compare_trees(base, work)
    assert diffs[0].fails and "bytes differ" in diffs[0].details[-1]


def test_missing_files_added_columns_rows_and_other_files(tmp_path):
    base, work = _trees(tmp_path, {
        "figures/fig2.csv": "panel,order,value,bar,extra\nbars,2,0.5,exact,1\nbars,4,1.25,exact,1\n",
        "tables/x.json": '{"a": 2}\n',
        "tables/new.tsv": "a\tb\n1\t2\n",
    })
    (base / "tables" / "t.md").rename(base / "tables" / "old.md")
    same, diffs = cr.compare_trees(base, work)
    by_path = {d.path: d for d in diffs}
    assert by_path["tables/old.md"].kind == "only_base" and by_path["tables/t.md"].kind == "only_work"
    assert by_path["tables/new.tsv"].kind == "only_work" and by_path["tables/x.json"].kind == "bytes"
    assert by_path["tables/x.json"].details == ["/a: 1 → 2"]
    details = by_path["figures/fig2.csv"].details
    assert "columns only in working tree: ['extra']" in details and "rows: 3 in base, 2 in working tree (compared: the first 2)" in details
    status, text = _report(same, diffs)
    assert status == 1 and "only in base" in text


def test_bad_tolerance_and_missing_folder_raise(tmp_path):
    base, work = _trees(tmp_path, {})
    with pytest.raises(ValueError, match="rtol and atol must be >= 0, got rtol=-1"):
        cr.compare_tables(base / "figures/fig2.csv", work / "figures/fig2.csv", rtol=-1)
    with pytest.raises(ValueError, match="work folder .* does not exist"):
        cr.compare_trees(base, tmp_path / "nowhere")
    assert cr.main(["--compare", str(base), str(work)]) == 0
