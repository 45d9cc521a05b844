"""PromptPATE adversaries (Chadha et al. 2024, §5.3, App. D.2): the canary prompts of Nat-AdvQ, Pois-AdvQ and the four Pois-NatQ variants.

The LLM stage of the mechanism (:mod:`.votes`) answers these prompts, so they live in the
mechanism's package (below it in the layers); :mod:`ppaudit.adversaries.promptpate` re-exports
every name (issue 37: no import from ``mechanisms`` up into ``adversaries``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np

from ...models.llm import Prompt, all_same_prompt, teacher_prompt

__all__ = [
    "ADVERSARIES",
    "POIS_NATQ_VARIANTS",
    "most_voted_other_label",
    "confident_query",
    "unconfident_query",
    "wrong_label_mapping",
    "nat_advq_prompts",
    "pois_advq_prompts",
    "pois_natq_prompts",
]

if TYPE_CHECKING:  # annotations only
    from .setup import PromptPateSetup


#: The adversaries of PromptPATE (App. D.2): the same three as for PATE and CaPC.
ADVERSARIES = ("nat-advq", "pois-advq", "pois-natq")
#: The four Pois-NatQ poisoned prompts of App. D.2 (Confident, Unconfident, All same, Mapping).
POIS_NATQ_VARIANTS = ("confident", "unconfident", "all-same", "mapping")


def most_voted_other_label(hist, exclude) -> np.ndarray:
    """Per row of ``hist`` ``(n, C)``: the most voted class other than ``exclude[row]``.

    The Pois-AdvQ poison label ("the label the most teachers vote for after the true one",
    §5.1/§5.3). Ties go to the smaller class.
    """
    h = np.atleast_2d(np.asarray(hist, dtype=np.float64))
    ex = np.broadcast_to(np.asarray(exclude, dtype=np.int64).reshape(-1), (h.shape[0],))
    if h.shape[1] < 2:
        raise ValueError(f"hist must have >= 2 classes, got shape {h.shape}")
    if np.any(ex < 0) or np.any(ex >= h.shape[1]):
        raise ValueError(f"exclude must lie in [0, {h.shape[1]}), got {ex}")
    masked = h.copy()
    masked[np.arange(h.shape[0]), ex] = -np.inf
    return np.argmax(masked, axis=1).astype(np.int64)


def _pick(scores: np.ndarray, rng: np.random.Generator, largest: bool) -> int:
    best = scores.max() if largest else scores.min()
    ties = np.flatnonzero(scores == best)
    return int(rng.choice(ties)) if ties.size > 1 else int(ties[0])


def confident_query(hist, rng: np.random.Generator) -> int:
    """Pois-NatQ (Confident), App. D.2: "a query where most number of teachers agree and
    break ties randomly" — the largest top count."""
    h = np.asarray(hist)
    return _pick(h.max(axis=1), rng, largest=True)


def unconfident_query(hist, rng: np.random.Generator) -> int:
    """Pois-NatQ (Unconfident), App. D.2: "a query where the difference between teacher votes
    for the top two labels is minimal" (ties at random)."""
    h = np.sort(np.asarray(hist), axis=1)
    return _pick(h[:, -1] - h[:, -2], rng, largest=False)


def wrong_label_mapping(hist, true_labels) -> np.ndarray:
    """Pois-NatQ (Mapping), App. D.2: "for each label, ... the class which is most often the
    class with second highest votes" (our reading in the module docstring).

    Returns:
        ``(C,)`` ``mapping[c]`` = the number announced for class ``c``.
    """
    h = np.asarray(hist, dtype=np.int64)
    y = np.asarray(true_labels, dtype=np.int64).reshape(-1)
    if h.ndim != 2 or h.shape[0] != y.size:
        raise ValueError(f"hist must be (n_Q, C) with one row per true label, got {h.shape} and {y.size} labels")
    c = h.shape[1]
    order = np.lexsort((np.broadcast_to(np.arange(c), h.shape), -h), axis=1)
    second = order[:, 1]
    second_count = h[np.arange(h.shape[0]), second]
    mapping = np.empty(c, dtype=np.int64)
    for cls in range(c):
        rows = y == cls
        if not rows.any():
            mapping[cls] = (cls + 1) % c
            continue
        pos = rows & (second_count > 0)
        pool = second[pos] if pos.any() else second[rows]
        mapping[cls] = int(np.argmax(np.bincount(pool, minlength=c)))
    return mapping


def nat_advq_prompts(setup: PromptPateSetup) -> list[Prompt]:
    """Nat-AdvQ canary prompts: example = query ``q`` with its true label, asked ``q`` (App. D.2)."""
    tpl = setup.template
    return [teacher_prompt(tpl, x, y, x) for x, y in zip(setup.query_texts, setup.query_labels)]


def pois_advq_prompts(setup: PromptPateSetup, poison_labels) -> list[Prompt]:
    """Pois-AdvQ canary prompts: example = query ``q`` with a poison label, asked ``q`` (App. D.2)."""
    lab = np.asarray(poison_labels, dtype=np.int64).reshape(-1)
    if lab.size != setup.num_queries:
        raise ValueError(f"poison_labels must have one label per query ({setup.num_queries}), got {lab.size}")
    if np.any(lab == setup.query_labels):
        raise ValueError("a poison label must differ from the query's true label")
    tpl = setup.template
    return [teacher_prompt(tpl, x, int(p), x) for x, p in zip(setup.query_texts, lab)]


def pois_natq_prompts(
    setup: PromptPateSetup,
    variant: str,
    canary_index: int = -1,
    canary_label: int = -1,
    target: int = -1,
    mapping: Sequence[int] | None = None,
) -> list[Prompt]:
    """The poisoned teacher's prompts on every natural query, for one Pois-NatQ variant (App. D.2).

    Args:
        setup: the instance.
        variant: one of :data:`POIS_NATQ_VARIANTS`.
        canary_index, canary_label: the query used as the poisoned example and its label
            (Confident / Unconfident: a wrong label; Mapping: the mapped true label).
        target: the label *All same* asks for.
        mapping: the wrong mapping (*Mapping*).
    """
    tpl = setup.template
    if variant in ("confident", "unconfident", "mapping"):
        if not 0 <= int(canary_index) < setup.num_queries:
            raise ValueError(f"canary_index must be in [0, {setup.num_queries}), got {canary_index}")
        x = setup.query_texts[int(canary_index)]
        m = mapping if variant == "mapping" else None
        if variant == "mapping" and mapping is None:
            raise ValueError("the mapping variant needs mapping")
        return [teacher_prompt(tpl, x, int(canary_label), q, mapping=m) for q in setup.query_texts]
    if variant == "all-same":
        return [all_same_prompt(tpl, int(target), q) for q in setup.query_texts]
    raise ValueError(f"variant must be one of {list(POIS_NATQ_VARIANTS)}, got {variant!r}")
