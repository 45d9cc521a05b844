"""Twin-paired fit of the canary-holding teacher and the null-canary control (issue 13 §2)."""

import numpy as np
import pytest

from ppaudit.audit import VoteModelSource, audit_query, epsilon_floor
from ppaudit.vote_models import fit_twin, load_fit, load_twin_fit, save_twin_fit

C = 3


def _votes(rng):
    # N_g = 2 instantiations of k = 25 teachers, 5 queries; 4 canaries x N_g' = 4 votes
    vs = rng.choice(C, p=[0.6, 0.3, 0.1], size=(2, 25, 5))
    vt = rng.choice(C, p=[0.6, 0.3, 0.1], size=(4, 4, 5))
    vp = vt.copy()
    vp[0, :, 1] = 2  # canary 0 flips its teacher's vote on query 1 in every instantiation
    return vs, vp, vt


def test_null_canary_sits_at_the_floor_with_twins_and_not_with_the_paper_fit():
    rng = np.random.default_rng(0)
    vs, vp, vt = _votes(rng)
    ours, paper = fit_twin("pate", vs, vp, vt, C), fit_twin("pate", vs, vp, vt, C, procedure="paper")
    orders = np.array([2.0, 8.0, 32.0])
    floor = epsilon_floor(orders, 1e-6)
    from ppaudit.accounting import rdp_to_dp

    ctl_paper = []
    for i in range(4):
        for q in range(5):
            assert ours.model(i, q, control=True).identical
            m = paper.model(i, q, control=True)
            if not m.identical:
                r = audit_query(VoteModelSource(m), 2.0, 10**8, orders, rng=q, count_mode="exact")
                ctl_paper.append(rdp_to_dp(5 * r.columns["exact"], orders, 1e-6))
    # the paper's fit invents leakage for canaries that are not in the data
    assert ctl_paper and max(ctl_paper) > floor * 1.01
    # the real canary (flips every vote on query 1) is not identical under twin pairing
    assert not ours.model(0, 1).identical and ours.model(1, 1).identical


def test_capc_party_row_and_round_trip(tmp_path):
    rng = np.random.default_rng(1)
    vs = rng.choice(C, size=(1, 4, 3))
    vt = np.stack([np.repeat(vs[:, 2], 2, axis=0), np.repeat(vs[:, 1], 2, axis=0)])  # twins of parties 2 and 1
    vp = vt.copy()
    vp[0, :, 0] = (vt[0, :, 0] + 1) % C
    fit = fit_twin("capc", vs, vp, vt, C, party=[2, 1])
    m = fit.model(0, 0)
    np.testing.assert_array_equal(m.last, fit.P_twin[0, 0])
    assert m.constant.sum() + m.group_counts.sum() == 3  # the three other parties
    assert fit.model(1, 0).identical and fit.model(0, 0, control=True).identical
    save_twin_fit(fit, tmp_path / "f.npz")
    back = load_fit(tmp_path / "f.npz")  # load_fit dispatches to twin fits
    assert back.algo == "capc" and back.num_canary_instantiations == 2 and np.array_equal(back.party, [2, 1])
    np.testing.assert_array_equal(load_twin_fit(tmp_path / "f.npz").P_prime, fit.P_prime)


def test_bad_inputs_name_the_value():
    rng = np.random.default_rng(2)
    vs, vp, vt = _votes(rng)
    with pytest.raises(ValueError, match="votes_twin"):
        fit_twin("pate", vs, vp, vt[:, :2], C)
    with pytest.raises(ValueError, match="party"):
        fit_twin("capc", vs, vp, vt, C, party=[0, 1, 2, 99])
    with pytest.raises(ValueError, match="procedure"):
        fit_twin("pate", vs, vp, vt, C, procedure="mine")
    with pytest.raises(ValueError, match="algo"):
        fit_twin("knn", vs, vp, vt, C)
