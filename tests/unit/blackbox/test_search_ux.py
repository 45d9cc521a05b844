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


def rr(p_keep):
    def mech(c, n, rng):  # randomized response on the sum: ln(p/(1-p))-DP on neighbouring sums
        keep = rng.random(n) < p_keep
        return np.where(keep, int(np.sum(c)) % 2, 1 - int(np.sum(c)) % 2)
    return mech


PAIRS4 = [([0], [1]), ([1], [0]), ([0, 0], [0, 1]), ([1, 1], [1, 0])]


def test_max_draws_lowers_trials_exactly_and_reproducibly():
    from ppaudit.blackbox.budget import planned_draws

    res = search_mechanism(rr(0.9), PAIRS4, 10**12, rng=3, claim=Claim.dp(1.0), certify_top=2, max_draws=100_000)
    assert res.trials < 10**12 and res.total_draws <= 100_000
    assert planned_draws(res.trials + 1, 0.2, 4, 2) > 100_000  # the largest plan that fits
    assert res.verdict == "violation"  # ln 9 ≈ 2.2 > 1, seen at 10^5 draws
    assert "trials lowered from 1,000,000,000,000" in res.summary()
    again = search_mechanism(rr(0.9), PAIRS4, 10**12, rng=3, claim=Claim.dp(1.0), certify_top=2, max_draws=100_000)
    assert again.to_dict() == res.to_dict()
    with pytest.raises(ValueError, match="max_draws must be an integer >= 1 or None, got -5"):
        search_mechanism(rr(0.9), PAIRS4, 1000, max_draws=-5)
    with pytest.raises(ValueError, match=r"the budget \(max_draws=10\) allows 1 draws per side per pair for 4 pair\(s\).*needs at least 96"):
        search_mechanism(rr(0.9), PAIRS4, 1000, max_draws=10)
    with pytest.raises(ValueError, match="time_budget must be a number of seconds > 0 or None, got 'soon'"):
        search_mechanism(rr(0.9), PAIRS4, 1000, time_budget="soon")


def _deadline_after(monkeypatch, calls):
    """The clock runs out after ``calls`` checks of the deadline; draws come in chunks of 1000."""
    from ppaudit.blackbox import budget, search

    state = {"n": 0}

    def expired(self):
        state["n"] += 1
        return state["n"] > calls

    monkeypatch.setattr(budget.SearchBudget, "expired", expired)
    monkeypatch.setattr(search, "probe", lambda draw, n: 0.25 / 1000)  # -> chunks of 1000 draws


def test_deadline_leaves_pairs_out_and_cuts_certification_alike(monkeypatch):
    _deadline_after(monkeypatch, 3)  # pairs 1..3 piloted (3 checks), pair 4 left out, certification cut at once
    res = search_mechanism(rr(0.9), PAIRS4 + [([0, 1], [1, 1])], 10_000, rng=0, claim=Claim.dp(1.0), certify_top=2,
                           time_budget=1e6)
    assert res.trials == 10_000  # the (patched) estimate fits: not lowered
    assert "1 of 5 pairs left out of the pilot" in res.summary()
    assert (res.pairs["output_set"] == "not piloted (time budget spent)").sum() == 1
    cut = [au for au in res.audits.values() if au.trials < res.certification_trials]
    assert len(cut) >= 1 and all(au.counts0.sum() == au.counts1.sum() == au.trials for au in cut)
    assert res.verdict == "violation" and res.total_draws < 2 * 10_000 * 5


def test_deadline_cut_search_is_sound(monkeypatch):
    """Soundness of the clock-cut search (budget.py's argument): a 1-DP mechanism (RR at e^1 odds) is
    flagged in at most 5 % (+ binomial slack) of 60 seeded searches cut at the deadline. ~1.5 s."""
    p = np.e / (1 + np.e)
    flagged = 0
    for seed in range(60):
        _deadline_after(monkeypatch, 2 + seed % 5)
        res = search_mechanism(rr(p), PAIRS4, 6_000, rng=seed, claim=Claim.dp(1.0), certify_top=2, time_budget=1e6)
        flagged += res.violation
    assert flagged <= 7  # P(Bin(60, 0.05) >= 8) < 0.01


def gauss_count(c, n, rng):  # sum + N(0, 0.5²) claimed 1-DP (1-D real outputs)
    return float(np.sum(c)) + 0.5 * rng.standard_normal(n)


def test_real_witness_said_as_intervals_with_examples_and_rechecked(tmp_path):
    from ppaudit.blackbox import ClassifierOutputs, SearchResult

    res = search_mechanism(gauss_count, [([0, 1], [0, 0])], 10_000, rng=1, claim=Claim.dp(1.0),
                           outputs=ClassifierOutputs("logistic"))
    oset = res.witness.output_set
    assert res.verdict == "violation" and oset.kind == "threshold"
    # logistic on one feature: O is one half-line, said as such, and agrees with the classifier
    m = re.match(r"output (<=|>) (-?[\d.]+) \(i\.e\. classifier score", oset.description)
    assert m, oset.description
    side, b = m.group(1), float(m.group(2))
    xs = np.array([b - 0.01, b + 0.01])
    assert list(oset.contains(xs)) == ([True, False] if side == "<=" else [False, True])
    ex = oset.examples
    assert len(ex["inside"]) == 3 and len(ex["outside"]) == 3
    assert oset.contains(np.array(ex["inside"])).all() and not oset.contains(np.array(ex["outside"])).any()
    assert "e.g. in O: " in res.summary() and res.to_dict()["witness"]["output_set"]["examples"] == ex
    # saved with its classifier, loaded, re-checked on fresh draws: the same set, a fresh sound test
    res.save(tmp_path / "res.pkl")
    back = SearchResult.load(tmp_path / "res.pkl")
    again = back.recheck(gauss_count, 10_000, rng=2)
    assert again.violation and again.trials == 10_000 and again.confidence == 0.95
    fresh = back.recheck(lambda c, n, rng: 0.5 * rng.standard_normal(n), 10_000, rng=3)  # same outputs both sides
    assert not fresh.violation
    with pytest.raises(ValueError, match="saved search result not found"):
        SearchResult.load(tmp_path / "nope.pkl")
