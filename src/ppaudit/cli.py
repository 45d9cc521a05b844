"""The ``ppaudit`` command line.

Subcommands (``ppaudit SUBCOMMAND --help`` for each):

* ``audit-votes VOTES.npz|VOTES.npy --sigma S [--threshold T --sigma1 S1]`` — a PATE operator's own
  teacher votes: accounted (data-dependent GNMax / Confident-GNMax) cost, exact per-query RDP,
  audit of the most exposed query, ε at δ (:func:`ppaudit.blackbox.votes.audit_votes`).
* ``audit-counts COUNTS.csv`` — two output-count vectors → RDP and (ε, δ) lower bounds and a
  verdict against an optional claim (:func:`ppaudit.blackbox.audit_counts`).
* ``one-run --guesses C' --correct C --samples M [--tau T]`` or ``one-run --scores FILE`` — one-run
  f-DP audit (Alg. 3); with scores also AUROC, TPR at ``--fpr`` and that attack's ε interval.
* ``selfcheck`` — the auditor's own soundness and power (:mod:`ppaudit.selfcheck`).
* ``search module:function --neighbours count-vectors --length 5 --claim-dp 1`` — search
  neighbouring pairs for the worst case and certify it (:mod:`ppaudit.cli_search`).
* ``figure NAME`` — build one Snakemake target of the workflow (needs the ``[workflow]`` extra).

Exit codes: 0 = no violation, 1 = a violation was detected (or the self-check failed), 2 = bad
usage or input (one line naming the flag or file, the value and what is expected), a failed
Snakemake run of ``figure``, an exception raised in the user's own mechanism or module (named with
its file and line), or an internal error of ppaudit (the traceback only with ``--debug``). Nothing
but a real violation (or a failed self-check) exits 1, and a closed stdout (``ppaudit ... | head -1``)
never changes the code (:func:`_out`).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import traceback
import warnings
from pathlib import Path

import numpy as np

__all__ = ["main", "build_parser"]

EXIT_OK, EXIT_VIOLATION, EXIT_USAGE = 0, 1, 2


class UsageError(ValueError):
    """Bad input detected after parsing (reported with exit code 2).

    A ``ValueError``, so that it is reported as bad input also when this module runs as
    ``python -m ppaudit.cli`` (then ``__main__.UsageError`` and ``ppaudit.cli.UsageError``, which
    :mod:`ppaudit.cli_search` raises, are two classes; before, the latter was an "internal error")."""


class _Parser(argparse.ArgumentParser):
    """``ArgumentParser`` whose usage errors are one line (flag, value, what is expected), exit 2."""

    def error(self, message):  # noqa: D102 (argparse API)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def _clean(obj):
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    if isinstance(obj, (np.floating, float)):
        x = float(obj)
        return x if math.isfinite(x) else ("inf" if x > 0 else ("-inf" if x < 0 else "nan"))
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.ndarray):
        return _clean(obj.tolist())
    return obj


def _out(text: str) -> None:
    """Print ``text`` to stdout; a closed pipe (``ppaudit ... | head -1``) is not an error and never
    changes the exit code (CONVENTIONS item 27): the rest of the output goes to ``/dev/null``."""
    try:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        _stdout_closed()


def _stdout_closed() -> None:
    # Python's advice (signal docs, "Note on SIGPIPE"): point stdout at devnull so that the
    # interpreter's own flush at exit does not raise again (exit status 120)
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # pragma: no cover - stdout without a file descriptor
        pass


def _emit(args, payload: dict, lines: list[str]) -> None:
    if args.json:
        _out(json.dumps(_clean(payload), indent=2))
    else:
        _out("\n".join(lines))


def _orders(text: str | None, default=None) -> np.ndarray | None:
    if text is None:
        return default
    try:
        vals = np.array([float(x) for x in text.split(",") if x.strip()])
    except ValueError:
        raise UsageError(f"--orders must be comma-separated numbers > 1, got {text!r}") from None
    if vals.size == 0 or np.any(~(vals > 1)):
        raise UsageError(f"--orders must be comma-separated numbers > 1, got {text!r}")
    return vals


def _claim_from_args(args):
    from .blackbox import Claim

    given = [n for n in ("claim_zcdp", "claim_dp", "claim_gdp", "claim_rdp") if getattr(args, n, None) is not None]
    if len(given) > 1:
        raise UsageError(f"give at most one claim, got {', '.join('--' + g.replace('_', '-') for g in given)}")
    if not given:
        if getattr(args, "claim_delta", None) is not None:
            raise UsageError("--claim-delta needs --claim-dp")
        return None
    flag = "--" + given[0].replace("_", "-")
    if args.claim_delta is not None and given[0] != "claim_dp":
        raise UsageError(f"--claim-delta needs --claim-dp, got it with {flag}")
    try:
        if args.claim_zcdp is not None:
            return Claim.zcdp(args.claim_zcdp)
        if args.claim_gdp is not None:
            return Claim.gdp(args.claim_gdp)
        if args.claim_dp is not None:
            flag = "--claim-dp/--claim-delta"
            return Claim.dp(args.claim_dp, args.claim_delta if args.claim_delta is not None else 0.0)
        pts = [p.split(":") for p in args.claim_rdp.split(",") if p.strip()]
        if not pts or any(len(p) != 2 for p in pts):
            raise UsageError(f"--claim-rdp must look like '2:0.5,8:2.0' (order:epsilon), got {args.claim_rdp!r}")
        return Claim.rdp([float(p[0]) for p in pts], [float(p[1]) for p in pts])
    except ValueError as exc:
        if given[0] == "claim_dp":
            shown = f"--claim-dp {args.claim_dp:g}" + ("" if args.claim_delta is None else f" --claim-delta {args.claim_delta:g}")
        else:
            shown = f"{flag} {getattr(args, given[0])!r}"
        raise UsageError(f"{shown}: {exc}") from None


def _add_claim_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("claim (at most one; the verdict tests it)")
    g.add_argument("--claim-zcdp", type=float, metavar="RHO", help="the mechanism claims RHO-zCDP")
    g.add_argument("--claim-dp", type=float, metavar="EPS", help="the mechanism claims (EPS, --claim-delta)-DP")
    g.add_argument("--claim-delta", type=float, metavar="DELTA", help="δ of --claim-dp (default 0)")
    g.add_argument("--claim-gdp", type=float, metavar="MU", help="the mechanism claims MU-GDP")
    g.add_argument("--claim-rdp", metavar="A:E,...", help="claimed RDP curve, e.g. '2:0.5,8:2.0'")


def _fmt_claim(c) -> str:
    return "none" if c is None else c.describe()


# --------------------------------------------------------------------------------------
# subcommands
# --------------------------------------------------------------------------------------


def _read_votes(args) -> np.ndarray:
    """The votes file of ``audit-votes`` as ``(n_queries, C)`` histograms; a layout warning goes to stderr."""
    from .blackbox.votes import VotesLayoutWarning, load_votes

    path = Path(args.votes)
    if not path.exists():
        raise UsageError(f"votes file not found: {str(path)!r}")
    if not path.is_file():
        raise UsageError(f"votes file {str(path)!r} is not a file; expected a .npz or .npy file")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", VotesLayoutWarning)
        try:
            hist = load_votes(path, histograms=args.histograms, num_classes=args.num_classes)
        except ValueError as exc:
            raise UsageError(f"votes file: {exc}") from None
    for w in caught:
        if issubclass(w.category, VotesLayoutWarning):
            print(f"ppaudit audit-votes: warning: {w.message}", file=sys.stderr)
    return hist


def _round_up(n: int, digits: int = 2) -> int:
    scale = 10 ** max(len(str(int(n))) - digits, 0)
    return -(-int(n) // scale) * scale


def _resolution_line(res) -> str:
    """Whether the Monte Carlo audit resolves the exposed query's effect (:func:`ppaudit.blackbox.votes.audit_resolution`)."""
    r = res.resolution
    if not r:
        return "resolution: not assessed"
    where = (f"{r['attainable_two_cut']:.4g} that a 2-cut of this pair can show at order {r['order']:.4g} "
             f"(exact RDP there {r['exact_rdp']:.4g})")
    if r["resolved"]:
        return (f"resolution: resolved: the audit's RDP lower bound {r['lower_bound']:.4g} is "
                f"{r['resolved_fraction']:.0%} of the {where}")
    head = (f"resolution: NOT resolved: with {r['trials']:,} draws per side the audit's RDP lower bound stays below "
            f"{r['fraction']:.0%} of what a 2-cut can show at every order (best {r['resolved_fraction']:.0%}); ")
    if r["trials_needed"] is None:
        return head + "no feasible --trials would resolve it"
    need, suggest = _round_up(r["trials_needed"]), _round_up(r["trials_suggested"])
    return head + (f"it needs at least about {need:,} draws per side to reach {r['fraction']:.0%} of the {where}, "
                   f"and about --trials {suggest} to do so in most runs (the draws needed grow as 1/divergence^2)")


