"""Why a finding does not hold: the ``cause`` and ``cause_detail`` columns of the findings tables.

Every row of a findings table (Chadha et al. 2024: ``chadha2024_findings.csv`` and its parts;
Wang et al. 2022: ``wang2022_findings.csv``; the observational label-DP paper:
``labeldp_findings.csv``) whose ``holds`` is False gets one of :data:`CAUSES` (issue #34 §3),
computed from the numbers the table itself measured — never from the dataset's name:

* ``stand-in`` — a stand-in of the embedded default (teachers, encoder, model, dataset) is outside
  the paper's regime, and the number that shows it is below its stated bar: the canary teachers'
  poison success rate (< :data:`POISON_SUCCESS_BAR`), the one-shot prompt teachers' accuracy above
  a constant answer (< :data:`TEACHER_MARGIN_BAR`), the stand-in teachers' own regime row, the
  label-DP image stand-in's accuracy, or a comparison with a number the paper states for another
  dataset;
* ``paper procedure`` — the row checks the paper's own computation (its per-answer composition,
  its solver) and fails while the sound procedure's row on the same setting holds; the sound value
  is written beside it;
* ``open`` — no rule explains it; ``cause_detail`` says what was checked.

Rows that hold (or whose ``holds`` is undetermined, NaN or empty) get an empty cause.
:func:`require_causes` fails on a False row without one; :func:`cause_counts` counts them.
"""

from __future__ import annotations

import math
import re
from typing import Callable, Iterable

import pandas as pd

__all__ = [
    "CAUSES", "POISON_SUCCESS_BAR", "TEACHER_MARGIN_BAR", "FINDINGS_TABLES", "parse_values", "is_false",
    "chadha_causes", "wang_causes", "labeldp_causes", "require_causes", "cause_counts", "causes_markdown", "write_readme_block",
]

#: The three causes a findings row that does not hold can carry (issue #34 §3).
CAUSES = ("stand-in", "paper procedure", "open")
#: Bar on the share of canary teachers whose vote on the query is the poison's label (issue #34 §1;
#: ours: the paper's LeNet-5 / WRN teachers fit their 240 training images, so nearly every poisoned
#: teacher flips).
POISON_SUCCESS_BAR = 0.9
#: Bar on the one-shot prompt teachers' mean accuracy minus the majority-class rate (ours: a teacher
#: that is barely better than a constant answer gives no "easy" natural queries where the teachers
#: concur, the first reason §5.4 gives for Pois-NatQ ≪ AdvQ).
TEACHER_MARGIN_BAR = 0.1

_NUMBER = r"[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+|inf|nan)"
_PAIR = re.compile(r"([A-Za-z_'][^=,;≤]*?)\s*=\s*(" + _NUMBER + r")")


def parse_values(text) -> dict[str, float]:
    """The ``name=number`` pairs of a findings row's ``values`` text, in order.

    >>> parse_values("audit=0.2151 ≤ exact=0.3915 ≤ dd=1.02")
    {'audit': 0.2151, 'exact': 0.3915, 'dd': 1.02}
    >>> parse_values("lhs=0.1198 vs rhs=0.1847")
    {'lhs': 0.1198, 'rhs': 0.1847}
    """
    if not isinstance(text, str):
        return {}
    text = re.sub(r"\bvs\b", ",", text)  # "lhs=0.1198 vs rhs=0.1847" (Private-kNN rows)
    return {m.group(1).strip(): float(m.group(2)) for m in _PAIR.finditer(text)}


def is_false(value) -> bool:
    """True for a ``holds`` value that says the finding fails (False, "False", 0); NaN / "" are not."""
    if isinstance(value, str):
        return value.strip().lower() in ("false", "0")
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return False
    try:
        return not bool(value)
    except (TypeError, ValueError):
        return False


def _is_true(value) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("true", "1")
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return False
    return bool(value)


def _fmt(x: float) -> str:
    return f"{x:.4g}"


def _with_causes(table: pd.DataFrame, rule: Callable[[pd.Series, pd.DataFrame], tuple[str, str]]) -> pd.DataFrame:
    if "holds" not in table.columns:
        raise ValueError(f"a findings table needs a 'holds' column, got {list(table.columns)}")
    out = table.copy()
    causes, details = [], []
    for _, row in out.iterrows():
        if is_false(row["holds"]):
            cause, detail = rule(row, out)
            if cause not in CAUSES:
                raise ValueError(f"cause must be one of {CAUSES}, got {cause!r}")
        else:
            cause, detail = "", ""
        causes.append(cause)
        details.append(detail)
    out["cause"] = causes
    out["cause_detail"] = details
    return out


