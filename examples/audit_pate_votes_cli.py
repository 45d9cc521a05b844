"""Audit a PATE deployment's votes file with the `ppaudit audit-votes` command.

Writes a votes file in the format the command reads — an array `votes` of shape
(n_teachers, n_queries) with each teacher's label per query, plus the scalar `num_classes` —
for 250 synthetic teachers answering 100 queries, then runs

    ppaudit audit-votes VOTES.npz --sigma 40 --threshold 200 --sigma1 150 --json

(Confident-GNMax with the MNIST settings of Papernot et al. 2018) and prints the accounted ε,
the most exposed query and the audit's verdict.

Run: python examples/audit_pate_votes_cli.py [VOTES.npz]   (exit code of the command)
"""

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np


def write_votes(path: Path, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    n_teachers, n_queries, n_classes = 250, 100, 10
    truth = rng.integers(0, n_classes, n_queries)
    agreement = rng.uniform(0.5, 0.99, n_queries)  # how often a teacher votes the true label
    noise = rng.integers(0, n_classes, (n_teachers, n_queries))
    votes = np.where(rng.random((n_teachers, n_queries)) < agreement, truth, noise)
    np.savez(path, votes=votes.astype(np.int64), num_classes=n_classes)


def ppaudit_command() -> str:
    exe = Path(sys.executable).with_name("ppaudit")
    return str(exe) if exe.is_file() else (shutil.which("ppaudit") or "ppaudit")


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tmp) / "votes.npz"
        if not path.exists():
            write_votes(path)
        cmd = [ppaudit_command(), "audit-votes", str(path), "--sigma", "40", "--threshold", "200", "--sigma1", "150",
               "--trials", "100000", "--json"]
        print("$", " ".join(cmd[:1] + ["audit-votes", path.name] + cmd[3:]))
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode == 2:
            print(proc.stderr, file=sys.stderr)
            return 2
        out = json.loads(proc.stdout)
        print(f"{out['num_queries']} queries, {out['mechanism']}: accounted epsilon {out['epsilon_data_dependent']:.3f} "
              f"at delta={out['delta']:g} (Balle et al. 2020; classic conversion of Papernot et al. 2018: "
              f"{out['epsilon_data_dependent_classic']:.3f}; data-independent GNMax: {out['epsilon_data_independent']:.3f})")
        print(f"most exposed query #{out['most_exposed_query']}: votes {out['most_exposed_histogram']}, "
              f"exact RDP {out['most_exposed_exact_rdp_at_order']:.3g} at order {out['order_data_dependent']:.3g}")
        res = out["resolution"]
        print(f"audit of that query: verdict {out['verdict']} (exit code {proc.returncode}); "
              + ("effect resolved" if res["resolved"] else f"effect not resolved, --trials {res['trials_suggested']} suggested"))
        return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