def _cmd_audit_votes(args) -> int:
    from .blackbox.votes import CONVERSIONS, audit_votes

    hist = _read_votes(args)
    if (args.threshold is None) != (args.sigma1 is None):
        given = "--threshold" if args.threshold is not None else "--sigma1"
        raise UsageError(f"give both --threshold and --sigma1 (Confident-GNMax) or neither, got only {given} "
                         f"{args.threshold if args.threshold is not None else args.sigma1:g}")
    orders = _orders(args.orders)
    if orders is not None and not np.isfinite(orders).any():
        raise UsageError(f"--orders needs at least one finite order > 1 for the accounted epsilon, got {args.orders!r}")
    res = audit_votes(hist, args.sigma, threshold=args.threshold, sigma_threshold=args.sigma1,
                      orders=orders, delta=args.delta, trials=args.trials,
                      exact_queries=args.exact_queries, confidence=args.confidence, rng=args.seed)
    d = res.to_dict()
    a = res.audit
    lines = [
        f"votes: {res.num_queries} queries, {res.num_classes} classes; mechanism {res.mechanism}, sigma={res.sigma:g}"
        + (f", threshold={res.threshold:g}, sigma1={res.sigma_threshold:g}" if res.threshold is not None else ""),
        f"accounted epsilon at delta={res.delta:g}, data-dependent, composed over {res.num_queries} queries:",
        f"  {res.epsilon_data_dependent:.4f} (order {res.order_data_dependent:.3g})  {CONVERSIONS['balle2020']}",
        f"  {res.epsilon_data_dependent_classic:.4f} (order {res.order_data_dependent_classic:.3g})  {CONVERSIONS['classic']}",
        f"accounted epsilon at delta={res.delta:g}, data-independent GNMax: {res.epsilon_data_independent:.4f}  "
        f"{CONVERSIONS['balle2020']}",
        f"most exposed query: #{res.most_exposed_query} {d['most_exposed_histogram']} -> worst neighbour {d['worst_neighbour']}; "
        f"exact RDP at that order {d['most_exposed_exact_rdp_at_order']:.4g}",
        f"audit ({a.counts0.sum()} + {a.counts1.sum()} draws): max RDP lower bound {a.rdp_lower_bound.max():.4g}, "
        f"epsilon lower bound {a.epsilon_lower_bound:.4g} at delta={a.delta:g}",
        _resolution_line(res),
        f"exact RDP above the data-dependent bound: {res.exact_exceeds_data_dependent or 'none'}",
        f"verdict: {res.verdict}",
    ]
    _emit(args, d, lines)
    return EXIT_VIOLATION if res.verdict == "violation" else EXIT_OK


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