# --- Chadha et al. 2024 ---------------------------------------------------------------------

#: The sound row that checks the same setting as a row of the paper's procedure (first that exists).
_SOUND_COMPANIONS = ("transcript audit<=transcript cap", "joint transcript audit<=joint cap", "audit<=exact<=dd<=di",
                     "audit<=exact<=di")


def _same(table: pd.DataFrame, row: pd.Series, *keys: str) -> pd.DataFrame:
    mask = pd.Series(True, index=table.index)
    for k in keys:
        if k in table.columns:
            mask &= table[k].astype(str) == str(row.get(k))
    return table[mask]


def _poison_success(table: pd.DataFrame, row: pd.Series) -> float | None:
    """The smallest measured poison success rate of the row's dataset and algorithm (column
    ``poison_success_rate``, or a ``poison_success_rate=`` value), None when not measured."""
    rows = _same(table, row, "dataset", "algo")
    rates = []
    for col in [c for c in rows.columns if _is_poison_success(c)]:
        rates += [float(v) for v in pd.to_numeric(rows[col], errors="coerce") if not math.isnan(v)]
    for text in rows.get("values", pd.Series(dtype=str)):
        rates += [v for k, v in parse_values(text).items() if _is_poison_success(k) and not math.isnan(v)]
    return min(rates) if rates else None


def _is_poison_success(name) -> bool:
    """``poison_success_rate``, "poison success rate", "poison success" …"""
    return "poison_success" in re.sub(r"[\s-]+", "_", str(name).strip().lower())


def _teacher_diagnosis(table: pd.DataFrame, row: pd.Series, margin_bar: float) -> tuple[bool, str] | None:
    """The stand-in teachers' measured regime on the row's dataset and algorithm:
    (outside the regime?, the numbers), None when the table has no such row."""
    rows = _same(table, row, "dataset", "algo")
    for _, t in rows.iterrows():
        finding = str(t["finding"])
        v = parse_values(t.get("values"))
        if finding.startswith("stand-in teachers"):
            nums = ", ".join(f"{k} {_fmt(x)}" for k, x in v.items())
            return is_false(t["holds"]), f"stand-in teachers: {nums} ({'outside' if is_false(t['holds']) else 'inside'} the regime bar of that row)"
        if finding == "teachers classify" and "teacher_accuracy" in v and "majority_class_rate" in v:
            margin = v["teacher_accuracy"] - v["majority_class_rate"]
            text = (f"prompt teachers' mean accuracy {_fmt(v['teacher_accuracy'])} is {_fmt(margin)} above the majority-class "
                    f"rate {_fmt(v['majority_class_rate'])} (bar ≥ {margin_bar:g})")
            if "vote_entropy" in v:
                text += f", vote entropy {_fmt(v['vote_entropy'])}"
            return margin < margin_bar or is_false(t["holds"]), text
    return None


