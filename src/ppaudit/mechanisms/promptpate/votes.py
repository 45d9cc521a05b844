"""The LLM stage of PromptPATE: every teacher and adversary prompt answered once, cached (Chadha et al. 2024, §5.3)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from .canaries import (
    ADVERSARIES,
    POIS_NATQ_VARIANTS,
    confident_query,
    most_voted_other_label,
    nat_advq_prompts,
    pois_advq_prompts,
    pois_natq_prompts,
    unconfident_query,
    wrong_label_mapping,
)
from ...models.llm import Prompt
from .setup import PromptPateSetup, teacher_grid_prompts, vote_histograms

__all__ = [
    "PromptPateVotes",
    "collect_votes",
    "teacher_accuracy",
]

# ---------------------------------------------------------------------------------------
#: A teacher: prompts → labels (``(n,)`` ints), e.g. :class:`ppaudit.models.llm.PromptTeacher`.
Teacher = Callable[[Sequence[Prompt]], np.ndarray]


# The LLM stage
# ---------------------------------------------------------------------------------------


@dataclass
class PromptPateVotes:
    """Every vote the audit needs (the output of the LLM stage, :func:`collect_votes`).

    Attributes:
        num_classes: ``C``.
        query_labels: ``(n_Q,)`` true labels.
        teacher_votes: ``(k, n_Q)`` votes of the teachers of ``S``.
        nat_advq_votes: ``(n_Q,)`` vote on ``q`` of the Nat-AdvQ canary teacher of ``q``
            (empty if not collected).
        pois_advq_labels, pois_advq_votes: ``(n_Q,)`` poison label and vote of the
            Pois-AdvQ canary teacher of ``q`` (empty if not collected).
        natq_variant: ``(m,)`` variant of each Pois-NatQ candidate.
        natq_canary_index, natq_canary_label, natq_target: ``(m,)`` (``-1`` if unused).
        natq_mapping: ``(m, C)`` the wrong mapping (``-1`` rows if unused).
        natq_votes: ``(m, n_Q)`` the poisoned teacher's vote on each natural query.
        meta: JSON-able information (off-grammar rates, sizes, seeds).
    """

    num_classes: int
    query_labels: np.ndarray
    teacher_votes: np.ndarray
    nat_advq_votes: np.ndarray
    pois_advq_labels: np.ndarray
    pois_advq_votes: np.ndarray
    natq_variant: np.ndarray
    natq_canary_index: np.ndarray
    natq_canary_label: np.ndarray
    natq_target: np.ndarray
    natq_mapping: np.ndarray
    natq_votes: np.ndarray
    meta: dict = field(default_factory=dict)

    @property
    def num_queries(self) -> int:
        return int(self.query_labels.size)

    @property
    def histograms(self) -> np.ndarray:
        """``(n_Q, C)`` histograms ``H_S``."""
        return vote_histograms(self.teacher_votes, self.num_classes)

    def to_npz(self, path: str | os.PathLike) -> None:
        """Save atomically (:func:`ppaudit.io.atomic_path`)."""
        from ...io import atomic_path

        arrays = {k: np.asarray(getattr(self, k)) for k in (
            "query_labels", "teacher_votes", "nat_advq_votes", "pois_advq_labels", "pois_advq_votes",
            "natq_canary_index", "natq_canary_label", "natq_target", "natq_mapping", "natq_votes")}
        arrays["natq_variant"] = np.asarray(self.natq_variant, dtype="U16")
        arrays["num_classes"] = np.asarray(self.num_classes)
        arrays["meta"] = np.asarray(json.dumps(self.meta, sort_keys=True))
        with atomic_path(path) as tmp:
            with open(tmp, "wb") as fh:
                np.savez(fh, **arrays)

    @classmethod
    def from_npz(cls, path: str | os.PathLike) -> "PromptPateVotes":
        with np.load(path, allow_pickle=False) as z:
            kw = {k: z[k] for k in z.files if k not in ("num_classes", "meta")}
            return cls(num_classes=int(z["num_classes"]), meta=json.loads(str(z["meta"])), **kw)


def _run_teacher(teacher: Teacher, prompts: list[Prompt]) -> tuple[np.ndarray, float | None]:
    """Labels, and the off-grammar rate when the teacher reports it (``None`` otherwise)."""
    if not prompts:
        return np.zeros(0, dtype=np.int64), None
    scored = getattr(teacher, "scored", None)
    if callable(scored):
        res = scored(prompts)
        return np.asarray(res.labels, dtype=np.int64), float(np.mean(res.off_grammar))
    return np.asarray(teacher(prompts), dtype=np.int64).reshape(-1), None


def collect_votes(
    teacher: Teacher,
    setup: PromptPateSetup,
    rng: np.random.Generator,
    adversaries: Sequence[str] = ADVERSARIES,
    natq_variants: Sequence[str] = POIS_NATQ_VARIANTS,
    all_same_targets: Sequence[int] | None = None,
    progress: Callable[[str], None] | None = None,
) -> PromptPateVotes:
    """Run every prompt of the audit through ``teacher`` (§5.3, App. D.2).

    Order: the ``k × n_Q`` teacher votes; then, from their histograms, the Pois-AdvQ poison
    labels and the Pois-NatQ canaries (the Confident / Unconfident queries, the wrong
    mapping); then all canary prompts in one call (shared prompts are batched by the LLM
    scorer). Costs ``k·n_Q`` + ``n_Q`` per AdvQ adversary + ``n_Q`` per Pois-NatQ candidate
    (``C`` of them for All same) prompt evaluations.

    Args:
        teacher: prompts → labels (:class:`ppaudit.models.llm.PromptTeacher`, or any callable).
        setup: the instance (:func:`sample_setup`).
        rng: breaks the Confident / Unconfident ties.
        adversaries: subset of :data:`ADVERSARIES`.
        natq_variants: subset of :data:`POIS_NATQ_VARIANTS`.
        all_same_targets: labels tried by *All same* (default: every label).
        progress: called with a short message before each stage.
    """
    for a in adversaries:
        if a not in ADVERSARIES:
            raise ValueError(f"adversaries must be in {list(ADVERSARIES)}, got {a!r}")
    for v in natq_variants:
        if v not in POIS_NATQ_VARIANTS:
            raise ValueError(f"natq_variants must be in {list(POIS_NATQ_VARIANTS)}, got {v!r}")
    say = progress or (lambda msg: None)
    k, nq, c = setup.num_teachers, setup.num_queries, setup.num_classes
    y = setup.query_labels
    say(f"teacher votes: {k} x {nq} prompts")
    base, base_off = _run_teacher(teacher, teacher_grid_prompts(setup))
    if base.size != k * nq:
        raise ValueError(f"the teacher returned {base.size} labels for {k * nq} prompts")
    votes = base.reshape(k, nq)
    hist = vote_histograms(votes, c)
    jobs: list[tuple[str, list[Prompt]]] = []
    poison = np.zeros(0, dtype=np.int64)
    if "nat-advq" in adversaries:
        jobs.append(("nat-advq", nat_advq_prompts(setup)))
    if "pois-advq" in adversaries:
        poison = most_voted_other_label(hist, y)
        jobs.append(("pois-advq", pois_advq_prompts(setup, poison)))
    natq_rows: list[dict] = []
    if "pois-natq" in adversaries:
        conf = confident_query(hist, rng)
        for variant in natq_variants:
            if variant == "confident":
                j = conf
                natq_rows.append(dict(variant=variant, canary_index=j, canary_label=int(most_voted_other_label(hist[j], y[j])[0]), target=-1, mapping=None))
            elif variant == "unconfident":
                j = unconfident_query(hist, rng)
                natq_rows.append(dict(variant=variant, canary_index=j, canary_label=int(most_voted_other_label(hist[j], y[j])[0]), target=-1, mapping=None))
            elif variant == "all-same":
                targets = range(c) if all_same_targets is None else [int(t) for t in all_same_targets]
                for t in targets:
                    if not 0 <= t < c:
                        raise ValueError(f"all_same_targets must lie in [0, {c}), got {t}")
                    natq_rows.append(dict(variant=variant, canary_index=-1, canary_label=-1, target=t, mapping=None))
            elif variant == "mapping":
                m = wrong_label_mapping(hist, y)
                natq_rows.append(dict(variant=variant, canary_index=conf, canary_label=int(m[y[conf]]), target=-1, mapping=m))
        for r in natq_rows:
            jobs.append((f"pois-natq:{r['variant']}", pois_natq_prompts(setup, r["variant"], r["canary_index"], r["canary_label"], r["target"], r["mapping"])))
    say(f"canary prompts: {sum(len(p) for _, p in jobs)} prompts")
    flat = [pr for _, ps in jobs for pr in ps]
    labels, canary_off = _run_teacher(teacher, flat)
    out: dict[str, np.ndarray] = {}
    pos = 0
    natq_votes = []
    for name, prompts in jobs:
        part = labels[pos:pos + len(prompts)]
        pos += len(prompts)
        if name.startswith("pois-natq:"):
            natq_votes.append(part)
        else:
            out[name] = part
    m = len(natq_rows)
    meta = {
        "num_teachers": k,
        "num_queries": nq,
        "template": setup.template.name,
        "off_grammar_rate_teachers": base_off,
        "off_grammar_rate_canaries": canary_off,
        "teacher_index": setup.teacher_index.tolist(),
        "query_index": setup.query_index.tolist(),
    }
    return PromptPateVotes(
        num_classes=c,
        query_labels=y.copy(),
        teacher_votes=votes,
        nat_advq_votes=out.get("nat-advq", np.zeros(0, dtype=np.int64)),
        pois_advq_labels=poison,
        pois_advq_votes=out.get("pois-advq", np.zeros(0, dtype=np.int64)),
        natq_variant=np.array([r["variant"] for r in natq_rows], dtype="U16"),
        natq_canary_index=np.array([r["canary_index"] for r in natq_rows], dtype=np.int64),
        natq_canary_label=np.array([r["canary_label"] for r in natq_rows], dtype=np.int64),
        natq_target=np.array([r["target"] for r in natq_rows], dtype=np.int64),
        natq_mapping=np.array([r["mapping"] if r["mapping"] is not None else np.full(c, -1) for r in natq_rows], dtype=np.int64).reshape(m, c),
        natq_votes=np.array(natq_votes, dtype=np.int64).reshape(m, nq),
        meta=meta,
    )


def teacher_accuracy(votes: PromptPateVotes) -> pd.DataFrame:
    """Accuracy of each teacher on the queries, and of the noiseless plurality vote.

    Returns:
        One row per teacher (``teacher``, ``accuracy``) and a last row ``teacher = -1`` with
        the plurality vote's accuracy (ties → smaller label).
    """
    v, y = votes.teacher_votes, votes.query_labels
    acc = (v == y[None, :]).mean(axis=1)
    plural = np.argmax(votes.histograms, axis=1)
    rows = [{"teacher": t, "accuracy": float(a)} for t, a in enumerate(acc)]
    rows.append({"teacher": -1, "accuracy": float(np.mean(plural == y))})
    return pd.DataFrame(rows)
