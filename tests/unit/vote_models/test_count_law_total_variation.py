"""The distance of T-trial count laws from a per-trial total variation (issue 34 §5; closed-form reference).

:func:`ppaudit.vote_models.count_law_total_variation` bounds ``TV(Mult(T, μ), Mult(T, μ̂))`` by
``min(T·τ, τ·√(T/min μ̂))``. For two classes the exact distance of two binomials is a finite sum;
the bound must never fall below it (soundness over seeded random laws), must be the Pinsker term
where classes are not tiny, and a planted "bound" that drops the √ factor is caught.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom

from ppaudit.vote_models import count_law_total_variation


def _exact_binomial_tv(t: int, p: float, q: float) -> float:
    k = np.arange(t + 1)
    return 0.5 * float(np.abs(binom.pmf(k, t, p) - binom.pmf(k, t, q)).sum())


def test_bound_is_sound_against_the_exact_binomial_distance():
    rng = np.random.default_rng(34)
    for _ in range(200):
        t = int(rng.integers(1, 3000))
        mu_hat = float(rng.uniform(0.01, 0.99))
        tau = float(rng.uniform(0.0, 0.3)) * min(mu_hat, 1 - mu_hat)
        mu = mu_hat + tau * rng.choice([-1.0, 1.0])  # TV(μ, μ̂) = τ exactly
        exact = _exact_binomial_tv(t, mu, mu_hat)
        bound = count_law_total_variation(tau, t, [mu_hat, 1 - mu_hat])
        assert exact <= bound + 1e-12, (t, mu, mu_hat, tau, exact, bound)


def test_pinsker_term_and_linear_fallback():
    t, tau = 10**8, 1.5e-13
    assert count_law_total_variation(tau, t, [0.3, 0.7]) == pytest.approx(tau * np.sqrt(t / 0.3))
    assert count_law_total_variation(tau, t, [0.0, 1.0]) == pytest.approx(t * tau)  # an empty class: the linear bound
    assert count_law_total_variation(0.5, 10, [0.5, 0.5]) == 1.0  # capped
    assert count_law_total_variation(0.0, t, [0.5, 0.5]) == 0.0


def test_a_planted_unsound_bound_is_caught():
    """τ·√T/… without the 1/√m factor falls below the exact distance for a rare class."""
    t, mu_hat, tau = 2000, 0.02, 0.004
    exact = _exact_binomial_tv(t, mu_hat + tau, mu_hat)
    assert tau * np.sqrt(t) < exact <= count_law_total_variation(tau, t, [mu_hat, 1 - mu_hat])


@pytest.mark.parametrize("kwargs, match", [(dict(tau=-0.1), "tau must be in"), (dict(trials=0), "trials"),
                                           (dict(probabilities=[0.5, -0.1]), "non-negative")])
def test_bad_input_is_named(kwargs, match):
    args = {"tau": 1e-3, "trials": 10, "probabilities": [0.5, 0.5], **kwargs}
    with pytest.raises(ValueError, match=match):
        count_law_total_variation(**args)
