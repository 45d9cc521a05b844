"""Make ``ppaudit`` importable from a workflow script, and send the script's output to its log.

Snakemake puts this folder on ``sys.path`` of every script, so a script starts with
``import _ppaudit_path`` (before any ``ppaudit`` import). In the project's venv ``ppaudit``
is installed and nothing changes; in a conda env made from ``envs/*.yaml`` (which holds
only third-party packages) ``<repo>/src`` is put first on ``sys.path``. With the job server of a
local run (``ppaudit.workflow.job_server``), the rest of the script runs in a forked child of it.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

REPO_SRC = Path(__file__).resolve().parents[2] / "src"

try:
    import ppaudit  # noqa: F401
except ImportError:
    if not (REPO_SRC / "ppaudit" / "__init__.py").is_file():
        raise ImportError(f"ppaudit is not installed and {REPO_SRC} holds no ppaudit package") from None
    sys.path.insert(0, str(REPO_SRC))
    import ppaudit  # noqa: F401

# In a local run with the job server (ppaudit.workflow.job_server), the job runs in a child of the server,
# which has numpy, torch & co. imported, and this process exits with its status; otherwise this returns.
from ppaudit.workflow.job_server import delegate  # noqa: E402

delegate()


def log_to_file(log_path: str | os.PathLike, name: str) -> logging.Logger:
    """Redirect stdout, stderr (tracebacks, warnings, tqdm progress) and logging to ``log_path``.

    The file descriptors 1 and 2 are redirected too, so output of C extensions lands there.
    Returns a logger named ``name``.
    """
    path = Path(log_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    sys.stdout.flush()
    sys.stderr.flush()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    sys.stdout = open(1, "w", buffering=1, encoding="utf-8", closefd=False)
    sys.stderr = open(2, "w", buffering=1, encoding="utf-8", closefd=False)
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
        force=True,
    )
    logging.captureWarnings(True)
    return logging.getLogger(name)
