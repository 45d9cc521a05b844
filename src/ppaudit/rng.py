"""Reproducible randomness: one ``numpy.random.SeedSequence`` per experiment, spawned per job.

``experiment_seed_sequence(seed, "chadha_fig6")`` is the root of one experiment; a job of
that experiment uses ``job_generator(seed, "chadha_fig6", job_key...)``. The keys are mapped
to integers with CRC-32 (stable across Python runs, unlike ``hash``), so the same config
gives the same bytes, and two jobs never share a stream.
"""

from __future__ import annotations

import zlib

import numpy as np

__all__ = ["experiment_seed_sequence", "job_seed_sequence", "job_generator"]


def _key(part) -> int:
    if isinstance(part, (int, np.integer)) and not isinstance(part, bool):
        if part < 0:
            raise ValueError(f"integer seed keys must be >= 0, got {part}")
        return int(part)
    return zlib.crc32(str(part).encode("utf-8"))


def experiment_seed_sequence(seed: int, experiment: str) -> np.random.SeedSequence:
    """Root ``SeedSequence`` of an experiment (the config's ``seed`` and the experiment name)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return np.random.SeedSequence(int(seed), spawn_key=(_key(experiment),))


def job_seed_sequence(seed: int, experiment: str, *job: object) -> np.random.SeedSequence:
    """The child of the experiment's ``SeedSequence`` for one job (keys: names or integers)."""
    root = experiment_seed_sequence(seed, experiment)
    return np.random.SeedSequence(root.entropy, spawn_key=root.spawn_key + tuple(_key(j) for j in job))


def job_generator(seed: int, experiment: str, *job: object) -> np.random.Generator:
    """A ``numpy.random.Generator`` for one job of an experiment."""
    return np.random.default_rng(job_seed_sequence(seed, experiment, *job))
