"""search_mechanism: soundness of the whole search, power, the witness, bad input (issue 28)."""

import itertools
import json
import math

import numpy as np
import pytest
from scipy.stats import binom

from ppaudit.blackbox import Claim, ClassifierOutputs, SearchResult, search_mechanism
from ppaudit.blackbox.neighbours import count_vectors, replace_one

# --------------------------------------------------------------------------------------
# mechanisms, vectorised over the n draws
# --------------------------------------------------------------------------------------


def gaussian_rnm(c, n, rng):
    """argmax(c + N(0, 2² I)): 1/8-zCDP for one count ±1 (Gaussian mechanism, L2 sensitivity 1)."""
    c = np.asarray(c, dtype=float)
    return np.argmax(c + 2.0 * rng.standard_normal((n, c.size)), axis=1)


def laplace_rnm(c, n, rng):
    """argmax(c + Lap(1)): (1, 0)-DP for counting queries (Dwork & Roth 2014, Claim 3.9)."""
    c = np.asarray(c, dtype=float)
    return np.argmax(c + rng.laplace(0.0, 1.0, (n, c.size)), axis=1)


_KEEP = math.e / (math.e + 3)


def rr4(db, n, rng):
    """4-ary randomized response of the one record: exactly (1, 0)-DP (the claim is tight)."""
    v = db[0]
    other = (v + 1 + rng.integers(0, 3, n)) % 4
    return np.where(rng.random(n) < _KEEP, v, other)


def exponential(epsilon_in_exponent):
    """Exponential mechanism over 3 candidates with utility = vote counts: p ∝ exp(e·u).

    e = ε/2 is the correct (ε, 0)-DP mechanism under replace-one (each count moves by ≤ 1,
    McSherry & Talwar 2007); e = ε forgets the 2Δ and is 2ε-DP.
    """

    def mech(votes, n, rng):
        u = np.bincount(np.asarray(votes), minlength=3).astype(float)
        p = np.exp(epsilon_in_exponent * (u - u.max()))
        return rng.choice(3, size=n, p=p / p.sum())

    return mech


def rr_pairs():
    return itertools.chain.from_iterable(replace_one([v], range(4)) for v in range(4))  # 12 pairs


def vote_pairs():
    return itertools.chain(replace_one([0, 0, 1], range(3)), replace_one([0, 1, 2], range(3)))  # 12 pairs


CORRECT = [
    ("gaussian_rnm", gaussian_rnm, lambda: count_vectors(3, 1), Claim.zcdp(1 / 8)),  # 12 pairs
    ("laplace_rnm", laplace_rnm, lambda: count_vectors(3, 1), Claim.dp(1.0)),
    ("randomized_response", rr4, rr_pairs, Claim.dp(1.0)),
    ("exponential", exponential(0.5), vote_pairs, Claim.dp(1.0)),
]


def test_soundness_of_the_whole_search():
    """≥ 200 seeded searches of correct mechanisms over ≥ 10 pairs: false violations ≤ 5 %.

    The bar is the binomial 99.9 % quantile of Bin(searches, 0.05): a sound search exceeds it
    with probability < 0.1 %.
    """
    seeds = 50
    flagged, total = 0, 0
    for name, mech, pairs, claim in CORRECT:
        assert len(list(pairs())) >= 10
        hits = sum(search_mechanism(mech, pairs(), 2_000, rng=s, claim=claim).violation for s in range(seeds))
        assert hits <= binom.ppf(0.999, seeds, 0.05), name
        flagged += hits
        total += seeds
    assert total >= 200
    assert flagged <= binom.ppf(0.999, total, 0.05)


def laplace_1d(x, n, rng):
    """x + Lap(1): exactly (1, 0)-DP for a scalar query of sensitivity 1 (the claim is tight)."""
    return float(x) + rng.laplace(0.0, 1.0, n)


def gaussian_2d(c, n, rng):
    """c + N(0, I₂): 1/2-zCDP for one count ±1 (L2 sensitivity 1; Bun & Steinke 2016, Prop. 1.6)."""
    return np.asarray(c, dtype=float) + rng.standard_normal((n, 2))


CORRECT_REAL = [
    ("laplace_1d", laplace_1d, lambda: [(0.0, 1.0), (1.0, 0.0), (0.0, -1.0), (3.0, 2.0)], Claim.dp(1.0)),
    ("gaussian_2d", gaussian_2d, lambda: count_vectors(2, 1), Claim.zcdp(0.5)),  # 4 pairs
]


