import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"
if str(SRC) not in sys.path:
    sys.path.insert(0, str(SRC))
# Test helpers shared across tests/ and its sub-folders (local_http, workflow_runner).
TESTS = Path(__file__).resolve().parent
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

os.environ.setdefault("MPLBACKEND", "Agg")

#: Threads of the numerical libraries in each pytest-xdist worker: the cores shared out among the
#: workers (``make test``: 2 workers on 2 cores, 1 each). Unlimited, every worker's OpenBLAS, OpenMP
#: (torch, scikit-learn) and MKL start a thread per core and the workers fight for the cores: a
#: 5000 × 20 Gram matrix took 26 ms instead of 0.11 ms beside another busy worker, and the whole
#: suite 832 s instead of 761 s (issue 35, 2 cores). Set before numpy or torch is imported (they
#: read it at load); an explicit value in the environment wins. Workflow jobs are unaffected:
#: Snakemake sets these variables to each job's ``threads``.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
if os.environ.get("PYTEST_XDIST_WORKER"):
    _workers = max(1, int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))
    _per_worker = str(max(1, len(os.sched_getaffinity(0)) // _workers))
    for _name in THREAD_VARIABLES:
        os.environ.setdefault(_name, _per_worker)


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture
def server():
    """A bounded HTTP server on 127.0.0.1 (tests/local_http.py) for the download tests."""
    from local_http import LocalServer

    with LocalServer() as s:
        yield s


#: Test files that take longest (``make test``'s ``--durations``, issue 35 §2), longest first. ``make test``
#: runs ``-n 2 --dist loadfile --no-loadscope-reorder``: each file goes whole to one of two workers, in
#: collection order, so these start first (paper shape on one worker, the shared tiny-config run on the
#: other) and the many short files fill in beside them, instead of one long run ending the suite alone.
#: The SLURM test comes second: its ~55 s are mostly the plugin's status-poll sleeps (3 CPU-s), so it
#: waits beside the paper-shape run, whose Snakemake (``--cores 2``) takes the idle core, instead of
#: leaving a core idle beside a one-core test (measured at 615–673 s of a CI run, score_s 0.156 / 0.159); its worker then
#: builds the shared run.
LONGEST_FIRST = (
    "tests/workflow/test_workflow_paper_shape.py",
    "tests/workflow/test_slurm.py",
    "tests/workflow/test_workflow_private_prediction.py",  # builds the shared run (tests/shared_runs.py)
    "tests/workflow/test_workflow_labeldp_paper_shape.py",
    "tests/reliability/test_reliability.py",
    "tests/unit/docs/test_docs_site.py",
)


def pytest_collection_modifyitems(session, config, items):
    """The files of :data:`LONGEST_FIRST` first, in its order; the rest keep their order."""
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}

    def key(item):
        path = Path(str(item.fspath)).resolve()
        rel = path.relative_to(REPO).as_posix() if path.is_relative_to(REPO) else path.as_posix()
        return rank.get(rel, len(rank))

    items[:] = sorted(items, key=key)  # stable: the order within a file and among the rest is kept
