"""Audit a user-written report-noisy-max against its zCDP claim (finds the planted bug).

A DP library's report-noisy-max adds Gaussian noise to counts (one person changes one count by
at most 1) and claims rho-zCDP. The buggy version computes sigma = 1/(2 sqrt(2 rho)) instead of
1/sqrt(2 rho): it spends 4 rho. `ppaudit.blackbox.audit_mechanism` samples it as a black box on
a neighbouring pair and tests the claim; the fixed version passes.

Run: python examples/audit_report_noisy_max.py   (exit 0 when the audit finds the bug and
clears the fix, 1 otherwise)
"""

import math
import sys

import numpy as np

from ppaudit.blackbox import Claim, audit_mechanism

RHO = 0.125


def report_noisy_max(counts, n, rng, *, buggy=False):
    """n independent runs of argmax(counts + N(0, sigma^2)) for a rho-zCDP claim."""
    sigma = 1.0 / math.sqrt(2 * RHO)
    if buggy:
        sigma = 1.0 / (2 * math.sqrt(2 * RHO))  # the planted bug: spends 4 rho
    c = np.asarray(counts, dtype=float)
    return np.argmax(c + sigma * rng.standard_normal((n, c.size)), axis=1)


def main() -> int:
    counts, neighbour = [0, 0, 0, 0], [1, 0, 0, 0]  # one more vote for candidate 0
    orders = [1.5, 2.0, 4.0, 8.0, 16.0]
    results = {}
    for label, buggy in (("buggy", True), ("fixed", False)):
        res = audit_mechanism(lambda d, n, rng: report_noisy_max(d, n, rng, buggy=buggy), counts, neighbour,
                              trials=50_000, orders=orders, rng=2024, claim=Claim.zcdp(RHO))
        results[label] = res
        print(f"{label}: claim {res.claim.describe()}; RDP lower bound at alpha=2: {res.rdp_lower_bound[1]:.3f} "
              f"(claimed {res.claim_rdp[1]:.3f}); epsilon lower bound {res.epsilon_lower_bound:.3f} -> {res.verdict}")
    ok = results["buggy"].violation and not results["fixed"].violation
    print("the audit found the planted bug" if ok else "unexpected audit outcome")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
