"""Reliability drills: kill and resume, reproducibility, corrupted downloads, bad inputs.

* A run of ``chadha_fig2 chadha_fig6`` (``mode: sample``, enough trials that each Monte
  Carlo job runs a few seconds) is killed with SIGKILL — the whole Snakemake process group
  — while an ``audit_synthetic_pair`` job runs, then unlocked (``--unlock``, the lock of
  the killed run stays behind) and restarted with ``--rerun-incomplete``:
  its CSV results are byte-identical to those of an uninterrupted run.
* The same config and seed give byte-identical CSV/JSON results in two directories.
* A corrupted or truncated download is rejected (checksum or length) and leaves no file
  behind (ppaudit.data.download_file against a 127.0.0.1 http.server).
* Malformed configs (beyond tests/workflow/test_config_validation.py) stop Snakemake with a message
  naming the problem and write no results/ or logs/; malformed library inputs raise a
  ValueError naming the problem.
"""

from __future__ import annotations

import hashlib
import http.server
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from ppaudit import data
from ppaudit.data import ChecksumError, DownloadError, RemoteFile

from local_http import open_local as _open  # the 127.0.0.1 fixture server (tests/local_http.py)
from workflow_runner import run_snakemake_many

REPO = Path(__file__).resolve().parents[2]
SNAKEFILE = REPO / "Snakefile"
TARGETS = ("chadha_fig2", "chadha_fig6")

# Sample mode: every noisy argmax is simulated; 8e6 trials per histogram take a few
# seconds per audit job on one core, long enough to kill a job in the middle.
SAMPLE_CONFIG = {
    "seed": 11,
    "chadha2024": {
        "synthetic": {
            "trials": 8_000_000,
            "orders": [1.5, 2, 4, 8, 16],
            "confidence": 0.95,
            "mode": "sample",
            "num_bootstrap": 50,
            "selection": "split",
        }
    },
}


def _snakemake_args(workdir: Path, config: Path, *extra: str) -> list[str]:
    """The arguments after ``--snakefile Snakefile`` (:func:`_snakemake_cmd`)."""
    return [*TARGETS, "--cores", "1", "--directory", str(workdir), "--configfile", str(config), *extra]


def _snakemake_cmd(workdir: Path, config: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "snakemake", "--snakefile", str(SNAKEFILE), *_snakemake_args(workdir, config, *extra)]


def _run(workdir: Path, config: Path, *extra: str, timeout: float = 300, env: dict | None = None) -> subprocess.CompletedProcess:
    proc = subprocess.run(_snakemake_cmd(workdir, config, *extra), capture_output=True, text=True, timeout=timeout, env=env)
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
    return proc


def _results(workdir: Path) -> dict[str, bytes]:
    """{relative path: bytes} of every CSV and JSON result (figures' PDF/PNG carry dates)."""
    root = workdir / "results"
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.suffix in (".csv", ".json")
    }


