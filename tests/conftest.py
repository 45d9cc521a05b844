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


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture
def server():
    """A bounded HTTP server on 127.0.0.1 (tests/local_http.py) for the download tests."""
    from local_http import LocalServer

    with LocalServer() as s:
        yield s


#: Test files that run Snakemake, SLURM or a real LLM: minutes each. Collected first, so that
#: ``pytest -n 2 --dist loadfile`` (make test) starts them at once on both workers and the many
#: short files fill in around them, instead of leaving one long file alone at the end.
LONG_FILES = ("test_workflow", "test_reliability", "test_slurm", "test_llm")


def pytest_collection_modifyitems(session, config, items):
    def long_first(pair):
        index, item = pair
        name = Path(str(item.fspath)).name
        return (0 if name.startswith(LONG_FILES) else 1, index)

    items[:] = [item for _, item in sorted(enumerate(items), key=long_first)]
