"""GPU hours of a paper-scale run per target group (issue 17, item 4), from measured rates.

Counts the GPU work of the workflow config (default ``config/config.yaml`` + ``config/paper.yaml``)
with :func:`ppaudit.workflow.gpu_budget.paper_work` and times it at the rates of ``--rates``
(the JSON that ``bench/bench_gpu.py --json FILE`` writes on the GPU that will run the job), or,
without it, at the H100 figures issue 17 quotes (:data:`ppaudit.workflow.gpu_budget.ISSUE17_H100`:
the code before its changes, teachers one at a time, the raw sampler rate). Prints a Markdown
table; ``--write-readme`` puts it in the documentation page ``docs/paper_scale.md`` between
``<!-- gpu-hours:begin -->`` and ``<!-- gpu-hours:end -->`` (section "GPU hours at paper scale";
``--readme-section gpu-slice``: the slice's table; the option keeps its name from when the page
was the README); only the work of the config key ``targets`` is counted where it is set
(``config/slices/fmnist_gpu.yaml``: ``chadha_fig3``), or of ``--targets``, which overrides it;
``--csv FILE`` also writes the rows as CSV. With ``--rates``,
work without a measured rate is projected (``PROJECTED_H200``) and labelled so.

Run: ``.venv/bin/python bench/gpu_hours.py`` or
``.venv/bin/python bench/gpu_hours.py --rates rates.json --configfile config/config.yaml config/paper.yaml``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# The page that holds the marked tables (the site's "Paper scale" guide; the README before #37).
README = REPO / "docs" / "paper_scale.md"
BEGIN_MARKER = "<!-- gpu-hours:begin -->"
END_MARKER = "<!-- gpu-hours:end -->"


def _amount(row) -> str:
    a = row["amount"]
    text = f"{a:.3g}" if a >= 1e7 else f"{a:,.0f}"
    return ("≤ " if row["bound"] else "") + text


def _minutes(m: float) -> str:
    return f"{m:,.0f}" if m >= 1000 else f"{m:.3g}"


def rates_label(doc: dict, path: str | None) -> str:
    """What measured the rates, for the table's first line: the device, the torch version and the
    date (keys ``device``, ``torch``, ``date`` of the rates file; else read from its ``source``
    text and a ``YYYY-MM-DD`` in its file name)."""
    source = str(doc.get("source", path or "?"))
    if path is None:
        return source
    device = doc.get("device") or (re.search(r" on (.+?)(?:,| \(torch| \(--quick|$)", source) or [None, None])[1]
    torch = doc.get("torch") or (re.search(r"torch ([0-9][\w.+]*)", source) or [None, None])[1]
    date = doc.get("date") or (re.search(r"\d{4}-\d{2}-\d{2}", Path(path).name) or [None])[0]
    parts = [f"measured on {device or 'an unnamed device'}", f"torch {torch or '(version not recorded)'}", date or "date not recorded"]
    return ", ".join(parts) + f" (`{Path(path).name}`: {source})"


def table(rows, source: str) -> str:
    lines = [
        f"Rates: {source}.",
        "",
        "| target group | targets | work | amount | rate used | GPU hours |",
        "| --- | --- | --- | ---: | --- | ---: |",
    ]
    for r in rows:
        used = r["rate_used"] or "not measured"
        if r["hours_are"] == "projected":
            used = f"projected, not measured ({r['rate_used']})"
        elif r["rate_used"] and r["rate_used"] != r["rate_key"]:
            used += f" (for {r['rate_key']})"
        prefix = {"upper": "≤ ", "lower": "≥ ", "exact": "", "neither": "≈ ", "projected": "≈ "}.get(r["hours_are"], "")
        hours = "—" if r["gpu_hours"] is None else prefix + f"{r['gpu_hours']:.3g}"
        if r["hours_are"] == "neither":
            hours += " × (raw rate / ours)"
        elif r["hours_are"] == "projected":
            hours += " (projected)"
        lines.append(f"| {r['group']} | {r['targets']} | {r['unit']}: {r['detail']} | {_amount(r)} | {used} | {hours} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    from ppaudit.workflow.gpu_budget import (
        ISSUE17_H100,
        PROJECTED_H200,
        gpu_hours,
        load_workflow_config,
        paper_work,
    )

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--configfile", nargs="+", default=[str(REPO / "config" / "config.yaml"), str(REPO / "config" / "paper.yaml")])
    ap.add_argument("--rates", default=None, help="JSON of bench/bench_gpu.py --json (default: the H100 figures of issue 17)")
    ap.add_argument("--targets", nargs="+", default=None, metavar="TARGET",
                    help="only the work of these targets (default: the config key targets, e.g. chadha_fig3 in "
                         "config/slices/fmnist_gpu.yaml; unset: every target)")
    ap.add_argument("--csv", default=None, help="also write the rows to this CSV file")
    ap.add_argument("--write-readme", action="store_true", help="put the table in docs/paper_scale.md between the --readme-section markers")
    ap.add_argument("--readme-section", default="gpu-hours", metavar="NAME",
                    help="docs/paper_scale.md markers <!-- NAME:begin --> / <!-- NAME:end --> (default gpu-hours; gpu-slice for the slice's table)")
    args = ap.parse_args(argv)
    if args.rates:
        doc = json.loads(Path(args.rates).read_text())
        if not isinstance(doc, dict) or not isinstance(doc.get("rates"), dict):
            print(f"error: {args.rates} is not a bench_gpu.py --json file (needs a 'rates' mapping)", file=sys.stderr)
            return 2
    else:
        doc = ISSUE17_H100
    try:
        config = load_workflow_config(*args.configfile)
    except (OSError, TypeError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    targets, targets_from = (args.targets, "`--targets`") if args.targets else (config.get("targets"), "config key `targets`")
    if targets:
        from ppaudit.workflow import load_registry

        known_ids = set(load_registry(REPO / "workflow" / "figures.yaml").ids())
        unknown = [t for t in targets if t not in known_ids]
        if unknown:
            print(f"error: {targets_from}: unknown target(s) {unknown} (ids of workflow/figures.yaml)", file=sys.stderr)
            return 2
    # With measured rates, the work they do not cover (encoders, the LLM) is projected, and labelled so.
    work = paper_work(config)
    if targets:
        work = [w for w in work if set(targets) & {t.strip() for t in w.targets.split(",")}]
    rows = gpu_hours(work, doc["rates"], projected=PROJECTED_H200["rates"] if args.rates else None)
    known = [r["gpu_hours"] for r in rows if r["gpu_hours"] is not None and r["hours_are"] != "projected"]
    guessed = [r["gpu_hours"] for r in rows if r["hours_are"] == "projected"]
    configs = " ".join(str(Path(c).resolve().relative_to(REPO)) if Path(c).resolve().is_relative_to(REPO) else str(c) for c in args.configfile)
    text = (table(rows, rates_label(doc, args.rates))
            + f"\n\nSum where a rate is {'measured' if args.rates else 'known'}: {sum(known):.3g} GPU hours = {_minutes(60 * sum(known))} GPU minutes "
            f"({len(known)} of {len(rows)} items; ≤: an upper bound; ≈ … × (raw rate / ours): at the raw sampler rate, to be scaled by ours)"
            + (f"; projected for the {len(guessed)} items without a measured rate: {sum(guessed):.3g} GPU hours ({PROJECTED_H200['source']})" if guessed else "")
            + f". Config: `{configs}`" + (f"; targets: {', '.join(targets)} ({targets_from})" if targets else "") + ". Made by `bench/gpu_hours.py`" + (f" `--rates {Path(args.rates).name}`" if args.rates else "") + ".")
    print(text)
    if args.write_readme:
        from bench_default import splice_readme  # bench/, beside this script

        begin, end = f"<!-- {args.readme_section}:begin -->", f"<!-- {args.readme_section}:end -->"
        README.write_text(splice_readme(README.read_text(encoding="utf-8"), text, begin, end), encoding="utf-8")
        print(f"{README} updated between {begin} and {end}")
    if args.csv:
        import pandas as pd

        from ppaudit.io import atomic_path

        with atomic_path(args.csv) as tmp:
            pd.DataFrame(rows).to_csv(tmp, index=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
