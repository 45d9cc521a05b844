"""The Monte Carlo Rényi estimate from log-likelihood-ratio draws against the exact divergence."""

import numpy as np
import pytest

from ppaudit.divergence import renyi_divergence, renyi_divergence_from_llr_samples


def test_estimate_matches_exact_divergence_within_its_standard_error():
    p = np.array([0.5, 0.3, 0.15, 0.05])
    q = np.array([0.4, 0.3, 0.2, 0.1])
    orders = [1.5, 2.0, 4.0]
    exact = renyi_divergence(p, q, orders)
    rng = np.random.default_rng(20261124)
    x = rng.choice(p.size, size=200_000, p=p)
    est, se = renyi_divergence_from_llr_samples(np.log(p[x] / q[x]), orders)
    assert np.all(se > 0)
    assert np.all(np.abs(est - exact) <= 5 * se), (est, exact, se)
    # a planted bug (the wrong sign of the ratio) is far outside the error bars
    wrong, _ = renyi_divergence_from_llr_samples(np.log(q[x] / p[x]), orders)
    assert np.any(np.abs(wrong - exact) > 20 * se)


def test_identical_laws_give_zero_and_bad_input_is_named():
    est, se = renyi_divergence_from_llr_samples(np.zeros(10), [2.0, 8.0])
    assert np.all(est == 0.0) and np.all(se == 0.0)
    with pytest.raises(ValueError, match="at least 2 draws"):
        renyi_divergence_from_llr_samples([0.1], [2.0])