def _cmd_audit_counts(args) -> int:
    from .blackbox import audit_counts

    path = Path(args.counts)
    c0, c1, labels = _read_counts(path, args.sep)
    if c0.sum() == 0 or c1.sum() == 0:
        raise UsageError(f"counts file {str(path)!r}: both columns counts0 and counts1 need trials, "
                         f"got totals {int(c0.sum())} and {int(c1.sum())}")
    claim = _claim_from_args(args)
    orders = _orders(args.orders, np.array([1.5, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0]))
    res = audit_counts(c0, c1, orders, confidence=args.confidence, claim=claim, delta=args.delta,
                       selection=args.selection, rng=args.seed, outputs=labels)
    lines = [f"outputs: {c0.size}; trials: {int(c0.sum())} and {int(c1.sum())}; claim: {_fmt_claim(claim)}",
             "order  RDP lower bound (2-cut CP)  k-cut (asymptotic)  claimed RDP"]
    for j, a in enumerate(res.orders):
        cr = "-" if res.claim_rdp is None else f"{res.claim_rdp[j]:.4g}"
        lines.append(f"{a:6g}  {res.rdp_lower_bound[j]:26.4g}  {res.k_cut_lower_bound[j]:18.4g}  {cr}")
    lines.append(f"epsilon lower bound (Eq. 1) at delta={res.delta:g}: {res.epsilon_lower_bound:.4g}"
                 + ("" if res.claim_epsilon is None else f" (claimed {res.claim_epsilon:.4g})"))
    lines.append(f"verdict: {res.verdict} (confidence {res.confidence:g}, Bonferroni over {res.details.get('tests', 1)} test(s))")
    _emit(args, res.to_dict(), lines)
    return EXIT_VIOLATION if res.violation else EXIT_OK


