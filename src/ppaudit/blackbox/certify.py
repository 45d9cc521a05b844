"""The certification stage of :func:`~ppaudit.blackbox.search_mechanism`: the chosen output set of
a pair, counted on fresh draws and audited at the Bonferroni level ``β/K``
(:func:`~ppaudit.blackbox.audit_counts`: 2-cut Clopper–Pearson RDP bound and Eq. (1) ε bound), the
per-order RDP sets of the quantile-bin family (:mod:`.families`), and for a pure ``(ε0, 0)`` claim
the exact test of the claim in place of the ε test (:mod:`.claim_test`). Why the confidence holds for
the whole search is in the docstring of :mod:`.search`.
"""

from __future__ import annotations

import numpy as np

from .claims import Claim
from . import claim_test, families
from .mechanism import MechanismAudit, _draws, audit_counts, bin_index
from .results import _KEEP

__all__: list[str] = []  # private to the search: search_mechanism is the public entry


def _exact_claim_test(au: MechanismAudit, pp0: float, pp1: float, n_pilot: int, claim: Claim, level: float,
                      tests_rdp: bool, rng: np.random.Generator) -> None:
    """Replace the ε test in ``au``'s verdict by the exact test of the ``(ε0, 0)`` claim (:mod:`.claim_test`).

    Same level as the test it replaces (``β/(K·tests)``), so the whole-search union bound is
    unchanged; the inequality tested (set or complement, which side) is chosen on the pilot
    proportions ``pp0, pp1``. The Eq. (1) ε lower bound stays in ``au`` as a reported bound at
    its own confidence; ``au.epsilon_violated`` now says whether the exact test rejected.
    """
    t = int(au.trials)
    k0, k1 = int(au.counts0[0]), int(au.counts1[0])
    comp, swap = claim_test.choose_direction(pp0, pp1, n_pilot, claim.epsilon)
    if comp:
        k0, k1 = t - k0, t - k1
    if swap:
        k0, k1 = k1, k0
    p = claim_test.claim_test(k0, k1, t, claim.epsilon, rng)
    rejected = p <= level
    rdp_over = bool(tests_rdp and au.violated_orders.size > 0)
    au.epsilon_violated = bool(rejected)
    au.verdict = "violation" if (rdp_over or rejected) else "consistent"
    au.details["claim_test"] = (f"exact test of P[M(D{'′' if swap else ''}) in {'not ' if comp else ''}O] <= "
                                f"e^{claim.epsilon:g} P[M(D{'' if swap else '′'}) in {'not ' if comp else ''}O] "
                                f"(binomial thinning + one-sided Fisher): p = {p:.3g}, level {level:.3g}")
    au.details["claim_test_p"] = p


def certify_pair(mechanism, takes_rng, ds, nb, i: int, oset, g: np.random.Generator, audit_gen: np.random.Generator,
                 t_cert: int, chunk: int, budget, a: np.ndarray, beta_k: float, claim: Claim | None, d: float, conf: float,
                 tests_rdp: bool, exact: bool, pilot_p: tuple[float, float], n_pilot: int, n_tests: int):
    """Certify pair ``i`` (dataset ``ds``, neighbour ``nb``) on its chosen output set ``oset``.

    Draws ``t_cert`` fresh outputs per side with ``g`` (both sides chunk by chunk under a time
    budget, so that a stop at the deadline leaves as many draws on each), counts those in ``oset``
    and audits the two cells with :func:`~ppaudit.blackbox.audit_counts` at confidence ``1 − β/K``
    (``beta_k``; ``audit_gen`` seeds the audit); for the quantile-bin family the RDP bound comes from
    the per-order sets chosen on the pilot (Bonferroni over them within the RDP test,
    :func:`.families.per_order_rdp`); with ``exact`` the ε test becomes the exact test of the claim
    (:func:`_exact_claim_test`, direction chosen on the pilot proportions ``pilot_p``).

    Returns:
        ``(MechanismAudit, kept)``: the audit (``trials`` = the draws per side certified) and up
        to ``_KEEP`` certification outputs per side for the report's figure.
    """
    counts, kept, per_bin = [], [], []
    if budget.time_budget is None:
        for data, what in ((ds, "dataset"), (nb, "neighbour")):
            inside = 0
            if oset.kind == "bins":
                per_bin.append(np.zeros(oset.edges.size + 1, dtype=np.int64))
            for arr in _draws(mechanism, takes_rng, data, t_cert, g, chunk, f"pair {i}'s {what}"):
                inside += int(oset.contains(arr).sum())
                if oset.kind == "bins":
                    per_bin[-1] += np.bincount(bin_index(oset.edges, arr), minlength=oset.edges.size + 1)
                if len(kept) < len(counts) + 1:
                    kept.append(arr[:_KEEP].copy())  # for the report's figure (a copy: not the chunk)
            counts.append(np.array([inside, t_cert - inside], dtype=np.int64))
        n_i = t_cert
    else:  # both sides chunk by chunk, so that a stop at the deadline leaves as many draws on each
        ins, n_i = [0, 0], 0
        per_bin = [np.zeros(oset.edges.size + 1, dtype=np.int64) for _ in range(2)] if oset.kind == "bins" else []
        for a0, a1 in zip(_draws(mechanism, takes_rng, ds, t_cert, g, chunk, f"pair {i}'s dataset"),
                          _draws(mechanism, takes_rng, nb, t_cert, g, chunk, f"pair {i}'s neighbour")):
            ins[0] += int(oset.contains(a0).sum())
            ins[1] += int(oset.contains(a1).sum())
            for pb, arr in zip(per_bin, (a0, a1)):
                pb += np.bincount(bin_index(oset.edges, arr), minlength=oset.edges.size + 1)
            kept = kept or [a0[:_KEEP].copy(), a1[:_KEEP].copy()]
            n_i += len(a0)
            if budget.expired() and n_i < t_cert:
                budget.notes.append(f"time budget spent: pair {i} certified on {n_i:,} of {t_cert:,} draws per side")
                break
        counts = [np.array([c, n_i - c], dtype=np.int64) for c in ins]
    base = audit_counts(counts[0], counts[1], a, confidence=1.0 - beta_k, claim=claim, delta=d,
                        rng=audit_gen, outputs=["in O", "not in O"], output_set=np.array([True, False]))
    au = MechanismAudit(**base.__dict__, trials=n_i)
    if oset.kind == "bins" and n_i > 0:  # RDP bound from the per-order sets (families.py docstring)
        masks, order_set = oset._rdp_sets
        au.rdp_lower_bound = families.per_order_rdp(per_bin[0], per_bin[1], masks, order_set, a, au.rdp_confidence)
        au.k_cut_lower_bound = families.k_cut_lower_bound(per_bin[0], per_bin[1], a, confidence=conf)
        au.bin_edges = oset.edges
        au.details["rdp_sets"] = (f"{masks.shape[0]} output set(s) of the {oset.edges.size + 1} pilot bins, one per "
                                  f"order, chosen on the pilot; Bonferroni over them within the RDP test")
        if claim is not None:
            au.violated_orders = a[au.rdp_lower_bound > au.claim_rdp] if tests_rdp else np.zeros(0)
            au.verdict = "violation" if (au.violated_orders.size or au.epsilon_violated) else "consistent"
    if exact:
        _exact_claim_test(au, pilot_p[0], pilot_p[1], n_pilot, claim, beta_k / n_tests, tests_rdp,
                          np.random.default_rng(audit_gen.integers(0, 2**63 - 1)))
    return au, tuple(kept)
