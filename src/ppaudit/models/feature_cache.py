"""Features of a dataset split from an encoder of :mod:`ppaudit.models.encoders`, cached on disk (Chadha et al. 2024, §6, App. D.3).

:func:`extract_features` stores the features of one (dataset, encoder, split)
at ``{cache_dir}/{dataset}/{encoder}/{split}.npy`` (written atomically, ``ppaudit.io``) with
a JSON sidecar holding the encoder configuration and a SHA-256 fingerprint of the inputs;
a rerun with the same inputs and encoder loads the file instead of recomputing, a changed
input or configuration recomputes it.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np

from .._validation import check_positive_int
from ..io import atomic_path, write_json
from .encoders import ENCODERS, Encoder, get_encoder

__all__ = ["extract_features", "feature_cache_path", "input_fingerprint"]


def input_fingerprint(inputs) -> str:
    """SHA-256 of the inputs (images: dtype, shape and bytes; text: the UTF-8 sentences)."""
    h = hashlib.sha256()
    if isinstance(inputs, np.ndarray):
        arr = np.ascontiguousarray(inputs)
        h.update(f"array|{arr.dtype.str}|{arr.shape}|".encode())
        h.update(arr.tobytes())
    else:
        items = list(inputs)
        h.update(f"text|{len(items)}|".encode())
        for s in items:
            b = str(s).encode("utf-8")
            h.update(len(b).to_bytes(8, "little"))
            h.update(b)
    return h.hexdigest()


def _safe_component(value: str, name: str) -> str:
    v = str(value)
    if not v or any(ch in v for ch in "/\\") or v in (".", ".."):
        raise ValueError(f"{name} must be a non-empty name without path separators, got {value!r}")
    return v


def feature_cache_path(cache_dir: str | os.PathLike, dataset: str, encoder: str, split: str) -> Path:
    """``{cache_dir}/{dataset}/{encoder}/{split}.npy`` — the cache key is (dataset, encoder, split)."""
    return Path(cache_dir) / _safe_component(dataset, "dataset") / _safe_component(encoder, "encoder") / f"{_safe_component(split, 'split')}.npy"


def extract_features(
    encoder: Encoder | str,
    inputs,
    cache_dir: str | os.PathLike | None = None,
    dataset: str | None = None,
    split: str | None = None,
    batch_size: int | None = None,
    progress: bool = False,
    threads: int | None = None,
) -> np.ndarray:
    """Features of ``inputs``, cached per (dataset, encoder, split) and reused on rerun.

    With ``cache_dir``: if ``{cache_dir}/{dataset}/{encoder.name}/{split}.npy`` and its
    ``.json`` sidecar exist and the sidecar's input fingerprint and encoder configuration
    match, the stored array is returned without loading the model. Otherwise the features
    are computed and written atomically (array first, sidecar last, so a crash never leaves
    a sidecar describing a missing or partial array).

    Args:
        encoder: an :class:`Encoder` or a name of :data:`ENCODERS`.
        inputs: images ``(n, C, H, W)`` in ``[0, 1]`` or a list of sentences.
        cache_dir: cache root (``None``: no caching).
        dataset, split: cache key parts (required with ``cache_dir``).
        batch_size: per forward pass (default: the encoder's).
        progress: tqdm bar.
        threads: ``torch.set_num_threads`` for the extraction (``None``: leave as is).

    Returns:
        ``(n, d)`` float32.
    """
    enc = get_encoder(encoder) if isinstance(encoder, str) else encoder
    if not isinstance(enc, Encoder):
        raise ValueError(f"encoder must be an Encoder or a name in {sorted(ENCODERS)}, got {type(encoder).__name__}")
    if threads is not None:
        import torch

        torch.set_num_threads(check_positive_int(threads, "threads"))
    if cache_dir is None:
        return enc.encode(inputs, batch_size=batch_size, progress=progress)
    if dataset is None or split is None:
        raise ValueError(f"dataset and split name the cache entry and are required with cache_dir, got dataset={dataset!r}, split={split!r}")
    path = feature_cache_path(cache_dir, dataset, enc.name, split)
    meta_path = path.with_suffix(".json")
    fingerprint = input_fingerprint(inputs)
    meta = {"dataset": dataset, "split": split, "encoder": enc.config(), "input_sha256": fingerprint}
    if path.is_file() and meta_path.is_file():
        try:
            stored = json.loads(meta_path.read_text())
        except (OSError, ValueError):
            stored = None
        if stored is not None and all(stored.get(k) == v for k, v in meta.items()):
            feats = np.load(path)
            if feats.shape[0] == stored.get("shape", [None])[0]:
                return feats
    feats = enc.encode(inputs, batch_size=batch_size, progress=progress)
    meta["shape"] = list(feats.shape)
    meta["throughput_per_second"] = enc.last_stats.get("per_second")
    meta_path.unlink(missing_ok=True)
    with atomic_path(path) as tmp:
        np.save(tmp, feats)
    write_json(meta, meta_path)
    return feats