def _read_scores(path: Path) -> tuple[np.ndarray, np.ndarray]:
    import pandas as pd

    if not path.is_file():
        raise UsageError(f"--scores file not found: {str(path)!r}")
    try:
        df = pd.read_csv(path)
    except Exception as exc:  # noqa: BLE001 - any parse failure is bad input
        raise UsageError(f"--scores {str(path)!r} is not a readable CSV: {exc}") from None
    cols = [str(c).strip().lower() for c in df.columns]
    if "score" not in cols or "truth" not in cols:
        raise UsageError(f"--scores {str(path)!r} needs columns score,truth, got {list(df.columns)}")
    df.columns = cols
    scores = pd.to_numeric(df["score"], errors="coerce").to_numpy(dtype=np.float64)
    if scores.size < 2 or not np.all(np.isfinite(scores)):
        bad = [str(v) for v in df["score"][~np.isfinite(scores)][:3]] if scores.size else []
        raise UsageError(f"--scores {str(path)!r}: column score needs at least 2 finite numbers, bad values {bad}")
    words = {"1": True, "0": False, "true": True, "false": False, "1.0": True, "0.0": False}
    raw = df["truth"].astype(str).str.strip().str.lower()
    if not raw.isin(list(words)).all():
        raise UsageError(f"--scores {str(path)!r}: column truth must be 1/0 or true/false, got {sorted(set(raw[~raw.isin(list(words))]))[:3]}")
    truth = raw.map(words).to_numpy(dtype=bool)
    if truth.all() or not truth.any():
        raise UsageError(f"--scores {str(path)!r}: column truth needs both members (1) and non-members (0), "
                         f"got {int(truth.sum())} of {truth.size}")
    return scores, truth


def _cmd_one_run_scores(args, claim) -> int:
    from .blackbox import auroc, epsilon_interval_from_confusion, one_run_audit, tpr_at_fpr

    if any(getattr(args, n) is not None for n in ("guesses", "correct", "samples")):
        raise UsageError("--scores replaces --guesses/--correct/--samples: give one or the other")
    scores, truth = _read_scores(Path(args.scores))
    try:
        res = one_run_audit(scores, truth, strategy=args.strategy, confidence=args.confidence, delta=args.delta,
                            tau=args.tau, rng=args.seed, claim=claim)
        auc = auroc(scores, truth, confidence=args.confidence) if min(truth.sum(), (~truth).sum()) >= 2 else None
        tf = tpr_at_fpr(scores, truth, args.fpr, confidence=args.confidence)
        ei = epsilon_interval_from_confusion(tf.true_positives, tf.false_positives, tf.negatives - tf.false_positives,
                                             tf.positives - tf.true_positives, delta=args.delta, confidence=args.confidence)
    except ValueError as exc:
        raise UsageError(f"--scores {args.scores!r}: {exc}") from None
    pct = f"{100 * args.confidence:g} %"
    payload = {"scores_file": args.scores, **res.to_dict(),
               "auroc": None if auc is None else auc.to_dict(), "tpr_at_fpr": tf.to_dict(), "epsilon_interval": ei.to_dict()}
    lines = [f"one-run audit of {truth.size} scores ({int(truth.sum())} members) from {args.scores}: strategy "
             f"{res.strategy}, {res.num_guesses} guesses ({res.positive_guesses} member, {res.negative_guesses} "
             f"non-member) on {res.num_samples} canaries, {res.num_correct} correct",
             f"epsilon lower bound {res.epsilon_lower_bound:.4f} at delta={res.delta:g} (any mechanism; confidence {pct})",
             f"mu-GDP rejected for mu <= {res.mu_lower_bound:.5f}; GDP-family epsilon {res.epsilon_gdp_family:.4f} "
             "(assumes a Gaussian trade-off curve; not a lower bound for other mechanisms)"]
    if auc is not None:
        lines.append(f"AUROC {auc.auroc:.4f} [{auc.interval[0]:.4f}, {auc.interval[1]:.4f}] ({pct} DeLong, asymptotic)")
    lines += [f"TPR at FPR <= {tf.target_fpr:g}: {tf.tpr:.4f} [{tf.tpr_interval[0]:.4f}, {tf.tpr_interval[1]:.4f}], "
              f"FPR {tf.fpr:.4g} [{tf.fpr_interval[0]:.4g}, {tf.fpr_interval[1]:.4g}] (Clopper-Pearson, each at {pct})",
              f"that attack's epsilon at delta={ei.delta:g}: [{ei.epsilon_low:.4f}, {ei.epsilon_high:.4f}] "
              f"(CP on FPR and FNR, Bonferroni, {pct}; the lower end also bounds the mechanism's epsilon, "
              "the upper end only this attack's)",
              f"claim: {_fmt_claim(claim)}; verdict: {res.verdict} (the one-run audit)"]
    _emit(args, payload, lines)
    return EXIT_VIOLATION if res.verdict == "violation" else EXIT_OK

