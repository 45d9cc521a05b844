"""Issue 13's repeated-query example, run through the PATE audit stage's own code and written
as rows of the findings table (``results/tables/findings/repeated_query_example.csv``).

The setting (issue 13 §1): a PATE query answered ``n`` times from the histogram ``H`` of *one*
training run, ``H_S ~ Mult(k, P_q)`` against ``H_S' = Mult(k − 1, P_q) + Mult(1, P'_q)``, fresh
Gaussian noise per answer. Because every answer is a post-processing of the same ``H``, the
transcript's RDP is at most ``D_α(H_S ‖ H_S')`` (data processing) and is computed exactly by
enumerating the answer counts (:func:`ppaudit.vote_models.repeated_query_rdp`). The paper's
procedure (Chadha et al. 2024, §4.2) audits one answer and composes it ``n`` times; with
k = 250, σ = 40, P_q = (0.5, 0.5), P'_q = (0.75, 0.25), n = 1000, α = 64 that composition is
1.434 (exact) while the transcript is 0.033, and the paper's *audit* — a claimed lower bound —
ends above the valid upper bound. The sound transcript audit (ours, Rao–Blackwellised) stays
below it.

Nothing here is specific to the example except the defaults: the rows come from
:func:`ppaudit.experiments.chadha2024.private_prediction.audit_crafted` (with ``transcript=True``, the
same call the ``audit_noisy_argmax`` rule makes), :func:`ppaudit.audit.compose_candidates`,
:func:`ppaudit.audit.summarize_candidates` and
:func:`ppaudit.experiments.chadha2024.pate_capc_findings.findings_rows`.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

__all__ = ["REPEATED_QUERY_EXAMPLE", "repeated_query_example", "repeated_query_example_rows"]

#: The example of issue 13 §1 (the config block chadha2024.pate_capc.repeated_query_example).
REPEATED_QUERY_EXAMPLE = {
    "num_teachers": 250,
    "sigma": 40.0,
    "p_q": (0.5, 0.5),
    "p_q_prime": (0.75, 0.25),
    "num_repeats": 1000,
}


def _check_law(p, name: str) -> np.ndarray:
    a = np.asarray(p, dtype=np.float64).reshape(-1)
    if a.size < 2 or not np.all(np.isfinite(a)) or np.any(a < 0) or abs(a.sum() - 1.0) > 1e-9:
        raise ValueError(f"{name} must be a probability vector over >= 2 classes, got {list(np.asarray(p).reshape(-1))}")
    return a


def repeated_query_example(
    p_q: Sequence[float],
    p_q_prime: Sequence[float],
    num_teachers: int,
    sigma: float,
    num_repeats: int,
    orders: Sequence[float],
    seed: int,
    trials: int = 10**8,
    confidence: float = 0.95,
    transcript_draws: int = 10_000,
) -> pd.DataFrame:
    """Per-query audit table of one query asked ``num_repeats`` times of a PATE vote model.

    The canary-holding teacher votes by ``p_q_prime``, the other ``num_teachers − 1`` (and
    the canary-free side's last teacher) by ``p_q``. The per-answer audit uses exact counts of
    ``trials`` trials (the model enumerates); the transcript columns are exact by enumeration
    of the answer counts and the transcript audit is Rao–Blackwellised over
    ``transcript_draws`` training draws (issue 13 §1). One audit: Bonferroni changes nothing.

    Returns:
        The ``per_query`` table of :func:`~ppaudit.experiments.chadha2024.private_prediction.audit_crafted`
        (one candidate, one query, ``repetitions = num_repeats``).

    Raises:
        ValueError: a law that is not a probability vector, laws of different lengths, or a
            bad count.
    """
    from ...adversaries import CraftedCanaries
    from ...vote_models import PateFit
    from .private_prediction import audit_crafted

    p, pp = _check_law(p_q, "p_q"), _check_law(p_q_prime, "p_q_prime")
    if p.size != pp.size:
        raise ValueError(f"p_q and p_q_prime must have the same number of classes, got {p.size} and {pp.size}")
    for name, v in (("num_teachers", num_teachers), ("num_repeats", num_repeats), ("transcript_draws", transcript_draws), ("trials", trials)):
        if int(v) != v or v < 1:
            raise ValueError(f"{name} must be a positive integer, got {v!r}")
    if not np.isfinite(sigma) or sigma <= 0:
        raise ValueError(f"sigma must be positive, got {sigma!r}")
    fit = PateFit(p[None, :], pp[None, None, :], int(num_teachers), 1)
    crafted = CraftedCanaries("nat-advq", np.array([0]), np.array([int(np.argmax(pp))]), np.array([[0]]), np.array([[int(num_repeats)]]))
    return audit_crafted(fit, crafted, float(sigma), int(trials), orders, seed=seed, experiment="repeated_query_example",
                         confidence=confidence, transcript=True, transcript_draws=int(transcript_draws), count_mode="exact")


def repeated_query_example_rows(per_query: pd.DataFrame, delta: float, floor: float, settings: dict) -> pd.DataFrame:
    """The findings rows of the example: the paper's composed audit against the transcript cap,
    the sound transcript audit against the same cap, and the audit ≤ exact chain.

    Args:
        per_query: :func:`repeated_query_example`'s table.
        delta: δ of the Thm 1 conversion (RDP values on the ε scale, as the paper plots them).
        floor: :func:`ppaudit.audit.epsilon_floor` of the orders and ``delta``.
        settings: the example's ``num_teachers, sigma, p_q, p_q_prime, num_repeats`` (named in
            the rows).

    Returns:
        Rows with the columns of :data:`~ppaudit.experiments.chadha2024.pate_capc_findings.FINDINGS_COLUMNS`,
        dataset ``"synthetic (repeated query)"``.
    """
    from ...audit import compose_candidates, summarize_candidates
    from .pate_capc_findings import findings_rows

    _, eps = compose_candidates(per_query, delta=delta)
    summary = summarize_candidates(eps)
    summary.insert(0, "adversary", "nat-advq")
    summary.insert(0, "dataset", "synthetic (repeated query)")
    rows = findings_rows(summary, "pate", floor)
    s = settings
    setting = (f"Issue 13 §1 example: one query asked n = {int(s['num_repeats'])} times of one PATE training run, k = {int(s['num_teachers'])}, "
               f"σ = {float(s['sigma']):g}, P_q = {tuple(float(x) for x in s['p_q'])}, P'_q = {tuple(float(x) for x in s['p_q_prime'])}; "
               "the paper composes the per-answer audit n times, the transcript RDP is exact (answer-count enumeration).")
    rows["note"] = setting + " " + rows["note"].astype(str)
    return rows
