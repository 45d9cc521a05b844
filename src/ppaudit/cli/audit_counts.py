"""``ppaudit audit-counts COUNTS.csv``: two output-count vectors → RDP and (ε, δ) lower bounds and
a verdict against an optional claim (:func:`ppaudit.blackbox.audit_counts`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from .common import (EXIT_OK, EXIT_VIOLATION, UsageError, add_claim_options, add_common_options, claim_from_args,
                     emit, fmt_claim, parse_orders, unit_interval)

__all__ = ["add_parser", "run"]


_SEPARATORS = {"tab": "\t", "\\t": "\t", "comma": ",", "semicolon": ";", "space": r"\s+", "whitespace": r"\s+"}


def _read_counts(path: Path, sep: str = ",") -> tuple[np.ndarray, np.ndarray, list | None]:
    """The counts file of ``audit-counts``: columns ``counts0``, ``counts1`` (and ``output``)."""
    import pandas as pd

    if not path.exists():
        raise UsageError(f"counts file not found: {str(path)!r}")
    if not path.is_file():
        raise UsageError(f"counts file {str(path)!r} is not a file; expected a CSV with columns counts0,counts1")
    if path.stat().st_size == 0:
        raise UsageError(f"counts file {str(path)!r} is empty; expected a CSV with columns counts0,counts1")
    delim = _SEPARATORS.get(sep, sep)
    try:
        df = pd.read_csv(path, sep=delim, engine="python" if len(delim) != 1 else "c")
    except UnicodeDecodeError:
        raise UsageError(f"counts file {str(path)!r} is not a text file; expected a CSV with columns counts0,counts1") from None
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        raise UsageError(f"cannot read counts file {str(path)!r} with --sep {sep!r}: {str(exc).strip()}") from None
    df.columns = [str(c).strip() for c in df.columns]
    if not {"counts0", "counts1"} <= set(df.columns):
        hint = ""
        if len(df.columns) == 1:
            found = next((n for n, c in (("semicolon", ";"), ("tab", "\t"), ("space", " ")) if c in df.columns[0]), None)
            if found:
                hint = f"; its header looks {found}-separated: pass --sep {found}"
        raise UsageError(f"counts file {str(path)!r} must have columns 'counts0' and 'counts1' (one row per output; "
                         f"separator --sep {sep!r}); found {list(df.columns)}{hint}")
    if len(df) < 2:
        raise UsageError(f"counts file {str(path)!r} has {len(df)} row(s); need one row per output, at least 2")
    out = []
    for name in ("counts0", "counts1"):
        col = df[name]
        v = pd.to_numeric(col, errors="coerce").to_numpy(dtype=np.float64)
        bad = ~np.isfinite(v) | (v < 0) | (v != np.round(v))
        if bad.any():
            raise UsageError(f"counts file {str(path)!r}: column {name} must hold non-negative integers; "
                             f"bad value {str(col[bad].iloc[0])!r} in row {int(np.flatnonzero(bad)[0]) + 1}")
        out.append(v.astype(np.int64))
    labels = df["output"].astype(str).tolist() if "output" in df.columns else None
    return out[0], out[1], labels


def run(args) -> int:
    """Run ``ppaudit audit-counts``; returns the exit code."""
    from ..blackbox import audit_counts

    path = Path(args.counts)
    c0, c1, labels = _read_counts(path, args.sep)
    if c0.sum() == 0 or c1.sum() == 0:
        raise UsageError(f"counts file {str(path)!r}: both columns counts0 and counts1 need trials, "
                         f"got totals {int(c0.sum())} and {int(c1.sum())}")
    claim = claim_from_args(args)
    orders = parse_orders(args.orders, np.array([1.5, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0]))
    res = audit_counts(c0, c1, orders, confidence=args.confidence, claim=claim, delta=args.delta,
                       selection=args.selection, rng=args.seed, outputs=labels)
    lines = [f"outputs: {c0.size}; trials: {int(c0.sum())} and {int(c1.sum())}; claim: {fmt_claim(claim)}",
             "order  RDP lower bound (2-cut CP)  k-cut (asymptotic)  claimed RDP"]
    for j, a in enumerate(res.orders):
        cr = "-" if res.claim_rdp is None else f"{res.claim_rdp[j]:.4g}"
        lines.append(f"{a:6g}  {res.rdp_lower_bound[j]:26.4g}  {res.k_cut_lower_bound[j]:18.4g}  {cr}")
    lines.append(f"epsilon lower bound (Eq. 1) at delta={res.delta:g}: {res.epsilon_lower_bound:.4g}"
                 + ("" if res.claim_epsilon is None else f" (claimed {res.claim_epsilon:.4g})"))
    lines.append(f"verdict: {res.verdict} (confidence {res.confidence:g}, Bonferroni over {res.details.get('tests', 1)} test(s))")
    emit(args, res.to_dict(), lines)
    return EXIT_VIOLATION if res.violation else EXIT_OK


def add_parser(sub) -> argparse.ArgumentParser:
    """Register ``audit-counts`` on the subparsers ``sub``."""
    c = sub.add_parser("audit-counts", help="RDP and (eps, delta) lower bounds from two output-count vectors",
                       description="COUNTS.csv has columns counts0 and counts1 (one row per output; an optional "
                                   "'output' column names it): the output counts of T0 runs on S and T1 runs on S'.")
    c.add_argument("counts", metavar="COUNTS.csv")
    c.add_argument("--sep", default=",", metavar="SEP",
                   help="column separator of COUNTS.csv: a character, or tab, semicolon, space (default ',')")
    c.add_argument("--orders", help="comma-separated orders > 1 (default 1.5,2,4,8,16,32,64)")
    c.add_argument("--delta", type=unit_interval("--delta", closed_left=True), default=1e-5,
                   help="delta of the epsilon lower bound (default 1e-5; --claim-dp's delta replaces it)")
    c.add_argument("--selection", choices=("split", "bonferroni"), default="split", help="output-set search (default split)")
    add_claim_options(c)
    add_common_options(c)
    c.set_defaults(func=run)
    return c
