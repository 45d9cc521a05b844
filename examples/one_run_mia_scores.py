"""Score-based one-run audit of a membership-inference attack's scores.

Another tool produced one score per canary (higher = "member") and we know which canaries
were members. `ppaudit.blackbox.one_run_audit` turns them into an ε lower bound with the
two-sided one-run f-DP audit (Alg. 3 of the observational-auditing paper's App. B), choosing
the guess thresholds on a random half of the canaries, and tests the training run's claim.
Here the scores come from a mechanism that is exactly 2-GDP per canary (a member's score is
shifted by 2), audited against a true claim (2-GDP) and a false one ((1, 1e-5)-DP).

Run: python examples/one_run_mia_scores.py [trade_off.png]   (exit 0 when the false claim is
rejected and the true one is not)
"""

import sys

import numpy as np

from ppaudit.blackbox import Claim, one_run_audit


def main() -> int:
    rng = np.random.default_rng(7)
    m = 5000
    member = rng.random(m) < 0.5
    scores = 2.0 * member + rng.standard_normal(m)  # e.g. a calibrated loss difference
    verdicts = {}
    for claim in (Claim.gdp(2.0), Claim.dp(1.0, 1e-5)):
        res = one_run_audit(scores, member, claim=claim, rng=0)
        verdicts[claim.describe()] = res.verdict
        print(f"claim {claim.describe():>16}: {res.num_guesses} guesses ({res.positive_guesses} member, "
              f"{res.negative_guesses} non-member) on {res.num_samples} canaries, {res.num_correct} correct; "
              f"mu >= {res.mu_lower_bound:.3f} (GDP-family epsilon >= {res.epsilon_lower_bound:.3f}), "
              f"any-mechanism epsilon >= {res.epsilon_lower_bound_dp:.3f} at delta={res.delta:g} -> {res.verdict}")
        last = res
    if len(sys.argv) > 1:
        import matplotlib

        matplotlib.use("Agg")
        from ppaudit.blackbox import plot_tradeoff

        fig, _ = plot_tradeoff(last, Claim.dp(1.0, 1e-5))
        fig.savefig(sys.argv[1], dpi=150)
        print(f"trade-off curve written to {sys.argv[1]}")
    ok = verdicts["2-GDP"] == "consistent" and verdicts["(1, 1e-05)-DP"] == "violation"
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
