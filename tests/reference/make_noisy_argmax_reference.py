"""Regenerate noisy_argmax_mpmath.json: log Pr[argmax(H + N(0, σ²I)) = c] by mpmath quadrature.

Chadha et al. 2024, Eq. (4) in the normalised variable z: Pr[c] = ∫ φ(z) ∏_{i≠c} Φ(z + (n_c − n_i)/σ) dz,
integrated with mpmath.quad (tanh-sinh) at 30 significant digits with breakpoints every unit
of z over the range that holds the peak (the log-integrand is concave with its mode in
[0, max_i (n_i − n_c)/σ]). Run: python tests/reference/make_noisy_argmax_reference.py
"""

import json
from pathlib import Path

import mpmath

mpmath.mp.dps = 30

CASES = [
    ([14, 12, 10, 8, 6], 2.0),
    ([13, 13, 10, 8, 6], 2.0),
    ([250, 0, 0, 0, 0, 0, 0, 0, 0, 0], 40.0),
    ([120, 80, 30, 10, 5, 3, 2, 0, 0, 0], 40.0),
    ([3, 7, 7, 1], 0.5),
    ([9000, 9500, 10000, 0], 500.0),
    ([5, 5, 5, 5, 5, 5], 1.0),
    ([100.5, 99.25, 3.0], 3.7),
    ([0, 60, 10, 2], 1.0),
    ([400, 0, 390], 2.0),
    ([40, 8, 2, 0, 0], 6.0),
    ([39, 9, 2, 0, 0], 6.0),
]


def log_probabilities(hist, sigma):
    h = [mpmath.mpf(x) for x in hist]
    s = mpmath.mpf(sigma)
    out = []
    for c in range(len(h)):
        e = [(h[c] - h[i]) / s for i in range(len(h))]

        def f(z):
            return mpmath.npdf(z) * mpmath.fprod(mpmath.ncdf(z + e[i]) for i in range(len(h)) if i != c)

        hi = int(max(0.0, float(max(-x for x in e)))) + 12
        pts = [-mpmath.inf] + list(range(-12, hi + 1)) + [mpmath.inf]
        out.append(mpmath.nstr(mpmath.log(mpmath.quad(f, pts)), 25))
    return out


if __name__ == "__main__":
    data = {
        "source": "mpmath %s quad, 30 digits, script tests/reference/make_noisy_argmax_reference.py" % mpmath.__version__,
        "cases": [{"hist": h, "sigma": s, "log_probabilities": log_probabilities(h, s)} for h, s in CASES],
    }
    Path(__file__).with_name("noisy_argmax_mpmath.json").write_text(json.dumps(data, indent=1) + "\n")