def _chadha_rule(poison_bar: float, margin_bar: float):
    def rule(row: pd.Series, table: pd.DataFrame) -> tuple[str, str]:
        finding = str(row["finding"])
        values = str(row.get("values", ""))
        # 1. The paper's procedure fails while the sound one on the same setting holds.
        if finding.startswith("paper "):
            same = _same(table, row, "dataset", "algo", "adversary", "case")
            for name in _SOUND_COMPANIONS:
                comp = same[same["finding"] == name]
                if len(comp) and all(_is_true(h) for h in comp["holds"]):
                    v = parse_values(row.get("values"))
                    first = next(iter(v.items()), None)
                    over = "; ".join(f"{k} {_fmt(x)}" for k, x in v.items())
                    sound = str(comp["values"].iloc[0])
                    return "paper procedure", (f"the paper's procedure over-claims: {over}"
                                               + (f" ({first[0]} above the bound)" if first else "")
                                               + f"; the sound procedure on the same setting holds ({name}: {sound})")
            return "open", f"a paper-procedure row fails and no sound row of the same setting holds (checked: {', '.join(_SOUND_COMPANIONS)}); {values}"
        # 2. The stand-in teachers do not learn their poison.
        if finding.startswith("pois-advq>=") or "pois-advq" in finding.split(">=")[0]:
            rate = _poison_success(table, row)
            if rate is not None and rate < poison_bar:
                return "stand-in", f"poison success rate {_fmt(rate)} < {poison_bar:g}: the canary teachers do not learn their poison ({values})"
            checked = f"poison success rate {_fmt(rate)} ≥ {poison_bar:g}" if rate is not None else "poison success rate not measured in this table"
            diag = _teacher_diagnosis(table, row, margin_bar)
            if diag is not None and diag[0]:
                return "stand-in", f"{diag[1]}; {checked} ({values})"
            return "open", f"checked: {checked}; {diag[1] if diag else 'no stand-in teacher row'}; {values}"
        # 3. Any other row on a dataset whose stand-in teachers are outside the paper's regime.
        diag = _teacher_diagnosis(table, row, margin_bar)
        if diag is not None and diag[0]:
            return "stand-in", f"{diag[1]}; {values}"
        # 4. Private-kNN Pois-NatQ: did the embedding search meet its objective (expected top-k inclusions)?
        v = parse_values(row.get("values"))
        if finding.startswith("embedding >= test/train") and {"inclusions embedding", "inclusions test/train"} <= set(v):
            e, t = v["inclusions embedding"], v["inclusions test/train"]
            met = (f"the embedding poison meets the crafters' objective at least as well (expected top-k inclusions {_fmt(e)} ≥ "
                   f"{_fmt(t)} of the best test/train poison) yet leaks less: inclusions do not order the leakage here"
                   if e >= t else f"the embedding search found fewer expected top-k inclusions ({_fmt(e)} < {_fmt(t)} of the best "
                   "test/train poison): the embedding heuristic under-performs on this encoder")
            return "open", f"{met}; ε {values}"
        # 5. An ordering across algorithms: name the pair that breaks it and by how much.
        if "<=" in finding and len(v) >= 2:
            items = list(v.items())
            broken = [(a, b) for a, b in zip(items, items[1:]) if a[1] > b[1]]
            if broken:
                (na, xa), (nb, xb) = broken[0]
                rel = (xa - xb) / abs(xb) if xb else math.inf
                return "open", (f"{na} {_fmt(xa)} > {nb} {_fmt(xb)} by {_fmt(xa - xb)} ({rel:.1%}); checked: "
                                + ("; ".join(d[1] for d in [diag] if d) or "no stand-in teacher row") + f"; {values}")
        return "open", f"no rule of ppaudit.experiments.findings_causes explains it; checked: {values}" + (f"; {diag[1]}" if diag else "")
    return rule


def chadha_causes(table: pd.DataFrame, poison_bar: float = POISON_SUCCESS_BAR, margin_bar: float = TEACHER_MARGIN_BAR) -> pd.DataFrame:
    """Add ``cause`` / ``cause_detail`` to a Chadha et al. findings table (or one of its parts).

    Rules, in order, for a row that does not hold:

    1. a row of the paper's procedure (``paper …``) whose sound companion on the same dataset,
       algorithm, adversary and case (:data:`_SOUND_COMPANIONS`) holds ⇒ ``paper procedure``, the
       sound row's values beside it;
    2. ``pois-advq>=nat-advq`` with a measured poison success rate (column or value
       ``poison_success_rate``, smallest over the dataset and algorithm) below ``poison_bar`` ⇒
       ``stand-in`` with that rate;
    3. a dataset and algorithm whose stand-in teachers are outside the regime (their
       ``stand-in teachers`` row fails, or the prompt teachers' accuracy exceeds the majority-class rate by
       less than ``margin_bar``) ⇒ ``stand-in`` with those numbers;
    4. otherwise ``open``, naming the numbers checked: for Private-kNN's ``embedding >= test/train``
       whether the embedding poison met the crafters' objective (its expected top-k inclusions against
       the best test/train poison's, when the row's values carry them), for an ordering the pair that
       breaks it and by how much.

    Args:
        table: columns of :data:`ppaudit.experiments.pate_capc_findings.FINDINGS_COLUMNS` (at least
            ``finding``, ``values``, ``holds``), optionally ``poison_success_rate``.
        poison_bar: in (0, 1].
        margin_bar: in [0, 1].

    Returns:
        A copy of ``table`` with the two columns added.

    Raises:
        ValueError: naming a bar out of range or a missing column.
    """
    if not 0.0 < float(poison_bar) <= 1.0:
        raise ValueError(f"poison_bar must be in (0, 1], got {poison_bar!r}")
    if not 0.0 <= float(margin_bar) <= 1.0:
        raise ValueError(f"margin_bar must be in [0, 1], got {margin_bar!r}")
    missing = [c for c in ("finding", "values", "holds") if c not in table.columns]
    if missing:
        raise ValueError(f"a Chadha findings table needs column(s) {missing}, got {list(table.columns)}")
    return _with_causes(table, _chadha_rule(float(poison_bar), float(margin_bar)))


# --- Wang et al. 2022 -----------------------------------------------------------------------

_PAPER_DATASET = re.compile(r"\bon ([A-Za-z][A-Za-z0-9-]*)\)?\s*$")