@pytest.fixture(scope="module")
def sample_config(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("config") / "sample.yaml"
    path.write_text(yaml.safe_dump(SAMPLE_CONFIG))
    return path


@pytest.fixture(scope="module")
def reference_run(tmp_path_factory, sample_config) -> dict[str, bytes]:
    """CSV/JSON results of one uninterrupted run, each job in its own fresh process (without the job
    server, ppaudit.workflow.job_server): the runs below fork their jobs from the server, so the
    comparisons also check that the server changes no byte."""
    workdir = tmp_path_factory.mktemp("reference")
    proc = _run(workdir, sample_config, env={**os.environ, "PPAUDIT_FORK_JOBS": "0"})
    assert "job server" not in proc.stderr
    results = _results(workdir)
    assert {"chadha2024/synthetic/fig2.csv", "chadha2024/synthetic/fig6.csv", "figures/chadha2024/fig6.csv"} <= set(results)
    return results


@pytest.mark.workflow
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_same_config_and_seed_give_identical_bytes(tmp_path, sample_config, reference_run):
    proc = _run(tmp_path, sample_config)
    assert "jobs fork from the ppaudit job server" in proc.stderr
    again = _results(tmp_path)
    assert again.keys() == reference_run.keys()
    for name in again:
        assert again[name] == reference_run[name], f"{name} differs between two runs of the same config"


@pytest.mark.workflow
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_sigkill_during_monte_carlo_then_rerun_incomplete_is_identical(tmp_path, sample_config, reference_run):
    log = tmp_path / "logs" / "audit_synthetic_pair"
    proc = subprocess.Popen(
        _snakemake_cmd(tmp_path, sample_config), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True,  # its own process group: the kill reaches the job's script too
    )
    try:
        # Wait until an audit job has started (its log exists and says so), then let it run.
        deadline = time.monotonic() + 120
        while not (log.is_dir() and any("auditing" in p.read_text(errors="replace") for p in log.glob("*.log"))):
            assert proc.poll() is None, "snakemake finished before it could be killed"
            assert time.monotonic() < deadline, "no audit job started within 120 s"
            time.sleep(0.05)
        time.sleep(0.5)
        assert proc.poll() is None, "the run finished before the kill: raise the trials"
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    interrupted = _results(tmp_path)
    assert interrupted.keys() < reference_run.keys(), "the kill came after the results were written"
    # Outputs are written atomically (ppaudit.io): nothing half-written is left behind.
    for name, body in interrupted.items():
        assert body == reference_run[name], f"{name} was left half-written by the kill"

    # The documented recovery: the SIGKILLed Snakemake left its lock behind; remove it
    # (--unlock), then rerun the jobs whose outputs were being written.
    subprocess.run(_snakemake_cmd(tmp_path, sample_config, "--unlock"), capture_output=True, timeout=120, check=True)
    _run(tmp_path, sample_config, "--rerun-incomplete")
    resumed = _results(tmp_path)
    assert resumed.keys() == reference_run.keys()
    for name in resumed:
        assert resumed[name] == reference_run[name], f"{name} differs after kill + --rerun-incomplete"


# --- downloads ----------------------------------------------------------------------


def _sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


BODY = bytes(range(256)) * 64  # 16 KiB


def test_bit_flipped_download_is_rejected_and_leaves_nothing(server, tmp_path):
    corrupted = bytearray(BODY)
    corrupted[5000] ^= 0x01
    server.files["/flip.bin"] = bytes(corrupted)
    remote = RemoteFile("flip.bin", server.base + "/flip.bin", sha256=_sha(BODY))
    with pytest.raises(ChecksumError, match="checksum mismatch for flip.bin"):
        data.download_file(remote, tmp_path, backoff=0.0, timeout=5, opener=_open)
    assert list(tmp_path.iterdir()) == []


def test_truncated_download_is_rejected_and_leaves_nothing(server, tmp_path):
    server.files["/short.bin"] = BODY[: len(BODY) // 2]  # a complete response of half the file
    remote = RemoteFile("short.bin", server.base + "/short.bin", sha256=_sha(BODY))
    with pytest.raises(ChecksumError, match="sha256"):
        data.download_file(remote, tmp_path, backoff=0.0, timeout=5, opener=_open)
    assert list(tmp_path.iterdir()) == []


class _DroppingServer:
    """Announces the full Content-Length, sends half of the body, then closes."""

    def __init__(self, body: bytes):
        self.requests = 0
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802
                outer.requests += 1
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body[: len(body) // 2])
                self.wfile.flush()
                self.close_connection = True

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def __enter__(self):
        self.thread.start()
        host, port = self.httpd.server_address[:2]
        self.base = f"http://{host}:{port}"
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


def test_connection_dropped_mid_body_is_retried_then_rejected_and_leaves_nothing(tmp_path):
    with _DroppingServer(BODY) as srv:
        remote = RemoteFile("drop.bin", srv.base + "/drop.bin", sha256=_sha(BODY))
        with pytest.raises(DownloadError) as info:
            data.download_file(remote, tmp_path, retries=2, backoff=0.0, timeout=5, opener=_open)
        assert srv.requests == 2  # a truncated body is a transient failure: retried once
    assert not isinstance(info.value, ChecksumError)
    assert "drop.bin" in str(info.value)
    assert list(tmp_path.iterdir()) == []


def test_corrupted_cached_copy_is_replaced_by_a_verified_download(server, tmp_path):
    server.files["/cache.bin"] = BODY
    (tmp_path / "cache.bin").write_bytes(BODY[:100])  # e.g. left by an older, killed download
    remote = RemoteFile("cache.bin", server.base + "/cache.bin", sha256=_sha(BODY))
    path = data.download_file(remote, tmp_path, backoff=0.0, timeout=5, opener=_open)
    assert path.read_bytes() == BODY and list(tmp_path.iterdir()) == [path]


# --- malformed configs (those not in tests/workflow/test_config_validation.py) ----------------

# (id, config text, substrings of the error message, schema path that must exist or None)
BAD_CONFIGS = [
    ("empty-config-file", "", ["Config file must be given as JSON or YAML with keys at top level"], None),
    ("config-is-a-list", "- 1\n- 2\n", ["keys at top level"], None),
    ("seed-not-a-number", "seed: abc\n", ["'seed'", "'abc'", "integer"], None),
    ("seed-not-an-integer", "seed: 1.5\n", ["'seed'", "1.5", "integer"], None),
    ("synthetic-is-null", "chadha2024: {synthetic: null}\n", ["'chadha2024.synthetic'", "object"], None),
    ("unknown-experiment", "chadha2024: {synthetic: {fig9: {sigma: 2}}}\n", ["'chadha2024.synthetic.fig9'", "fig2, fig6"], None),
    ("experiment-not-a-mapping", "chadha2024: {synthetic: {fig2: []}}\n", ["'chadha2024.synthetic.fig2'", "object"], None),
    ("empty-orders", "chadha2024: {synthetic: {orders: []}}\n", ["'chadha2024.synthetic.orders'", "non-empty"], None),
    ("orders-a-string", "chadha2024: {synthetic: {orders: '2,4'}}\n", ["'chadha2024.synthetic.orders'", "array"], None),
    ("order-not-a-number", "chadha2024: {synthetic: {orders: [2, x]}}\n", ["'chadha2024.synthetic.orders[1]'", "'x'"], None),
    ("order-nan", "chadha2024: {synthetic: {orders: [2, .nan]}}\n", ["'chadha2024.synthetic.orders[1]'", "finite"], None),
    ("order-inf", "chadha2024: {synthetic: {orders: [2, .inf]}}\n", ["'chadha2024.synthetic.orders[1]'", "finite"], None),
    ("sigma-a-string", "chadha2024: {synthetic: {fig2: {sigma: two}}}\n", ["'chadha2024.synthetic.fig2.sigma'", "'two'"], None),
    ("sigma-inf", "chadha2024: {synthetic: {fig2: {sigma: .inf}}}\n", ["'chadha2024.synthetic.fig2.sigma'", "finite"], None),
    ("sigma-nan", "chadha2024: {synthetic: {fig6: {sigma: .nan}}}\n", ["'chadha2024.synthetic.fig6.sigma'", "finite"], None),
    ("confidence-zero", "chadha2024: {synthetic: {confidence: 0}}\n", ["'chadha2024.synthetic.confidence'", "0"], None),
    ("confidence-one", "chadha2024: {synthetic: {confidence: 1}}\n", ["'chadha2024.synthetic.confidence'", "1"], None),
    ("negative-trials", "chadha2024: {synthetic: {trials: -5}}\n", ["'chadha2024.synthetic.trials'", "-5"], None),
    ("zero-bootstrap", "chadha2024: {synthetic: {num_bootstrap: 0}}\n", ["'chadha2024.synthetic.num_bootstrap'", "0"], None),
    ("unknown-selection", "chadha2024: {synthetic: {selection: greedy}}\n", ["'chadha2024.synthetic.selection'", "'greedy'"], None),
    ("mode-not-a-string", "chadha2024: {synthetic: {mode: 3}}\n", ["'chadha2024.synthetic.mode'", "string"], None),
    ("empty-histograms", "chadha2024: {synthetic: {fig2: {h_s: [], h_s_prime: []}}}\n", ["'chadha2024.synthetic.fig2.h_s'", "too short"], None),
    ("one-class-histograms", "chadha2024: {synthetic: {fig2: {h_s: [3], h_s_prime: [3]}}}\n", ["'chadha2024.synthetic.fig2.h_s'", "too short"], None),
    ("histogram-a-string", "chadha2024: {synthetic: {fig2: {h_s: '40,8'}}}\n", ["'chadha2024.synthetic.fig2.h_s'", "array"], None),
    ("negative-count-in-h_s_prime", "chadha2024: {synthetic: {fig2: {h_s_prime: [39, 9, 2, 0, -1]}}}\n", ["'chadha2024.synthetic.fig2.h_s_prime[4]'", "-1"], None),
    ("no-methods", "chadha2024: {synthetic: {fig2: {methods: []}}}\n", ["'chadha2024.synthetic.fig2.methods'", "non-empty"], None),
    ("duplicate-method", "chadha2024: {synthetic: {fig2: {methods: [exact, exact]}}}\n", ["'chadha2024.synthetic.fig2.methods'", "non-unique"], None),
    # The PATE/CaPC section (chadha2024.pate_capc), when its schema is there.
    ("unknown-dataset", "chadha2024: {pate_capc: {datasets: [imagenet]}}\n", ["'chadha2024.pate_capc.datasets[0]'", "'imagenet'"], "pate_capc.datasets"),
    ("no-datasets", "chadha2024: {pate_capc: {datasets: []}}\n", ["'chadha2024.pate_capc.datasets'", "non-empty"], "pate_capc.datasets"),
    ("unknown-data-source", "chadha2024: {pate_capc: {source: torrent}}\n", ["'chadha2024.pate_capc.source'", "'torrent'"], "pate_capc.source"),
    ("unknown-adversary", "chadha2024: {pate_capc: {candidates: {evil-adv: 3}}}\n", ["'chadha2024.pate_capc.candidates.evil-adv'"], "pate_capc.candidates"),
    ("empty-query-set", "chadha2024: {pate_capc: {num_queries: 0}}\n", ["'chadha2024.pate_capc.num_queries'", "0"], "pate_capc.num_queries"),
    ("missing-required-key", "chadha2024: {pate_capc: {dataset_settings: {mnist: {num_teachers: 250}}}}\n", ["'chadha2024.pate_capc.dataset_settings.mnist'", "'sigma' is a required property"], "pate_capc.dataset_settings"),
    ("delta-above-one", "chadha2024: {pate_capc: {delta: 1.5}}\n", ["'chadha2024.pate_capc.delta'", "1.5"], "pate_capc.delta"),
    ("pate-order-one", "chadha2024: {pate_capc: {orders: [1]}}\n", ["'chadha2024.pate_capc.orders[0]'", "1"], "pate_capc.orders"),
]


def _schema_has(path: str) -> bool:
    node = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())["properties"]["chadha2024"]
    for part in path.split("."):
        node = node.get("properties", {}).get(part)
        if node is None:
            return False
    return True


@pytest.fixture(scope="module")
def bad_config_runs(tmp_path_factory):
    """A real (not dry) run of the Chadha figure targets per bad config, all from one interpreter that imports
    Snakemake once (``workflow_runner.run_snakemake_many``, two at a time: each run is a forked
    ``snakemake.cli.main`` of the same arguments, the same output and exit code, ~1 CPU-s less)."""
    dirs = {case: tmp_path_factory.mktemp(case) for case, *_ in BAD_CONFIGS}
    for case, text, _, _ in BAD_CONFIGS:
        (dirs[case] / "config.yaml").write_text(text)
    runs = [(_snakemake_args(dirs[case], dirs[case] / "config.yaml"), Path.cwd()) for case, *_ in BAD_CONFIGS]
    assert all("--directory" in args for args, _ in runs)  # each in its own directory, never the checkout's results/
    procs = run_snakemake_many(runs, timeout=600)
    return {case: (proc, dirs[case]) for (case, *_), proc in zip(BAD_CONFIGS, procs)}


def test_at_least_twenty_new_bad_configs():
    from test_config_validation import BAD_CONFIGS as EXISTING

    assert len(BAD_CONFIGS) >= 20
    existing = [yaml.safe_load(text) for _, text, _ in EXISTING]
    for case, text, _, _ in BAD_CONFIGS:
        assert yaml.safe_load(text) not in existing, f"{case} duplicates a case of test_config_validation.py"


@pytest.mark.workflow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("case, expected, needs", [(c[0], c[2], c[3]) for c in BAD_CONFIGS], ids=[c[0] for c in BAD_CONFIGS])
def test_bad_config_stops_with_a_message_and_writes_nothing(bad_config_runs, case, expected, needs):
    if needs and not _schema_has(needs):
        pytest.skip(f"the config schema has no chadha2024.{needs} (yet)")
    proc, workdir = bad_config_runs[case]
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    for part in expected:
        assert part in out, f"{part!r} not in the error message:\n{out}"
    assert "Building DAG of jobs" not in out, out
    for folder in ("results", "logs", "benchmarks"):
        assert not (workdir / folder).exists(), f"{folder}/ written despite the bad config"


# --- malformed library inputs (not covered by the unit tests' bad-input cases) -------


def _bad_library_inputs():
    from ppaudit import class_probabilities, rdp_to_dp, two_cut_lower_bound
    from ppaudit.audit import k_cut_lower_bound
    from ppaudit.montecarlo import noisy_argmax_counts_pair

    orders = [2.0, 4.0]
    return [
        ("empty-query-counts-2cut", lambda: two_cut_lower_bound([], [], orders), "at least 2 output counts"),
        ("empty-query-counts-kcut", lambda: k_cut_lower_bound([], [], orders), "at least 2 output counts"),
        ("negative-counts-kcut", lambda: k_cut_lower_bound([5, -1], [3, 1], orders), "non-negative integer"),
        ("empty-histogram", lambda: class_probabilities([], 1.0), "at least one class"),
        ("negative-histogram-pair", lambda: noisy_argmax_counts_pair([3, -1], [3, 1], 1.0, 100, rng=0), "non-negative"),
        ("sigma-zero-pair", lambda: noisy_argmax_counts_pair([3, 1], [2, 2], 0.0, 100, rng=0), "sigma"),
        ("delta-zero", lambda: rdp_to_dp([1.0], [2.0], delta=0), "delta"),
        ("order-one-conversion", lambda: rdp_to_dp([1.0], [1.0], delta=1e-5), "order must be > 1"),
        ("unknown-dataset-download", lambda: data.load_dataset("imagenet", source="download"), "unknown dataset 'imagenet'"),
    ]


@pytest.mark.parametrize("index", range(9))
def test_bad_library_input_raises_naming_the_problem(index):
    name, call, match = _bad_library_inputs()[index]
    with pytest.raises(ValueError, match=match):
        call()
