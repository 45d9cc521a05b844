"""SQLite cache of prompt-teacher predictions, keyed by model and prompt."""

from __future__ import annotations

import hashlib
import os
import sqlite3
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

__all__ = [
    "PredictionCache",
]

# ---------------------------------------------------------------------------------------
# Prediction cache
# ---------------------------------------------------------------------------------------


class PredictionCache:
    """SQLite cache of predictions, keyed by (model id, grammar id, SHA-256 of the prompt).

    Each ``put_many`` is one transaction (atomic: a killed job leaves either all or none of
    a batch), the database runs in WAL mode with a busy timeout so that concurrent
    Snakemake jobs can share it. Values: the label, the per-label first-branch logits, the
    off-grammar flag and the unrestricted greedy top token.

    Args:
        path: the database file (created with its folder), e.g.
            ``resources/llm_cache/predictions.sqlite``.
    """

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._con = sqlite3.connect(str(self.path), timeout=120.0)
        self._con.execute("PRAGMA journal_mode=WAL")
        self._con.execute(
            "CREATE TABLE IF NOT EXISTS predictions (key TEXT PRIMARY KEY, model_id TEXT, grammar TEXT, "
            "prompt_sha256 TEXT, label INTEGER, off_grammar INTEGER, top_token INTEGER, scores BLOB)"
        )
        self._con.commit()

    @staticmethod
    def key(model_id: str, grammar_id: str, prompt_text: str) -> str:
        p = hashlib.sha256(prompt_text.encode("utf-8")).hexdigest()
        return hashlib.sha256(f"{model_id}\0{grammar_id}\0{p}".encode("utf-8")).hexdigest()

    def get_many(self, keys: Sequence[str]) -> dict[str, tuple[int, bool, int, np.ndarray]]:
        out: dict[str, tuple[int, bool, int, np.ndarray]] = {}
        keys = list(keys)
        for i in range(0, len(keys), 500):
            chunk = keys[i:i + 500]
            q = f"SELECT key, label, off_grammar, top_token, scores FROM predictions WHERE key IN ({','.join('?' * len(chunk))})"
            for k, lab, off, top, blob in self._con.execute(q, chunk):
                out[k] = (int(lab), bool(off), int(top), np.frombuffer(blob, dtype=np.float32).copy())
        return out

    def put_many(self, rows: Iterable[tuple[str, str, str, str, int, bool, int, np.ndarray]]) -> None:
        """Insert ``(key, model_id, grammar, prompt_sha256, label, off_grammar, top_token, scores)``."""
        data = [(k, m, g, p, int(lab), int(bool(off)), int(top), np.asarray(s, dtype=np.float32).tobytes()) for k, m, g, p, lab, off, top, s in rows]
        with self._con:
            self._con.executemany("INSERT OR REPLACE INTO predictions VALUES (?, ?, ?, ?, ?, ?, ?, ?)", data)

    def __len__(self) -> int:
        return int(self._con.execute("SELECT COUNT(*) FROM predictions").fetchone()[0])

    def close(self) -> None:
        self._con.close()
