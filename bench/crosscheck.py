"""Agreement with peer implementations, as a table ("agrees with").

Run: ``.venv/bin/python bench/crosscheck.py [--markdown]``. Each row: the quantity, the peer,
the cases compared, and the largest difference found (absolute unless marked). The README's
"agrees with" table is this script's ``--markdown`` output.

Peers and where their reference values come from:

* **dp-accounting** (installed, the library itself): GDP ε(δ) / δ(ε) / μ against its PLD
  accountant and ``get_sigma_gaussian``; RDP → DP against ``rdp_privacy_accountant.compute_epsilon``
  (same Balle et al. 2020 conversion); k-fold Gaussian composition against the PLD accountant.
* **Papernot et al. 2018** (tensorflow/privacy ``research/pate_2018/core.py`` at commit
  3d038a490a0cdd809c030435281c2e94e44c2f83, copied verbatim in ``tests/reference/pate2018_reference.py``):
  data-dependent GNMax RDP (``compute_logq_gaussian`` + ``rdp_gaussian``) and Confident-GNMax's
  threshold step, on random and adversarial histograms.
* **jax_privacy** (google-deepmind/jax_privacy, ``jax_privacy/auditing/canary_score_auditor.py``,
  ``_epsilon_one_run_fdp`` and ``_gaussian_dp_blow_up_inverse``, "audit_rh_with_cap" of
  Mahloujifar et al. 2025b): the one-run f-DP ε. jax_privacy itself needs JAX, which the project
  does not install, so its published recursion is transcribed below (``_jax_privacy_fdp_epsilon``,
  scalar, line for line: GDP family parametrised by (ε, δ) through
  ``dp_accounting.get_sigma_gaussian``, ``h = max(h, blow_up_inv(r))``, ``r`` capped at 1,
  Brent's method on ε with ``xtol = 1e-6``) and compared with ``ppaudit.attacks.one_run``.
* **DP-Auditorium** (google/differential-privacy, ``python/dp_auditorium``): its Rényi tester
  needs TensorFlow / JAX; it is not installed here, so the row says "not run".
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import time
from pathlib import Path

import dp_accounting
import numpy as np
import scipy.optimize
from scipy.stats import norm

from ppaudit.accounting import gnmax_rdp_data_dependent, rdp_to_dp
from ppaudit.attacks.one_run import epsilon_lower_bound, gdp_delta, gdp_epsilon, gdp_mu

REPO = Path(__file__).resolve().parents[1]


def _load_pate_reference():
    spec = importlib.util.spec_from_file_location("pate2018_reference", REPO / "tests" / "reference" / "pate2018_reference.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _jax_privacy_fdp_epsilon(m, n_guess, n_correct, significance, delta):
    """Transcription of jax_privacy's ``_epsilon_one_run_fdp(eps_lo=0, ...)`` (see module docstring)."""

    def blow_up_inv(eps):
        sigma = dp_accounting.get_sigma_gaussian(eps, delta)
        if sigma == 0:
            return lambda x: float(x == 1.0)
        return lambda x: norm.cdf(norm.ppf(x) - 1 / sigma)

    def audit_objective(eps):
        f = blow_up_inv(eps)
        r = significance * n_correct / m
        h = significance * (n_guess - n_correct) / m
        for i in range(n_correct - 1, -1, -1):
            h_new = max(h, f(r))
            if h == h_new:
                break
            r_new = min(r + (i / (n_guess - i)) * (h_new - h), 1.0)
            h, r = h_new, r_new
        return r + h - n_guess / m

    eps_lo = 0.0
    if audit_objective(eps_lo) <= 0:
        return eps_lo
    eps_hi = max(1.0, 2 * eps_lo)
    while audit_objective(eps_hi) > 0:
        eps_lo, eps_hi = eps_hi, eps_hi * 2
    return scipy.optimize.brentq(audit_objective, eps_lo, eps_hi, xtol=1e-6)