def _wang_rule(row: pd.Series, table: pd.DataFrame) -> tuple[str, str]:
    value, ref = row.get("value"), row.get("reference")
    numbers = f"{row.get('description', '')}: value {_fmt(float(value))} vs reference {_fmt(float(ref))}" if _numeric(value) and _numeric(ref) \
        else f"{row.get('description', '')}"
    if str(row.get("procedure")) == "paper":
        ours = _same(table, row, "dataset", "finding", "check")
        ours = ours[ours["procedure"].astype(str) == "ours"] if "procedure" in ours.columns else ours.iloc[0:0]
        if len(ours) and all(_is_true(h) for h in ours["holds"]):
            return "paper procedure", f"the paper's solver fails ({numbers}); ours holds on the same check (value {_fmt(float(ours['value'].iloc[0]))})"
    m = _PAPER_DATASET.search(str(row.get("finding", "")))
    if m and m.group(1).lower() != str(row.get("dataset", "")).lower():
        return "stand-in", f"the paper's number is for {m.group(1)}, ours is measured on the {row.get('dataset')} stand-in: {numbers}"
    if str(row.get("procedure")) == "ours":
        paper = _same(table, row, "dataset", "finding", "check")
        paper = paper[paper["procedure"].astype(str) == "paper"]
        if len(paper) and all(is_false(h) for h in paper["holds"]):
            numbers += f"; the paper's solver fails the same check (value {_fmt(float(paper['value'].iloc[0]))})"
    return "open", f"checked: {numbers}"


def _numeric(x) -> bool:
    try:
        return not math.isnan(float(x))
    except (TypeError, ValueError):
        return False


def wang_causes(table: pd.DataFrame) -> pd.DataFrame:
    """Add ``cause`` / ``cause_detail`` to the Wang et al. findings table.

    A failing ``procedure = paper`` row whose ``ours`` row of the same dataset, finding and check
    holds ⇒ ``paper procedure`` (our value beside it); a row that compares with a number the paper
    states for another dataset (the finding's "… on SVHN)") ⇒ ``stand-in``; otherwise ``open`` with
    the description, value and reference.

    Raises:
        ValueError: naming the missing columns.
    """
    missing = [c for c in ("dataset", "finding", "procedure", "check", "value", "reference", "holds") if c not in table.columns]
    if missing:
        raise ValueError(f"a Wang findings table needs column(s) {missing}, got {list(table.columns)}")
    return _with_causes(table, _wang_rule)


# --- Observational label DP -----------------------------------------------------------------

_OURS_PAPER = re.compile(r"([^;:]+):\s*ours\s+(" + _NUMBER + r")\s+paper\s+(" + _NUMBER + r")")


def _regime_rows(table: pd.DataFrame) -> pd.DataFrame:
    return table[table["claim"].astype(str).str.contains("stand-in", case=False)
                 & table["claim"].astype(str).str.contains("regime", case=False)]


def _worst_gap(detail: str) -> str:
    gaps = [(abs(float(o) - float(p)), s.strip(), float(o), float(p)) for s, o, p in _OURS_PAPER.findall(str(detail))]
    if not gaps:
        return str(detail)
    g, where, o, p = max(gaps)
    return f"{where}: ours {_fmt(o)} vs paper {_fmt(p)} ({_fmt(g)} apart)"


def _labeldp_rule(row: pd.Series, table: pd.DataFrame) -> tuple[str, str]:
    claim = str(row["claim"])
    numbers = f"{row.get('metric', '')} = {_fmt(float(row['value']))} against {row.get('threshold', '')}" if _numeric(row.get("value")) else str(row.get("metric", ""))
    regime = _regime_rows(table)
    failing = regime[[is_false(h) for h in regime["holds"]]]
    if claim in set(regime["claim"].astype(str)):
        return "stand-in", f"{numbers}; worst: {_worst_gap(row.get('detail', ''))}"
    if len(failing) and "image" in claim.lower():
        worst = _worst_gap(failing["detail"].iloc[0])
        return "stand-in", f"{numbers}; the image stand-in is outside the paper's accuracy regime ({failing['claim'].iloc[0]}: {worst})"
    return "open", f"checked: {numbers}; per setting: {row.get('detail', '')}"


def labeldp_causes(table: pd.DataFrame) -> pd.DataFrame:
    """Add ``cause`` / ``cause_detail`` to the label-DP findings table.

    The stand-in regime row (a claim naming the stand-in and its regime) that fails ⇒ ``stand-in``
    with its largest ours-vs-paper gap; a failing claim on the image mechanisms while that row fails
    ⇒ ``stand-in`` with the same number; otherwise ``open`` with the metric and its per-setting values.

    Raises:
        ValueError: naming the missing columns.
    """
    missing = [c for c in ("claim", "metric", "value", "threshold", "holds", "detail") if c not in table.columns]
    if missing:
        raise ValueError(f"a label-DP findings table needs column(s) {missing}, got {list(table.columns)}")
    return _with_causes(table, _labeldp_rule)


