"""The best a sampling search can do on the benchmark's subtle bugs: power of the certification on the ideal output set.

Run: ``PYTHONPATH=src python bench/oracle_power.py [--epsilon 0.1] [--trials 50000]``.

For the buggy mechanisms of ``ppaudit.blackbox.catalogue`` whose true ε is close to the claim
(report-noisy-max returning the value, Ding et al. 2018, Algs. 7, 8; Lyu et al. 2017's SVT Algs. 3,
4, 6), the probability of every output *of the audited view* is computed exactly (closed-form
CDFs; SVT integrated over the threshold noise ρ on a grid), per pair of StatDP's query-answer
patterns (``neighbours.query_answers``). On the likelihood-ratio prefixes of those exact
probabilities (the Neyman–Pearson sets, each with its complement, both directions) the script
takes the set that maximises the power of the certification's Eq. (1) test and reports the power
at ``T_c = (1 − pilot_fraction)·trials`` fresh draws per side and the ``T_c`` needed for 90 %.

The certification is approximated as ``log(p̂0) − z·se0 − log(p̂1) − z·se1 > ε0`` with delta-method
standard errors and ``z`` the one-sided quantile of the search's per-interval level (confidence
0.95, Bonferroni over ``certify_top = 2`` pairs and the RDP and ε tests, two-sided intervals for
each of the two proportions: ``z = Φ⁻¹(1 − 0.05/16)``).
This is an *oracle*: the search does not know these sets and must find them on pilot draws, so
its power is lower. The numbers explain the rows of the benchmark that 5·10⁴ draws cannot pass.
"""

from __future__ import annotations

import argparse
import math

import numpy as np
from scipy.stats import norm

from ppaudit.blackbox.neighbours import query_answers


def _lap_cdf(x, b):
    x = np.asarray(x, dtype=float)
    return np.where(x < 0, 0.5 * np.exp(np.minimum(x, 0) / b), 1 - 0.5 * np.exp(-np.maximum(x, 0) / b))


def _exp_cdf(x, b):
    x = np.asarray(x, dtype=float)
    return np.where(x < 0, 0.0, -np.expm1(-np.maximum(x, 0) / b))


def rnm_value_cells(q, eps, noise):
    """Max of q + noise (scale 2/ε), rounded down to multiples of 0.5/ε (the catalogue's grid view)."""
    b, w = 2 / eps, 0.5 / eps
    cdf1 = _lap_cdf if noise == "laplace" else _exp_cdf
    edges = np.arange(-1024, 1026) * w
    cdf = np.prod([cdf1(edges - qi, b) for qi in q], axis=0)
    p = np.diff(cdf)
    p[0] += cdf[0]
    p[-1] += 1 - cdf[-1]
    return p


def _rho(scale, n):
    r = np.linspace(-40 * scale, 40 * scale, n)
    w = np.exp(-np.abs(r) / scale)
    return r, w / w.sum()


def svt4_positions(q, eps, T=1.0):
    """Lyu et al. Alg. 4, c = 1: position of the first ⊤ (or none)."""
    e1 = eps / 4
    r, wts = _rho(1 / e1, 20001)
    below = np.array([_lap_cdf(T + r - qi, 1 / (eps - e1)) for qi in q])
    out, run = [], np.ones_like(r)
    for k in range(len(q)):
        out.append(np.sum(wts * run * (1 - below[k])))
        run = run * below[k]
    return np.array(out + [np.sum(wts * run)])


def svt6_vectors(q, eps, T=1.0):
    """Lyu et al. Alg. 6: the 2^m answer vectors (no cutoff)."""
    e1 = eps / 2
    r, wts = _rho(1 / e1, 4001)
    top = np.clip(np.array([1 - _lap_cdf(T + r - qi, 1 / (eps - e1)) for qi in q]), 1e-300, 1 - 1e-16)
    bits = (np.arange(2 ** len(q))[:, None] >> np.arange(len(q))) & 1
    return np.exp(bits @ np.log(top) + (1 - bits) @ np.log1p(-top)) @ wts