def rows_dp_accounting():
    rows = []
    mus = [0.1, 0.25, 0.5, 1.0, 2.0, 4.0]
    deltas = [1e-3, 1e-5, 1e-7]
    # GDP mu from (eps, delta): analytic Gaussian calibration of dp_accounting.
    diff = 0.0
    n = 0
    for eps in [0.1, 0.5, 1.0, 2.0, 5.0, 10.0]:
        for d in deltas:
            ref = 1.0 / dp_accounting.get_sigma_gaussian(eps, d)
            diff = max(diff, abs(gdp_mu(eps, d) - ref) / ref)
            n += 1
    rows.append(("GDP mu(eps, delta) (ppaudit.attacks.one_run.gdp_mu)", "dp-accounting get_sigma_gaussian",
                 f"{n}: eps in 0.1..10, delta in 1e-3..1e-7", f"{diff:.1e} (relative)"))
    # GDP delta(eps) and eps(delta) vs the PLD accountant of one Gaussian mechanism (sigma = 1/mu).
    dd = de = 0.0
    for mu in mus:
        acc = dp_accounting.pld.PLDAccountant(dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE)
        acc.compose(dp_accounting.GaussianDpEvent(1.0 / mu))
        for eps in [0.1, 1.0, 3.0]:
            dd = max(dd, abs(float(gdp_delta(eps, mu)) - acc.get_delta(eps)))
        for d in deltas:
            de = max(de, abs(gdp_epsilon(mu, d) - acc.get_epsilon(d)))
    rows.append(("GDP delta(eps) (gdp_delta)", "dp-accounting PLD accountant, Gaussian mechanism",
                 f"{len(mus) * 3}: mu in 0.1..4, eps in 0.1..3", f"{dd:.1e}"))
    rows.append(("GDP eps(delta) (gdp_epsilon)", "dp-accounting PLD accountant, Gaussian mechanism",
                 f"{len(mus) * len(deltas)}: mu in 0.1..4, delta in 1e-3..1e-7", f"{de:.1e}"))
    # RDP -> DP (Balle et al. 2020, Thm 20) on Gaussian and GNMax-like curves.
    orders = np.concatenate([np.linspace(1.1, 10.9, 99), np.arange(11, 1000)])
    diff = 0.0
    n = 0
    for rho in [1e-4, 1e-3, 0.01, 0.1, 1.0]:
        for d in deltas:
            ref, _ = dp_accounting.rdp.rdp_privacy_accountant.compute_epsilon(orders, rho * orders, d)
            diff = max(diff, abs(rdp_to_dp(rho * orders, orders, d) - ref))
            n += 1
    rows.append(("RDP -> (eps, delta) (ppaudit.accounting.rdp_to_dp)", "dp-accounting rdp compute_epsilon",
                 f"{n}: rho*alpha curves, rho in 1e-4..1, delta in 1e-3..1e-7", f"{diff:.1e}"))
    # k-fold composition of the Gaussian mechanism: GDP (sqrt(k) mu) vs PLD.
    diff = 0.0
    n = 0
    for k in [1, 10, 100, 1000]:
        for sigma in [5.0, 20.0, 40.0]:
            acc = dp_accounting.pld.PLDAccountant(dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE)
            acc.compose(dp_accounting.GaussianDpEvent(sigma), k)
            diff = max(diff, abs(gdp_epsilon(math.sqrt(k) / sigma, 1e-5) - acc.get_epsilon(1e-5)))
            n += 1
    rows.append(("eps of k Gaussian queries (GDP composition)", "dp-accounting PLD accountant",
                 f"{n}: k in 1..1000, sigma in 5..40, delta 1e-5", f"{diff:.1e}"))
    return rows


