"""The inverse-CDF tables of the vote-model sampler (issue 29, :mod:`ppaudit.vote_models.tables`).

References: the exact CDF of ``Bin(r, c)`` in rational arithmetic (``fractions.Fraction`` of the
float64 probabilities, so no rounding at all), the exact multinomial pmf (closed form), and the
exact enumeration of the output law (:func:`ppaudit.vote_models.enumerate_output_distributions`).
"""

from fractions import Fraction
from itertools import product
from math import comb, factorial

import numpy as np
import pytest

from ppaudit.montecarlo import model_noisy_argmax_counts
from ppaudit.vote_models import capc_vote_model, enumerate_output_distributions, pate_vote_model, tables
from ppaudit.vote_models.tables import GUIDE_BITS, chain_table
from gof import gof_pvalue

torch = pytest.importorskip("torch")

DEVICES = ["cpu", "torch-cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def _exact_cdf(q, j: int, r: int) -> list[Fraction]:
    """``F(x)``, ``x < r``, of the conditional ``Bin(r, q_j / (q_j + … + q_s))`` over the positive ``q``."""
    qs = [Fraction(float(v)) for v in q if v > 0]
    c = qs[j] / sum(qs[j:])
    out, acc = [], Fraction(0)
    for x in range(r):
        acc += comb(r, x) * c**x * (1 - c) ** (r - x)
        out.append(acc)
    return out


def _table_cdf(t, j: int, r: int) -> np.ndarray:
    """The integer thresholds ``F̂_{j,r}(x)``, ``x < r``, read back from the stored keys."""
    k = t.bits
    keys = t.keys[j]
    start = np.searchsorted(keys, r << k, side="left")
    end = np.searchsorted(keys, (r + 1) << k, side="left")
    lo = t.base[j][r] + start
    f = np.full(r, 1 << k, dtype=np.int64)
    f[:lo] = 0
    f[lo : lo + end - start] = keys[start:end] - (r << k)
    return f


@pytest.mark.parametrize(
    "q, n, rows",
    [
        (np.array([0.5, 0.3, 0.0, 0.2]), 40, range(41)),
        (np.array([0.82, 0.02, 0.02, 0.02, 0.02, 0.02, 0.02, 0.02, 0.02, 0.02]), 249, (1, 17, 120, 249)),
        (np.array([1e-6, 0.999999 - 1e-9, 1e-9]), 60, (1, 30, 60)),
    ],
)
def test_thresholds_are_the_rounded_exact_cdf_within_the_certified_bound(q, n, rows):
    t = chain_table(q, n)
    assert t.tv_bound < 1e-13
    for j in range(t.columns.size - 1):
        for r in rows:
            exact = _exact_cdf(q, j, r)
            fhat = _table_cdf(t, j, r)
            scale = 2**t.bits
            dist = [abs(Fraction(int(a), scale) - b) for a, b in zip(fhat, exact)]
            # round to nearest of an accurate CDF: within half a grid step (+ longdouble error)
            assert max(dist, default=0) <= Fraction(51, 100) / scale
            assert float(sum(dist, Fraction(0))) <= t.tv_bound


def test_inverse_cdf_is_the_count_of_thresholds_below_u_on_every_bucket_edge():
    q = np.array([0.6, 0.25, 0.1, 0.05])
    t = chain_table(q, 90)
    k, rng = t.bits, np.random.default_rng(0)
    for j in range(3):
        for r in (0, 1, 2, 45, 90):
            f = _table_cdf(t, j, r)
            edges = np.arange(1 << GUIDE_BITS, dtype=np.int64) << (k - GUIDE_BITS)
            u = np.concatenate([edges, edges - 1, f, f - 1, rng.integers(0, 1 << k, 5000)])
            u = u[(u >= 0) & (u < (1 << k))]
            want = (f[None, :] <= u[:, None]).sum(axis=1)
            rem = np.full(u.size, r, dtype=np.int64)
            np.testing.assert_array_equal(t.invert(j, rem, u), want)
            got = t.invert_torch(j, torch.as_tensor(rem), torch.as_tensor(u)).numpy()
            np.testing.assert_array_equal(got, want)


def _multinomial_law(n, q):
    support = np.flatnonzero(q > 0)
    hs, ps = [], []
    for xs in product(range(n + 1), repeat=support.size - 1):
        if sum(xs) > n:
            continue
        x = np.zeros(q.size, dtype=np.int64)
        x[support] = list(xs) + [n - sum(xs)]
        pr = factorial(n) / np.prod([factorial(int(v)) for v in x]) * np.prod(q[support] ** x[support])
        hs.append(tuple(x))
        ps.append(pr)
    return hs, np.array(ps)


@pytest.mark.parametrize("engine", ["numpy", "torch"])
def test_histograms_follow_the_exact_multinomial(engine):
    q = np.array([0.45, 0.0, 0.35, 0.15, 0.05])
    n, draws = 7, 400_000
    t = chain_table(q, n)
    if engine == "numpy":
        h = np.zeros((draws, q.size), dtype=np.int64)
        t.sample(np.random.default_rng(3), h)
    else:
        out = torch.zeros((draws, q.size))
        t.sample_torch(torch.Generator().manual_seed(3), out)
        h = out.numpy().astype(np.int64)
    assert np.all(h.sum(axis=1) == n) and np.all(h[:, 1] == 0)
    hs, p = _multinomial_law(n, q)
    index = {v: i for i, v in enumerate(hs)}
    counts = np.bincount([index[tuple(row)] for row in h], minlength=len(hs))
    assert gof_pvalue(counts, p) > 1e-4


MODELS = {
    "pate": pate_vote_model([0.5, 0.3, 0.2, 0.0, 0.0], [0.1, 0.1, 0.8, 0.0, 0.0], 30),
    "pate_k120_c3": pate_vote_model([0.55, 0.3, 0.15], [0.1, 0.2, 0.7], 120),
    "capc": capc_vote_model(
        np.array([[0.5, 0.5, 0, 0], [0.2, 0.3, 0.5, 0], [0, 1, 0, 0], [0.2, 0.3, 0.5, 0], [0.1, 0.1, 0.2, 0.6], [0, 0, 0, 1]]),
        [1.0, 0, 0, 0],
    ),
}


@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize("device", DEVICES)
def test_noisy_argmax_of_the_tabulated_model_matches_the_enumerated_law(name, device):
    model, sigma, trials = MODELS[name], 1.5, 600_000
    enum = enumerate_output_distributions(model, sigma, max_tail_mass=1e-12, max_support=200_000)
    assert enum is not None and enum.tail_mass < 1e-9
    for which, law in (("S", enum.p), ("S_prime", enum.q)):
        c = model_noisy_argmax_counts(model.sampler(which), model.num_classes, sigma, trials, rng=21, device=device)
        assert c.sum() == trials
        assert gof_pvalue(c, law) > 1e-4, which


@pytest.mark.parametrize("device", DEVICES)
def test_same_seed_same_bytes(device):
    model = pate_vote_model(np.full(10, 0.1), np.eye(10)[3], 250)
    runs = [model_noisy_argmax_counts(model.sampler("S_prime"), 10, 3.0, 300_000, rng=np.random.SeedSequence(s), device=device)
            for s in (4, 4, 5)]
    assert runs[0].tobytes() == runs[1].tobytes()
    assert not np.array_equal(runs[0], runs[2])
    h1 = model.sample(np.random.default_rng(1), 1000, "S")
    h2 = model.sample(np.random.default_rng(1), 1000, "S")
    assert h1.tobytes() == h2.tobytes()


def test_groups_above_the_table_cap_keep_the_per_draw_samplers(monkeypatch):
    monkeypatch.setattr(tables, "TABLE_MAX_COUNT", 0)
    model = MODELS["pate"]
    assert model._chain_tables() == [None]
    # the binomials are counted as exact; only the last voter's float64 inverse CDF (3 classes) remains
    assert model.sampler_total_variation("S") == pytest.approx((3 - 1) * (3 + 2) * 2.0**-53)
    enum = enumerate_output_distributions(model, 1.5, max_tail_mass=1e-12)
    for device in ("cpu", "torch-cpu"):
        c = model_noisy_argmax_counts(model.sampler("S"), 5, 1.5, 300_000, rng=2, device=device)
        assert gof_pvalue(c, enum.p) > 1e-4


def test_total_variation_is_certified_small_and_charged_to_sampled_confidence():
    from ppaudit.audit.per_query import VoteModelSource, audit_query

    p = np.full(10, 0.02)
    p[0] = 0.82
    model = pate_vote_model(p, np.roll(p, 1), 250)
    tv_s, tv_sp = model.sampler_total_variation("S"), model.sampler_total_variation("S_prime")
    assert 0 < tv_s < 1e-12 and 0 < tv_sp < 1e-12
    source = VoteModelSource(model)
    assert source.sample_total_variation() == pytest.approx(tv_s + tv_sp)
    trials = 20_000
    res = audit_query(source, 40.0, trials, [2.0], 0.95, rng=1, count_mode="sample", exact="average", exact_draws=200)
    assert res.meta["count_mode"] == "sample"
    assert res.meta["effective_confidence"] == pytest.approx(0.95 - trials * (tv_s + tv_sp), abs=0, rel=1e-12)
    assert res.meta["effective_confidence"] < 0.95


# ----------------------------------------------------------------------------- blocks


def _exact_block_law(components):
    """The exact joint law of independent ``Mult(count, p)`` components: histogram → Fraction."""
    law = {(0,) * components[0][1].size: Fraction(1)}
    for count, p in components:
        q = [Fraction(float(v)) for v in p]
        total = sum(q)
        q = [v / total for v in q]
        comp = {}
        for xs in product(range(count + 1), repeat=len(q)):
            if sum(xs) != count or any(x and not qq for x, qq in zip(xs, q)):
                continue
            pr = Fraction(factorial(count), int(np.prod([factorial(x) for x in xs])))
            for x, qq in zip(xs, q):
                pr *= qq**x
            comp[xs] = pr
        new = {}
        for h, a in law.items():
            for xs, b in comp.items():
                key = tuple(u + v for u, v in zip(h, xs))
                new[key] = new.get(key, Fraction(0)) + a * b
        law = new
    return law


def test_block_table_is_the_rounded_exact_joint_law_within_the_certified_bound():
    components = [
        (1, np.array([0.5, 0.3, 0.2, 0.0])),
        (1, np.array([0.1, 0.0, 0.6, 0.3])),
        (3, np.array([0.7, 0.3, 0.0, 0.0])),
        (1, np.array([1 / 3, 1 / 3, 1 / 3, 0.0])),
    ]
    (block,) = tables.block_tables(components, max_support=4096)
    exact = _exact_block_law(components)
    assert block.size == 4 and block.outcomes.shape[0] == len(exact)
    scale = 2**62
    fhat = np.full(block.outcomes.shape[0], scale, dtype=object)
    fhat[: block.lo] = 0
    fhat[block.lo : block.lo + block.keys.size] = [int(v) for v in block.keys]
    acc, dist = Fraction(0), []
    for i, h in enumerate(block.outcomes):
        acc += exact[tuple(int(v) for v in h)]
        dist.append(abs(Fraction(int(fhat[i]), scale) - acc))
    assert acc == 1 and dist[-1] == 0
    assert max(dist) <= Fraction(1, scale)
    assert 0 < float(sum(dist, Fraction(0))) <= block.tv_bound < 1e-15


def test_blocks_split_at_the_support_cap_and_keep_the_law(monkeypatch):
    rows = np.array([[0.5, 0.5, 0, 0], [0.2, 0.3, 0.5, 0], [0.6, 0.0, 0.4, 0], [0.2, 0.3, 0.5, 0],
                     [0.1, 0.1, 0.2, 0.6], [0, 0, 0, 1], [0.25, 0.25, 0.25, 0.25], [0.9, 0.1, 0, 0]])
    model = capc_vote_model(rows, [0.0, 0.0, 0.0, 1.0])
    monkeypatch.setattr(tables, "BLOCK_MAX_SUPPORT", 12)
    blocks = model._plan()[2].blocks
    assert len(blocks) >= 3 and all(b.outcomes.shape[0] <= 12 for b in blocks)
    assert sum(b.size for b in blocks) == 5  # after teacher 1: 4 random single teachers, one group of 2 identical ones
    sigma, trials = 1.0, 400_000
    enum = enumerate_output_distributions(model, sigma, max_tail_mass=1e-12)
    for device in ("cpu", "torch-cpu"):
        for which, law in (("S", enum.p), ("S_prime", enum.q)):
            c = model_noisy_argmax_counts(model.sampler(which), 4, sigma, trials, rng=5, device=device)
            assert gof_pvalue(c, law) > 1e-4, (device, which)