def test_soundness_of_the_whole_search_with_classifier_outputs():
    """``outputs="classifier"``: 220 seeded searches of correct mechanisms with real outputs and tight
    claims, false violations ≤ 5 % (binomial 99.9 % bar, as above). The classifier and its
    thresholds are chosen on the pilot only; this checks that nothing of them leaks into the
    certification. Mostly linear discriminant analysis (fits in closed form; on one coordinate any
    monotone score gives the same threshold sets as logistic regression, and on the Gaussian pair it
    is the Bayes-optimal direction), plus the two built-in models on fewer seeds."""
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

    runs = [(name, mech, pairs, claim, ClassifierOutputs(LinearDiscriminantAnalysis()), range(90))
            for name, mech, pairs, claim in CORRECT_REAL]
    runs.append(("gaussian_2d logistic", gaussian_2d, CORRECT_REAL[1][2], Claim.zcdp(0.5), ClassifierOutputs("logistic"),
                 range(1000, 1020)))
    runs.append(("laplace_1d hgb", laplace_1d, CORRECT_REAL[0][2], Claim.dp(1.0), "classifier", range(2000, 2020)))
    flagged, total = 0, 0
    for name, mech, pairs, claim, outputs, seeds in runs:
        hits = sum(search_mechanism(mech, pairs(), 1_000, rng=s, claim=claim, certify_top=2, outputs=outputs).violation
                   for s in seeds)
        assert hits <= binom.ppf(0.999, len(seeds), 0.05), name
        flagged += hits
        total += len(seeds)
    assert total >= 200
    assert flagged <= binom.ppf(0.999, total, 0.05)


def test_forgotten_sensitivity_found_with_replace_one():
    """Exponential mechanism p ∝ exp(ε·u), claim ε = 1 (true ε = 2). On the obvious one-vote pair
    its loss is exactly the claim; on five votes [0]*5 vs [0]*4 + [1] it is 1.947 (3 candidates:
    1 + log((e⁵ + 2)/(e⁴ + e + 1))). The search over replace-one pairs finds it in ≥ 90 % of
    seeds at 20,000 draws per side."""
    mech = exponential(1.0)
    u0, u1 = np.array([5, 0, 0.0]), np.array([4, 1, 0.0])
    p0, p1 = np.exp(u0) / np.exp(u0).sum(), np.exp(u1) / np.exp(u1).sum()
    np.testing.assert_allclose(np.log(p1[1] / p0[1]), 1 + math.log((math.e**5 + 2) / (math.e**4 + math.e + 1)), rtol=1e-12)

    def pairs():
        return itertools.chain(replace_one([0], range(3)), replace_one([0] * 5, range(3)))  # 2 + 10 pairs

    seeds = 20
    found = 0
    for s in range(seeds):
        res = search_mechanism(mech, pairs(), 20_000, rng=s, claim=Claim.dp(1.0))
        if res.violation:
            found += 1
            assert len(res.witness.dataset) == 5  # the one-vote pair cannot show it
    assert found >= 0.9 * seeds


def reused_noise(c, n, rng):
    """Planted bug: one Laplace draw added to both coordinates (claimed (1, 0)-DP, as if each had
    its own). The difference of the two outputs reveals the input exactly."""
    c = np.asarray(c, dtype=float)
    return c + rng.laplace(0.0, 1.0, (n, 1))


def independent_noise(c, n, rng):
    c = np.asarray(c, dtype=float)
    return c + rng.laplace(0.0, 1.0, (n, c.size))


def test_classifier_finds_planted_bug_in_2d_outputs():
    pairs = [(np.array([0, 0]), np.array([1, 0])), (np.array([0, 0]), np.array([0, 1]))]
    res = search_mechanism(reused_noise, pairs, 10_000, rng=0, claim=Claim.dp(1.0), outputs="classifier")
    assert res.outputs == "classifier" and res.violation
    assert res.witness.output_set.kind == "threshold"
    assert res.audit.epsilon_lower_bound > 3
    # The witness's set, applied to fresh outputs, separates the pair as certified.
    inside0 = res.witness.output_set.contains(reused_noise(res.witness.dataset, 2000, np.random.default_rng(9))).mean()
    inside1 = res.witness.output_set.contains(reused_noise(res.witness.neighbour, 2000, np.random.default_rng(9))).mean()
    assert abs(inside0 - inside1) > 0.9
    ok = search_mechanism(independent_noise, pairs, 10_000, rng=0, claim=Claim.dp(1.0),
                          outputs=ClassifierOutputs("logistic"))
    assert ok.verdict == "consistent"


