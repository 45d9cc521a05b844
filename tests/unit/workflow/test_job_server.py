"""ppaudit.workflow.job_server: a job run through the fork server behaves as ``python FILE`` would.

Each test starts a server (:func:`start` without a workflow) and runs small "job" scripts in their
own processes, as Snakemake does. End to end, every local workflow run of the suite goes through
the server (it is on by default), and the reliability drill compares its bytes with a run of fresh
processes (``PPAUDIT_FORK_JOBS=0``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from ppaudit.workflow import job_server

#: What a job script starts with (``workflow/scripts/_ppaudit_path.py`` does the same).
HEADER = "from ppaudit.workflow.job_server import delegate\ndelegate()\nimport os, sys\n"


@pytest.fixture
def server(monkeypatch):
    monkeypatch.delenv(job_server.ENV_ENABLE, raising=False)
    proc = job_server.start(preload=("json", "threadpoolctl", "numpy"))
    assert proc is not None
    yield proc
    job_server.stop()
    assert proc.poll() is not None
    assert job_server.ENV_SOCKET not in os.environ


def job(tmp_path: Path, body: str, name: str = "job.py") -> Path:
    script = tmp_path / name
    script.write_text(HEADER + textwrap.dedent(body))
    return script


def run(script: Path, *args: str, env: dict | None = None, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, **(env or {})}, **kwargs)


def test_a_job_runs_in_a_child_of_the_server_with_its_own_arguments_folder_environment_and_streams(server, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    script = job(tmp_path, """
        print("out", os.getppid(), sys.argv[1:], os.getcwd(), os.environ["JOB_VAR"], os.environ.get("PPAUDIT_JOB_SERVER"))
        print("err", __name__, __file__, sys.path[0], file=sys.stderr)
        print("in", sys.stdin.read().strip())
    """)
    proc = run(script, "a", "b c", env={"JOB_VAR": "42"}, cwd=work, input="from the job's stdin\n")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.split("\n")
    word, ppid, *rest = out[0].split(" ", 2)
    assert word == "out" and int(ppid) == server.pid  # forked by the server, not run by this process
    assert rest[0] == f"['a', 'b c'] {work} 42 None"
    assert out[1] == "in from the job's stdin"
    assert proc.stderr.strip() == f"err __main__ {script} {tmp_path}"


def test_exit_status_as_python_would_give_it(server, tmp_path):
    assert run(job(tmp_path, "sys.exit(3)")).returncode == 3
    proc = run(job(tmp_path, "sys.exit('a message')"))
    assert (proc.returncode, proc.stderr.strip()) == (1, "a message")
    proc = run(job(tmp_path, "def f():\n    raise ValueError('bad value 7')\nf()\n"))
    assert proc.returncode == 1
    assert proc.stderr.startswith("Traceback (most recent call last):") and "ValueError: bad value 7" in proc.stderr
    assert "job_server" not in proc.stderr  # the traceback is the script's, as under python FILE
    assert run(job(tmp_path, "os.kill(os.getpid(), 15)")).returncode == -signal.SIGTERM
    assert run(job(tmp_path, "print('done')")).returncode == 0


def test_atexit_threads_and_worker_pools_end_as_at_interpreter_exit(server, tmp_path):
    marker = tmp_path / "atexit.txt"
    script = job(tmp_path, f"""
        import atexit, threading, time
        from concurrent.futures import ProcessPoolExecutor
        atexit.register(lambda: open({str(marker)!r}, "w").write("ran"))
        threading.Thread(target=time.sleep, args=(0.5,)).start()  # non-daemon: joined before atexit
        pool = ProcessPoolExecutor(1)  # left open, as scripts leave joblib's workers: shut down at exit
        print(pool.submit(pow, 2, 10).result())
    """)
    start = time.monotonic()
    proc = run(script)
    assert proc.returncode == 0 and proc.stdout.strip() == "1024", proc.stderr
    assert marker.read_text() == "ran"
    assert time.monotonic() - start < 30


def test_thread_counts_are_those_of_the_jobs_environment(server, tmp_path):
    script = job(tmp_path, """
        import numpy
        from threadpoolctl import threadpool_info
        print(sorted({(i["internal_api"], i["num_threads"]) for i in threadpool_info()}))
    """)
    for n in ("1", "2"):
        env = {v: n for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
        fresh = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60,
                               env={k: v for k, v in {**os.environ, **env}.items() if k != job_server.ENV_SOCKET})
        served = run(script, env=env)
        assert served.returncode == 0 and fresh.returncode == 0, served.stderr + fresh.stderr
        assert served.stdout == fresh.stdout
        assert f"'openblas', {n})" in served.stdout


def test_a_killed_job_takes_its_child_with_it_and_sigterm_is_passed_on(server, tmp_path):
    pid_file = tmp_path / "pid"
    script = job(tmp_path, f"""
        import signal, time
        open({str(pid_file)!r}, "w").write(str(os.getpid()))
        time.sleep(60)
    """)
    for sig in (signal.SIGKILL, signal.SIGTERM):
        pid_file.unlink(missing_ok=True)
        proc = subprocess.Popen([sys.executable, str(script)])
        for _ in range(300):
            if pid_file.exists() and pid_file.read_text():
                break
            time.sleep(0.05)
        child = int(pid_file.read_text())
        assert child != proc.pid
        proc.send_signal(sig)
        assert proc.wait(30) == -sig
        for _ in range(200):
            if not Path(f"/proc/{child}").exists():
                break
            time.sleep(0.05)
        assert not Path(f"/proc/{child}").exists(), f"child {child} survived {sig!r}"


def test_stop_ends_running_jobs(server, tmp_path):
    script = job(tmp_path, "import time\ntime.sleep(60)\n")
    proc = subprocess.Popen([sys.executable, str(script)])
    time.sleep(1)
    job_server.stop()
    assert proc.wait(30) == -signal.SIGTERM
    assert server.poll() is not None


def test_no_server_another_interpreter_or_an_unreachable_socket_run_the_job_here(tmp_path, monkeypatch):
    script = job(tmp_path, "print(os.getppid())")
    monkeypatch.delenv(job_server.ENV_SOCKET, raising=False)
    proc = run(script)
    assert (proc.returncode, int(proc.stdout)) == (0, os.getpid())
    gone = {job_server.ENV_SOCKET: str(tmp_path / "no-socket"), job_server.ENV_PYTHON: os.path.realpath(sys.executable)}
    proc = run(script, env=gone)
    assert (proc.returncode, int(proc.stdout)) == (0, os.getpid())
    assert "unreachable" in proc.stderr and "running the job in its own process" in proc.stderr
    proc = run(script, env={**gone, job_server.ENV_PYTHON: "/another/python"})
    assert (proc.returncode, int(proc.stdout), proc.stderr) == (0, os.getpid(), "")


def test_start_does_nothing_when_turned_off(monkeypatch):
    monkeypatch.setenv(job_server.ENV_ENABLE, "0")
    assert job_server.start() is None
    assert job_server.ENV_SOCKET not in os.environ
    job_server.stop()  # a no-op without a server


def test_only_local_runs_whose_jobs_use_this_interpreter_get_a_server():
    from types import SimpleNamespace

    from snakemake.settings.types import DeploymentMethod

    def workflow(non_local=False, remote=False, methods=()):
        return SimpleNamespace(executor_plugin=SimpleNamespace(common_settings=SimpleNamespace(non_local_exec=non_local)),
                               remote_exec=remote, deployment_settings=SimpleNamespace(deployment_method=set(methods)))

    assert job_server._local_python_jobs(workflow())
    assert not job_server._local_python_jobs(workflow(non_local=True))  # SLURM and other cluster executors
    assert not job_server._local_python_jobs(workflow(remote=True))  # a cluster job's own Snakemake
    assert not job_server._local_python_jobs(workflow(methods={DeploymentMethod.CONDA}))
    assert not job_server._local_python_jobs(workflow(methods={DeploymentMethod.APPTAINER}))
    assert job_server._local_python_jobs(workflow(methods={DeploymentMethod.ENV_MODULES}))
    assert not job_server._local_python_jobs(SimpleNamespace(executor_plugin=None))


def test_the_real_preload_leaves_the_server_fit_to_fork_and_a_cuda_start_would_be_caught():
    """The imports of a workflow run's server (PRELOAD and every module the scripts import at their top)
    start no thread and do not initialise CUDA; if they did, :func:`fork_hazard` says so."""
    code = textwrap.dedent(f"""
        import os, sys
        from ppaudit.workflow import job_server
        for name in job_server.THREAD_VARIABLES:
            os.environ[name] = "1"  # as start() gives the server
        job_server._preload((*job_server.PRELOAD, *job_server.script_modules({str(job_server_scripts())!r})))
        print("torch" in sys.modules, "ppaudit.experiments.chadha2024.private_prediction" in sys.modules)
        print(job_server.fork_hazard())
        import torch
        torch.cuda.is_initialized = lambda: True
        print(job_server.fork_hazard())
    """)
    env = {**os.environ, **{v: "1" for v in job_server.THREAD_VARIABLES}}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["True True", "None", "CUDA was initialised in the server"]


def job_server_scripts() -> Path:
    return Path(__file__).resolve().parents[3] / "workflow" / "scripts"


def test_a_server_unfit_to_fork_lets_every_job_run_in_its_own_process(tmp_path, monkeypatch):
    (tmp_path / "starts_a_thread.py").write_text("import threading, time\nthreading.Thread(target=time.sleep, args=(600,), daemon=True).start()\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.delenv(job_server.ENV_ENABLE, raising=False)
    job_server.start(preload=("starts_a_thread",))
    try:
        proc = run(job(tmp_path, "print(os.getppid())"))
    finally:
        job_server.stop()
    assert (proc.returncode, int(proc.stdout)) == (0, os.getpid())
    assert "2 Python threads run in the server; running the job in its own process" in proc.stderr


def test_script_modules_are_the_scripts_top_level_imports(tmp_path):
    (tmp_path / "a.py").write_text("import _ppaudit_path\nimport json\nif True:\n    from os import path\n"
                                   "def f():\n    import csv\ntry:\n    import xml.dom\nexcept ImportError:\n    pass\n")
    (tmp_path / "b.py").write_text("from . import sibling\nfrom collections import OrderedDict as O\n")
    assert job_server.script_modules(tmp_path) == ["collections", "collections.OrderedDict", "json", "os", "os.path", "xml.dom"]


def test_a_run_with_few_script_jobs_left_gets_no_server(monkeypatch):
    from types import SimpleNamespace

    monkeypatch.delenv(job_server.ENV_ENABLE, raising=False)
    local = SimpleNamespace(common_settings=SimpleNamespace(non_local_exec=False))
    script, target = SimpleNamespace(rule=SimpleNamespace(script="../scripts/x.py")), SimpleNamespace(rule=SimpleNamespace(script=None))

    def workflow(jobs):
        return SimpleNamespace(executor_plugin=local, remote_exec=False, deployment_settings=SimpleNamespace(deployment_method=set()),
                               dag=SimpleNamespace(needrun_jobs=lambda: iter(jobs)), basedir=str(job_server_scripts().parents[1]))

    few = workflow([script] * (job_server.MIN_JOBS - 1) + [target] * 5)  # target rules run no process
    assert job_server._script_jobs_to_run(few) == job_server.MIN_JOBS - 1
    assert job_server.start(few) is None and job_server.ENV_SOCKET not in os.environ
    enough = workflow([script] * job_server.MIN_JOBS)
    proc = job_server.start(enough, preload=("json",))
    try:
        assert proc is not None and os.environ[job_server.ENV_SOCKET]
    finally:
        job_server.stop()