def _check_guess_counts(args) -> None:
    """``one-run``'s counts: 1 <= --guesses <= --samples and --correct <= --guesses (flags named)."""
    g, c, m = getattr(args, "guesses", None), getattr(args, "correct", None), getattr(args, "samples", None)
    if g is None:
        return
    if g == 0:
        raise UsageError("--guesses must be >= 1: with no guesses the one-run audit has nothing to test "
                         f"(got --guesses 0 --correct {c})")
    if c is not None and c > g:
        raise UsageError(f"--correct must be <= --guesses (each correct guess is a guess), got --correct {c} --guesses {g}")
    if m is not None and g > m:
        raise UsageError(f"--guesses must be <= --samples (one guess per canary at most), got --guesses {g} --samples {m}")


def _cmd_one_run(args) -> int:
    from .attacks.one_run import GDP_FAMILY_NOTE, epsilon_lower_bound, gdp_epsilon, mu_lower_bound
    from .blackbox.scores import _claim_rejected

    _check_guess_counts(args)
    claim = _claim_from_args(args)
    if args.scores is not None:
        return _cmd_one_run_scores(args, claim)
    missing = [f"--{n}" for n in ("guesses", "correct", "samples") if getattr(args, n) is None]
    if missing:
        raise UsageError(f"one-run needs --scores FILE or all of --guesses, --correct, --samples (missing {', '.join(missing)})")
    mu = float(mu_lower_bound(args.guesses, args.correct, args.samples, confidence=args.confidence, tau=args.tau))
    eps_gdp = float(gdp_epsilon(mu, args.delta))
    eps = float(epsilon_lower_bound(args.guesses, args.correct, args.samples, args.delta, args.confidence, args.tau))
    rejected = None if claim is None else _claim_rejected(claim, args.guesses, args.correct, args.samples, args.confidence,
                                                          args.delta, args.tau)
    verdict = "no claim" if claim is None else ("violation" if rejected else "consistent")
    payload = {"num_guesses": args.guesses, "num_correct": args.correct, "num_samples": args.samples, "tau": args.tau,
               "confidence": args.confidence, "delta": args.delta, "epsilon_lower_bound": eps,
               "mu_lower_bound": mu, "epsilon_gdp_family": eps_gdp, "epsilon_gdp_family_note": GDP_FAMILY_NOTE,
               "claim": None if claim is None else claim.to_dict(), "verdict": verdict, "procedure": "paper"}
    lines = [f"one-run audit: c'={args.guesses}, c={args.correct}, m={args.samples}, tau={args.tau:g}",
             f"epsilon lower bound {eps:.4f} at delta={args.delta:g} (any mechanism: (eps, delta)-DP rejected for eps <= it)",
             f"mu-GDP rejected for mu <= {mu:.5f}; GDP-family epsilon {eps_gdp:.4f} at delta={args.delta:g} "
             "(assumes a Gaussian trade-off curve; not a lower bound for other mechanisms)",
             f"claim: {_fmt_claim(claim)}; verdict: {verdict}"]
    _emit(args, payload, lines)
    return EXIT_VIOLATION if verdict == "violation" else EXIT_OK


def _selfcheck_notes(res) -> list[str]:
    """Why a self-check failed, in words; the power bar's assumption when --trials is below it."""
    from .selfcheck import DEFAULT_TRIALS, MIN_DETECTION_RATE

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