def test_result_witness_and_serialisation():
    res = search_mechanism(exponential(1.0), replace_one([0] * 5, range(3)), 20_000, rng=1, claim=Claim.dp(1.0))
    assert isinstance(res, SearchResult) and res.violation
    w = res.witness
    assert w.output_set.kind == "cells"
    assert w.p0_interval[0] <= w.p0 <= w.p0_interval[1] and w.p1_interval[0] <= w.p1 <= w.p1_interval[1]
    # The witness's probabilities are the certified audit's counts.
    assert w.p0 == res.audit.counts0[0] / res.certification_trials
    assert res.audit.trials == res.certification_trials == 20_000 - res.pilot_trials
    frame = res.to_frame()
    assert len(frame) == 10 and frame["certified"].sum() == 5 and frame["witness"].sum() == 1
    assert frame.loc[frame["certified"], "epsilon_lower_bound"].notna().all()
    assert frame.loc[~frame["certified"], "epsilon_lower_bound"].isna().all()
    d = json.loads(json.dumps(res.to_dict()))
    assert d["verdict"] == "violation" and d["witness"]["dataset"] == [0, 0, 0, 0, 0]
    assert d["witness"]["output_set"]["kind"] == "cells" and len(d["pairs"]) == 10
    text = res.summary()
    assert "violation" in text and "witness" in text and "invisible" in text
    assert res.min_resolvable_probability == pytest.approx(1 / res.certification_trials)
    # Same seed, same result; n_jobs does not change it.
    again = search_mechanism(exponential(1.0), replace_one([0] * 5, range(3)), 20_000, rng=1, claim=Claim.dp(1.0), n_jobs=2)
    assert again.to_dict() == res.to_dict()


def test_tuple_outputs_are_counted():
    def pair_out(c, n, rng):  # a 2-D integer output: (argmax, noisy bit)
        return np.stack([laplace_rnm(c, n, rng), rng.integers(0, 2, n)], axis=1)

    res = search_mechanism(pair_out, count_vectors(2, 1), 2_000, rng=0, claim=Claim.dp(1.0))
    assert res.outputs == "counts" and res.verdict == "consistent"
    assert all(isinstance(c, tuple) for c in res.witness.output_set.cells)


def test_list_outputs_are_normalised():
    """Lists of floats go to the classifier under outputs='auto'; lists of int tuples are counted."""
    pairs = [(0.0, 1.0), (0.0, -1.0)]
    res = search_mechanism(lambda x, n, rng: list(x + rng.laplace(0, 1.0, n)), pairs, 4_000, rng=0,
                           claim=Claim.dp(1.0), outputs=ClassifierOutputs("logistic"))
    assert res.outputs == "classifier" and res.verdict == "consistent"
    auto = search_mechanism(lambda x, n, rng: list(x + rng.laplace(0, 1.0, n)), pairs, 2_000, rng=0)
    assert auto.outputs == "classifier"
    tup = search_mechanism(lambda b, n, rng: [(int(b), int(v)) for v in rng.integers(0, 2, n)], [(0, 1)], 1_000, rng=0)
    assert tup.outputs == "counts" and tup.audit.epsilon_lower_bound > 3  # the first coordinate is the input


def test_no_claim_reports_bounds():
    res = search_mechanism(rr4, rr_pairs(), 5_000, rng=0, certify_top=2)
    assert res.verdict == "no claim" and res.certified == 2
    assert 0 < res.audit.epsilon_lower_bound < 1


# --------------------------------------------------------------------------------------
# bad input: a clear ValueError naming the argument
# --------------------------------------------------------------------------------------


