"""Agreement with peer implementations, as a table ("agrees with").

Run: ``.venv/bin/python bench/crosscheck.py [--markdown]``. Each row: the quantity, the peer,
the cases compared, and the largest difference found (absolute unless marked). The
"agrees with" table of docs/audit_your_mechanism.md is this script's ``--markdown`` output.

Peers and where their reference values come from:

* **dp-accounting** (installed, the library itself): GDP ε(δ) / δ(ε) / μ against its PLD
  accountant and ``get_sigma_gaussian``; RDP → DP against ``rdp_privacy_accountant.compute_epsilon``
  (same Balle et al. 2020 conversion); k-fold Gaussian composition against the PLD accountant.
* **Papernot et al. 2018** (tensorflow/privacy ``research/pate_2018/core.py`` at commit
  3d038a490a0cdd809c030435281c2e94e44c2f83): data-dependent GNMax RDP (``compute_logq_gaussian`` +
  ``rdp_gaussian``) and Confident-GNMax's threshold step, on random and adversarial histograms.
  The authors' functions were run once and their outputs recorded, with the inputs, in
  ``tests/reference/pate2018_reference_values.json`` (section ``crosscheck``; its ``source`` says
  how); the third-party code is not in this repository.
* **jax_privacy** (google-deepmind/jax_privacy, ``jax_privacy/auditing/canary_score_auditor.py``,
  ``_epsilon_one_run_fdp`` and ``_gaussian_dp_blow_up_inverse``, "audit_rh_with_cap" of
  Mahloujifar et al. 2025b): the one-run f-DP ε, compared with ``ppaudit.attacks.one_run``.
  jax_privacy needs JAX, which the project does not install; its values were computed once
  with a line-for-line scalar NumPy/SciPy transcription of that function (GDP family
  parametrised by (ε, δ) through ``dp_accounting.get_sigma_gaussian``, ``h = max(h,
  blow_up_inv(r))``, ``r`` capped at 1, Brent's method on ε with ``xtol = 1e-6``) and recorded,
  with the inputs, in ``tests/reference/jax_privacy_one_run_values.json``; neither their code
  nor the transcription is in this repository.
* **DP-Auditorium** (google/differential-privacy, ``python/dp_auditorium``): its Rényi tester
  needs TensorFlow / JAX; it is not installed here, so the row says "not run".
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import time
from pathlib import Path

import dp_accounting
import numpy as np

from ppaudit.accounting import gnmax_rdp_data_dependent, rdp_to_dp
from ppaudit.attacks.one_run import epsilon_gdp_family, gdp_delta, gdp_epsilon, gdp_mu

REPO = Path(__file__).resolve().parents[1]


def _recorded(name: str) -> dict:
    """Recorded peer outputs (with inputs and ``source``) from ``tests/reference/<name>``."""
    return json.loads((REPO / "tests" / "reference" / name).read_text())


def _rows_or_baseline(rows, baseline):
    """Decode a recorded table of RDP rows: ``null`` marks a row where the authors' ``rdp_gaussian``
    returned its data-independent baseline ``orders / variance`` at every order (bit for bit)."""
    return [baseline if r is None else np.asarray(r, dtype=float) for r in rows]


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
    # Reference: outputs of the authors' core.py, recorded (see the module docstring).
    ref = _recorded("pate2018_reference_values.json")["crosscheck"]
    orders = np.asarray(ref["orders"], dtype=float)
    hists = [np.asarray(h) for h in ref["histograms"]]
    # the inputs are still the ones this script used to draw
    rng = np.random.default_rng(0)
    drawn = [rng.multinomial(250, rng.dirichlet(np.full(10, a))) for a in (0.1, 0.3, 1.0, 3.0) for _ in range(25)]
    drawn += [np.array([250] + [0] * 9), np.array([125, 125] + [0] * 8), np.array([126, 124] + [0] * 8)]
    assert len(drawn) == len(hists) and all(np.array_equal(x, y) for x, y in zip(drawn, hists))
    assert np.array_equal(orders, np.concatenate([np.linspace(1.5, 10, 18), np.geomspace(12, 500, 30)]))
    diff = 0.0
    n = 0
    for key, rows in ref["gnmax_rdp"].items():
        sigma = float(key)
        for h, r in zip(hists, _rows_or_baseline(rows, orders / sigma**2), strict=True):
            ours = gnmax_rdp_data_dependent(h, sigma, orders)
            diff = max(diff, float(np.max(np.abs(ours - r))))
            n += 1
    rows = [("data-dependent GNMax RDP (gnmax_rdp_data_dependent)", "Papernot et al. 2018 core.py (recorded outputs)",
             f"{n}: {len(hists)} histograms (250 teachers, 10 classes) x sigma 20/40/100, {orders.size} orders", f"{diff:.1e}")]
    try:
        from ppaudit.accounting import confident_gnmax_threshold_rdp
    except ImportError:
        rows.append(("Confident-GNMax threshold RDP", "Papernot et al. 2018 core.py", "-", "not available"))
        return rows
    diff = 0.0
    n = 0
    settings = []
    for block in ref["threshold_rdp"]:
        t, s1 = block["threshold"], block["sigma_threshold"]
        settings.append(f"({t:g}, {s1:g})")
        for h, r in zip(hists, _rows_or_baseline(block["rdp"], orders / (2**0.5 * s1) ** 2), strict=True):
            ours = confident_gnmax_threshold_rdp(h, t, s1, orders)
            diff = max(diff, float(np.max(np.abs(ours - r))))
            n += 1
    rows.append(("Confident-GNMax threshold-step RDP", "Papernot et al. 2018 core.py (recorded outputs)",
                 f"{n}: {len(hists)} histograms x (T, sigma1) = {', '.join(settings)}", f"{diff:.1e}"))
    return rows


def rows_jax_privacy():
    # Reference: jax_privacy's _epsilon_one_run_fdp, recorded (see the module docstring).
    cases = _recorded("jax_privacy_one_run_values.json")["cases"]
    diff = 0.0
    for c in cases:
        ours = float(epsilon_gdp_family(c["n_guess"], c["n_correct"], c["m"], delta=c["delta"],
                                         confidence=1 - c["significance"]))
        diff = max(diff, abs(ours - c["epsilon"]))
    assert {c["significance"] for c in cases} == {0.05} and {c["delta"] for c in cases} == {1e-5}
    return [("one-run f-DP eps (attacks.one_run.epsilon_gdp_family)",
             "jax_privacy _epsilon_one_run_fdp (recorded outputs)",
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