def _cmd_selfcheck(args) -> int:
    from .selfcheck import DEFAULT_TRIALS, selfcheck_cases, run_selfcheck

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
    _emit(args, {"repetitions": res.repetitions, "trials": res.trials, "confidence": res.confidence, "seed": res.seed,
                 "power_bar_trials": DEFAULT_TRIALS, "notes": notes,
                 "passed": res.passed, "table": res.table.to_dict(orient="records")}, lines)
    return EXIT_OK if res.passed else EXIT_VIOLATION


def _repo_root() -> Path:
    for base in (Path.cwd(), *Path.cwd().parents):
        if (base / "Snakefile").is_file() and (base / "workflow").is_dir():
            return base
    here = Path(__file__).resolve().parents[2]
    if (here / "Snakefile").is_file():
        return here
    raise UsageError("no Snakefile found in the current directory, its parents or the source checkout; "
                     "run `ppaudit figure` from the ppaudit repository")


def _cmd_figure(args) -> int:
    root = _repo_root()
    if not (Path(args.profile) if Path(args.profile).is_absolute() else root / args.profile).is_dir():
        raise UsageError(f"--profile {args.profile!r}: no such profile folder (relative paths are read from {root})")
    if args.configfile and not (Path(args.configfile) if Path(args.configfile).is_absolute() else root / args.configfile).is_file():
        raise UsageError(f"--configfile {args.configfile!r}: no such file (relative paths are read from {root})")
    exe = Path(sys.executable).with_name("snakemake")
    snakemake = str(exe) if exe.is_file() else shutil.which("snakemake")
    if snakemake is None:
        raise UsageError("snakemake is not installed; install the workflow extra: pip install 'ppaudit[workflow]'")
    cmd = [snakemake, "--profile", args.profile, "--cores", str(args.cores), args.name]
    if args.configfile:
        cmd += ["--configfile", args.configfile]
    if args.dry_run:
        cmd.append("--dry-run")
    if not args.json:
        print("+ " + " ".join(cmd), file=sys.stderr)
    proc = subprocess.run(cmd, cwd=root, capture_output=args.json, text=True)
    if args.json:
        _out(json.dumps({"command": cmd, "cwd": str(root), "returncode": proc.returncode,
                         "stdout_tail": proc.stdout[-4000:], "stderr_tail": proc.stderr[-4000:]}, indent=2))
    if proc.returncode != 0:
        missing = "MissingRuleException" in (proc.stderr or "") + (proc.stdout or "")
        print(f"ppaudit figure: error: snakemake failed for target {args.name!r} (exit {proc.returncode})"
              + ("; NAME must be one of the workflow's target rules (snakemake --list-target-rules)" if missing else ""),
              file=sys.stderr)
        return EXIT_USAGE  # snakemake's own failure: never the violation code
    return EXIT_OK


# --------------------------------------------------------------------------------------
# parser
# --------------------------------------------------------------------------------------


def _positive_float(name):
    def conv(text):
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number > 0, got {text!r}") from None
        if not (math.isfinite(v) and v > 0):
            raise argparse.ArgumentTypeError(f"{name} must be a number > 0, got {text!r}")
        return v
    return conv


def _unit_interval(name, closed_left=False):
    def conv(text):
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number in (0, 1), got {text!r}") from None
        if not ((0 <= v if closed_left else 0 < v) and v < 1):
            raise argparse.ArgumentTypeError(f"{name} must be in {'[0' if closed_left else '(0'}, 1), got {text!r}")
        return v
    return conv


