"""``ppaudit one-run --guesses C' --correct C --samples M [--tau T]`` or ``ppaudit one-run --scores
FILE``: the one-run f-DP audit (Alg. 3 of Mahloujifar et al. 2025b, Theorem 5 with the τ shift).

With an attack's scores also the AUROC, the TPR at ``--fpr`` and that attack's ε interval.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from .common import (EXIT_OK, EXIT_VIOLATION, UsageError, add_claim_options, add_common_options, claim_from_args,
                     emit, fmt_claim, nonneg_int, unit_interval)

__all__ = ["add_parser", "run"]


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
    from ..blackbox import auroc, epsilon_interval_from_confusion, one_run_audit, tpr_at_fpr

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
              f"claim: {fmt_claim(claim)}; verdict: {res.verdict} (the one-run audit)"]
    emit(args, payload, lines)
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


def run(args) -> int:
    """Run ``ppaudit one-run`` (counts, or ``--scores``); returns the exit code."""
    from ..attacks.one_run import GDP_FAMILY_NOTE, epsilon_lower_bound, gdp_epsilon, mu_lower_bound
    from ..blackbox.scores import _claim_rejected

    _check_guess_counts(args)
    claim = claim_from_args(args)
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
             f"claim: {fmt_claim(claim)}; verdict: {verdict}"]
    emit(args, payload, lines)
    return EXIT_VIOLATION if verdict == "violation" else EXIT_OK


def add_parser(sub) -> argparse.ArgumentParser:
    """Register ``one-run`` on the subparsers ``sub``."""
    o = sub.add_parser("one-run", help="one-run f-DP audit from guess counts or attack scores (Alg. 3)",
                       description="The one-run f-DP audit (Mahloujifar et al. 2025b, Alg. 3 as in the observational "
                                   "paper's App. B; Theorem 5 with the tau shift): the family-free epsilon lower bound "
                                   "and the mu-GDP-family epsilon (assumes a Gaussian trade-off curve). Give the game's "
                                   "counts (--guesses, --correct, --samples) or an attack's scores (--scores FILE: CSV "
                                   "with columns score,truth; adds AUROC, TPR at --fpr and that attack's epsilon interval).")
    o.add_argument("--scores", metavar="FILE", help="CSV with columns score,truth (truth: 1/0 or true/false, 1 = member)")
    o.add_argument("--guesses", type=nonneg_int("--guesses"), help="c': non-abstaining guesses")
    o.add_argument("--correct", type=nonneg_int("--correct"), help="c: correct guesses")
    o.add_argument("--samples", type=nonneg_int("--samples", 1), help="m: canaries in the game")
    o.add_argument("--tau", type=unit_interval("--tau", closed_left=True), default=0.0, help="TV bound tau (default 0)")
    o.add_argument("--delta", type=unit_interval("--delta"), default=1e-5, help="delta of the epsilon (default 1e-5)")
    o.add_argument("--fpr", type=unit_interval("--fpr", closed_left=True), default=0.01,
                   help="with --scores: the FPR of the reported TPR and epsilon interval (default 0.01)")
    o.add_argument("--strategy", choices=("split", "bonferroni"), default="split",
                   help="with --scores: how the guess counts are chosen (default split)")
    o.add_argument("--seed", type=nonneg_int("--seed"), default=0, help="with --scores: seed of the split (default 0)")
    add_claim_options(o)
    add_common_options(o, seed=False)
    o.set_defaults(func=run)
    return o