def rows_papernot():
    ref = _load_pate_reference()
    rng = np.random.default_rng(0)
    orders = np.concatenate([np.linspace(1.5, 10, 18), np.geomspace(12, 500, 30)])
    hists = [rng.multinomial(250, rng.dirichlet(np.full(10, a))) for a in (0.1, 0.3, 1.0, 3.0) for _ in range(25)]
    hists += [np.array([250] + [0] * 9), np.array([125, 125] + [0] * 8), np.array([126, 124] + [0] * 8)]
    diff = 0.0
    for sigma in (20.0, 40.0, 100.0):
        for h in hists:
            r = ref.rdp_gaussian(ref.compute_logq_gaussian(h.astype(float), sigma), sigma, orders)
            ours = gnmax_rdp_data_dependent(h, sigma, orders)
            diff = max(diff, float(np.max(np.abs(ours - r))))
    rows = [("data-dependent GNMax RDP (gnmax_rdp_data_dependent)", "Papernot et al. 2018 core.py (verbatim copy)",
             f"{3 * len(hists)}: 103 histograms (250 teachers, 10 classes) x sigma 20/40/100, 48 orders", f"{diff:.1e}")]
    try:
        from ppaudit.accounting import confident_gnmax_threshold_rdp
    except ImportError:
        rows.append(("Confident-GNMax threshold RDP", "Papernot et al. 2018 core.py", "-", "not available"))
        return rows
    diff = 0.0
    n = 0
    for t, s1 in ((200, 150), (300, 200)):
        for h in hists:
            r = ref.compute_rdp_threshold(ref.compute_logpr_answered(t, s1, h.astype(float)), s1, orders)
            ours = confident_gnmax_threshold_rdp(h, t, s1, orders)
            diff = max(diff, float(np.max(np.abs(ours - r))))
            n += 1
    rows.append(("Confident-GNMax threshold-step RDP", "Papernot et al. 2018 core.py (verbatim copy)",
                 f"{n}: 103 histograms x (T, sigma1) = (200, 150), (300, 200)", f"{diff:.1e}"))
    return rows


def rows_jax_privacy():
    cases = [(1000, 100, 90), (1000, 100, 70), (10_000, 500, 400), (10_000, 1000, 700), (100_000, 1000, 990),
             (100_000, 5000, 4000), (2000, 20, 20), (50_000, 500, 300)]
    diff = 0.0
    for m, cp, c in cases:
        ref = _jax_privacy_fdp_epsilon(m, cp, c, 0.05, 1e-5)
        ours = float(epsilon_lower_bound(cp, c, m, delta=1e-5, confidence=0.95))
        diff = max(diff, abs(ours - ref))
    return [("one-run f-DP eps (attacks.one_run.epsilon_lower_bound)",
             "jax_privacy _epsilon_one_run_fdp (published recursion, transcribed)",
             f"{len(cases)}: m in 1e3..1e5, c' in 20..5000, gamma 0.05, delta 1e-5",
             f"{diff:.1e} (their xtol 1e-6, our mu tolerance 1e-5)")]


def rows_dp_auditorium():
    spec = importlib.util.find_spec("dp_auditorium")
    if spec is None:
        return [("Renyi tester on the same mechanism", "DP-Auditorium", "-",
                 "not run: dp_auditorium (needs TensorFlow/JAX) is not installed")]
    return [("Renyi tester on the same mechanism", "DP-Auditorium", "-", "installed but not wired: not run")]


def table() -> list[tuple[str, str, str, str]]:
    return rows_dp_accounting() + rows_papernot() + rows_jax_privacy() + rows_dp_auditorium()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--markdown", action="store_true", help="print a markdown table (for the README)")
    args = ap.parse_args()
    t0 = time.perf_counter()
    rows = table()
    head = ("quantity", "agrees with", "cases", "max difference")
    if args.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for r in rows:
            print("| " + " | ".join(r) + " |")
    else:
        widths = [max(len(str(x[i])) for x in rows + [head]) for i in range(len(head))]
        for r in [head] + rows:
            print("  ".join(str(v).ljust(w) for v, w in zip(r, widths)))
    print(f"\n({time.perf_counter() - t0:.1f} s)")


if __name__ == "__main__":
    main()
