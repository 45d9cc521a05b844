"""Each pytest-xdist worker's numerical libraries use its share of the cores (tests/conftest.py,
THREAD_VARIABLES; issue 35): more threads than cores per worker made the suite ~9 % slower."""

from __future__ import annotations

import os

import pytest


@pytest.mark.skipif(not os.environ.get("PYTEST_XDIST_WORKER"), reason="only pytest-xdist workers share the cores out")
def test_worker_thread_pools_hold_their_share_of_the_cores():
    import numpy  # noqa: F401  (loads OpenBLAS)
    import torch
    from threadpoolctl import threadpool_info

    workers = max(1, int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))
    share = max(1, len(os.sched_getaffinity(0)) // workers)
    pools = {(p["user_api"], p["internal_api"]): p["num_threads"] for p in threadpool_info()}
    assert pools, "threadpoolctl found no BLAS / OpenMP pool"
    assert all(n <= share for n in pools.values()), pools
    assert torch.get_num_threads() <= share