def test_bad_input_names_the_argument():
    pairs = list(count_vectors(2, 1))
    with pytest.raises(ValueError, match="certify_top"):
        search_mechanism(laplace_rnm, pairs, 1_000, certify_top=0)
    with pytest.raises(ValueError, match="pilot_fraction"):
        search_mechanism(laplace_rnm, pairs, 1_000, pilot_fraction=1.5)
    with pytest.raises(ValueError, match="trials"):
        search_mechanism(laplace_rnm, pairs, 10)
    with pytest.raises(ValueError, match="neighbours must yield"):
        search_mechanism(laplace_rnm, iter([1, 2, 3]), 1_000)
    with pytest.raises(ValueError, match="neighbours must yield"):
        search_mechanism(laplace_rnm, [([0, 1], [1, 1], [2, 1])], 1_000)
    with pytest.raises(ValueError, match="neighbours yielded no pair"):
        search_mechanism(laplace_rnm, [], 1_000)
    with pytest.raises(ValueError, match="neighbours must be an iterable"):
        search_mechanism(laplace_rnm, 5, 1_000)
    with pytest.raises(ValueError, match="mechanism .*must return 200 outputs"):
        search_mechanism(lambda c, n, rng: np.zeros(n + 1, dtype=int), pairs, 1_000)
    with pytest.raises(ValueError, match=r"must return 200 outputs .*returned NoneType None.*\(on pair 0's dataset\)"):
        search_mechanism(lambda c, n, rng: None, pairs, 1_000)
    with pytest.raises(ValueError, match="mechanism returned NaN"):
        search_mechanism(lambda c, n, rng: np.full(n, np.nan), pairs, 1_000)
    with pytest.raises(ValueError, match="real-valued"):
        search_mechanism(lambda c, n, rng: rng.random(n), pairs, 1_000, outputs="counts")
    with pytest.raises(ValueError, match="outputs must be"):
        search_mechanism(laplace_rnm, pairs, 1_000, outputs="bins")
    with pytest.raises(ValueError, match="claim must be"):
        search_mechanism(laplace_rnm, pairs, 1_000, claim=1.0)
    with pytest.raises(ValueError, match="n_jobs"):
        search_mechanism(laplace_rnm, pairs, 1_000, n_jobs=0)


