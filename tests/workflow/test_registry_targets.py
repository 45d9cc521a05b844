"""The workflow's targets come from workflow/figures.yaml.

* Snakemake lists every registry row as a target rule (`snakemake --list-target-rules`,
  parse only), and `all` as the default target.
* No rule file hand-writes a target rule or a `report(` entry: both are generated
  (Snakefile, `figure_outputs()` in common.smk), so target → producing rule → script is
  two hops and a figure's caption/category is written once.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from ppaudit.workflow import load_registry

REPO = Path(__file__).resolve().parents[2]
RULES = REPO / "workflow" / "rules"


def _hand_written_rules() -> dict[str, str]:
    """{rule name: .smk file} of every `rule NAME:` in workflow/rules/ and the Snakefile."""
    found = {}
    for smk in [REPO / "Snakefile", *sorted(RULES.glob("*.smk"))]:
        for name in re.findall(r"^rule (\w+):", smk.read_text(), flags=re.MULTILINE):
            found[name] = smk.name
    return found


def test_no_hand_written_target_rules_or_report_entries():
    reg = load_registry(REPO / "workflow" / "figures.yaml", root=REPO)
    written = _hand_written_rules()
    aliases = sorted(t.id for t in reg.generated_targets() if t.id in written)
    assert not aliases, f"target rules written by hand (they are generated from workflow/figures.yaml): {aliases}"
    for rule in reg.producing_rules():
        assert rule in written, f"producing rule {rule} of workflow/figures.yaml is not defined in workflow/rules/"
    for smk in sorted(RULES.glob("*.smk")):
        if smk.name == "common.smk":
            continue
        assert "report(" not in smk.read_text(), f"{smk.name} wraps outputs in report(): use **figure_outputs(rule)"


@pytest.mark.timeout(240)
def test_every_registry_row_is_a_snakemake_target(tmp_path):
    reg = load_registry(REPO / "workflow" / "figures.yaml", root=REPO)
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "--directory", str(tmp_path),
         "--configfile", str(REPO / "config" / "config.yaml"), "--list-target-rules"],
        capture_output=True, text=True, timeout=240,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    listed = set(proc.stdout.split())
    missing = sorted(set(reg.ids()) - listed)
    assert not missing, f"registry targets that are not Snakemake target rules: {missing}"
    assert "all" in listed
