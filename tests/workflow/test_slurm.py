"""A real SLURM run: a one-node cluster on 127.0.0.1, started by the test, runs chadha_fig6.

The fixture ``slurm_cluster`` starts munged, slurmctld and slurmd in the foreground
(their own process ids, stopped by those ids in the finalizer, also when the test fails)
with a minimal ``slurm.conf`` written into a temporary directory: one node (this host's
``hostname -s``, its cores and memory), no accounting, ``proctrack/linuxproc``,
``task/none``, state/spool/log/socket in the temporary directory, ``SlurmUser=root``,
free ports. Then Snakemake runs ``chadha_fig6`` on tests/configs/tiny.yaml through
workflow/profiles/slurm (status from ``squeue``: with accounting off the plugin's
``sacct`` polling never sees the jobs finish) under a hard timeout (SIGINT to the
Snakemake process group, then SIGKILL), and the test checks the figure files and that the
jobs really went through SLURM (job ids in ``.snakemake/slurm_logs`` and in the log).

Skipped, with the reason, when the SLURM/munge binaries are missing (``make test``
installs the Debian packages ``slurm-wlm`` and ``munge``), when not root (slurmd and
SlurmUser=root need it), or when the daemons do not come up.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from workflow_runner import assert_figure_files

REPO = Path(__file__).resolve().parents[2]
TINY = REPO / "tests" / "configs" / "tiny.yaml"
PROFILE = REPO / "workflow" / "profiles" / "slurm"
BINARIES = ("munged", "slurmctld", "slurmd", "sbatch", "srun", "squeue", "scontrol", "scancel", "sinfo")
SBIN = ("/usr/sbin", "/usr/bin", "/sbin", "/bin")
PARTITION = "ppaudit"
# Hard limit of the Snakemake run (seconds); a stuck status poll must not hang CI.
RUN_TIMEOUT = 170

pytestmark = [pytest.mark.slurm, pytest.mark.slow]


def _which(name: str) -> str | None:
    path = os.pathsep.join([os.environ.get("PATH", ""), *SBIN])
    return shutil.which(name, path=path)


def _missing_binaries() -> list[str]:
    return [b for b in BINARIES if _which(b) is None]


def _free_ports(n: int) -> list[int]:
    socks, ports = [], []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    return ports


def _memory_mb() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) // 1024
    return 2048


def _slurm_conf(tmp: Path, host: str, ctld_port: int, slurmd_port: int, socket_path: Path) -> str:
    cpus = os.cpu_count() or 1
    # Leave some memory to the OS, as slurmd would report slightly less than MemTotal.
    memory = max(1024, int(_memory_mb() * 0.9))
    return f"""\