def test_readme_find_the_worst_case_snippet_runs(capsys):
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[3] / "README.md").read_text(encoding="utf-8")
    code = readme.split("### Find the worst case", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    exec(compile(code, "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "verdict: violation" in out and "witness: pair" in out


def test_rdp_curve_claim_sets_the_orders():
    """An RDP-curve claim: orders = its own plus the default grid up to its largest order."""
    claim = Claim.rdp([2.0, 8.0], [0.25, 1.0])  # Gaussian RNM with sigma 2 is alpha/8-RDP: holds
    res = search_mechanism(gaussian_rnm, count_vectors(2, 1), 4_000, rng=0, claim=claim, certify_top=2)
    assert res.orders.max() == 8.0 and 2.0 in res.orders and res.verdict == "consistent"


def test_audit_mechanism_counts_integer_vector_rows():
    from ppaudit.blackbox import audit_mechanism

    res = audit_mechanism(lambda b, n, rng: np.stack([np.full(n, b), rng.integers(0, 2, n)], axis=1), 0, 1, 1_000,
                          [2.0], rng=0)
    assert set(res.outputs) == {(0, 0), (0, 1), (1, 0), (1, 1)}


def test_pilot_shrinks_lucky_small_sets_and_keeps_real_effects():
    """The pilot objective moves each pair of proportions towards each other by one Wilson standard
    error: 0 against 4 of 5,000 (the kind of set the plug-in score picked at ε0 = 0.1) keeps almost
    nothing, 310 against 243 (a real lower-tail effect, ratio e^0.24) keeps most; the proportions
    never cross, and sets and complements move alike."""
    from ppaudit.blackbox.pilot import _shrink

    n = 5_000
    q0, q1 = _shrink(np.array([0.0, 310.0, 243.0, 50.0]), np.array([4.0, 243.0, 310.0, 50.0]), n, 1.0)
    assert q1[0] / q0[0] < 2.5 < 4 / 0.5  # the lucky set: most of its ratio is gone
    assert math.log(q0[1] / q1[1]) > 0.1 and math.log(q0[1] / q1[1]) < math.log(310 / 243)
    np.testing.assert_allclose([q0[2], q1[2]], [q1[1], q0[1]], rtol=1e-12)  # symmetric in the two sides
    assert q0[3] == q1[3] == 0.01  # no effect stays no effect
    c0, c1 = _shrink(n - np.array([310.0]), n - np.array([243.0]), n, 1.0)  # the complement
    np.testing.assert_allclose([c0[0], c1[0]], [1 - q0[1], 1 - q1[1]], rtol=1e-9)


def test_subtle_bug_at_a_small_claim_is_certified():
    """Report-noisy-max returning the noisy maximum value (Ding et al. 2018, Alg. 7; true ε = m·ε0/2
    = 0.25 for m = 5) against its claim ε0 = 0.1. The best output set, max < 0 on the pair
    [1]*5 vs [0]*5, has probabilities 1/32 and e^-0.25/32 (Laplace(20) lower tails), so a
    certification needs ~8·10⁴ draws per side for 90 % power; at 2·10⁵ draws per pair the search
    finds the pair and a lower-tail set itself. (The first pilot objective flagged it in 0/20 seeds
    even at 5·10⁴ draws, picking sets seen 0 against 10 times.)"""
    from ppaudit.blackbox.catalogue import benchmark_cases

    case = {c.name: c for c in benchmark_cases(0.1)}["rnm_laplace_value"]
    found = 0
    for s in range(5):
        res = search_mechanism(case.audited, case.neighbours(), 200_000, rng=s, claim=Claim.dp(0.1), certify_top=2)
        if res.violation:
            found += 1
            assert res.witness.output_set.kind == "cells" and min(res.witness.output_set.cells) < 0
            assert res.audit.epsilon_lower_bound > 0.1
    assert found >= 4


def gaussian_1d(x, n, rng):
    """x + N(0, 1): exactly 1/2-zCDP for a scalar query of sensitivity 1 (the claim is tight)."""
    return float(x) + rng.standard_normal(n)


def test_soundness_of_the_bin_family():
    """``outputs="auto"`` on 1-D reals (the quantile-bin family with per-order sets, families.py):
    60 seeded searches of tight correct mechanisms (pure DP and zCDP, so both the ε test on the main
    set and the per-order RDP sets are exercised), false violations within the binomial 99.9 % bar
    of Bin(searches, 0.05). ~10 s CPU (the classifier the pilot compares the bins with dominates)."""
    flagged, total = 0, 0
    for name, mech, claim in [("laplace_1d", laplace_1d, Claim.dp(1.0)), ("gaussian_1d", gaussian_1d, Claim.zcdp(0.5))]:
        kinds, hits = set(), 0
        for s in range(30):
            res = search_mechanism(mech, [(0.0, 1.0), (1.0, 0.0)], 2_000, rng=s, claim=claim)
            hits += res.violation
            kinds.add(res.witness.output_set.kind)
        assert "bins" in kinds, name  # the family under test was chosen
        assert hits <= binom.ppf(0.999, 30, 0.05), name
        flagged += hits
        total += 30
    assert flagged <= binom.ppf(0.999, total, 0.05)


def test_bin_family_as_strong_as_audit_mechanism_discretize():
    """Issue #36 §1 case (i): ``sum(bits) + 0.8·N(0,1)`` claimed at RDP 0.5·α (σ should be 1), pair
    [0,1,0,1,1] / [0,1,0,1,0], 2·10⁵ draws. ``search_mechanism`` (auto → quantile bins, one set per
    order chosen on the pilot) certifies at least 90 % of ``audit_mechanism(discretize=100)`` on the
    same pair at every order and for ε (before the bin family: 0.30 vs 0.73 at α = 1.5, ε 0.05 vs
    3.2). Three seeds, ~4 s."""
    from ppaudit.blackbox import audit_mechanism

    def count(bits, n, rng):
        return float(sum(bits)) + 0.8 * rng.standard_normal(n)

    orders = [1.5, 2.0, 3.0, 4.0, 8.0, 16.0, 32.0]
    pair = ([0, 1, 0, 1, 1], [0, 1, 0, 1, 0])
    for seed in range(3):
        res = search_mechanism(count, [pair], 200_000, orders=orders, rng=seed, claim=Claim.zcdp(0.5))
        ref = audit_mechanism(count, *pair, 200_000, orders, rng=seed, claim=Claim.zcdp(0.5), discretize=100)
        assert res.witness.output_set.kind == "bins"
        assert np.all(res.audit.rdp_lower_bound >= 0.9 * ref.rdp_lower_bound), (seed, res.audit.rdp_lower_bound,
                                                                                ref.rdp_lower_bound)
        assert res.audit.epsilon_lower_bound >= 0.9 * ref.epsilon_lower_bound, seed
        assert res.audit.rdp_lower_bound[0] > 0.6  # the one-set search: 0.30


def test_auto_keeps_the_classifier_where_the_bins_are_too_coarse():
    """A parity of integer outputs under noise 0.001 (true ε = log 9 ≈ 2.2 against a claim of 1) is
    finer than 100 quantile bins: auto keeps the classifier's set once its pilot predicts a sure
    violation (families.BINS_MARGIN), and certifies more than the bins would (1.32). ~2 s."""
    def parity(d, n, rng):
        k = rng.integers(0, 50, n) * 2 + (rng.random(n) < (0.9 if d else 0.1))
        return k + 0.001 * rng.standard_normal(n)

    res = search_mechanism(parity, [(0, 1)], 20_000, rng=0, claim=Claim.dp(1.0))
    assert res.verdict == "violation"
    assert res.witness.output_set.kind == "threshold"
    assert res.audit.epsilon_lower_bound > 1.8
