"""Start-up cost of workflow script jobs (issue 16): ``import ppaudit`` stays light.

Every workflow script job is a fresh Python process that imports ``ppaudit.io`` / ``ppaudit.rng``;
the package ``__init__`` loads its public names lazily (PEP 562), so importing it must not pull
scipy, statsmodels, pandas, dp_accounting, matplotlib or torch. The lazy names must still be
the very objects of the sub-modules that define them, for ``ppaudit.x``, ``from ppaudit import x``
and ``from ppaudit import *``.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

import ppaudit

HEAVY = ("scipy", "statsmodels", "pandas", "dp_accounting", "matplotlib", "torch", "sklearn")


@pytest.mark.parametrize("module", ["ppaudit", "ppaudit.io", "ppaudit.rng"])
def test_import_pulls_no_heavy_package(module):
    code = f"import sys, {module}; print(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "", f"import {module} loads {out}"


def test_lazy_names_are_the_submodules_objects():
    from ppaudit import accounting, audit, divergence, noisy_argmax

    expected = {
        "class_probabilities": noisy_argmax.class_probabilities,
        "log_class_probabilities": noisy_argmax.log_class_probabilities,
        "renyi_divergence": divergence.renyi_divergence,
        "exact_rdp": divergence.exact_rdp,
        "gnmax_rdp_data_independent": accounting.gnmax_rdp_data_independent,
        "gnmax_rdp_data_dependent": accounting.gnmax_rdp_data_dependent,
        "rdp_to_dp": accounting.rdp_to_dp,
        "two_cut_lower_bound": audit.two_cut_lower_bound,
        "k_cut_lower_bound": audit.k_cut_lower_bound,
        "compose_rdp": audit.compose_rdp,
    }
    assert set(expected) | set(ppaudit._SUBMODULES) == set(ppaudit.__all__)
    assert set(expected) == set(ppaudit._FUNCTIONS)
    for name, obj in expected.items():
        assert getattr(ppaudit, name) is obj, name
    namespace: dict = {}
    exec("from ppaudit import *", namespace)  # noqa: S102 (a star import inside a test function)
    assert all(namespace[name] is getattr(ppaudit, name) for name in ppaudit.__all__)
    assert set(ppaudit.__all__) <= set(dir(ppaudit))
    assert ppaudit.__version__ == "0.1.0"


def test_unknown_attribute_raises():
    with pytest.raises(AttributeError, match="no_such_name"):
        ppaudit.no_such_name  # noqa: B018
    with pytest.raises(ImportError, match="no_such_name"):
        from ppaudit import no_such_name  # noqa: F401
