"""bench/bench_imports.py (issue 30): the import lines it times and how it reads ``-X importtime``."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
_spec = importlib.util.spec_from_file_location("bench_imports", REPO / "bench" / "bench_imports.py")
bi = importlib.util.module_from_spec(_spec)
sys.modules["bench_imports"] = bi
_spec.loader.exec_module(bi)


def test_script_imports_takes_module_level_imports_only(tmp_path):
    script = tmp_path / "rule.py"
    script.write_text(
        '"""doc"""\nimport _ppaudit_path\nlog = 1\nimport numpy as np  # noqa: E402\n'
        "try:\n    import pandas\nexcept ImportError:\n    from json import dumps\n"
        "def f():\n    import torch\n"
        "from ppaudit.io import (\n    write_csv,\n)\n"
    )
    assert bi.script_imports(script).splitlines() == [
        "import _ppaudit_path", "import numpy as np", "import pandas", "from json import dumps",
        "from ppaudit.io import write_csv",
    ]


def test_parse_importtime_totals_and_entry_points():
    # importtime prints children first, one level (2 spaces) deeper than their parent.
    stderr = "\n".join([
        "import time: self [us] | cumulative | imported package",
        "import time:       100 |        100 | site",
        bi.SENTINEL,
        "import time:       500 |        500 |     scipy.special",
        "import time:      1000 |       1500 |   scipy.stats",
        "import time:        50 |         50 |   numpy",
        "import time:       200 |       1750 | ppaudit.intervals",
        "import time:       300 |        300 | pandas",
    ])
    total, entries = bi.parse_importtime(stderr)
    assert abs(total - 2050e-6) < 1e-12  # top level after the sentinel: 1750 + 300 us
    assert [(m, by) for m, _, by in entries] == [("scipy.stats", "ppaudit.intervals"), ("pandas", "<script>"),
                                                 ("numpy", "ppaudit.intervals")]


def test_run_importtime_measures_a_real_import():
    env = {"PYTHONPATH": str(REPO / "src")}
    total, entries = bi.run_importtime("import ppaudit.rng", sys.executable, env)
    assert total > 0 and all(not m.startswith("ppaudit") for m, _, _ in entries)
    assert subprocess.run([sys.executable, str(REPO / "bench" / "bench_imports.py"), "-h"], capture_output=True).returncode == 0
