"""A fork server for the workflow's local Python jobs: the heavy imports once per run, not once per job.

Every ``script:`` job of the workflow is a fresh ``python`` process, and most of a small job's CPU
is its imports: ``import torch`` alone takes 2.0–2.4 CPU-s, numpy, scipy and pandas about 1.5 more
(score_s about 0.16), against a few hundredths of a second of work in a canary teacher of the test
sizes. The paper-shape test's run (about 135 jobs) spent more than half of its CPU importing: with
the server it took 98 s wall instead of 166 s, and its processes about 145 CPU-s instead of 264
(issue 35; score_s about 0.165, 30 Nov 2026).

In a local Snakemake run with :data:`MIN_JOBS` or more script jobs to run (unless
``PPAUDIT_FORK_JOBS=0``), the Snakefile's ``onstart`` calls
:func:`start`: a server process (``python -m ppaudit.workflow.job_server``) listens on a Unix socket
in a private temporary folder, then imports :data:`PRELOAD` and every module the workflow's scripts
import at their top (:func:`script_modules`) once, with one thread per numerical library. Each job's script begins with ``import _ppaudit_path``, which calls
:func:`delegate`: the job's process hands its arguments, working directory, environment and
standard streams (the file descriptors themselves, ``SCM_RIGHTS``) to the server and waits. The
server forks; the child takes over the job's streams, folder and environment, sets the thread
counts the job's environment asks for (``OMP_NUM_THREADS`` and friends, which Snakemake sets to
the rule's ``threads``, and which a fresh interpreter reads when numpy or torch load: here through
threadpoolctl and ``torch.set_num_threads``), and runs the job's script file as ``__main__`` the way
``python FILE`` does (``sys.exit`` codes, an uncaught exception's traceback and status 1, the
``atexit`` functions). The job's process exits with the child's status. ``onsuccess`` and
``onerror`` call :func:`stop`.

The results are the same bytes: every job draws from its own ``SeedSequence`` (``ppaudit.rng``),
the thread counts are the ones a fresh process would have, and no computation runs in the server
before the fork (it only imports). What differs from a fresh process:

* Snakemake's ``benchmark:`` files measure the job's own process tree, so with the server their
  ``cpu_time`` and memory columns count the waiting process only (wall time ``s`` stays right;
  ``bench/replay_schedule.py`` reads ``cpu_time`` only where it exceeds the wall time).
* The interpreter's hash seed and the unseeded global random states (``random``, numpy's legacy
  ``np.random``) are the server's, shared by all jobs; nothing in ppaudit draws from them.

It is never used where the job's interpreter is not the server's (a conda or container job: the
job compares ``sys.executable``), on SLURM or any non-local executor, when the socket cannot be
reached, or when the imports left the server unfit to fork (:func:`fork_hazard`: a thread running,
CUDA initialised); the job then runs in its own process, as without the server, after a warning.

Signals: SIGTERM, SIGINT and SIGHUP sent to the job's process are passed on to the child; if the
job's process dies (Snakemake kills a cancelled job with SIGKILL), the server kills the child. On
SIGTERM (:func:`stop`) the server terminates the children still running and exits.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys

__all__ = ["ENV_ENABLE", "ENV_SOCKET", "ENV_PYTHON", "MIN_JOBS", "PRELOAD", "delegate", "fork_hazard", "module_level_imports",
           "script_modules", "serve", "start", "stop"]

#: Set to ``0`` to run every job of a local run in its own fresh process (the server is on otherwise).
ENV_ENABLE = "PPAUDIT_FORK_JOBS"
#: The server's socket, set by :func:`start` in the Snakemake process, so every local job inherits it.
ENV_SOCKET = "PPAUDIT_JOB_SERVER"
#: The server's interpreter (``os.path.realpath(sys.executable)``); a job under another one runs alone.
ENV_PYTHON = "PPAUDIT_JOB_SERVER_PYTHON"
#: Modules the server imports before it forks: what most jobs import (the numerical stack, torch,
#: the plotting back end, Snakemake's pickled job object) and ppaudit's own heavy modules. A module
#: missing from an installation (the lean core lacks torch) is skipped.
PRELOAD = (
    "numpy", "scipy.special", "scipy.stats", "scipy.optimize", "scipy.integrate", "pandas", "yaml",
    "torch", "torch.nn", "torch.nn.functional", "sklearn", "sklearn.neighbors", "sklearn.linear_model",
    "matplotlib", "matplotlib.pyplot", "matplotlib.backends.backend_agg", "matplotlib.backends.backend_pdf", "tqdm",
    "pandas.io.formats.csvs", "joblib",
    "snakemake.iocontainers", "snakemake.logging", "snakemake.io", "snakemake.shell",
    "ppaudit", "ppaudit.rng", "ppaudit.io", "ppaudit.audit", "ppaudit.noisy_argmax", "ppaudit.vote_models",
    "ppaudit.models", "ppaudit.plots",
)
#: The thread variables Snakemake sets to a job's ``threads`` (``snakemake.shell``); the server starts
#: with all of them at 1, so no library starts a thread pool before the fork.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "GOTO_NUM_THREADS",
                    "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")
_MAX_REQUEST = 1 << 20
#: Fewest Python script jobs a run must have left to get a server: its imports take 4–7 CPU-s once,
#: and a job forked from it saves 1–2.5 CPU-s (score_s about 0.165), so smaller runs gain nothing.
MIN_JOBS = 4
#: How often (seconds) an idle server checks that the Snakemake process that started it still runs.
_PARENT_CHECK_S = 5.0


def _send(sock: socket.socket, **message) -> None:
    sock.send(json.dumps(message).encode())


# -- the job's side ---------------------------------------------------------------------------------


def delegate() -> None:
    """Run this job in the server and exit with its status; return at once when there is no server.

    Called first thing by a workflow script (``workflow/scripts/_ppaudit_path.py``), in the
    process Snakemake started for the job. Returns (the job then runs here) when
    :data:`ENV_SOCKET` is unset, the interpreter is not the server's, or the server cannot be
    reached or is unfit to fork (:func:`fork_hazard`; both with a warning on stderr).
    """
    path = os.environ.get(ENV_SOCKET)
    if not path or os.environ.get(ENV_PYTHON) != os.path.realpath(sys.executable):
        return
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        sock.connect(path)
    except OSError as exc:
        print(f"ppaudit job server {path} unreachable ({exc}); running the job in its own process", file=sys.stderr)
        sock.close()
        return
    env = {k: v for k, v in os.environ.items() if k not in (ENV_SOCKET, ENV_PYTHON)}
    request = json.dumps({"argv": sys.argv, "cwd": os.getcwd(), "env": env}).encode()
    sys.stdout.flush()
    sys.stderr.flush()
    socket.send_fds(sock, [request], [0, 1, 2])
    reply = sock.recv(_MAX_REQUEST)
    if not reply:
        print(f"ppaudit job server {path} closed the connection before starting the job", file=sys.stderr)
        os._exit(1)
    if "run_here" in (first := json.loads(reply)):
        print(f"ppaudit job server {path}: {first['run_here']}; running the job in its own process", file=sys.stderr)
        sock.close()
        return
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda signum, frame: _send(sock, signal=signum))
    while True:
        reply = sock.recv(_MAX_REQUEST)  # a signal's handler runs, then recv goes on waiting (PEP 475)
        if not reply:
            print(f"ppaudit job server {path} ended before the job did", file=sys.stderr)
            os._exit(1)
        message = json.loads(reply)
        if "status" in message:
            break
    status = int(message["status"])
    if status < 0:  # the child died of a signal: so does this process, as a fresh job would
        signal.signal(-status, signal.SIG_DFL)
        os.kill(os.getpid(), -status)
    os._exit(status)


# -- the server's side ------------------------------------------------------------------------------


def module_level_imports(path) -> list:
    """The module-level ``import`` / ``from … import`` statements of a Python file (``ast`` nodes), also
    those inside ``if`` / ``try`` / ``with`` blocks: what the file imports before its first line of work."""
    import ast

    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read(), filename=str(path))
    nodes: list = []

    def visit(body) -> None:
        for node in body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                nodes.append(node)
            elif isinstance(node, (ast.If, ast.Try, ast.With)):
                for field in ("body", "orelse", "finalbody"):
                    visit(getattr(node, field, []) or [])
                for handler in getattr(node, "handlers", []) or []:
                    visit(handler.body)

    visit(tree.body)
    return nodes


def script_modules(scripts) -> list[str]:
    """The modules the workflow scripts in the folder ``scripts`` import at module level, sorted
    (``from a.b import c`` gives ``a.b`` and ``a.b.c``, which may be a module too; the scripts' own
    helpers, ``_ppaudit_path``, and relative imports are left out)."""
    import ast
    from pathlib import Path

    names: set[str] = set()
    for path in sorted(Path(scripts).glob("*.py")):
        for node in module_level_imports(path):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif node.module and not node.level:
                names.add(node.module)
                names.update(f"{node.module}.{alias.name}" for alias in node.names if alias.name != "*")
    return sorted(n for n in names if not n.startswith("_ppaudit_path"))


def _preload(modules) -> None:
    import importlib

    for name in modules:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - an optional part missing from this installation, or not a module
            pass


def _apply_thread_limits(env: dict) -> None:
    """The thread counts a fresh interpreter would take from ``env`` when its libraries load."""

    def count(*names):
        for name in names:
            try:
                return max(1, int(env[name]))
            except (KeyError, ValueError):
                continue
        return len(os.sched_getaffinity(0))

    omp = count("OMP_NUM_THREADS")
    blas = count("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - installed with scikit-learn
        pass
    else:
        threadpool_limits(limits={"openmp": omp, "blas": blas})
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(omp)


def _fresh_std_streams() -> None:
    """``sys.stdin``/``stdout``/``stderr`` on fds 0–2 as a new interpreter opens them (stdout line-buffered
    only on a terminal; encodings and error handlers as the server's, which had the same environment)."""
    import io

    def stream(old, fd, write, line):
        raw = io.FileIO(fd, "wb" if write else "rb", closefd=False)
        buffered = io.BufferedWriter(raw) if write else io.BufferedReader(raw)
        return io.TextIOWrapper(buffered, encoding=getattr(old, "encoding", None) or "utf-8",
                                errors=getattr(old, "errors", None) or "strict", line_buffering=line)

    sys.stdin = sys.__stdin__ = stream(sys.__stdin__, 0, False, False)
    sys.stdout = sys.__stdout__ = stream(sys.__stdout__, 1, True, os.isatty(1))
    sys.stderr = sys.__stderr__ = stream(sys.__stderr__, 2, True, True)


def _run_file(path: str) -> int:
    """Run ``path`` as ``__main__`` like ``python path``; returns the exit status (negative: a signal)."""
    import atexit
    import builtins
    import threading
    import traceback
    import types

    main = types.ModuleType("__main__")
    main.__file__ = path
    main.__builtins__ = builtins
    sys.modules["__main__"] = main
    sys.path[0] = os.path.dirname(os.path.abspath(path))
    status = 0
    try:
        with open(path, "rb") as fh:
            code = compile(fh.read(), path, "exec")
        exec(code, main.__dict__)
    except SystemExit as exc:
        if exc.code is None:
            status = 0
        elif isinstance(exc.code, int):
            status = exc.code
        else:
            print(exc.code, file=sys.stderr)
            status = 1
    except KeyboardInterrupt:
        traceback.print_exc()
        status = -signal.SIGINT
    except BaseException as exc:  # noqa: BLE001 - reported as the interpreter would
        traceback.print_exception(type(exc), exc, exc.__traceback__.tb_next)
        status = 1
    # Interpreter shutdown, in CPython's order: threading's exit hooks (concurrent.futures and joblib's
    # loky shut their workers down there) and the join of non-daemon threads, then the atexit functions.
    threading._shutdown()
    atexit._run_exitfuncs()
    for s in (sys.stdout, sys.stderr):
        try:
            s.flush()
        except Exception:  # noqa: BLE001
            pass
    return status


def _child(request: dict, fds: list[int], close: list) -> None:
    """The forked job: never returns."""
    status = 1
    try:
        signal.set_wakeup_fd(-1)
        for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for obj in close:
            obj.close() if hasattr(obj, "close") else os.close(obj)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        _fresh_std_streams()
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        _apply_thread_limits(request["env"])
        sys.argv = list(request["argv"])
        status = _run_file(sys.argv[0])
    except BaseException:  # noqa: BLE001 - the set-up failed: tell the job, do not return into the server
        import traceback

        traceback.print_exc()
    if status < 0:
        signal.signal(-status, signal.SIG_DFL)
        os.kill(os.getpid(), -status)
    os._exit(status & 0xFF)


def serve(path: str, preload=PRELOAD) -> None:
    """Listen on the Unix socket ``path``, import ``preload``, then fork one child per job until SIGTERM.

    The socket is bound before the imports, so :func:`start` returns at once; a job that connects
    meanwhile waits in the socket's queue until the imports are done.
    """
    import gc
    import select

    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(path)
    listener.listen(128)
    parent = os.getppid()
    print(f"ready {path}", flush=True)
    _preload(preload)
    gc.collect()
    gc.freeze()  # the imported objects stay out of the children's collections: fewer copied pages
    hazard = fork_hazard()  # then every job runs in its own process instead (delegate() returns)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    stopping = []
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the jobs themselves; stop() ends the server
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    jobs: dict[socket.socket, int] = {}  # an open connection -> its child
    running: dict[int, socket.socket | None] = {}  # a child not yet reaped -> its connection
    while not stopping:
        readable, _, _ = select.select([listener, wake_r, *jobs], [], [], _PARENT_CHECK_S)
        if os.getppid() != parent:  # the Snakemake process is gone (killed): nobody will stop us
            break
        for ready in readable:
            if ready is listener:
                conn, _ = listener.accept()
                try:
                    message, fds, _, _ = socket.recv_fds(conn, _MAX_REQUEST, 3)
                except OSError:
                    conn.close()
                    continue
                if not message or len(fds) != 3:
                    for fd in fds:
                        os.close(fd)
                    conn.close()
                    continue
                if hazard:
                    for fd in fds:
                        os.close(fd)
                    _send(conn, run_here=hazard)
                    conn.close()
                    continue
                request = json.loads(message)
                sys.stdout.flush()
                sys.stderr.flush()
                pid = os.fork()
                if pid == 0:
                    _child(request, fds, [listener, wake_r, wake_w, conn, *jobs])
                for fd in fds:
                    os.close(fd)
                jobs[conn] = pid
                running[pid] = conn
                _send(conn, pid=pid)
            elif ready is wake_r:
                try:
                    while os.read(wake_r, 512):
                        pass
                except BlockingIOError:
                    pass
            else:
                pid = jobs[ready]
                try:
                    data = ready.recv(_MAX_REQUEST)
                except OSError:
                    data = b""
                if data:
                    _signal(pid, int(json.loads(data)["signal"]))
                else:  # the job's process is gone (killed): so must its child be
                    _signal(pid, signal.SIGKILL)
                    del jobs[ready]
                    running[pid] = None
                    ready.close()
        _reap(jobs, running)
    for pid in running:
        _signal(pid, signal.SIGTERM)
    for pid, conn in running.items():
        try:
            _, status = os.waitpid(pid, 0)
        except ChildProcessError:
            continue
        if conn is not None:
            _reply_status(conn, status)
    listener.close()
    os.unlink(path)


def fork_hazard() -> str | None:
    """Why forking this process would not give a job what a fresh interpreter gives it, or None.

    A thread other than the forking one (Python's or a native library's pool) does not exist in
    the child, and the locks it held stay held there; CUDA, once initialised, cannot be used in a
    forked child. The server only imports, so neither should happen: this is the check.
    """
    import threading

    if threading.active_count() > 1:
        return f"{threading.active_count()} Python threads run in the server"
    try:
        native = len(os.listdir("/proc/self/task"))
    except OSError:  # no /proc: the Python threads above are what can be seen
        native = 1
    if native > 1:
        return f"{native} threads run in the server (a native library's thread pool)"
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        return "CUDA was initialised in the server"
    return None


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def _reap(jobs: dict, running: dict) -> None:
    while running:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        conn = running.pop(pid, None)
        if conn is not None:
            jobs.pop(conn, None)
            _reply_status(conn, status)


def _reply_status(conn: socket.socket, status: int) -> None:
    """Tell the job's process how its child ended (``waitpid``'s status), and hang up."""
    try:
        _send(conn, status=os.waitstatus_to_exitcode(status))
    except OSError:
        pass
    conn.close()


# -- the Snakemake process's side ---------------------------------------------------------------------

_server = None  # (the server's process, its temporary folder) while one runs


def start(workflow=None, preload=PRELOAD):
    """Start the server for this local run unless :data:`ENV_ENABLE` is ``0`` or the run has fewer than
    :data:`MIN_JOBS` script jobs to run; returns its process or None.

    ``workflow``: Snakemake's workflow object (the Snakefile's ``workflow``), to keep the server off
    for a non-local executor and for conda or container jobs. Sets :data:`ENV_SOCKET` and
    :data:`ENV_PYTHON` in this process's environment, which Snakemake passes to every local job.
    """
    global _server
    import subprocess
    import tempfile

    if os.environ.get(ENV_ENABLE, "1") == "0" or _server is not None:
        return None
    if workflow is not None and (not _local_python_jobs(workflow) or _script_jobs_to_run(workflow) < MIN_JOBS):
        return None
    folder = tempfile.mkdtemp(prefix="ppaudit-jobs-")
    path = os.path.join(folder, "socket")
    env = {**os.environ, **{name: "1" for name in THREAD_VARIABLES}}
    env.pop(ENV_SOCKET, None)
    if workflow is not None:  # and every module the workflow's scripts import at their top
        preload = (*preload, *script_modules(os.path.join(workflow.basedir, "workflow", "scripts")))
    proc = subprocess.Popen([sys.executable, "-m", "ppaudit.workflow.job_server", path, *preload],
                            stdout=subprocess.PIPE, env=env, text=True)
    line = proc.stdout.readline()
    if not line.startswith("ready"):
        proc.kill()
        proc.wait()
        raise RuntimeError(f"the ppaudit job server did not start (exit status {proc.returncode})")
    _server = (proc, folder)
    print(f"ppaudit: jobs fork from the ppaudit job server (pid {proc.pid}; {ENV_ENABLE}=0 runs each in its own process)",
          file=sys.stderr, flush=True)
    import atexit

    atexit.register(stop)  # Ctrl-C reaches neither onsuccess nor onerror; Snakemake's exit does
    os.environ[ENV_SOCKET] = path
    os.environ[ENV_PYTHON] = os.path.realpath(sys.executable)
    return proc


def stop(timeout: float = 30.0) -> None:
    """Stop the server :func:`start` started (its running jobs are terminated); a no-op without one."""
    global _server
    import shutil
    import subprocess

    server, _server = _server, None
    os.environ.pop(ENV_SOCKET, None)
    os.environ.pop(ENV_PYTHON, None)
    if server is None:
        return
    proc, folder = server
    proc.terminate()
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    proc.stdout.close()
    shutil.rmtree(folder, ignore_errors=True)


def _script_jobs_to_run(workflow) -> int:
    """How many jobs of ``script:`` rules this run has left (as many as :data:`MIN_JOBS` when unknown)."""
    try:
        return sum(1 for job in workflow.dag.needrun_jobs() if getattr(job.rule, "script", None))
    except Exception:  # noqa: BLE001 - another Snakemake's DAG: count nothing, keep the server
        return MIN_JOBS


def _local_python_jobs(workflow) -> bool:
    """Whether this run's jobs run here, in this interpreter (local executor, no conda or containers)."""
    plugin = getattr(workflow, "executor_plugin", None)
    if plugin is None or getattr(plugin.common_settings, "non_local_exec", True):
        return False
    if getattr(workflow, "remote_exec", False):
        return False
    deployment = getattr(workflow, "deployment_settings", None)
    methods = {str(m).lower() for m in getattr(deployment, "deployment_method", ())} if deployment else set()
    return not any("conda" in m or "apptainer" in m or "singularity" in m for m in methods)


if __name__ == "__main__":
    serve(sys.argv[1], tuple(sys.argv[2:]) or PRELOAD)
