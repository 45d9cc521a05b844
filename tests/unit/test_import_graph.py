"""The house has no import circles and no import up the layers (issue 37 §2, ../shared/DESIGN.md).

Read statically from the source (``ast``, nothing imported; well under a second): every
``import``/``from … import`` of a module of ``src/ppaudit``, at top level or inside a function
(a lazy import is still an arrow), gives an edge between two modules. Two modules that import
each other fail here, and so does any import from ``ppaudit.mechanisms`` into
``ppaudit.adversaries`` (the layers: cli → experiments → selfcheck, adversaries → blackbox,
mechanisms → attacks → audit → vote_models → accounting → …; the adversaries craft canaries
against the mechanisms, not the other way round). The ``ppaudit.cli`` package is checked with its
``__init__`` counted (it imports every subcommand module eagerly): the subcommand modules sit on
``ppaudit.cli.common`` alone.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import ppaudit

ROOT = Path(ppaudit.__file__).resolve().parent

#: Circles that other work removes; each names the work that will (a new circle fails; one
#: listed here that is gone may be deleted from the list). Empty since issue 37 §2.
KNOWN_CIRCLES: set[tuple[str, str]] = set()


def _modules() -> dict[str, Path]:
    mods = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = path
    return mods


def import_edges(mods: dict[str, Path] | None = None, packages: bool = False) -> set[tuple[str, str]]:
    """``(importer, imported)`` for every import between two modules (not packages) of ppaudit.

    An ``from .pkg import name`` counts as an import of ``pkg.name`` when that is a module,
    else of ``pkg`` itself; imports of a package's ``__init__`` (the lazy re-export tables) are
    not arrows between concepts and are left out, unless ``packages`` (then ``from . import
    name`` of a name that is not a sub-module is an arrow to the package's ``__init__``).
    """
    mods = _modules() if mods is None else mods
    edges = set()
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                candidates = [f"{target}.{alias.name}" if f"{target}.{alias.name}" in mods else target
                              for alias in node.names]
            elif isinstance(node, ast.Import):
                candidates = [alias.name for alias in node.names]
            else:
                continue
            for cand in candidates:
                if cand in mods and cand != name and (packages or mods[cand].name != "__init__.py"):
                    edges.add((name, cand))
    return edges


@pytest.fixture(scope="module")
def edges():
    return import_edges()


def test_no_two_module_import_circle(edges):
    circles = sorted((a, b) for a, b in edges if a < b and (b, a) in edges)
    new = [c for c in circles if c not in KNOWN_CIRCLES]
    assert not new, "modules that import each other (move the shared piece down): " + ", ".join(f"{a} <-> {b}" for a, b in new)


def test_mechanisms_do_not_import_adversaries(edges):
    up = sorted(f"{a} -> {b}" for a, b in edges if a.startswith("ppaudit.mechanisms.") and b.startswith("ppaudit.adversaries."))
    assert not up, f"mechanisms import from adversaries (a layer above them): {up}"


def test_cli_subcommands_sit_on_one_shared_module():
    """``ppaudit.cli``: each subcommand module imports :mod:`ppaudit.cli.common` and no other module
    of the package (not a sibling, nor the package's ``__init__``, which imports them all);
    ``common`` imports none of them (DESIGN.md, the ``ppaudit.cli`` row)."""
    edges = import_edges(packages=True)
    cli = sorted(m for m in _modules() if m == "ppaudit.cli" or m.startswith("ppaudit.cli."))
    subcommands = [m for m in cli if m not in ("ppaudit.cli", "ppaudit.cli.__main__", "ppaudit.cli.common")]
    assert len(subcommands) >= 6, subcommands
    inside = {m: sorted(b for a, b in edges if a == m and b in cli) for m in cli}
    assert inside["ppaudit.cli.common"] == [], "ppaudit.cli.common imports a subcommand module or the package"
    for m in subcommands:
        assert inside[m] == ["ppaudit.cli.common"], f"{m} must import ppaudit.cli.common and no other cli module: {inside[m]}"
    assert set(subcommands) <= set(inside["ppaudit.cli"]), "ppaudit.cli registers every subcommand module"


def test_the_check_sees_a_planted_circle(tmp_path):
    """The edge reader is not blind: a planted pair of modules importing each other (one of
    them lazily, inside a function) and a planted upward import are found."""
    pkg = tmp_path / "ppaudit"
    (pkg / "mechanisms").mkdir(parents=True)
    (pkg / "adversaries").mkdir()
    for d in (pkg, pkg / "mechanisms", pkg / "adversaries"):
        (d / "__init__.py").write_text("")
    (pkg / "mechanisms" / "a.py").write_text("from .b import x\nfrom ..adversaries.c import y\n")
    (pkg / "mechanisms" / "b.py").write_text("def f():\n    from . import a\n")
    (pkg / "adversaries" / "c.py").write_text("import ppaudit.mechanisms.a\n")
    (pkg / "mechanisms" / "__init__.py").write_text("from . import b\n")
    (pkg / "mechanisms" / "d.py").write_text("from . import b, NAME\n")
    mods = {}
    for path in pkg.rglob("*.py"):
        parts = list(path.relative_to(tmp_path).with_suffix("").parts)
        mods[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    got = import_edges(mods)
    assert {("ppaudit.mechanisms.a", "ppaudit.mechanisms.b"), ("ppaudit.mechanisms.b", "ppaudit.mechanisms.a"),
            ("ppaudit.mechanisms.a", "ppaudit.adversaries.c"), ("ppaudit.adversaries.c", "ppaudit.mechanisms.a")} <= got
    # `from . import b, NAME`: an arrow to the module b; to the package's __init__ only when asked
    assert ("ppaudit.mechanisms.d", "ppaudit.mechanisms.b") in got and ("ppaudit.mechanisms.d", "ppaudit.mechanisms") not in got
    with_packages = import_edges(mods, packages=True)
    assert {("ppaudit.mechanisms.d", "ppaudit.mechanisms"), ("ppaudit.mechanisms", "ppaudit.mechanisms.b")} <= with_packages


#: Imports between the paper sub-packages of ppaudit.experiments (issue 37 §2: split by paper,
#: each driver next to its family), importer's paper → imported paper: Wang et al.'s caching
#: defence is audited on the vote models of Chadha et al.'s PATE / CaPC stage.
EXPERIMENTS_CROSS_PAPER = {("wang2022", "chadha2024")}


def test_experiments_papers_import_each_other_only_where_listed(edges):
    def paper(module: str) -> str | None:
        parts = module.split(".")
        if parts[:2] != ["ppaudit", "experiments"] or len(parts) < 4:
            return None  # outside experiments, or a cross-paper module at its top level
        return parts[2]

    cross = sorted(f"{a} -> {b}" for a, b in edges
                   if paper(a) and paper(b) and paper(a) != paper(b) and (paper(a), paper(b)) not in EXPERIMENTS_CROSS_PAPER)
    assert not cross, f"one paper's experiments import another's (list it, or move the shared piece down): {cross}"
    # the cross-paper modules at experiments/ (findings_causes, paper_comparison) sit below the papers
    packages = {name for name, path in _modules().items() if path.name == "__init__.py"}  # their lazy tables
    up = sorted(f"{a} -> {b}" for a, b in edges
                if a.count(".") == 2 and a.startswith("ppaudit.experiments.") and a not in packages and paper(b))
    assert not up, f"a cross-paper module imports a paper's experiments: {up}"


#: Modules allowed over MAX_MODULE_LINES, each with the reason it reads best whole (issue 37 §2). Empty.
LONG_MODULES: dict[str, str] = {}
MAX_MODULE_LINES = 700


def test_no_module_is_over_the_line_limit():
    long = {name: n for name, path in _modules().items()
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES and name not in LONG_MODULES}
    assert not long, f"modules over {MAX_MODULE_LINES} lines (split by concept, or list them with a reason): {long}"