def svt3_cells(q, eps, T=1.0):
    """Lyu et al. Alg. 3, c = 1: position of the first ⊤ and its noisy answer on the catalogue's grid."""
    e1 = eps / 2
    nus = 1 / (eps - e1)
    r, wts = _rho(1 / e1, 8001)
    w, lo, hi = 1 / eps, -3, 3
    out, run = [], np.ones_like(r)
    for k in range(len(q)):
        thr = T + r
        for j in range(lo, hi + 1):
            a = -np.inf if j == lo else j * w
            b = np.inf if j == hi else (j + 1) * w
            aa = np.maximum(a, thr)
            pr = np.where(b > aa, _lap_cdf(b - q[k], nus) - _lap_cdf(aa - q[k], nus), 0.0)
            out.append(np.sum(wts * run * pr))
        run = run * _lap_cdf(thr - q[k], nus)
    return np.array(out + [np.sum(wts * run)])


CASES = {
    "rnm_laplace_value": (5, lambda q, e: rnm_value_cells(q, e, "laplace")),
    "rnm_exponential_value": (5, lambda q, e: rnm_value_cells(q, e, "exponential")),
    "svt3": (10, svt3_cells),
    "svt4": (10, svt4_positions),
    "svt6": (10, svt6_vectors),
}


def best_power(p0, p1, claim, t_cert, z):
    """(power, event ε, P0(O), P1(O)) of the best likelihood-ratio prefix set or complement."""
    keep = (p0 + p1) > 1e-15
    p0, p1 = p0[keep], p1[keep]
    o = np.argsort(-(np.log(p0 + 1e-300) - np.log(p1 + 1e-300)))
    a0, a1 = np.cumsum(p0[o])[:-1], np.cumsum(p1[o])[:-1]
    best = (0.0, 0.0, 0.0, 0.0)
    for x0, x1 in ((a0, a1), (1 - a1, 1 - a0)):  # prefix (P0 > P1) and complement of the reverse
        with np.errstate(divide="ignore", invalid="ignore"):
            e = np.log(x0) - np.log(x1)
            s0, s1 = np.sqrt((1 - x0) / (t_cert * x0)), np.sqrt((1 - x1) / (t_cert * x1))
            pw = np.nan_to_num(norm.cdf((e - claim - z * (s0 + s1)) / np.hypot(s0, s1)))
        j = int(np.argmax(pw))
        best = max(best, (float(pw[j]), float(e[j]), float(x0[j]), float(x1[j])))
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epsilon", type=float, default=0.1)
    ap.add_argument("--trials", type=lambda s: int(float(s)), default=50_000)
    ap.add_argument("--pilot-fraction", type=float, default=0.2)
    args = ap.parse_args()
    # β = 0.05 over certify_top = 2 pairs and the RDP and ε tests; the ε test's two proportions each get a
    # two-sided interval at 1 − β/(2·2)/2, so each bound is one-sided at β/16
    z = norm.ppf(1 - 0.05 / 2 / 2 / 2 / 2)
    t_cert = int(round((1 - args.pilot_fraction) * args.trials))
    print(f"claimed eps0 = {args.epsilon:g}; certification {t_cert} draws per side; z = {z:.3f}")
    for name, (m, cells) in CASES.items():
        rows = []
        for i, (a, b) in enumerate(query_answers(m, 1.0)):
            p0, p1 = cells(a, args.epsilon), cells(b, args.epsilon)
            pw, e, x0, x1 = best_power(p0, p1, args.epsilon, t_cert, z)
            need = next((t for t in np.geomspace(1e3, 1e9, 241) if best_power(p0, p1, args.epsilon, t, z)[0] >= 0.9), math.inf)
            rows.append((pw, i, e, x0, x1, need))
        pw, i, e, x0, x1, need = max(rows)
        print(f"{name:22s} best pair #{i}: O with P0 = {x0:.4g}, P1 = {x1:.4g} (loss {e:.3f}); power {pw:.2f}; "
              f"90 % power at ~{need:.2g} certification draws per side (trials ~{need / (1 - args.pilot_fraction):.2g})")


if __name__ == "__main__":
    main()
