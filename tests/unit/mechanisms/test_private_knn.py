"""Private-kNN library layer (Chadha et al. 2024, §6, App. D.3, App. E.4).

Reference values and their sources are written next to each check: brute-force
simulations of the subsampled top-k selection, mpmath sums/quadrature, numpy argsort,
and the dp-accounting / TF-Privacy published test value.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pandas as pd
import pytest

from ppaudit.audit import TRUNCATION_RESERVE

from ppaudit.accounting import (
    KNN_SENSITIVITY,
    knn_noise_multiplier,
    private_knn_epsilon,
    private_knn_rdp,
    subsampled_gaussian_rdp,
)
from ppaudit.adversaries import private_knn as ka
from ppaudit.data import load_rotten_tomatoes
from ppaudit.experiments.chadha2024 import private_knn as pk
from ppaudit.mechanisms import private_knn as knn

ORDERS = np.array([1.5, 2.0, 4.0, 8.0, 16.0])


def _toy(seed=0, n=400, n_test=60, d=6, c=3, spread=1.2):
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(c, d)) * spread
    ytr = rng.integers(0, c, n)
    yte = rng.integers(0, c, n_test)
    return centers[ytr] + rng.normal(size=(n, d)), ytr, centers[yte] + rng.normal(size=(n_test, d)), yte


# ----------------------------------------------------------------------------- ν(r)


def _simulate_nu(r, k, gamma, draws, rng):
    """Brute force: the poison is the r-th nearest; keep every point w.p. γ; is it in the top-k?"""
    kept = rng.random((draws, r)) < gamma
    return np.mean(kept[:, r - 1] & (kept[:, : r - 1].sum(axis=1) <= k - 1))


@pytest.mark.parametrize("k,gamma", [(5, 0.3), (12, 0.2)])
def test_nu_matches_brute_force_simulation(k, gamma):
    rng = np.random.default_rng(3)
    draws = 200_000
    for r in (1, k, k + 1, 2 * k, int(k / gamma), int(1.5 * k / gamma)):
        exact = float(knn.inclusion_probability([r], k, gamma)[0])
        sim = _simulate_nu(r, k, gamma, draws, rng)
        se = math.sqrt(max(exact * (1 - exact), 1e-12) / draws)
        assert abs(sim - exact) <= 5 * se + 1e-12, (r, exact, sim)


def test_nu_equals_paper_sum_and_gamma_below_k():
    k, g = 7, 0.25
    r = np.arange(1, 60)
    got = knn.inclusion_probability(r, k, g)
    # §6 formula, term by term (exact rational arithmetic via math.comb)
    ref = [g if rr <= k else sum(math.comb(rr - 1, i) * g ** (i + 1) * (1 - g) ** (rr - i - 1) for i in range(k)) for rr in r]
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=0)
    assert np.all(got[:k] == g)


def test_log_nu_is_stable_up_to_dataset_size():
    k, g = 200, 0.2
    r = np.array([1000, 1500, 3000, 6000, 20_000, 60_000])
    got = knn.log_inclusion_probability(r, k, g)
    mp.mp.dps = 40
    for rr, val in zip(r, got):
        # mpmath: log Σ_{i<k} C(r−1, i) γ^{i+1} (1−γ)^{r−i−1} at 40 digits
        s = mp.fsum(mp.binomial(int(rr) - 1, i) * mp.mpf(g) ** (i + 1) * (1 - mp.mpf(g)) ** (int(rr) - i - 1) for i in range(k))
        assert val == pytest.approx(float(mp.log(s)), rel=1e-11)
    full = knn.log_inclusion_probability(np.arange(1, 100_001), k, g)
    assert np.all(np.isfinite(full)) and np.all(np.diff(full) <= 1e-12)  # finite and non-increasing


def test_last_probability_and_needed_neighbours():
    k, g, n = 10, 0.3, 5000
    r = np.arange(1, n + 1)
    lam = np.exp(knn.log_last_probability(r, k, g))
    nu = knn.inclusion_probability(r, k, g)
    assert np.all(lam[: k - 1] == 0) and np.all(lam <= nu + 1e-15)
    # Σ_j λ(j) = P(Bin(n, γ) ≥ k); Σ_j ν(j) = E[min(k, Bin(n, γ))]
    assert lam.sum() == pytest.approx(1.0 - knn.short_subsample_probability(n, k, g), abs=1e-12)
    assert nu.sum() == pytest.approx(k, rel=1e-12)
    j = knn.num_neighbors_needed(n, k, g, tail_tol=1e-12)
    assert nu[j:].sum() <= 1e-12 and nu[j - 1 :].sum() > 0


# ----------------------------------------------------------------------------- neighbours


def test_faiss_neighbours_and_ranks_match_numpy_argsort():
    xtr, _, xte, _ = _toy(1, n=500, n_test=40)
    nb = knn.nearest_neighbors(xtr.astype(np.float32), xte.astype(np.float32), 80, chunk_size=16)
    d = knn.squared_distances(xte.astype(np.float32), xtr.astype(np.float32))
    ref = np.argsort(d, axis=1, kind="stable")[:, :80]
    np.testing.assert_array_equal(nb.indices, ref)
    np.testing.assert_allclose(nb.sq_distances, np.take_along_axis(d, ref, axis=1), rtol=1e-13, atol=1e-13)
    ranks = knn.training_ranks(xtr, xte, chunk_size=7)
    np.testing.assert_array_equal(np.argsort(ranks, axis=1)[:, :80], np.argsort(d, axis=1, kind="stable")[:, :80])
    pts = np.random.default_rng(2).normal(size=(9, xtr.shape[1]))
    pr = knn.point_ranks(xtr, xte, pts, chunk_size=5)
    brute = 1 + (d[:, :, None] <= knn.squared_distances(xte, pts)[:, None, :]).sum(axis=1)
    np.testing.assert_array_equal(pr, brute)
    dup = knn.duplicate_ranks(xtr, xte, [3, 10])
    np.testing.assert_array_equal(dup, ranks[:, [3, 10]] + 1)  # a copy ranks just behind the original


# ----------------------------------------------------------------------------- P_q, P^k_q


def test_vote_distributions_exact_vs_simulation():
    rng = np.random.default_rng(4)
    labels = rng.integers(0, 3, size=(3, 120))
    k, g = 8, 0.3
    P, L = knn.vote_distributions(labels, k, g, 3)
    Ps, Ls = knn.simulate_vote_distributions(labels, k, g, 3, draws=40_000, rng=5)
    np.testing.assert_allclose(P.sum(1), 1.0) and np.testing.assert_allclose(L.sum(1), 1.0)
    # simulation: 40k draws × 8 votes (P) and 40k k-th neighbours (P^k): a few 1e-3 of noise
    np.testing.assert_allclose(Ps, P, atol=0.006)
    np.testing.assert_allclose(Ls, L, atol=0.012)


# ----------------------------------------------------------------------------- E(x)


def _simulate_expected_inclusions(xtr, queries, point, k, g, draws, rng):
    """Full mechanism: subsample S ∪ {x'}, take each query's k nearest kept points, count x'."""
    pool = np.vstack([xtr, point[None]])
    d = knn.squared_distances(queries, pool)
    # ties against the poison: sort by (distance, poison last)
    tiebreak = np.zeros(pool.shape[0])
    tiebreak[-1] = 1
    order = np.lexsort((np.broadcast_to(tiebreak, d.shape), d), axis=1)
    total = 0.0
    for _ in range(draws):
        kept = rng.random(pool.shape[0]) < g
        ko = kept[order]
        topk = (np.cumsum(ko, axis=1) <= k) & ko
        total += np.sum(topk & (order == pool.shape[0] - 1))
    return total / draws


def test_expected_inclusions_against_simulation_on_toy_set():
    xtr, ytr, xte, _ = _toy(5, n=150, n_test=12)
    k, g = 5, 0.3
    nb = knn.nearest_neighbors(xtr, xte, 150)
    rng = np.random.default_rng(6)
    e_test = knn.expected_inclusions_points(nb, xte, xte[:3], k, g)
    e_train = knn.expected_inclusions_train(nb, k, g, duplicate=True)
    for i in range(2):
        sim = _simulate_expected_inclusions(xtr, xte, xte[i], k, g, 3000, rng)
        assert sim == pytest.approx(e_test[i], abs=0.12)  # sd of a sum of 12 Bernoullis / √3000 < 0.04
    sim = _simulate_expected_inclusions(xtr, xte, xtr[7], k, g, 3000, rng)
    assert sim == pytest.approx(e_train[7], abs=0.12)
    # the vectorised E equals Σ_q ν(exact rank) for every training point
    ranks = knn.training_ranks(xtr, xte)
    np.testing.assert_allclose(e_train, knn.inclusion_probability(ranks + 1, k, g).sum(0), rtol=1e-12)


# ----------------------------------------------------------------------------- theory


def test_theory_gamma_one_is_gaussian():
    z = 3.0
    a = np.array([1.25, 1.5, 2.0, 7.5, 64.0])
    np.testing.assert_allclose(subsampled_gaussian_rdp(1.0, z, a), a / (2 * z * z), rtol=1e-12)
    # Private-kNN at γ = 1 with sensitivity √2: GNMax's α/σ² per query, ×n_Q
    np.testing.assert_allclose(private_knn_rdp(1.0, 30.0, a, 1000), 1000 * a / 900.0, rtol=1e-12)
    assert knn_noise_multiplier(30.0) == pytest.approx(30.0 / math.sqrt(2)) and KNN_SENSITIVITY == pytest.approx(math.sqrt(2))


def test_theory_known_value_and_closed_form():
    # dp_accounting's own pinned value (from TF Privacy's compute_rdp test): q = 0.01,
    # z = 2.5, 50 steps, orders 5, 50, 100 (integer orders: exact binomial sums).
    got = subsampled_gaussian_rdp(0.01, 2.5, [5, 50, 100], count=50)
    np.testing.assert_allclose(got, [2.18075656e-03, 2.38460375e-02, 1.67416308e02], rtol=1e-4)
    # Mironov, Talwar & Zhang 2019 integer-order closed form, evaluated with mpmath
    q, z = 0.2, 30 / math.sqrt(2)
    for alpha in (2, 3, 8, 32):
        a_val = mp.fsum(mp.binomial(alpha, j) * (1 - mp.mpf(q)) ** (alpha - j) * mp.mpf(q) ** j * mp.e ** ((j * j - j) / (2 * mp.mpf(z) ** 2)) for j in range(alpha + 1))
        assert subsampled_gaussian_rdp(q, z, [alpha])[0] == pytest.approx(float(mp.log(a_val) / (alpha - 1)), rel=1e-9)


def test_theory_fractional_orders_are_valid_upper_bounds():
    q, z = 0.2, 30 / math.sqrt(2)
    a = np.array([1.25, 1.5, 2.0, 2.5, 3.0, 5.5])
    got = subsampled_gaussian_rdp(q, z, a)
    assert np.all(np.diff(got) >= 0)  # Rényi divergence is non-decreasing in α
    mp.mp.dps = 20
    for alpha, val in zip(a[[0, 3, 5]], got[[0, 3, 5]]):
        # mpmath quadrature of log E_{N(0,z²)}[((1−q) + q e^{(2x−1)/(2z²)})^α] / (α − 1)
        f = lambda x: mp.npdf(x, 0, z) * ((1 - q) + q * mp.exp((2 * x - 1) / (2 * z * z))) ** alpha  # noqa: E731
        true = float(mp.log(mp.quad(f, [-mp.inf, -60, 0, 60, mp.inf])) / (alpha - 1))
        assert true <= val * (1 + 1e-9)
        assert val <= subsampled_gaussian_rdp(q, z, [math.ceil(alpha)])[0] * (1 + 1e-12)
        if alpha == 2.5:
            assert val <= 1.1 * true
    # composition is additive: 1000 queries = 1000 × one query
    np.testing.assert_allclose(subsampled_gaussian_rdp(q, z, a, 1000), 1000 * got, rtol=1e-12)
    eps, order = private_knn_epsilon(0.2, 30.0, 1000, 1e-6, [2, 4, 8, 16, 32, 64])
    assert 0 < eps < 10 and order in (2, 4, 8, 16, 32, 64)


# ----------------------------------------------------------------------------- model


def test_knn_vote_model_sampler_and_identical():
    P = np.array([0.6, 0.3, 0.1])
    L = np.array([0.5, 0.4, 0.1])
    m = knn.KnnVoteModel(P, L, 0.2, 1, 20)
    rng = np.random.default_rng(0)
    h = m.sample(rng, 200_000, "S_prime")
    assert np.all(h.sum(1) == 20)
    np.testing.assert_allclose(h.mean(0), m.mean("S_prime"), atol=0.05)
    np.testing.assert_allclose(m.sample(rng, 50_000, "S").mean(0), 20 * P, atol=0.05)
    assert knn.KnnVoteModel(P, L, 0.0, 1, 20).identical
    assert knn.KnnVoteModel(P, np.array([0, 1.0, 0]), 0.2, 1, 20).identical
    assert not m.identical


def test_output_distributions_and_audit_ordering():
    m = knn.KnnVoteModel(np.array([0.5, 0.5]), np.array([0.5, 0.5]), 0.5, 1, 6)
    est = knn.knn_output_distributions(m, 1.0, 4000, rng=0)
    assert est.p.sum() == pytest.approx(1.0) and est.q.sum() == pytest.approx(1.0)
    assert est.q[1] > est.p[1]
    theory = private_knn_rdp(0.5, 1.0, ORDERS)
    df = pk.audit_knn_model(m, 1.0, 200_000, ORDERS, theory, rng=1, exact_draws=4000)
    assert df["simulated"].all() and (df["trials"] == 200_000).all()
    assert df["two_cut_cp"].iloc[1] > 0
    assert np.all(df["two_cut_cp"] <= df["exact"] + 5 * df["exact_se"] + 1e-12)
    assert np.all(df["exact"] <= df["data_independent"])
    # certified enumeration: the Monte Carlo mixture lies inside [exact_lo, exact_hi] (± 5 se)
    enum = knn.enumerate_knn_output_distributions(m, 1.0)
    assert enum is not None and enum.support_size == 7 and enum.tail_mass <= 1e-11  # Mult(6, ·) on 2 classes
    np.testing.assert_allclose(enum.p, est.p, atol=5 * est.se_p.max() + 1e-9)
    ex = pk.audit_knn_model(m, 1.0, 10**8, ORDERS, theory, rng=2, count_mode="exact")
    assert (ex["count_mode"] == "exact").all() and (ex["exact_method"] == "enumerate").all()
    assert np.all(ex["exact_lo"] <= ex["exact"]) and np.all(ex["exact"] <= ex["exact_hi"])
    assert np.all(ex["two_cut_cp"] <= ex["exact_hi"]) and ex["two_cut_cp"].iloc[1] > 0.5 * ex["exact"].iloc[1]  # 1e8 trials: tight
    assert np.all(np.abs(df["exact"] - ex["exact"]) <= 5 * df["exact_se"] + 1e-9)
    assert 0.94 < ex["effective_confidence"].iloc[0] <= 0.95
    wide = knn.KnnVoteModel(np.full(10, 0.1), np.full(10, 0.1), 0.2, 1, 200)
    with pytest.raises(ValueError, match="too large to enumerate"):
        pk.audit_knn_model(wide, 30.0, 10, ORDERS, theory, count_mode="exact", max_support=1000)
    # below min_nu: no Monte Carlo, bound 0, exact still there
    skip = pk.audit_knn_model(knn.KnnVoteModel(m.P, m.P_last, 1e-5, 1, 6), 1.0, 10**9, ORDERS, theory, rng=1, exact_draws=500, min_nu=1e-3)
    assert (~skip["simulated"]).all() and (skip["two_cut_cp"] == 0).all() and (skip["exact"] >= 0).all()


# ----------------------------------------------------------------------------- adversaries and experiment


@pytest.fixture(scope="module")
def setup():
    xtr, ytr, xte, yte = _toy(7, n=600, n_test=80, c=3, spread=1.5)
    return ka.knn_setup(xtr, ytr, xte, yte, np.arange(30), k=10, gamma=0.3, num_classes=3)


def test_adversaries_craft(setup):
    nat = ka.craft_knn("nat-advq", setup, candidates=[0, 4])
    np.testing.assert_array_equal(nat.canary_label, setup.query_labels[[0, 4]])
    assert np.all(nat.nu == pytest.approx(0.3)) and np.all(nat.repetitions == 30)
    pois = ka.craft_knn("pois-advq", setup, num_queries=7, candidates=[1])
    # mislabelled poison (§4.1): the most likely label of P_q other than the query's true label
    masked = setup.P[1].copy()
    masked[setup.query_labels[1]] = -1.0
    assert pois.canary_label[0] == int(np.argmax(masked)) != setup.query_labels[1] and pois.repetitions[0, 0] == 7
    train = ka.craft_knn("pois-natq-train", setup)
    e_all = knn.inclusion_probability(knn.training_ranks(setup.train_features, setup.query_features) + 1, 10, 0.3).sum(0)
    assert train.canary_index[0] == int(np.argmax(e_all))
    assert train.expected_inclusions[0] == pytest.approx(e_all.max(), rel=1e-9)
    test = ka.craft_knn("pois-natq-test", setup)
    e_test = knn.inclusion_probability(knn.point_ranks(setup.train_features, setup.query_features, setup.test_features), 10, 0.3).sum(0)
    assert test.canary_index[0] == int(np.argmax(e_test))
    emb = ka.craft_knn("pois-natq-embedding", setup, s_grid=(5, 50))
    assert emb.canary_index[0] == -1 and emb.expected_inclusions[0] <= 0.3 * 30 + 1e-9
    assert emb.nu.shape == (1, 30) and emb.audit_queries.shape == (1, 30)
    for cr in (train, test, emb):  # Pois-NatQ poisons are mislabelled too
        assert cr.canary_label[0] != cr.info["poison_true_label"][0]
    assert train.info["poison_true_label"][0] == setup.train_labels[train.canary_index[0]]


def test_crafted_and_setup_roundtrip(setup, tmp_path):
    cr = ka.craft_knn("pois-natq-embedding", setup, s_grid=(5,))
    ka.save_crafted(cr, tmp_path / "c.npz")
    back = ka.load_crafted(tmp_path / "c.npz")
    assert back.adversary == cr.adversary and back.info == cr.info
    np.testing.assert_array_equal(back.nu, cr.nu)
    ka.save_setup(setup, tmp_path / "s.npz")
    s2 = ka.load_setup(tmp_path / "s.npz", setup.train_features, setup.train_labels, setup.test_features, setup.test_labels)
    np.testing.assert_array_equal(s2.P, setup.P) and np.testing.assert_array_equal(s2.neighbors.indices, setup.neighbors.indices)


def test_run_knn_audits_small_end_to_end(setup):
    res = pk.run_knn_audits(setup, 2.0, ORDERS, seed=3, dataset="toy", trials=10**6, sample_trials_advq=50_000, sample_trials_natq=5_000,
                            advq_candidates=[0, 1], min_nu=1e-2, exact_draws=300, s_grid=(10,), transcript_event=True)
    s = res["summary"]
    assert set(s["adversary"]) == set(ka.KNN_ADVERSARIES) and set(s["case"]) == {"worst", "max", "average"}
    w = s[s["case"] == "worst"].pivot(index="adversary", columns="column", values="epsilon")
    assert (w["data_independent"] >= w["two_cut_cp"]).all() and (w["data_independent"] >= w["exact"]).all()
    assert w["data_independent"].nunique() == 1  # n_Q queries of the same theory for everyone
    # the valid ε lower bound: the larger of the best query's and the composition over all queries
    e, pq = res["eps"], res["per_query"]
    assert {"event_p_low", "event_q_high"} <= set(pq.columns) and "eps_valid_eps_lower_composed" in e
    best_single = pq.groupby(["adversary", "candidate"])["valid_eps_lower"].max()
    for _, row in e.iterrows():
        single = best_single[(row["adversary"], row["candidate"])]
        assert row["eps_valid_eps_lower"] == np.nanmax([single, row["eps_valid_eps_lower_composed"], row["eps_valid_eps_lower_transcript"]])
    # the whole-transcript audit: Pois-NatQ candidates only (several single-answer queries), counted in the Bonferroni N
    natq = e["adversary"].str.startswith("pois-natq")
    for adv, g in pq.groupby("adversary"):
        # Bonferroni over every audit run (issue 27 §1): per (candidate, query) the 2-cut, the k-cut and the
        # per-query ε bound, and for Pois-NatQ one whole-transcript audit per candidate (was: pairs + candidates)
        n = 3 * g.groupby(["candidate", "query"]).ngroups + (g["candidate"].nunique() if adv.startswith("pois-natq") else 0)
        np.testing.assert_allclose(g["confidence_per_audit"], 1 - (1 - TRUNCATION_RESERVE) * 0.05 / n, rtol=1e-12)
        assert (g["bonferroni_audits"] == n).all()
        prov = pk.knn_audit_provenance(g, 0.95)  # the pruning slack inside the budget (issue 34 §5): ≥ 0.95
        assert prov["num_audits"] == n and 0.95 <= prov["simultaneous_confidence"] <= 0.95 + TRUNCATION_RESERVE * 0.05 + 1e-12
    assert e.loc[natq, "eps_valid_eps_lower_transcript"].notna().all() and e.loc[~natq, "eps_valid_eps_lower_transcript"].isna().all()
    sep = pq.dropna(subset=["event_p_low"])
    assert (sep["event_p_low"] > sep["event_q_high"]).all()
    # the exact ε (PLD of the enumerated laws, composed over the candidate's queries) is above the valid lower bound
    both = e.dropna(subset=["eps_exact_eps_pld"])
    assert len(both) and (both["eps_valid_eps_lower"] <= both["eps_exact_eps_pld"] + 1e-9).all()
    assert "exact_eps_pld" in set(s["column"])
    f = pk.knn_findings(s)
    assert list(f["finding"]) == ["theory >> audits", "advq similar", "advq > natq", "embedding >= test/train"]
    # same seed, same bytes
    again = pk.run_knn_audits(setup, 2.0, ORDERS, seed=3, dataset="toy", trials=10**6, sample_trials_advq=50_000, sample_trials_natq=5_000,
                              advq_candidates=[0, 1], adversaries=("pois-advq",), min_nu=1e-2, exact_draws=300, transcript_event=True)
    a = res["per_query"][res["per_query"]["adversary"] == "pois-advq"].reset_index(drop=True)
    pd.testing.assert_frame_equal(a, again["per_query"], check_like=True)


def test_findings_logic_on_a_made_up_summary():
    rows = []
    vals = {"nat-advq": 1.0, "pois-advq": 1.2, "pois-natq-test": 0.2, "pois-natq-train": 0.3, "pois-natq-embedding": 0.5}
    for adv, v in vals.items():
        for col, e in (("two_cut_cp", v), ("data_independent", 5.0)):
            rows.append({"dataset": "d", "adversary": adv, "case": "worst", "column": col, "epsilon": e, "candidate": 0})
    f = pk.knn_findings(pd.DataFrame(rows), orders=ORDERS).set_index("finding")
    assert f["holds"].tolist() == [True, True, True, True]
    from ppaudit.accounting import rdp_to_dp

    assert f["floor"].iloc[0] == pytest.approx(rdp_to_dp(np.zeros(ORDERS.size), ORDERS, 1e-6))
    assert f.loc["theory >> audits", "lhs"] == 5.0 and f.loc["theory >> audits", "rhs"] == 1.2
    rows = [r for r in rows if r["adversary"] != "pois-natq-embedding"]
    f = pk.knn_findings(pd.DataFrame(rows)).set_index("finding")
    assert np.isnan(f.loc["embedding >= test/train", "holds"])


def test_rotten_tomatoes_and_subsets():
    texts, labels = load_rotten_tomatoes("full", deduplicate=True)
    assert len(texts) == labels.size > 12_000 and set(np.unique(labels)) == {0, 1} and len(set(texts)) == len(texts)
    a = pk.load_knn_inputs("rotten-tomatoes", 50, 20, seed=1)
    b = pk.load_knn_inputs("rotten-tomatoes", 50, 20, seed=1)
    assert a[0] == b[0] and len(a[0]) == 50 and len(a[2]) == 20 and not set(a[0]) & set(a[2])


# ----------------------------------------------------------------------------- bad inputs


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: knn.inclusion_probability([1], 0, 0.2), "k must be"),
        (lambda: knn.inclusion_probability([1], 5, 1.5), "gamma must be"),
        (lambda: knn.inclusion_probability([0, 3], 5, 0.2), "ranks must be integers >= 1, got minimum 0"),
        (lambda: knn.KnnVoteModel([0.5, 0.5], [0.5, 0.5], 1.2, 0, 5), "nu must be in"),
        (lambda: knn.KnnVoteModel([0.5, 0.5], [0.5, 0.5], 0.2, 3, 5), "label must be in"),
        (lambda: knn.vote_distributions([[0, 1]], 5, 0.2, 2), "need at least k = 5"),
        (lambda: knn.vote_distributions([[0, 7, 1]], 1, 0.2, 2), "neighbor_labels must be integers in"),
        (lambda: subsampled_gaussian_rdp(0.2, -1.0, [2]), "noise_multiplier must be"),
        (lambda: subsampled_gaussian_rdp(0.2, 1.0, [2], fractional="x"), "fractional must be"),
        (lambda: private_knn_rdp(0.2, 30.0, [0.5]), "order must be > 1"),
        (lambda: knn.num_neighbors_needed(100, 5, 0.2, tail_tol=0), "tail_tol must be > 0"),
    ],
)
def test_bad_inputs_raise_value_error_naming_the_value(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_bad_adversary_inputs(setup):
    with pytest.raises(ValueError, match="pool must be"):
        ka.craft_knn_pois_natq(setup, "moon")
    with pytest.raises(ValueError, match="adversary must be one of"):
        ka.craft_knn("nat-natq", setup)
    with pytest.raises(ValueError, match="candidates must be distinct"):
        ka.craft_knn("nat-advq", setup, candidates=[0, 0])
    with pytest.raises(ValueError, match="too small for k = 500"):
        ka.knn_setup(setup.train_features, setup.train_labels, setup.test_features, setup.test_labels, [0], 500, 0.3, 3)
    with pytest.raises(ValueError, match="min_nu must be in"):
        pk.audit_knn_model(knn.KnnVoteModel([0.5, 0.5], [0.5, 0.5], 0.2, 0, 5), 1.0, 10, [2.0], [0.1], min_nu=2)
    with pytest.raises(ValueError, match="column must be one of"):
        pk.knn_findings(pd.DataFrame(columns=["dataset", "adversary", "case", "column", "epsilon"]), column="nope")
