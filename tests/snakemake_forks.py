"""Many short Snakemake invocations from one interpreter (issue 35 §2: ``make test`` under its goal).

``python tests/snakemake_forks.py JOBS.json`` imports Snakemake's command line (and the modules the
Snakefile imports) once, then runs each job of ``JOBS.json`` — ``{"argv": [...], "cwd": ...,
"stdout": path, "stderr": path}`` — in a forked child: the child changes to ``cwd``, points its
file descriptors 1 and 2 at the two files and calls ``snakemake.cli.main(argv)``, the function that
``python -m snakemake`` calls (``snakemake/__main__.py``), so it parses the same Snakefile, validates
the same config and prints the same messages with the same exit code. Only the interpreter's
start-up and the import of Snakemake (about 1 CPU-s of the 1.3–1.5 CPU-s of a run that stops at the
config check) are shared. At most ``parallel`` children run at once; the exit codes are printed as
one JSON list, in the jobs' order. Used through :func:`workflow_runner.run_snakemake_many`.
"""

from __future__ import annotations

import importlib
import json
import os
import sys

#: Imported before the first fork: Snakemake's CLI and API, and what workflow/rules/common.smk imports.
PRELOAD = ("snakemake.cli", "snakemake.api", "snakemake.workflow", "snakemake.utils", "jsonschema", "yaml",
           "ppaudit.workflow", "ppaudit.workflow.config_checks", "ppaudit.experiments.private_knn_names")


def _child(job: dict) -> None:
    from snakemake.cli import main

    code = 1
    try:
        os.chdir(job["cwd"])
        for fd, path in ((1, job["stdout"]), (2, job["stderr"])):
            f = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(f, fd)
            os.close(f)
        sys.argv = ["snakemake", *job["argv"]]
        try:
            main(job["argv"])
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def run(jobs: list[dict], parallel: int = 2) -> list[int]:
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    sys.stdout.flush()
    sys.stderr.flush()
    codes: list[int | None] = [None] * len(jobs)
    running: dict[int, int] = {}  # pid → job index
    pending = list(range(len(jobs)))
    while pending or running:
        while pending and len(running) < parallel:
            i = pending.pop(0)
            pid = os.fork()
            if pid == 0:
                _child(jobs[i])
            running[pid] = i
        pid, status = os.wait()
        i = running.pop(pid)
        codes[i] = os.waitstatus_to_exitcode(status)
    return codes  # type: ignore[return-value]


if __name__ == "__main__":
    spec = json.loads(open(sys.argv[1]).read())
    print(json.dumps(run(spec["jobs"], spec.get("parallel", 2))))