def _nonneg_int(name, minimum=0):
    def conv(text):
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be an integer >= {minimum}, got {text!r}") from None
        if v < minimum:
            raise argparse.ArgumentTypeError(f"{name} must be an integer >= {minimum}, got {text!r}")
        return v
    return conv


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``ppaudit`` (all subcommands)."""
    p = _Parser(prog="ppaudit", description="Audit private prediction, label DP and your own mechanisms.",
                epilog="exit codes: 0 no violation, 1 violation detected, 2 bad usage or input (or an internal error)")
    from . import __version__

    p.add_argument("--version", action="version", version=f"ppaudit {__version__}")
    p.add_argument("--debug", action="store_true", help="show the traceback of an internal error")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def common(sp, seed=True):
        sp.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                        help="show the traceback of an internal error")
        sp.add_argument("--json", action="store_true", help="print the result as JSON")
        sp.add_argument("--confidence", type=_unit_interval("--confidence"), default=0.95,
                        help="confidence of the lower bounds / verdict (default 0.95)")
        if seed:
            sp.add_argument("--seed", type=_nonneg_int("--seed"), default=0, help="random seed (default 0)")

    v = sub.add_parser("audit-votes", help="audit a PATE operator's teacher votes",
                       description="Accounted cost, exact per-query RDP and an audit of the most exposed query of a "
                                   "PATE deployment, from its votes. VOTES.npz holds 'votes' (n_teachers, n_queries) "
                                   "integer labels [+ optional scalar 'num_classes'] or 'histograms' (n_queries, C); "
                                   "VOTES.npy holds one array: labels (n_teachers, n_queries), or histograms "
                                   "(n_queries, C) with --histograms. A label array with more queries than teachers "
                                   "whose rows agree more than its columns is warned about as looking transposed.")
    v.add_argument("votes", metavar="VOTES.npz|VOTES.npy")
    v.add_argument("--histograms", action="store_true", help="the .npy file holds (n_queries, C) histograms, not labels")
    v.add_argument("--num-classes", type=_nonneg_int("--num-classes", 2), metavar="C",
                   help="number of classes C of a label array (default: the file's num_classes, else max label + 1)")
    v.add_argument("--sigma", type=_positive_float("--sigma"), required=True, help="GNMax noise sigma (sigma2)")
    v.add_argument("--threshold", type=_positive_float("--threshold"), help="Confident-GNMax threshold T")
    v.add_argument("--sigma1", type=_positive_float("--sigma1"), help="Confident-GNMax threshold noise sigma1")
    v.add_argument("--delta", type=_unit_interval("--delta"), default=1e-5, help="delta of the reported epsilon (default 1e-5)")
    v.add_argument("--orders", help="comma-separated Renyi orders (default: 1.5 ... 2000)")
    v.add_argument("--trials", type=_nonneg_int("--trials", 100), default=200_000,
                   help="draws per side for the audit (default 200000; at least 100)")
    v.add_argument("--exact-queries", type=_nonneg_int("--exact-queries", 1), default=20,
                   help="costliest queries that get the exact RDP (default 20)")
    common(v)
    v.set_defaults(func=_cmd_audit_votes)

    c = sub.add_parser("audit-counts", help="RDP and (eps, delta) lower bounds from two output-count vectors",
                       description="COUNTS.csv has columns counts0 and counts1 (one row per output; an optional "
                                   "'output' column names it): the output counts of T0 runs on S and T1 runs on S'.")
    c.add_argument("counts", metavar="COUNTS.csv")
    c.add_argument("--sep", default=",", metavar="SEP",
                   help="column separator of COUNTS.csv: a character, or tab, semicolon, space (default ',')")
    c.add_argument("--orders", help="comma-separated orders > 1 (default 1.5,2,4,8,16,32,64)")
    c.add_argument("--delta", type=_unit_interval("--delta", closed_left=True), default=1e-5,
                   help="delta of the epsilon lower bound (default 1e-5; --claim-dp's delta replaces it)")
    c.add_argument("--selection", choices=("split", "bonferroni"), default="split", help="output-set search (default split)")
    _add_claim_options(c)
    common(c)
    c.set_defaults(func=_cmd_audit_counts)

    o = sub.add_parser("one-run", help="one-run f-DP audit from guess counts or attack scores (Alg. 3)",
                       description="The one-run f-DP audit (Mahloujifar et al. 2025b, Alg. 3 as in the observational "
                                   "paper's App. B; Theorem 5 with the tau shift): the family-free epsilon lower bound "
                                   "and the mu-GDP-family epsilon (assumes a Gaussian trade-off curve). Give the game's "
                                   "counts (--guesses, --correct, --samples) or an attack's scores (--scores FILE: CSV "
                                   "with columns score,truth; adds AUROC, TPR at --fpr and that attack's epsilon interval).")
    o.add_argument("--scores", metavar="FILE", help="CSV with columns score,truth (truth: 1/0 or true/false, 1 = member)")
    o.add_argument("--guesses", type=_nonneg_int("--guesses"), help="c': non-abstaining guesses")
    o.add_argument("--correct", type=_nonneg_int("--correct"), help="c: correct guesses")
    o.add_argument("--samples", type=_nonneg_int("--samples", 1), help="m: canaries in the game")
    o.add_argument("--tau", type=_unit_interval("--tau", closed_left=True), default=0.0, help="TV bound tau (default 0)")
    o.add_argument("--delta", type=_unit_interval("--delta"), default=1e-5, help="delta of the epsilon (default 1e-5)")
    o.add_argument("--fpr", type=_unit_interval("--fpr", closed_left=True), default=0.01,
                   help="with --scores: the FPR of the reported TPR and epsilon interval (default 0.01)")
    o.add_argument("--strategy", choices=("split", "bonferroni"), default="split",
                   help="with --scores: how the guess counts are chosen (default split)")
    o.add_argument("--seed", type=_nonneg_int("--seed"), default=0, help="with --scores: seed of the split (default 0)")
    _add_claim_options(o)
    common(o, seed=False)
    o.set_defaults(func=_cmd_one_run)

    s = sub.add_parser("selfcheck", help="run the auditor on correct mechanisms and planted-bug twins",
                       description="Exit 0 if correct mechanisms are flagged in <= 5% (+ binomial slack) of the runs "
                                   "and planted bugs in >= 90%, else 1. The 90% power bar assumes the default "
                                   "30,000 trials per side; with fewer, a failed power bar is reported as such.")
    s.add_argument("--repetitions", type=_nonneg_int("--repetitions", 1), default=100, help="runs per case (default 100)")
    s.add_argument("--trials", type=_nonneg_int("--trials", 1), default=30_000, help="draws per side per run (default 30000)")
    s.add_argument("--cases", help="comma-separated case names (default: all)")
    s.add_argument("--csv", help="also write the table to this CSV file")
    s.add_argument("--progress", action="store_true", help="show progress bars")
    common(s)
    s.set_defaults(func=_cmd_selfcheck)

    f = sub.add_parser("figure", help="build one figure/table target of the Snakemake workflow",
                       description="Runs `snakemake --profile PROFILE --cores N NAME` in the repository root "
                                   "(needs the [workflow] extra).")
    f.add_argument("name", metavar="NAME", help="the target, e.g. chadha_fig3 or selfcheck")
    f.add_argument("--cores", type=_nonneg_int("--cores", 1), default=2, help="cores (default 2)")
    f.add_argument("--profile", default="workflow/profiles/default", help="snakemake profile (default workflow/profiles/default)")
    f.add_argument("--configfile", help="config file (default: the workflow's config/config.yaml)")
    f.add_argument("-n", "--dry-run", action="store_true", help="only show what would run")
    f.add_argument("--json", action="store_true", help="print the command and its result as JSON")
    f.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show the traceback of an internal error")
    f.set_defaults(func=_cmd_figure)

    from .cli_search import add_search_parser

    add_search_parser(sub, common, _add_claim_options)
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``ppaudit`` command; returns the exit code.

    Bad input (a :class:`UsageError`, or a ``ValueError`` the library raises on a value the
    command passed on) → one line on stderr and exit 2; any other exception is an internal
    error → exit 2 with one line, and the traceback only under ``--debug``. Only a detected
    violation (or a failed self-check) exits 1.
    """
    from .blackbox.mechanism_checks import MechanismError

    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except BrokenPipeError:  # `ppaudit --help | head -1`: the help was printed
        _stdout_closed()
        return EXIT_OK
    prog = f"ppaudit {args.command}"
    args.argv = list(sys.argv[1:] if argv is None else argv)  # the command as typed (for reports)
    try:
        code = int(args.func(args))
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            _stdout_closed()
        return code  # the verdict's code, whether or not the reader of stdout is still there
    except UsageError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
    except MechanismError as exc:  # the user's mechanism or module: theirs, with their traceback under --debug
        if getattr(args, "debug", False):
            traceback.print_exc()
        hint = "" if getattr(args, "debug", False) or exc.__cause__ is None else " (rerun with --debug for its traceback)"
        print(f"{prog}: error: {exc}{hint}", file=sys.stderr)
    except ValueError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        if getattr(args, "debug", False):
            traceback.print_exc()
    except BrokenPipeError:  # pragma: no cover - every stdout write goes through _out
        _stdout_closed()
        print(f"{prog}: error: stdout was closed before the result was written", file=sys.stderr)
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 (the top-level handler: nothing escapes as a crash)
        if getattr(args, "debug", False):
            traceback.print_exc()
        print(f"{prog}: internal error: {type(exc).__name__}: {exc}"
              + ("" if getattr(args, "debug", False) else " (rerun with --debug for the traceback; please report it)"),
              file=sys.stderr)
    return EXIT_USAGE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
