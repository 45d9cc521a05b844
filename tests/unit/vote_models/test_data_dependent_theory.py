"""E_H[dd(H)], max_H dd(H) and dd(E[H]) of a random-histogram vote model (issue 13 §3)."""

import itertools

import numpy as np
import pytest
from numpy.testing import assert_allclose

from ppaudit.accounting import gnmax_rdp_data_dependent, gnmax_rdp_data_independent
from ppaudit.vote_models import (
    capc_vote_model,
    data_dependent_theory,
    enumerate_output_distributions,
    pate_vote_model,
)


def _brute(model, sigma, orders):
    """Every voter's vote enumerated: E_S[dd], E_S'[dd], max over the support, dd(E[H])."""
    c = model.num_classes
    voters = [np.asarray(p) for cnt, p in zip(model.group_counts, model.group_probs) for _ in range(int(cnt))]
    exp, sup, means = [], [], []
    for last in (model.last, model.last_prime):
        e, m = np.zeros(len(orders)), np.zeros(c)
        for votes in itertools.product(range(c), repeat=len(voters) + 1):
            w = np.prod([p[v] for p, v in zip(voters + [last], votes)])
            if w == 0:
                continue
            h = (np.bincount(votes, minlength=c) + model.constant).astype(float)
            d = gnmax_rdp_data_dependent(h, sigma, orders)
            e += w * d
            m += w * h
            sup.append(d)
        exp.append(e)
        means.append(gnmax_rdp_data_dependent(m, sigma, orders))
    return np.maximum(*exp), np.max(sup, axis=0), np.maximum(*means)


@pytest.mark.parametrize(
    "model",
    [
        pate_vote_model([0.7, 0.2, 0.1], [0.1, 0.2, 0.7], 6),
        capc_vote_model(np.array([[0.9, 0.1, 0.0], [1.0, 0.0, 0.0], [0.6, 0.3, 0.1], [0.5, 0.5, 0.0], [0.8, 0.0, 0.2]]), [0.0, 0.0, 1.0]),
    ],
)
def test_against_brute_force(model):
    sigma, orders = 1.0, [2.0, 4.0, 16.0]
    want_exp, want_max, want_mean = _brute(model, sigma, orders)
    got = data_dependent_theory(model, sigma, orders)
    assert_allclose(got.expected, want_exp, rtol=1e-9)
    assert_allclose(got.maximum, want_max, rtol=1e-12)
    assert_allclose(got.at_mean, want_mean, rtol=1e-9)
    assert np.all(got.expected_lo <= got.expected + 1e-12) and np.all(got.expected <= got.expected_hi + 1e-12)
    assert np.all(got.expected <= got.maximum + 1e-12)
    assert np.all(got.maximum <= gnmax_rdp_data_independent(sigma, orders) + 1e-12)
    # the plug-in dd(E[H]) is not the expectation: here they differ
    assert np.max(np.abs(got.expected - got.at_mean)) > 1e-3


def test_enumerated_output_input_and_bad_source():
    model = pate_vote_model([0.8, 0.2], [0.2, 0.8], 30)
    enum = enumerate_output_distributions(model, 3.0)
    a = data_dependent_theory(enum, 3.0, [2.0, 8.0])
    b = data_dependent_theory(model, 3.0, [2.0, 8.0])
    assert_allclose(a.expected, b.expected)
    with pytest.raises(ValueError, match="source"):
        data_dependent_theory([1, 2], 3.0, [2.0])
    with pytest.raises(ValueError, match="sigma"):
        data_dependent_theory(model, 0.0, [2.0])