# Minimal one-node cluster for tests/workflow/test_slurm.py (written by the test).
ClusterName=ppaudit-test
SlurmctldHost={host}(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={socket_path}
StateSaveLocation={tmp}/state
SlurmdSpoolDir={tmp}/spool
SlurmctldPidFile={tmp}/slurmctld.pid
SlurmdPidFile={tmp}/slurmd.pid
SlurmctldLogFile={tmp}/log/slurmctld.log
SlurmdLogFile={tmp}/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
# Finished jobs stay visible to squeue for 5 minutes (the plugin falls back to sacct
# when MinJobAge < 3 x its initial status interval).
MinJobAge=300
SlurmctldTimeout=30
SlurmdTimeout=30
NodeName={host} NodeAddr=127.0.0.1 NodeHostname={host} CPUs={cpus} RealMemory={memory} State=UNKNOWN
PartitionName={PARTITION} Nodes={host} Default=YES MaxTime=INFINITE State=UP
"""


def _stop(proc: subprocess.Popen, name: str) -> None:
    """Stop one daemon we started, by its process id: SIGTERM, then SIGKILL."""
    if proc.poll() is not None:
        return
    os.kill(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


def _log_tail(path: Path, n: int = 30) -> str:
    if not path.exists():
        return f"({path.name} missing)"
    return "\n".join(path.read_text(errors="replace").splitlines()[-n:])


@pytest.fixture(scope="module")
def slurm_cluster(tmp_path_factory, request):
    """Start munged, slurmctld and slurmd; yield the environment for SLURM clients."""
    missing = _missing_binaries()
    if missing:
        pytest.skip(f"SLURM not installed (missing {', '.join(missing)}): apt-get install slurm-wlm munge (make test does)")
    if os.geteuid() != 0:
        pytest.skip("the local SLURM cluster needs root (SlurmUser=root, slurmd)")

    tmp = tmp_path_factory.mktemp("slurm")
    os.chmod(tmp, 0o700)
    for sub in ("state", "spool", "log", "munge"):
        (tmp / sub).mkdir(mode=0o700)
    host = socket.gethostname().split(".")[0]
    ctld_port, slurmd_port = _free_ports(2)
    munge_socket = tmp / "munge" / "munge.socket"
    key = tmp / "munge" / "munge.key"
    key.write_bytes(os.urandom(1024))
    os.chmod(key, 0o400)
    conf = tmp / "slurm.conf"
    conf.write_text(_slurm_conf(tmp, host, ctld_port, slurmd_port, munge_socket))

    # snakemake-executor-plugin-slurm-jobstep runs every job as `srun ... snakemake ...`
    # inside the allocation but drops every SLURM_* variable but the job's identity
    # (SLURM_CONF too) from srun's environment: on a real cluster srun then reads
    # /etc/slurm/slurm.conf. Here a wrapper `srun` first on PATH sets SLURM_CONF again.
    wrappers = tmp / "bin"
    wrappers.mkdir()
    srun = wrappers / "srun"
    srun.write_text(f'#!/bin/sh\nSLURM_CONF={conf} exec {_which("srun")} "$@"\n')
    srun.chmod(0o755)

    env = dict(os.environ)
    env["SLURM_CONF"] = str(conf)
    env["PATH"] = os.pathsep.join([str(wrappers), str(Path(sys.executable).parent), env.get("PATH", ""), *SBIN])
    for var in [k for k in env if k.startswith(("SLURM_", "SBATCH_", "SQUEUE_")) and k != "SLURM_CONF"]:
        del env[var]

    started: list[tuple[str, subprocess.Popen]] = []

    def stop_all():
        # Cancel whatever is still queued or running on this private cluster (a timed-out
        # run), then stop the daemons we started, newest first, by their process ids.
        if any(name == "slurmctld" and proc.poll() is None for name, proc in started):
            subprocess.run([_which("scancel"), "--full", "--partition", PARTITION], env=env, capture_output=True, timeout=30)
            time.sleep(1)
        for name, proc in reversed(started):
            _stop(proc, name)

    request.addfinalizer(stop_all)

    def start(name: str, *args: str) -> subprocess.Popen:
        out = open(tmp / "log" / f"{name}.stdout", "wb")
        proc = subprocess.Popen([_which(name), *args], env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        out.close()
        started.append((name, proc))
        return proc

    start(
        "munged", "--foreground", "--force", f"--socket={munge_socket}", f"--key-file={key}",
        f"--pid-file={tmp}/munge/munged.pid", f"--log-file={tmp}/log/munged.log", f"--seed-file={tmp}/munge/munged.seed",
    )
    deadline = time.monotonic() + 15
    while not munge_socket.exists():
        if started[-1][1].poll() is not None or time.monotonic() > deadline:
            pytest.skip(f"munged did not start:\n{_log_tail(tmp / 'log' / 'munged.log')}\n{_log_tail(tmp / 'log' / 'munged.stdout')}")
        time.sleep(0.1)

    start("slurmctld", "-D", "-c", "-i", "-f", str(conf))
    start("slurmd", "-D", "-f", str(conf), "-N", host)

    # Wait until the node is idle in the partition.
    deadline = time.monotonic() + 45
    state = ""
    while time.monotonic() < deadline:
        for name, proc in started:
            if proc.poll() is not None:
                pytest.skip(f"{name} exited with {proc.returncode}:\n{_log_tail(tmp / 'log' / f'{name}.log')}\n{_log_tail(tmp / 'log' / f'{name}.stdout')}")
        res = subprocess.run(
            [_which("sinfo"), "-h", "-p", PARTITION, "-o", "%t"], env=env, capture_output=True, text=True, timeout=20
        )
        state = (res.stdout + res.stderr).strip()
        if res.returncode == 0 and state.startswith("idle"):
            break
        time.sleep(0.5)
    else:
        pytest.skip(
            f"the local SLURM node did not become idle (sinfo: {state!r}):\n"
            f"{_log_tail(tmp / 'log' / 'slurmctld.log')}\n{_log_tail(tmp / 'log' / 'slurmd.log')}"
        )
    yield {"env": env, "dir": tmp, "host": host}


def _run_with_hard_timeout(cmd: list[str], env: dict, timeout: float) -> tuple[int, str, float]:
    """Run ``cmd`` in its own process group; on timeout SIGINT the group, then SIGKILL it."""
    start = time.monotonic()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            out, _ = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate(timeout=10)
        pytest.fail(f"snakemake on SLURM did not finish within {timeout} s (interrupted):\n{out[-6000:]}")
    return proc.returncode, out, time.monotonic() - start


@pytest.mark.timeout(240)
def test_chadha_fig6_through_the_slurm_profile(slurm_cluster, tmp_path):
    env = slurm_cluster["env"]
    workdir = tmp_path / "work"
    workdir.mkdir()
    cmd = [
        sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"),
        "--profile", str(PROFILE), "chadha_fig6",
        "--directory", str(workdir), "--configfile", str(TINY),
        "--slurm-status-command", "squeue",
        "--slurm-no-account",
        "--slurm-keep-successful-logs",
        "--slurm-init-seconds-before-status-checks", "2",
        "--default-resources", f"slurm_partition={PARTITION}", "mem_mb=1000", "runtime=10",
        "--set-resources", "audit_synthetic_pair:mem_mb=1000", "plot_chadha_synthetic:mem_mb=1000",
        "--latency-wait", "5", "--retries", "0",
    ]
    code, out, seconds = _run_with_hard_timeout(cmd, env, RUN_TIMEOUT)
    cluster_logs = "\n".join(
        _log_tail(slurm_cluster["dir"] / "log" / f"{n}.log", 15) for n in ("slurmctld", "slurmd")
    )
    assert code == 0, f"snakemake exited with {code} after {seconds:.0f} s:\n{out[-6000:]}\n{cluster_logs}"

    # The figure and its numbers.
    base = workdir / "results" / "figures" / "chadha2024" / "fig6"
    assert_figure_files(base)
    assert base.with_suffix(".csv").read_text().startswith("order,")
    assert (workdir / "results" / "chadha2024" / "synthetic" / "fig6.csv").stat().st_size > 0

    # The jobs went through SLURM: the plugin names the SLURM job ids it submitted, and
    # writes one log per job into .snakemake/slurm_logs/rule_<rule>/<wildcards>/<jobid>.log.
    job_ids = set(re.findall(r"submitted with SLURM jobid (\d+)", out))
    slurm_logs = sorted((workdir / ".snakemake" / "slurm_logs").rglob("*.log"))
    rules_in_logs = {p.relative_to(workdir / ".snakemake" / "slurm_logs").parts[0] for p in slurm_logs}
    assert {"rule_audit_synthetic_pair", "rule_plot_chadha_synthetic"} <= rules_in_logs, (slurm_logs, out[-3000:])
    log_ids = {p.stem for p in slurm_logs}
    assert all(i.isdigit() for i in log_ids), log_ids
    assert len(job_ids) == 2 and job_ids == log_ids, (job_ids, log_ids, out[-3000:])
    # SLURM itself knows the jobs (squeue --states=all lists finished jobs for MinJobAge).
    res = subprocess.run(["squeue", "--states=all", "-h", "-o", "%i|%T"], env=env, capture_output=True, text=True, timeout=20)
    known = dict(line.split("|") for line in res.stdout.split())
    for job in log_ids:
        assert known.get(job) == "COMPLETED", (job, res.stdout)
    print(f"chadha_fig6 through SLURM: {seconds:.1f} s, jobs {sorted(log_ids)}")
