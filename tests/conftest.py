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
