"""Score-based one-run audit of a membership-inference attack's scores.

Another tool produced one score per canary (higher = "member") and we know which canaries
were members. `ppaudit.blackbox.one_run_audit` turns them into an ε lower bound with the
two-sided one-run f-DP audit (Alg. 3 of the observational-auditing paper's App. B), choosing
the numbers of guesses on a random half of the canaries and guessing by rank on the other half,
and tests the training run's claim. `epsilon_lower_bound` holds for any mechanism;
`epsilon_gdp_family` (the paper's report) assumes a Gaussian trade-off curve.
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
              f"epsilon >= {res.epsilon_lower_bound:.3f} at delta={res.delta:g} (any mechanism); mu >= "
              f"{res.mu_lower_bound:.3f}, GDP-family epsilon {res.epsilon_gdp_family:.3f} (assumes a Gaussian "
              f"trade-off curve) -> {res.verdict}")
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
