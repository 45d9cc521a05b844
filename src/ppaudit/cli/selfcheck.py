"""``ppaudit selfcheck``: the auditor's own soundness and power (:mod:`ppaudit.selfcheck`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from .common import EXIT_OK, EXIT_VIOLATION, UsageError, add_common_options, emit, nonneg_int

__all__ = ["add_parser", "run"]


def _selfcheck_notes(res) -> list[str]:
    """Why a self-check failed, in words; the power bar's assumption when --trials is below it."""
    from ..selfcheck import DEFAULT_TRIALS, MIN_DETECTION_RATE

    tab = res.table
    bug = tab["planted_bug"].astype(str) != ""
    missed = tab.loc[bug & ~tab["passed"], "case"].tolist()
    alarms = tab.loc[~bug & ~tab["passed"], "case"].tolist()
    notes = []
    if alarms:
        notes.append(f"false-alarm bar exceeded (a correct mechanism flagged too often): {', '.join(alarms)}")
    if res.trials < DEFAULT_TRIALS:
        power = (f"the {MIN_DETECTION_RATE:.0%} power bar assumes ≈ {DEFAULT_TRIALS:,} trials per side; "
                 f"--trials {res.trials} is below it")
        notes.append(power + (f", so the planted bugs missed ({', '.join(missed)}) may be missed for lack of draws: "
                              f"rerun with --trials {DEFAULT_TRIALS}" if missed else ""))
    elif missed:
        notes.append(f"power bar missed (a planted bug flagged in < {MIN_DETECTION_RATE:.0%} of the runs): {', '.join(missed)}")
    return notes


def run(args) -> int:
    """Run ``ppaudit selfcheck``; returns the exit code (1 if the self-check failed)."""
    from ..selfcheck import DEFAULT_TRIALS, selfcheck_cases, run_selfcheck

    cases = [c.strip() for c in args.cases.split(",") if c.strip()] if args.cases is not None else None
    if cases is not None:
        known = [c.name for c in selfcheck_cases()]
        unknown = [c for c in cases if c not in known] or ([] if cases else [repr(args.cases)])
        if unknown:
            raise UsageError(f"--cases: unknown case(s) {', '.join(unknown)}; choose from {', '.join(known)}")
    if args.csv and not Path(args.csv).resolve().parent.is_dir():
        raise UsageError(f"--csv {args.csv!r}: its folder does not exist")
    res = run_selfcheck(args.repetitions, args.trials, confidence=args.confidence, seed=args.seed, cases=cases,
                        progress=args.progress)
    if args.csv:
        try:
            res.table.to_csv(args.csv, index=False)
        except OSError as exc:
            raise UsageError(f"--csv {args.csv!r}: cannot write: {exc.strerror or exc}") from None
    notes = _selfcheck_notes(res)
    cols = ["case", "claim", "mean_rdp_lower_bound_alpha2", "mean_epsilon_lower_bound", "flagged", "bar", "passed"]
    lines = [f"self-check: {res.repetitions} repetitions x {res.trials} trials per side, confidence {res.confidence:g}",
             res.table[cols].to_string(index=False), *(f"note: {n}" for n in notes), f"passed: {res.passed}"]
    emit(args, {"repetitions": res.repetitions, "trials": res.trials, "confidence": res.confidence, "seed": res.seed,
                 "power_bar_trials": DEFAULT_TRIALS, "notes": notes,
                 "passed": res.passed, "table": res.table.to_dict(orient="records")}, lines)
    return EXIT_OK if res.passed else EXIT_VIOLATION


def add_parser(sub) -> argparse.ArgumentParser:
    """Register ``selfcheck`` on the subparsers ``sub``."""
    s = sub.add_parser("selfcheck", help="run the auditor on correct mechanisms and planted-bug twins",
                       description="Exit 0 if correct mechanisms are flagged in <= 5% (+ binomial slack) of the runs "
                                   "and planted bugs in >= 90%, else 1. The 90% power bar assumes the default "
                                   "30,000 trials per side; with fewer, a failed power bar is reported as such.")
    s.add_argument("--repetitions", type=nonneg_int("--repetitions", 1), default=100, help="runs per case (default 100)")
    s.add_argument("--trials", type=nonneg_int("--trials", 1), default=30_000, help="draws per side per run (default 30000)")
    s.add_argument("--cases", help="comma-separated case names (default: all)")
    s.add_argument("--csv", help="also write the table to this CSV file")
    s.add_argument("--progress", action="store_true", help="show progress bars")
    add_common_options(s)
    s.set_defaults(func=run)
    return s
