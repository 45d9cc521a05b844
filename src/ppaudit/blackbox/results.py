"""What :func:`~ppaudit.blackbox.search_mechanism` returns: the output set it chose
(:class:`OutputSet`), the certified pair (:class:`Witness`) and the whole result
(:class:`SearchResult`: verdict, per-pair table, audits, save/load, report), with the small helpers
that turn outputs into keys and values into JSON. The search itself is :mod:`.search`; the pilot
that chooses the sets :mod:`.pilot`; their certification on fresh draws :mod:`.certify`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .claims import Claim
from .families import ClassifierOutputs
from .budget import SearchBudget
from .mechanism import MechanismAudit, bin_index
from .witness import format_examples

__all__ = ["OutputSet", "Witness", "SearchResult"]

_KEEP = 5000  # certification outputs per side kept for the report's figure (SearchResult.samples)


@dataclass
class OutputSet:
    """The output set ``O`` of a witness, in words and as data.

    Attributes:
        kind: ``"cells"`` (a set of output values), ``"threshold"`` (a classifier score
            threshold) or ``"bins"`` (quantile bins of a 1-D real output: ``cells`` are bin indices
            of ``edges``; :mod:`.families`).
        description: ``O`` in words.
        cells: the output values listed (kind ``"cells"``).
        complement: ``O`` is every output *not* in ``cells`` (also unseen ones), or below the
            threshold.
        threshold: the score threshold (kind ``"threshold"``): ``O = {x : score(x) ≥ t}``
            (``< t`` with ``complement``); the score is the classifier's
            ``P(neighbour | x)``.
        classifier: the fitted classifier (kind ``"threshold"``; not serialised).
    """

    kind: str
    description: str
    cells: list | None = None
    complement: bool = False
    threshold: float | None = None
    classifier: Any = field(default=None, repr=False)
    _spec: ClassifierOutputs | None = field(default=None, repr=False)
    edges: np.ndarray | None = None  # kind "bins": quantile bin edges; cells = bin indices (families.pilot_bins)
    _rdp_sets: tuple | None = field(default=None, repr=False)  # kind "bins": (masks, order_set) per order
    examples: dict | None = None  # a few drawn outputs inside / outside O (classifier sets; blackbox.witness)

    def contains(self, outputs) -> np.ndarray:
        """Boolean mask: which of ``outputs`` (as the mechanism returns them) lie in ``O``."""
        arr = outputs if isinstance(outputs, np.ndarray) else _as_array(outputs)
        if self.kind == "threshold":
            s = self._spec.score(self.classifier, self._spec.featurize(arr))
            inside = s >= self.threshold
        elif self.kind == "bins":
            inside = np.isin(bin_index(self.edges, arr), np.asarray(self.cells, dtype=np.int64))
        else:
            keys = _keys(arr)
            if isinstance(keys, np.ndarray) and all(isinstance(c, (int, np.integer)) for c in self.cells):
                inside = np.isin(keys, np.asarray(self.cells, dtype=keys.dtype))
            else:
                members = set(self.cells)
                seq = keys.tolist() if isinstance(keys, np.ndarray) else keys
                inside = np.fromiter((k in members for k in seq), dtype=bool, count=len(seq))
        return ~inside if self.complement else inside

    def to_dict(self) -> dict:
        out = {"kind": self.kind, "description": self.description, "complement": bool(self.complement)}
        if self.kind == "cells":
            out["cells"] = [_jsonable(c) for c in self.cells]
        elif self.kind == "bins":
            out["cells"] = [int(c) for c in self.cells]
            out["bin_edges"] = [float(e) for e in self.edges]
        else:
            out["threshold"] = float(self.threshold)
            out["side"] = "<" if self.complement else ">="
            out["score"] = "P(neighbour | output) of the pilot-trained classifier"
            out["classifier"] = self._spec.name() if self._spec is not None else None
            out["recheck"] = ("the fitted classifier is not in the JSON: SearchResult.save(path) / ppaudit search --save "
                              "keeps it for SearchResult.load(path).recheck(mechanism, trials, rng)")
        if self.examples is not None:
            out["examples"] = _jsonable(self.examples)
        return out


@dataclass
class Witness:
    """The worst certified case: the pair, the output set and the two probabilities.

    Attributes:
        pair: index of the pair in the order the neighbours were given.
        dataset, neighbour: the two inputs.
        output_set: :class:`OutputSet` ``O``.
        p0, p1: ``P(M(dataset) ∈ O)`` and ``P(M(neighbour) ∈ O)`` estimated on the fresh draws.
        p0_interval, p1_interval: their Clopper–Pearson intervals at ``interval_confidence``
            (the level the certified bounds used).
        interval_confidence: per-interval level.
        trials: fresh draws per side behind ``p0`` and ``p1``.
    """

    pair: int
    dataset: Any
    neighbour: Any
    output_set: OutputSet
    p0: float
    p0_interval: tuple[float, float]
    p1: float
    p1_interval: tuple[float, float]
    interval_confidence: float
    trials: int

    def describe(self) -> list[str]:
        return [
            f"witness: pair #{self.pair}: dataset {_short(self.dataset)} vs neighbour {_short(self.neighbour)}",
            f"  output set O: {self.output_set.description}",
            *([f"  {format_examples(self.output_set.examples)}"] if self.output_set.examples else []),
            f"  P(M(dataset) in O) = {self.p0:.4g} [{self.p0_interval[0]:.4g}, {self.p0_interval[1]:.4g}], "
            f"P(M(neighbour) in O) = {self.p1:.4g} [{self.p1_interval[0]:.4g}, {self.p1_interval[1]:.4g}] "
            f"({self.interval_confidence:.4g} Clopper-Pearson, {self.trials} fresh draws per side)",
        ]

    def to_dict(self) -> dict:
        return {"pair": int(self.pair), "dataset": _jsonable(self.dataset), "neighbour": _jsonable(self.neighbour),
                "output_set": self.output_set.to_dict(), "p0": float(self.p0), "p0_interval": list(map(float, self.p0_interval)),
                "p1": float(self.p1), "p1_interval": list(map(float, self.p1_interval)),
                "interval_confidence": float(self.interval_confidence), "trials": int(self.trials)}


@dataclass
class SearchResult:
    """What :func:`search_mechanism` found.

    Attributes:
        verdict: ``"violation"``, ``"consistent"`` or ``"no claim"`` (valid for the whole search
            at ``confidence``).
        witness: the :class:`Witness` — the certified pair with the largest excess over the
            claim (without a claim: the largest certified ε lower bound).
        audit: the :class:`~ppaudit.blackbox.MechanismAudit` of the witness (two cells: in ``O``
            / not in ``O``; fresh draws only).
        pairs: one row per pair tried: pilot estimate and score, the chosen set, and the
            certified bounds where certified.
        claim, confidence, orders: as given (orders after defaults).
        trials, pilot_trials, certification_trials: draws per side per pair in all / pilot /
            certification.
        certified: ``K``, the number of certified tests (fixed before they ran).
        outputs: ``"counts"`` or ``"classifier"``.
        min_resolvable_probability: ``1/T_c``: output sets rarer than this are invisible to the
            certification (Wang et al. 2024).
        audits: the :class:`MechanismAudit` of every certified pair, by pair index.
    """

    verdict: str
    witness: Witness
    audit: MechanismAudit
    pairs: pd.DataFrame
    claim: Claim | None
    confidence: float
    orders: np.ndarray
    trials: int
    pilot_trials: int
    certification_trials: int
    certified: int
    outputs: str
    min_resolvable_probability: float
    audits: dict = field(default_factory=dict, repr=False)
    adaptive: bool = False
    budget: SearchBudget = field(default_factory=SearchBudget, repr=False)
    seed: Any = None
    samples: dict = field(default_factory=dict, repr=False)

    def recheck(self, mechanism, trials: int, rng=None, confidence: float | None = None) -> MechanismAudit:
        """Re-run the certified test of the witness (pair, fixed ``O``) on ``trials`` fresh draws per side;
        valid at ``confidence`` (default the search's) on its own: :func:`ppaudit.blackbox.witness.recheck`."""
        from .witness import recheck

        return recheck(self, mechanism, trials, rng, confidence)

    def save(self, path):
        """Pickle the result with the witness's fitted classifier, for :meth:`load` and :meth:`recheck` later."""
        from .witness import save_result

        return save_result(self, path)

    @staticmethod
    def load(path) -> "SearchResult":
        """A result saved with :meth:`save` (unpickles: trusted files only)."""
        from .witness import load_result

        return load_result(path, SearchResult)

    def to_html(self, path=None, *, command: str | None = None) -> str:
        """One self-contained HTML page (verdict, claim, confidence, seed, version, command, timings, draws,
        witness, the two output distributions with O shaded, the pairs): :func:`ppaudit.blackbox.report.search_report_html`."""
        from .report import search_report_html

        return search_report_html(self, path, command=command)

    @property
    def violation(self) -> bool:
        return self.verdict == "violation"

    def to_frame(self) -> pd.DataFrame:
        """The pairs table with a ``witness`` column (one row per pair tried)."""
        df = self.pairs.copy()
        df["witness"] = df["pair"] == self.witness.pair
        return df

    @property
    def total_draws(self) -> int:
        """Draws of the mechanism in all: pilot on every pair tried, certification on the certified ones, both sides."""
        cert = sum(int(au.trials) for au in self.audits.values()) if self.audits else self.certification_trials * self.certified
        piloted = int(self.pairs["pilot_p0"].notna().sum()) if "pilot_p0" in self.pairs else len(self.pairs)
        return int(2 * (self.pilot_trials * piloted + cert))

    def summary(self) -> str:
        """A few human lines: verdict, witness, the certified bounds (the violated orders under a violation), the
        resolution floor.

        Without a claim the ε and the RDP lower bounds are each valid at ``confidence`` on their own (for the whole
        search: Bonferroni over the certified pairs), so both hold together at ``1 − 2(1 − confidence)``; the
        summary says so (the level is not split, so the numbers are those of :func:`audit_counts` without a claim).
        """
        a = self.audit
        claim = "none" if self.claim is None else self.claim.describe()
        if self.claim is None:
            level = (f"confidence {self.confidence:g} for the whole search, for each bound on its own "
                     f"(the epsilon and RDP bounds jointly {max(0.0, 1 - 2 * (1 - self.confidence)):g})")
        else:
            level = f"confidence {self.confidence:g} for the whole search"
        lines = [
            f"search: {len(self.pairs)} pairs; pilot {self.pilot_trials} + certification {self.certification_trials} "
            f"draws per side; {self.total_draws} draws in all; outputs: {self.outputs}; certified the top "
            f"{self.certified} (Bonferroni over {self.certified} x {a.details.get('tests', 1)} test(s))",
            f"verdict: {self.verdict} (claim {claim}, {level})",
            *self.witness.describe(),
        ]
        lines.append(f"  certified: epsilon >= {a.epsilon_lower_bound:.4g} at delta={a.delta:g}"
                     + ("" if a.claim_epsilon is None else f" (claimed {a.claim_epsilon:.4g}"
                        + (", violated)" if a.epsilon_violated else ")")))
        violated = np.isin(a.orders, a.violated_orders) if a.claim_rdp is not None else np.zeros(a.orders.size, bool)
        if violated.any():
            shown = [f"order {a.orders[j]:g}: >= {a.rdp_lower_bound[j]:.4g} (claimed {a.claim_rdp[j]:.4g})"
                     for j in np.flatnonzero(violated)]
            lines.append("  RDP violated at " + ", ".join(shown))
        else:
            if a.claim_rdp is not None and np.any(np.isfinite(a.claim_rdp)):
                gap = np.where(np.isfinite(a.claim_rdp), a.rdp_lower_bound - a.claim_rdp, -np.inf)
                best = int(np.argmax(gap))  # the order closest to its claim
            else:
                best = int(np.argmax(a.rdp_lower_bound))
            lines.append(f"  RDP >= {a.rdp_lower_bound[best]:.4g} at order {a.orders[best]:g}"
                         + ("" if a.claim_rdp is None else f" (claimed {a.claim_rdp[best]:.4g}; no order violated)"))
        lines += [f"  budget: {note}" for note in self.budget.notes]
        lines.append(f"  resolution: output sets of probability below ~{self.min_resolvable_probability:.2g} "
                     f"(1/{self.certification_trials} draws) are invisible to this search (Wang et al. 2024); "
                     "pairs not among the neighbours given are not searched")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        """JSON-ready (``inf`` as the string ``"inf"``): verdict and witness first, then the statistics."""
        frame = self.pairs.astype(object).where(pd.notna(self.pairs), None)
        return {
            "verdict": self.verdict,
            "witness": self.witness.to_dict(),
            "claim": None if self.claim is None else self.claim.to_dict(),
            "confidence": float(self.confidence),
            "trials": int(self.trials),
            "pilot_trials": int(self.pilot_trials),
            "certification_trials": int(self.certification_trials),
            "certified": int(self.certified),
            "outputs": self.outputs,
            "min_resolvable_probability": float(self.min_resolvable_probability),
            "total_draws": self.total_draws,
            "budget": self.budget.to_dict(),
            "adaptive": bool(self.adaptive),
            "audit": self.audit.to_dict(),
            "pairs": [{k: _jsonable(v) for k, v in row.items()} for row in frame.to_dict(orient="records")],
        }


def _seed_of(rng):
    """The seed as given, for the report: an int, a SeedSequence's entropy, else ``None`` (a Generator)."""
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        return int(rng)
    if isinstance(rng, np.random.SeedSequence):
        return rng.entropy
    return None


def _short(x, limit: int = 80) -> str:
    if isinstance(x, np.ndarray):
        x = x.tolist()
    text = repr(x)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _jsonable(x):
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, np.ndarray):
        return _jsonable(x.tolist())
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        v = float(x)
        return v if math.isfinite(v) else ("inf" if v > 0 else ("-inf" if v < 0 else "nan"))
    if x is None or isinstance(x, str):
        return x
    return repr(x)


def _as_array(items) -> np.ndarray:
    items = list(items)
    arr = np.asarray(items) if items and all(isinstance(x, (int, np.integer)) for x in items[:64]) else None
    if arr is None or arr.ndim != 1 or arr.dtype.kind not in "iub":
        arr = np.empty(len(items), dtype=object)
        for i, x in enumerate(items):
            arr[i] = x
    return arr


def _keys(arr: np.ndarray):
    """Hashable keys of the outputs: an int array (1-D ints) or a list (tuples for vector rows)."""
    if arr.dtype.kind in "iub":
        if arr.ndim == 1:
            return arr.astype(np.int64)
        return list(map(tuple, arr.reshape(arr.shape[0], -1).tolist()))
    if arr.dtype.kind == "f":
        raise ValueError("the mechanism returned real-valued outputs; they cannot be counted: use outputs='classifier' "
                         "(or round them in the mechanism)")
    return [tuple(v) if isinstance(v, list) else v for v in arr.tolist()]
