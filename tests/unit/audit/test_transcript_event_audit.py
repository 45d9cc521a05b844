"""ppaudit.audit.rao_blackwell_transcript_event: the whole transcript of independent answers,
Rao–Blackwellised at once — soundness over seeded repetitions, detection where the per-answer
corners give nothing, a planted bug, and bad input."""

from __future__ import annotations

import numpy as np
import pytest

from ppaudit.audit import binomial_transcript_epsilon, composed_event_epsilon, rao_blackwell_transcript_event, rao_blackwell_two_cut

N, M, SHIFT, DELTA = 20, 1000, 0.02, 1e-6


def _draws(seed):
    """Answer i: class-1 probability u ~ U[0.3, 0.5] given the draw on S, u + SHIFT on S' (means 0.4 / 0.42)."""
    u = np.random.default_rng(seed).uniform(0.3, 0.5, (N, M))
    return [np.stack([1 - x, x], 1) for x in u], [np.stack([1 - x - SHIFT, x + SHIFT], 1) for x in u]


# the true ε of the transcript: the count is sufficient, Bin(N, 0.4) vs Bin(N, 0.42)
TRUTH = float(np.max(binomial_transcript_epsilon(0.4, 0.4 + SHIFT, N, DELTA)))


def test_sound_over_seeded_repetitions_and_off_zero():
    runs = np.array([rao_blackwell_transcript_event(*_draws(s), DELTA, 0.95, difference_bounds=SHIFT, rng=s).epsilon_lower_bound
                     for s in range(200)])
    fails = int((runs > TRUTH + 1e-12).sum())
    assert fails <= 0.05 * 200 + 3 * np.sqrt(200 * 0.05 * 0.95), (fails, TRUTH)  # ≤ 5 % + binomial slack
    assert runs.mean() > 0.1 * TRUTH and (runs > 0).mean() > 0.9, (runs.mean(), TRUTH)


def test_detects_where_the_per_answer_corners_compose_to_zero():
    p, q = _draws(7)
    corners = [rao_blackwell_two_cut(a, b, [2.0], 1 - 0.05 / N, difference_bound=SHIFT, num_repeats=1, delta=DELTA,
                                     selection="bonferroni").details.get("epsilon_event", (np.nan, np.nan)) for a, b in zip(p, q)]
    assert composed_event_epsilon([c[0] for c in corners], [c[1] for c in corners], DELTA) == 0.0
    res = rao_blackwell_transcript_event(p, q, DELTA, 0.95, difference_bounds=SHIFT, rng=7)
    assert 0 < res.epsilon_lower_bound <= TRUTH and 1 <= res.details["threshold"] <= N and res.details["answers"] == N


def test_planted_bug_point_estimates_exceed_the_truth():
    # the same event with the pilot means taken as exact (no interval): above the truth in many runs
    over = 0
    for s in range(40):
        p, q = _draws(1000 + s)
        pm = np.array([a[:, 1].mean() for a in p])
        qm = np.array([b[:, 1].mean() for b in q])
        over += composed_event_epsilon(qm, pm, DELTA) > TRUTH
    assert over >= 8, over


def test_identical_sides_give_zero_and_bad_input_is_refused():
    p, _ = _draws(3)
    assert rao_blackwell_transcript_event(p, p, DELTA, 0.95, difference_bounds=1e-9, rng=0).epsilon_lower_bound == 0.0
    with pytest.raises(ValueError, match="same number"):
        rao_blackwell_transcript_event(p, p[:-1], DELTA)
    with pytest.raises(ValueError, match="answer 1: p and q draws must be"):
        rao_blackwell_transcript_event(p[:2], [p[0], p[1][:10]], DELTA)
    with pytest.raises(ValueError, match="delta must be in"):
        rao_blackwell_transcript_event(p, p, 1.5)
    with pytest.raises(ValueError, match="at least 2 pilot"):
        rao_blackwell_transcript_event([x[:5] for x in p], [x[:5] for x in p], DELTA)
