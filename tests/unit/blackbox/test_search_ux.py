"""Issue 36 §2, §5: what a researcher reads of a search — violated orders, total draws, the level of
each bound without a claim, the time/draw budget. Each test runs one or two pairs at ≤ 5·10⁴ draws
per side (< 1 s each)."""

import re

import numpy as np
import pytest

from ppaudit.blackbox import Claim, search_mechanism


def rounded_gauss(sigma):
    def mech(c, n, rng):  # a Gaussian count on a grid of 1/4: integer outputs
        return np.round(4 * (np.sum(c) + sigma * rng.standard_normal(n))).astype(int)
    return mech


PAIR = [([0, 1, 0, 1, 1], [0, 1, 0, 1, 0])]


def test_summary_prints_every_violated_order_and_total_draws():
    claim = Claim.rdp([2, 3, 4, 8, 16], [1.0, 1.5, 2.0, 4.0, 8.0])
    res = search_mechanism(rounded_gauss(0.3), PAIR, 20_000, rng=0, claim=claim)
    assert res.verdict == "violation" and res.audit.violated_orders.size >= 2
    text = res.summary()
    line = next(x for x in text.splitlines() if "RDP violated at" in x)
    shown = [float(v) for v in re.findall(r"order ([\d.]+):", line)]
    assert shown == [float(v) for v in res.audit.violated_orders]
    assert res.total_draws == 2 * (res.pilot_trials + res.certification_trials) == 40_000
    assert "40000 draws in all" in text and res.to_dict()["total_draws"] == 40_000


def test_summary_without_claim_states_each_bounds_level():
    res = search_mechanism(rounded_gauss(1.0), PAIR, 5_000, rng=0)
    assert "for each bound on its own (the epsilon and RDP bounds jointly 0.9)" in res.summary()
    # consistent under a claim: the order closest to its claim, and that none is violated
    ok = search_mechanism(rounded_gauss(1.0), PAIR, 5_000, rng=0, claim=Claim.zcdp(10.0))
    assert ok.verdict == "consistent" and "no order violated" in ok.summary()
