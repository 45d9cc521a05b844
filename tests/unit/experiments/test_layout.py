"""The experiments split by paper (issue 37 §2): the module paths documented before the split
still import, as the moved modules themselves, and nothing is imported before it is asked for."""

from __future__ import annotations

import subprocess
import sys

import pytest

import ppaudit.experiments as experiments


@pytest.mark.parametrize("old,new", sorted(experiments.MOVED_MODULES.items()))
def test_old_documented_path_is_the_moved_module(old, new):
    code = (
        "import importlib, sys\n"
        "import ppaudit.experiments\n"
        "before = sorted(m for m in sys.modules if m.startswith('ppaudit.experiments.'))\n"
        f"old = importlib.import_module('ppaudit.experiments.{old}')\n"
        f"new = importlib.import_module('ppaudit.experiments.{new}')\n"
        f"exec('from ppaudit.experiments.{old} import ' + new.__all__[0])\n"
        f"print(before, old is new, new.__name__, new.__spec__.name, ppaudit.experiments.{old} is new)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["[]", "True", f"ppaudit.experiments.{new}", f"ppaudit.experiments.{new}", "True"]


def test_wang2022_package_exports_what_the_former_module_did():
    from ppaudit.experiments import wang2022
    from ppaudit.experiments.wang2022 import reconstruction

    former = ["vote_histograms", "attack_selected_histograms", "sigma_findings", "budget_findings",
              "query_cost_findings", "reconstruct_consensus"]
    assert list(reconstruction.__all__) == former
    for name in former:
        assert getattr(wang2022, name) is getattr(reconstruction, name)


def test_other_old_paths_are_gone():
    with pytest.raises(ModuleNotFoundError):
        __import__("ppaudit.experiments.private_knn")
    with pytest.raises(ModuleNotFoundError):
        __import__("ppaudit.experiments.no_such_module")
