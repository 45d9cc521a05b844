"""The papers' explicitly stated numbers next to the values our pipeline produced.

``workflow/data/paper_numbers.csv`` is a curated list: one row per number a paper states
in its text or tables (id, paper, where, quantity, setting, paper_value, paper_std) and,
where we compute a corresponding value, how to find it in our results: ``result_file``
(relative to the run directory), ``query`` (a pandas ``DataFrame.query`` expression that
selects exactly one row) and ``column``. :func:`compare_with_paper` fills in our value and
a status for each row:

* ``computed`` — the value was found (``ours``, and ``difference = ours - paper``);
* ``not computed`` — no result file is listed, or the workflow has no rule producing it;
* ``not found`` — the file exists but the query/column did not select one number (the
  reason is in ``detail``).

``query`` is evaluated with pandas' python engine (so ``values.str.contains('audit=')`` works).
``column`` is a column name, or an expression over the selected row's columns
(``k_cut_goodman >= two_cut_cp``, ``epsilon_worst_case / epsilon_data_independent``; a boolean
gives 1 or 0), or ``values:EXPR`` — an expression over the ``name=number`` pairs of a findings
table's ``values`` text (:func:`ppaudit.experiments.findings_causes.parse_values`; ``values:lhs / rhs``).
A paper's ordering (Chadha et al. 2024, §5.4: "Pois-AdvQ compromises privacy more than Nat-AdvQ
in PATE") is a row whose ``paper_value`` is 1 (the paper states it holds) and whose ``column`` is
the findings table's ``holds`` (ours: 1 or 0).

Where ours and the paper's value differ by more than 2× (:data:`FAR_FACTOR`) and the result
table carries a ``stand_in_measure`` column (the label-DP tables), that row's measured numbers
are appended to the note, so the reader sees what the stand-in learned (ours).
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Iterable

import pandas as pd

from .findings_causes import parse_values

REQUIRED_COLUMNS = (
    "id", "paper", "where", "quantity", "setting", "paper_value", "paper_std", "result_file", "query", "column", "note",
)
OUTPUT_COLUMNS = (
    "id", "paper", "where", "quantity", "setting", "paper_value", "paper_std", "ours", "difference", "status", "detail",
    "result_file", "note",
)


def read_paper_numbers(path: str | os.PathLike) -> pd.DataFrame:
    """Read and check the curated list (unique ids, numeric paper values, every column)."""
    table = pd.read_csv(path, dtype={"result_file": str, "query": str, "column": str, "note": str}, keep_default_na=False, na_values={"paper_value": [""], "paper_std": [""]})
    missing = [c for c in REQUIRED_COLUMNS if c not in table.columns]
    if missing:
        raise ValueError(f"{path}: missing column(s) {missing}; expected {list(REQUIRED_COLUMNS)}")
    if table["id"].duplicated().any():
        raise ValueError(f"{path}: duplicate id(s) {sorted(table.loc[table['id'].duplicated(), 'id'])}")
    values = pd.to_numeric(table["paper_value"], errors="coerce")
    if values.isna().any():
        raise ValueError(f"{path}: paper_value is not a number in row(s) {list(table.loc[values.isna(), 'id'])}")
    table["paper_value"] = values
    table["paper_std"] = pd.to_numeric(table["paper_std"], errors="coerce")
    return table


def paper_value(table: pd.DataFrame, number_id: str) -> float:
    """The number a paper states, by its id in the curated list (``workflow/data/paper_numbers.csv``).

    Args:
        table: the list as read by :func:`read_paper_numbers` (or ``pandas.read_csv``).
        number_id: the row's ``id``, e.g. ``wang_budget_error_mnist`` (Wang et al. 2022, §4.2).

    Returns:
        The row's ``paper_value`` as a float.

    Raises:
        ValueError: naming the id when the list has no row or several rows with it.
    """
    rows = table[table["id"] == number_id]
    if len(rows) != 1:
        raise ValueError(f"paper numbers: expected exactly one row with id {number_id!r}, found {len(rows)}")
    return float(rows["paper_value"].iloc[0])


def result_files(table: pd.DataFrame) -> list[str]:
    """The distinct result files the list refers to, in order of first appearance."""
    return list(dict.fromkeys(f for f in table["result_file"] if isinstance(f, str) and f.strip()))


def _lookup(frame: pd.DataFrame, query: str, column: str) -> tuple[float | None, str]:
    try:
        rows = frame.query(query, engine="python") if query.strip() else frame
    except Exception as exc:  # a query naming a column the table does not have, etc.
        return None, f"query {query!r} failed: {type(exc).__name__}: {exc}"
    if len(rows) != 1:
        return None, f"query {query!r} selected {len(rows)} rows, expected 1"
    if column.startswith("values:"):
        if "values" not in rows.columns:
            return None, f"no column 'values' for {column!r}"
        pairs = parse_values(rows["values"].iloc[0])
        try:
            raw = pd.eval(column[len("values:"):].strip(), local_dict={k: v for k, v in pairs.items() if k.isidentifier()}, engine="python")
        except Exception as exc:
            return None, f"{column!r} on values {rows['values'].iloc[0]!r} failed: {type(exc).__name__}: {exc}"
    elif column in frame.columns:
        raw = rows[column].iloc[0]
    else:
        try:
            raw = rows.eval(column, engine="python").iloc[0]
        except Exception as exc:
            return None, f"no column {column!r} (columns: {', '.join(map(str, frame.columns))}; as an expression: {type(exc).__name__}: {exc})"
    if isinstance(raw, str) and raw.strip().lower() in ("true", "false"):
        raw = raw.strip().lower() == "true"
    value = pd.to_numeric(raw, errors="coerce")
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None, f"{column} is not a number: {raw!r}"
    return float(value), ""


#: Ours and the paper's value further apart than this factor get the result row's measured cause in the note.
FAR_FACTOR = 2.0


def _far_measure(frame: pd.DataFrame, query: str, ours: float, paper: float) -> str:
    """The ``stand_in_measure`` of the selected result row (label-DP tables,
    :func:`ppaudit.experiments.labeldp_tables.stand_in_measure`) when ``ours`` and ``paper`` differ
    by more than :data:`FAR_FACTOR` (either way, or in sign), else ``""``."""
    if "stand_in_measure" not in frame.columns or not (math.isfinite(ours) and math.isfinite(paper)):
        return ""
    if ours > 0 and paper > 0 and max(ours / paper, paper / ours) <= FAR_FACTOR:
        return ""
    if ours == paper:
        return ""
    rows = frame.query(query) if query.strip() else frame
    text = rows["stand_in_measure"].iloc[0] if len(rows) == 1 else ""
    return text if isinstance(text, str) else ""


def compare_with_paper(table: pd.DataFrame, base_dir: str | os.PathLike, available: Iterable[str]) -> pd.DataFrame:
    """One row per paper number with our value and a status (see the module docstring).

    Args:
        table: the curated list (:func:`read_paper_numbers`).
        base_dir: directory the ``result_file`` paths are relative to.
        available: result files that this run produced (the others are "not computed").
    """
    available = set(available)
    cache: dict[str, pd.DataFrame] = {}
    rows = []
    for rec in table.to_dict("records"):
        out = {k: rec.get(k, "") for k in OUTPUT_COLUMNS if k in rec}
        out.update(ours=math.nan, difference=math.nan, status="not computed", detail="")
        file = (rec.get("result_file") or "").strip()
        if not file:
            out["detail"] = "no corresponding target in ppaudit"
        elif file not in available:
            out["detail"] = f"{file} is not produced by this workflow (yet)"
        else:
            path = Path(base_dir) / file
            if file not in cache:
                cache[file] = pd.read_csv(path)
            value, why = _lookup(cache[file], rec.get("query") or "", (rec.get("column") or "").strip())
            if value is None:
                out.update(status="not found", detail=why)
            else:
                out.update(ours=value, difference=value - float(rec["paper_value"]), status="computed")
                measure = _far_measure(cache[file], rec.get("query") or "", value, float(rec["paper_value"]))
                if measure:
                    out["note"] = "; ".join(x for x in (str(out.get("note") or "").strip(), f"more than 2x from the paper; stand-in, measured: {measure}") if x)
        rows.append(out)
    return pd.DataFrame(rows, columns=list(OUTPUT_COLUMNS))
