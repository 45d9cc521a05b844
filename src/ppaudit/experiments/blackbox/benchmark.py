"""The black-box benchmark (target ``blackbox_benchmark``): StatDP's and DP-Sniper's mechanisms through our search.

Every case of :func:`ppaudit.blackbox.catalogue.benchmark_cases` — correct mechanisms and their
buggy twins — is searched (:func:`ppaudit.blackbox.search_mechanism`: the neighbouring pair and
the output set are *found* on pilot draws, then certified on fresh draws) against its pure-DP
claim ε₀, once per seed, for every setting (ε₀, draws; a setting may name only some cases — a second
row at more draws for the cases that need them), with the case's output representation
(``BenchmarkCase.outputs``: counted, or a classifier for SVT Alg. 6's answer vectors). Per case and
setting the table has the claim, the true ε, how the outputs were seen, the verdict rate over the seeds with its bar (buggy: ≥ 90 %; correct: ≤ 5 %
plus binomial slack, :func:`ppaudit.selfcheck.false_alarm_limit`), the mean valid ε lower bound
of the witness, the draws and seconds per search, the witness pair found most often, and,
beside them, the published values of StatDP and DP-Sniper at the same ε₀
(``ppaudit/blackbox/published_peers.csv``, every number with its source; "not published"
where there is none).

The ε lower bound of a search is the largest Eq. (1) bound among its certified pairs (all hold
together at the search's confidence, so their maximum is valid). The pairs and output sets are
chosen for the largest excess over the claim — for a pure-DP claim often the RDP test at a low
order — so it is not an ε lower bound optimised as DP-Sniper's is.

Draws are counted, not assumed: the audited mechanism is wrapped in a counter, so the
``draws_per_side`` column is what the search really drew (pilot and certification, all
pairs, averaged over the two sides).
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources

import numpy as np
import pandas as pd

from ..._validation import check_positive_int, check_probability
from ...blackbox import Claim
from ...blackbox.catalogue import BenchmarkCase, benchmark_cases
from ...selfcheck import MIN_DETECTION_RATE, false_alarm_limit

__all__ = ["BenchmarkResult", "load_published", "run_blackbox_benchmark", "PUBLISHED_PEERS"]

#: The published values of the peers (package data).
PUBLISHED_PEERS = "published_peers.csv"


def load_published() -> pd.DataFrame:
    """The peers' published values: one row per (case, peer) with the value, ε₀, pair, draws and source.

    ``value`` is empty (NaN) where the peer published no number (``source == "not published"``).
    """
    with resources.files("ppaudit.blackbox").joinpath(PUBLISHED_PEERS).open("r", encoding="utf-8") as fh:
        return pd.read_csv(fh)


@dataclass
class BenchmarkResult:
    """Outcome of :func:`run_blackbox_benchmark`.

    Attributes:
        table: one row per (setting, case) — see the module docstring.
        runs: one row per (setting, case, seed): verdict, ε lower bound, draws, seconds, witness.
        published: the peers' published values (:func:`load_published`).
        passed: every case meets its bar (buggy ≥ 90 %, correct ≤ 5 % + slack).
        seconds: wall time of the whole benchmark.
    """

    table: pd.DataFrame
    runs: pd.DataFrame
    published: pd.DataFrame
    passed: bool
    seconds: float


class _Counted:
    """The mechanism with a draw counter (``n`` summed over calls)."""

    def __init__(self, mechanism: Callable):
        self.mechanism = mechanism
        self.draws = 0

    def __call__(self, data, n, rng):
        self.draws += int(n)
        return self.mechanism(data, n, rng)


def _pair_text(data) -> str:
    arr = np.atleast_1d(np.asarray(data))
    return "[" + " ".join(f"{x:g}" if isinstance(x, (float, np.floating)) else str(x) for x in arr.tolist()) + "]"


def _witness_text(result) -> str:
    w = getattr(result, "witness", None)
    if w is None:
        return ""
    return f"{_pair_text(w.dataset)} vs {_pair_text(w.neighbour)}"


def _outputs_text(result, outputs) -> str:
    """How the search saw the outputs: ``counts`` or ``classifier (LogisticRegression)``."""
    mode = str(getattr(result, "outputs", ""))
    if mode == "classifier" and hasattr(outputs, "name"):
        return f"classifier ({outputs.name()})"
    return mode


def _epsilon_lower_bound(result) -> float:
    """The largest Eq. (1) ε lower bound among the certified pairs (the witness's if no others are kept).

    Every certified test runs at level β/K (the search's Bonferroni), so all K bounds hold together
    with probability ≥ 1 − β and their maximum is a valid ε lower bound at the search's confidence.
    """
    audits = list((getattr(result, "audits", None) or {}).values()) or [result.audit]
    vals = [float(a.epsilon_lower_bound) for a in audits if a is not None]
    return max(vals) if vals else 0.0


def _peer_value(published: pd.DataFrame, case: str, peer: str, epsilon0: float) -> tuple[float, str]:
    rows = published[(published["case"] == case) & (published["peer"] == peer)]
    for _, r in rows.iterrows():
        if pd.notna(r["value"]) and pd.notna(r["epsilon0"]) and math.isclose(float(r["epsilon0"]), epsilon0):
            return float(r["value"]), str(r["where"])
    if rows.empty or rows["value"].isna().all():
        return math.nan, "not published"
    return math.nan, f"published at ε0 = {', '.join(f'{x:g}' for x in rows['epsilon0'].dropna().unique())} only"


def run_blackbox_benchmark(
    settings: Sequence[dict],
    seeds: int = 20,
    *,
    confidence: float = 0.95,
    seed: int = 0,
    cases: Sequence[str] | None = None,
    slack_level: float = 0.01,
    search_options: dict | None = None,
    search: Callable | None = None,
    progress: bool = False,
) -> BenchmarkResult:
    """Search every case ``seeds`` times per setting and tabulate against the bars and the peers.

    Args:
        settings: a list of ``{"epsilon": ε₀, "trials": T}`` — the claimed ε₀ of every case and the
            ``trials`` given to the search (per side; the draws actually made are counted) — with an
            optional ``"cases": [names]`` that runs only those cases in that setting (a second row at
            more draws for the cases that need them, e.g. ε₀ = 0.1 at 2·10⁵ for the subtle bugs).
        seeds: seeded searches per case and setting (the bars need ≥ 20).
        confidence: the search's confidence (a correct case is flagged with probability ≤ 1 − it).
        seed: root seed; search ``r`` of case ``i`` in setting ``j`` uses ``SeedSequence(seed)``'s
            child ``(j, i, r)``.
        cases: case names to run (default: all of :func:`benchmark_cases`).
        slack_level: binomial slack of the false-alarm bar.
        search_options: keyword arguments for the search (``pilot_fraction``, ``certify_top``, …).
        search: the search function (default :func:`ppaudit.blackbox.search_mechanism`).
        progress: tqdm bar over the searches.

    Returns:
        :class:`BenchmarkResult`.

    Raises:
        ValueError: on an empty or malformed ``settings``, an unknown case, bad sizes.
    """
    if search is None:
        from ...blackbox import search_mechanism as search
    reps = check_positive_int(seeds, "seeds")
    conf = check_probability(confidence, "confidence")
    if not settings:
        raise ValueError("settings must list at least one {'epsilon': ..., 'trials': ...}")
    names = [c.name for c in benchmark_cases()]
    parsed = []
    for s in settings:
        if not isinstance(s, dict) or set(s) - {"epsilon", "trials", "cases"} or not {"epsilon", "trials"} <= set(s):
            raise ValueError(f"each setting must be {{'epsilon': float, 'trials': int}} (and optionally 'cases': "
                             f"[names]), got {s!r}")
        eps = float(s["epsilon"])
        if not (eps > 0 and math.isfinite(eps)):
            raise ValueError(f"setting epsilon must be a finite number > 0, got {s['epsilon']!r}")
        only = list(s.get("cases") or [])
        unknown = sorted(set(only) - set(names))
        if unknown:
            raise ValueError(f"unknown benchmark case(s) {unknown} in setting {s!r}; known: {names}")
        parsed.append((eps, check_positive_int(s["trials"], "trials"), only))
    if cases:
        unknown = sorted(set(cases) - set(names))
        if unknown:
            raise ValueError(f"unknown benchmark case(s) {unknown}; known: {names}")
    chosen = [n for n in names if not cases or n in cases]
    opts = dict(search_options or {})
    published = load_published()
    limit = false_alarm_limit(reps, 1.0 - conf, slack_level)
    need = int(math.ceil(MIN_DETECTION_RATE * reps - 1e-9))
    root = np.random.SeedSequence(int(seed))
    from tqdm.auto import tqdm

    run_rows, rows = [], []
    start = time.perf_counter()
    todo = [[n for n in chosen if not only or n in only] for _, _, only in parsed]
    bar = tqdm(total=sum(map(len, todo)) * reps, disable=not progress, desc="blackbox_benchmark")
    for j, (eps, trials, _) in enumerate(parsed):
        by_name = {c.name: c for c in benchmark_cases(eps)}
        for name in todo[j]:
            case: BenchmarkCase = by_name[name]
            i = names.index(name)
            claim = Claim.dp(case.claim_epsilon, 0.0)
            sub = []
            for r in range(reps):
                seq = np.random.SeedSequence(root.entropy, spawn_key=root.spawn_key + (j, i, r))
                counted = _Counted(case.audited)
                t0 = time.perf_counter()
                kw = {"outputs": case.outputs, **opts}  # the case's output representation unless overridden
                res = search(counted, case.neighbours(), trials, confidence=conf, rng=seq, claim=claim, **kw)
                secs = time.perf_counter() - t0
                row = {
                    "epsilon0": eps, "trials": trials, "case": name, "seed": r,
                    "flagged": res.verdict == "violation", "verdict": res.verdict,
                    "epsilon_lower_bound": _epsilon_lower_bound(res),
                    "draws_per_side": counted.draws / 2.0, "seconds": secs, "witness": _witness_text(res),
                    "outputs": _outputs_text(res, kw.get("outputs")),
                }
                run_rows.append(row)
                sub.append(row)
                bar.update(1)
            runs = pd.DataFrame(sub)
            flagged = int(runs["flagged"].sum())
            ok = flagged >= need if case.buggy else flagged <= limit
            witnesses = Counter(w for w, f in zip(runs["witness"], runs["flagged"]) if f and w)
            dps, dps_src = _peer_value(published, name, "DP-Sniper", eps)
            sdp, sdp_src = _peer_value(published, name, "StatDP (run by Bichsel et al.)", eps)
            mean_lb = float(runs["epsilon_lower_bound"].mean())
            mean_draws = float(runs["draws_per_side"].mean())
            rows.append({
                "epsilon0": eps, "trials": trials, "case": name, "family": case.family, "source": case.source,
                "bug": case.bug, "buggy": case.buggy, "view": case.view, "outputs": runs["outputs"].iloc[0],
                "adjacency": case.adjacency,
                "claim_epsilon": case.claim_epsilon, "true_epsilon": case.true_epsilon,
                "true_epsilon_source": case.true_epsilon_source, "seeds": reps, "flagged": flagged,
                "verdict_rate": flagged / reps,
                "bar": (f">= {MIN_DETECTION_RATE:.0%} ({need}/{reps})" if case.buggy
                        else f"<= {1 - conf:.0%} + slack ({limit}/{reps})"),
                "passed": bool(ok), "mean_epsilon_lower_bound": mean_lb,
                "max_epsilon_lower_bound": float(runs["epsilon_lower_bound"].max()),
                "draws_per_side": mean_draws, "seconds_per_search": float(runs["seconds"].mean()),
                "witness": witnesses.most_common(1)[0][0] if witnesses else "",
                "witness_share": (witnesses.most_common(1)[0][1] / flagged) if witnesses else 0.0,
                "dpsniper_epsilon_lower_bound": dps, "dpsniper_source": dps_src,
                "statdp_epsilon_lower_bound": sdp, "statdp_source": sdp_src,
                "ours_at_least_dpsniper": (None if math.isnan(dps) else bool(mean_lb >= dps)),
            })
    bar.close()
    table = pd.DataFrame(rows)
    return BenchmarkResult(table, pd.DataFrame(run_rows), published, bool(table["passed"].all()),
                           time.perf_counter() - start)
