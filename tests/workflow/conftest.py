"""Fixtures of the workflow tests: runs shared between test files (``tests/shared_runs.py``, issue 35 §2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from shared_runs import build_once, build_tiny_llm_run, shared_folder


@pytest.fixture(scope="session")
def tiny_llm_run(tmp_path_factory) -> Path:
    """The tiny config + tiny Llama run of ``shared_runs.PRIVATE_PREDICTION_TARGETS``,
    ``shared_runs.PROMPTPATE_TARGETS`` and ``shared_runs.WANG_CACHING_TARGETS``, built once per session, also across xdist workers
    (read-only: copy it with ``shared_runs.copy_run`` to change it). Its config override is
    ``<run>/llm.yaml``."""
    return build_once(shared_folder(tmp_path_factory) / "tiny_llm_run", build_tiny_llm_run)
