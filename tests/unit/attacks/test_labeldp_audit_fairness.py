"""Equal canary counts for the LIA and the MIA baselines, and offline RMIA's non-member population (observational paper §6.2, App. E)."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

from ppaudit.attacks.observational import (
    audit_label_inference,
    label_inference_counts,
    rmia_offline_audit_scores,
)
from ppaudit.experiments.labeldp.tables import audit_model

SETTINGS = dict(
    repetitions=3, t=2.0, fixed_fraction=0.01, delta=1e-5, confidence=0.95, rmia_a=0.3
)


def _probs(rng, n, k, conc=1.0):
    return rng.dirichlet(np.full(k, conc), size=n)


def test_every_attack_uses_the_test_set_size_of_canaries():
    rng = np.random.default_rng(0)
    k, n_tgt, n_test = 4, 900, 250
    y_t, y_te = rng.integers(0, k, n_tgt), rng.integers(0, k, n_test)
    df = audit_model(
        y_t,
        _probs(rng, n_tgt, k),
        _probs(rng, n_tgt, k),
        y_te,
        _probs(rng, n_test, k),
        _probs(rng, n_test, k),
        SETTINGS,
        rng,
    )
    assert set(df["attack"]) == {"lia", "calibrated_mia", "rmia"}
    assert (df["num_canaries"] == n_test).all()


def test_lia_subsample_counts_a_fresh_subset_each_repetition():
    rng = np.random.default_rng(1)
    k, m = 3, 400
    y = rng.integers(0, k, m)
    tgt = np.eye(k)[y] * 0.9 + 0.1 / k  # a model that memorised its labels
    ref = np.full((m, k), 1.0 / k)
    cuts = np.array([10, 50, 100])
    counts = label_inference_counts(
        y, tgt, ref, cuts, 50, np.random.default_rng(2), num_canaries=100
    )
    assert (
        counts.shape == (50, 3)
        and np.all(counts <= cuts)
        and np.all(np.diff(counts, axis=1) >= 0)
    )
    # fresh subsets: the 100-guess counts vary over repetitions beyond the b-draw alone
    assert counts[:, 2].std() > 0
    res = audit_label_inference(
        y, tgt, ref, 5, np.random.default_rng(3), num_canaries=100
    )
    assert res.num_samples == 100
    with pytest.raises(ValueError, match="num_canaries"):
        label_inference_counts(y, tgt, ref, cuts, 2, rng, num_canaries=m + 1)
    with pytest.raises(ValueError, match="num_guesses"):
        label_inference_counts(y, tgt, ref, np.array([200]), 2, rng, num_canaries=100)


def test_subset_counts_equal_the_full_game_on_that_subset():
    # With num_canaries = m the subset path must reproduce the full game exactly (same rng).
    rng = np.random.default_rng(4)
    k, m = 4, 300
    y = rng.integers(0, k, m)
    tgt, ref = _probs(rng, m, k), _probs(rng, m, k)
    cuts = np.array([5, 30, 300])
    a = label_inference_counts(y, tgt, ref, cuts, 5, np.random.default_rng(9))
    b = label_inference_counts(
        y, tgt, ref, cuts, 5, np.random.default_rng(9), num_canaries=m
    )
    np.testing.assert_array_equal(a, b)


def test_rmia_population_is_non_members_only_with_leave_one_out():
    rng = np.random.default_rng(5)
    k, n_m, n_n, a = 3, 60, 40, 0.3
    ym, yn = rng.integers(0, k, n_m), rng.integers(0, k, n_n)
    mt, mr, nt, nr = (
        _probs(rng, n_m, k),
        _probs(rng, n_m, k),
        _probs(rng, n_n, k),
        _probs(rng, n_n, k),
    )
    sm, sn, pop = rmia_offline_audit_scores(mt, mr, ym, nt, nr, yn, a=a)
    assert set(pop.tolist()) <= set(range(n_n))  # indices into the non-member pool only
    assert pop.size == n_n
    # brute force: LR(x) = p_t / (½((1 + a) p_r + 1 − a)); score = share of z in Z \ {x} with LR(x)/LR(z) ≥ 1
    lr = lambda t, r, y: (
        t[np.arange(len(y)), y] / (0.5 * ((1 + a) * r[np.arange(len(y)), y] + 1 - a))
    )
    lz = lr(nt, nr, yn)
    ref_m = np.array([np.mean(v / lz >= 1) for v in lr(mt, mr, ym)])
    ref_n = np.array([np.mean(np.delete(v / lz, i) >= 1) for i, v in enumerate(lz)])
    assert_allclose(sm, ref_m)
    assert_allclose(sn, ref_n)
    # planted bug check: a population polluted by members changes the member scores
    sm_bad, _, _ = rmia_offline_audit_scores(
        mt,
        mr,
        ym,
        np.concatenate([nt, mt]),
        np.concatenate([nr, mr]),
        np.concatenate([yn, ym]),
        a=a,
    )
    assert not np.allclose(sm_bad[: len(sm)], sm)


def test_tables_label_pate_fm_and_the_noise_correction_rows():
    import pandas as pd

    from pathlib import Path

    from ppaudit.experiments.labeldp.tables import build_table, read_paper_number_strings

    numbers = read_paper_number_strings(Path(__file__).resolve().parents[3] / "workflow" / "data" / "paper_numbers.csv")

    rows = []
    for algo, ds, student in (
        ("lp_1st_nc", "tabular", ""),
        ("pate", "tabular", "plain"),
        ("pate", "image", "fixmatch"),
    ):
        rows.append(dict(dataset=ds, algo=algo, epsilon=1.0, attack="lia", claimed_epsilon=1.0, num_canaries=10, repetitions=3,
                         epsilon_sweep_mean=0.5, epsilon_sweep_std=0.1, epsilon_fixed_mean=0.4, epsilon_fixed_std=0.1,
                         test_accuracy=0.8, test_log_loss=0.4, pate_student=student))  # fmt: skip
    a = pd.DataFrame(rows)
    t2 = build_table("obs_table2", a[a["dataset"] == "tabular"], numbers)
    nc = t2[t2["algo"] == "lp_1st_nc"].iloc[0]
    assert (
        nc["algorithm"] == "LP-1ST (noise correction)" and nc["paper"] == "0.40 ± 0.08"
    )  # Obs. Table 2, ε = 1
    assert t2[t2["algo"] == "pate"].iloc[0]["algorithm"].startswith("PATE (plain")
    t5 = build_table("obs_table5", a[a["dataset"] == "tabular"], numbers)
    assert (
        t5[t5["algo"] == "lp_1st_nc"].iloc[0]["paper"] == "0.171"
    )  # Obs. Table 5, ε = 1
    t1 = build_table("obs_table1", a[a["dataset"] == "image"], numbers)
    assert t1.iloc[0]["algorithm"].startswith("PATE-FM") and t1.iloc[0]["paper"] == "0.79 ± 0.09"  # Obs. Table 1, PATE-FM, ε = 1
