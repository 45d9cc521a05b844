"""Every public name of every ppaudit (sub-)package imports as before the lazy re-exports (issue 30).

The sub-packages' ``__init__`` re-export their modules' public names lazily (PEP 562,
:func:`ppaudit._lazy.attach`): importing one module no longer imports its siblings. The public
API must not change: every name of each ``__all__`` is importable (``from pkg import name``,
``pkg.name``, ``from pkg import *``) and is the very object of the module that defines it; each
``_EXPORTS`` table lists exactly a module's ``__all__`` (for the packages that re-exported
``from .module import *``; since issue 37 those derive the table from the modules' source with
:func:`ppaudit._lazy.attach_modules`, and this checks the static reading against the imported
``__all__``).
"""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys
import types

import pytest

import ppaudit

PACKAGES = sorted(
    m.name for m in pkgutil.walk_packages(ppaudit.__path__, "ppaudit.") if m.ispkg
) + ["ppaudit"]

# Packages whose __init__ was ``from .m import *`` for every module m of the table: their
# table must equal each module's __all__ (the others re-export chosen names only).
STAR_PACKAGES = {
    "ppaudit.accounting", "ppaudit.adversaries", "ppaudit.attacks.histogram", "ppaudit.attacks.observational",
    "ppaudit.audit", "ppaudit.data", "ppaudit.mechanisms.private_knn", "ppaudit.mechanisms.promptpate",
    "ppaudit.models.llm", "ppaudit.vote_models",
    # issue 37: the experiments split by paper, each sub-package re-exporting its modules
    "ppaudit.experiments.blackbox", "ppaudit.experiments.chadha2024", "ppaudit.experiments.labeldp",
    "ppaudit.experiments.wang2022",
}
LAZY_PACKAGES = sorted(STAR_PACKAGES | {"ppaudit.blackbox", "ppaudit.mechanisms.labeldp", "ppaudit.workflow"})


@pytest.mark.parametrize("package", PACKAGES)
def test_every_public_name_imports(package):
    pkg = importlib.import_module(package)
    names = getattr(pkg, "__all__", None)
    if names is None:
        pytest.skip(f"{package} declares no __all__")
    assert len(set(names)) == len(names), f"duplicate names in {package}.__all__"
    for name in names:
        obj = getattr(pkg, name)
        exec(f"from {package} import {name}", {})  # noqa: S102
        assert obj is not None or name.isupper(), name
    namespace: dict = {}
    exec(f"from {package} import *", namespace)  # noqa: S102
    assert all(namespace[name] is getattr(pkg, name) for name in names)
    assert set(names) <= set(dir(pkg))


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_lazy_table_matches_the_modules(package):
    pkg = importlib.import_module(package)
    table = pkg._EXPORTS
    # a name re-exported by a sibling (chadha2024.private_knn re-exports private_knn_audit's) is
    # in two modules' __all__ and once in the package's
    flat = list(dict.fromkeys(name for names in table.values() for name in names))
    modules_in_all = [n for n in pkg.__all__ if isinstance(getattr(pkg, n), types.ModuleType)]
    assert sorted(flat + modules_in_all) == sorted(pkg.__all__)
    for module_name, names in table.items():
        module = importlib.import_module(f"{package}.{module_name}")
        if package in STAR_PACKAGES:
            assert list(names) == list(module.__all__), (
                f"{package}._EXPORTS[{module_name!r}] must list {module.__name__}.__all__ (update the table)")
        for name in names:
            assert getattr(pkg, name) is getattr(module, name), f"{package}.{name}"
        assert getattr(pkg, module_name) is module


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_unknown_name_raises(package):
    pkg = importlib.import_module(package)
    with pytest.raises(AttributeError, match="no_such_name"):
        pkg.no_such_name  # noqa: B018
    with pytest.raises(ImportError):
        exec(f"from {package} import no_such_name", {})  # noqa: S102


def test_one_module_does_not_load_its_siblings():
    code = (
        "import sys\n"
        "from ppaudit.audit import two_cut_lower_bound\n"
        "from ppaudit.vote_models.twin import load_twin_fit\n"
        "from ppaudit.accounting import gnmax_rdp_data_dependent\n"
        "heavy = ('scipy.stats', 'statsmodels', 'dp_accounting', 'matplotlib', 'torch')\n"
        "print(','.join(m for m in heavy if m in sys.modules))\n"
        "print('ppaudit.audit.composition' in sys.modules, 'ppaudit.accounting.pld' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[0] == "", f"loaded {out[0]}"
    assert out[1] == "False False"


def test_static_all_reads_the_literal_and_falls_back_to_the_module(tmp_path, monkeypatch):
    """:func:`ppaudit._lazy.static_all` reads a multi-line or annotated literal ``__all__``
    without importing the module, and imports a module whose ``__all__`` is computed."""
    from ppaudit._lazy import static_all

    pkg = tmp_path / "lazy_probe"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "from ppaudit._lazy import attach_modules\n"
        "__getattr__, __dir__ = attach_modules(__name__, ('a', 'b', 'c'))\n"
    )
    (pkg / "a.py").write_text('raise RuntimeError("imported")\n__all__ = [\n    "x",  # a comment (with a bracket]\n    "y",\n]\n')
    (pkg / "b.py").write_text('__all__: list[str] = ["z"]\nz = 1\n')
    (pkg / "c.py").write_text('_names = ["w"]\n__all__ = list(_names)\nw = 2\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    probe = importlib.import_module("lazy_probe")
    assert "__all__" not in vars(probe)  # nothing read at import
    assert static_all("lazy_probe", "a") == ("x", "y")  # the module would raise if imported
    assert "lazy_probe.a" not in sys.modules
    assert probe.__all__ == ["x", "y", "z", "w"]
    assert probe._EXPORTS == {"a": ("x", "y"), "b": ("z",), "c": ("w",)}
    assert "lazy_probe.c" in sys.modules and "lazy_probe.b" not in sys.modules
    assert probe.z == 1 and "lazy_probe.b" in sys.modules
    for name in [m for m in sys.modules if m.startswith("lazy_probe")]:
        del sys.modules[name]
