"""Regenerate noisy_argmax_bound_mpmath.json: Pr[argmax(H + N(0, σ²I)) = c] by mpmath quadrature.

References for the certified quadrature error (``ppaudit.quadrature_bound``): Chadha et al.
2024, Eq. (4) in the normalised variable z, Pr[c] = ∫ φ(z) ∏_{i≠c} Φ(z + (n_c − n_i)/σ) dz,
integrated with mpmath.quad (tanh-sinh) at 25 significant digits with breakpoints every unit
of z within 14 of the mode of the (log-concave) integrand; the quadrature's own error
estimate is stored (the test requires it below 1e-18). Histograms: C = 3, 4, 5, 7, 10, votes and real counts, near ties, all ties, huge
margins, σ from 0.3 to 1e4. Run: python tests/reference/make_noisy_argmax_bound_reference.py
"""

import json
from pathlib import Path

import mpmath
import numpy as np
from scipy import optimize

mpmath.mp.dps = 25


def cases():
    rng = np.random.default_rng(20261124)
    out = []
    for c in (3, 4, 5, 7, 10):
        for sigma in (0.3, 40.0, 500.0):
            out.append((rng.multinomial(250, rng.dirichlet(np.full(c, 0.4))).tolist(), sigma))
        out.append(([250] + [0] * (c - 1), 0.5))  # huge margin: every other class ~1e-300
        out.append(([17] * c, 3.0))  # all ties: 1/C
        out.append(([120, 119] + [118 - 3 * i for i in range(c - 2)], 1.0))  # near ties
        out.append(([100, 100] + [0] * (c - 2), 2.0))  # two-way tie, others far
        out.append(([round(float(x), 3) for x in rng.uniform(0, 30, c)], 2.7))  # real counts
        out.append(([5 * i for i in range(c)], 1e4))  # σ huge: nearly uniform
    return out


def probabilities(hist, sigma):
    h = [mpmath.mpf(x) for x in hist]
    s = mpmath.mpf(sigma)
    probs, errs = [], []
    for c in range(len(h)):
        e = [(h[c] - h[i]) / s for i in range(len(h))]

        def f(z, e=e, c=c):
            return mpmath.npdf(z) * mpmath.fprod(mpmath.ncdf(z + e[i]) for i in range(len(h)) if i != c)

        others = [float(x) for i, x in enumerate(e) if i != c]
        def grad(z, others=others):  # derivative of the log-integrand: zero at the mode
            return -z + sum(float(mpmath.npdf(z + x) / mpmath.ncdf(z + x)) for x in others)

        mode = float(optimize.brentq(grad, -1.0, max(0.0, -min(others)) + 2 * len(h) + 2))
        base = round(mode)
        pts = [-mpmath.inf] + [base + k for k in range(-14, 15)] + [mpmath.inf]
        val, err = mpmath.quad(f, pts, error=True, maxdegree=10)
        probs.append(mpmath.nstr(val, 30))
        errs.append(float(err))
    return probs, max(errs)


if __name__ == "__main__":
    rows = []
    for hist, sigma in cases():
        probs, err = probabilities(hist, sigma)
        rows.append({"hist": hist, "sigma": sigma, "probabilities": probs, "quad_error": err})
    data = {
        "source": f"mpmath {mpmath.__version__} quad, 25 digits, script tests/reference/make_noisy_argmax_bound_reference.py",
        "cases": rows,
    }
    Path(__file__).with_name("noisy_argmax_bound_mpmath.json").write_text(json.dumps(data, indent=1) + "\n")