# --- Checks and counts ----------------------------------------------------------------------

def require_causes(table: pd.DataFrame, name: str = "findings") -> None:
    """Fail on a row that does not hold and has no cause (issue #34 §3: no unexplained False).

    Raises:
        ValueError: naming the table and the rows (their first columns) without a valid cause.
    """
    if "holds" not in table.columns:
        raise ValueError(f"{name}: no 'holds' column")
    if "cause" not in table.columns:
        bad = table[[is_false(h) for h in table["holds"]]]
        if len(bad):
            raise ValueError(f"{name}: {len(bad)} row(s) do not hold and the table has no 'cause' column")
        return
    bad = table[[is_false(h) and (str(c) not in CAUSES) for h, c in zip(table["holds"], table["cause"])]]
    if len(bad):
        first = list(bad.columns[:3])
        rows = "; ".join(" / ".join(str(r[c]) for c in first) + f" (cause {r['cause']!r})" for _, r in bad.iterrows())
        raise ValueError(f"{name}: {len(bad)} row(s) do not hold without a cause in {CAUSES}: {rows}")


def cause_counts(tables: Iterable[pd.DataFrame]) -> dict[str, int]:
    """Rows that do not hold, per cause, over the tables (every cause of :data:`CAUSES` present)."""
    counts = {c: 0 for c in CAUSES}
    for t in tables:
        if "cause" not in t.columns:
            continue
        for h, c in zip(t["holds"], t["cause"]):
            if is_false(h):
                counts[str(c)] = counts.get(str(c), 0) + 1
    return counts


#: The findings tables of a run, relative to its directory, with the function that gives their causes.
FINDINGS_TABLES = {
    "results/tables/chadha2024_findings.csv": chadha_causes,
    "results/tables/wang2022_findings.csv": wang_causes,
    "results/tables/labeldp_findings.csv": labeldp_causes,
}
README_BEGIN, README_END = "<!-- findings-causes:begin -->", "<!-- findings-causes:end -->"


def causes_markdown(run_dir) -> str:
    """The README's findings lines: per findings table of a run, rows, rows that hold, and the rows that
    do not per cause (tables written before the ``cause`` column get theirs computed here).

    Raises:
        ValueError: naming a findings table that is missing from ``run_dir``.
    """
    from pathlib import Path  # noqa: PLC0415

    lines = []
    for rel, assign in FINDINGS_TABLES.items():
        path = Path(run_dir) / rel
        if not path.is_file():
            raise ValueError(f"no findings table {path}")
        table = pd.read_csv(path)
        if "cause" not in table.columns:
            table = assign(table)
        require_causes(table, rel)
        failing = sum(is_false(h) for h in table["holds"])
        held = sum(_is_true(h) for h in table["holds"])
        counts = cause_counts([table])
        lines.append(f"- `{rel}`: {len(table)} rows, {held} hold, {failing} do not — "
                     + ", ".join(f"{c}: {counts[c]}" for c in CAUSES))
    return "\n".join(lines)


def write_readme_block(readme, run_dir) -> str:
    """Replace the text between :data:`README_BEGIN` and :data:`README_END` of ``readme`` by
    :func:`causes_markdown` of ``run_dir``; returns the block.

    Raises:
        ValueError: naming the README when it lacks the markers.
    """
    from pathlib import Path  # noqa: PLC0415

    text = Path(readme).read_text(encoding="utf-8")
    if README_BEGIN not in text or README_END not in text:
        raise ValueError(f"{readme} has no {README_BEGIN} … {README_END} block")
    block = causes_markdown(run_dir)
    head, rest = text.split(README_BEGIN, 1)
    _, tail = rest.split(README_END, 1)
    Path(readme).write_text(f"{head}{README_BEGIN}\n{block}\n{README_END}{tail}", encoding="utf-8")
    return block


if __name__ == "__main__":  # python -m ppaudit.experiments.findings_causes RUN_DIR [README.md]
    import sys

    if len(sys.argv) not in (2, 3):
        sys.exit("usage: python -m ppaudit.experiments.findings_causes RUN_DIR [README.md]")
    print(write_readme_block(sys.argv[2], sys.argv[1]) if len(sys.argv) == 3 else causes_markdown(sys.argv[1]))
