"""The house has no import circles and no import up the layers (issue 37 §2, ../shared/DESIGN.md).

Read statically from the source (``ast``, nothing imported; well under a second): every
``import``/``from … import`` of a module of ``src/ppaudit``, at top level or inside a function
(a lazy import is still an arrow), gives an edge between two modules. Two modules that import
each other fail here, and so does any import from ``ppaudit.mechanisms`` into
``ppaudit.adversaries`` (the layers: cli → experiments → selfcheck, adversaries → blackbox,
mechanisms → attacks → audit → vote_models → accounting → …; the adversaries craft canaries
against the mechanisms, not the other way round).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import ppaudit

ROOT = Path(ppaudit.__file__).resolve().parent

#: Circles that other work of issue 37 removes; each names the work that will (a new circle
#: fails; one listed here that is gone may be deleted from the list).
KNOWN_CIRCLES = {
    # #37: cli/ becomes a package with one module per subcommand and the shared helpers below
    # them; being edited by another engineer this round.
    ("ppaudit.cli", "ppaudit.cli_search"),
}


def _modules() -> dict[str, Path]:
    mods = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = path
    return mods


def import_edges(mods: dict[str, Path] | None = None) -> set[tuple[str, str]]:
    """``(importer, imported)`` for every import between two modules (not packages) of ppaudit.

    An ``from .pkg import name`` counts as an import of ``pkg.name`` when that is a module,
    else of ``pkg`` itself when ``pkg`` is a module; imports of a package's ``__init__``
    (the lazy re-export tables) are not arrows between concepts and are left out.
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
                candidates = [target] + [f"{target}.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Import):
                candidates = [alias.name for alias in node.names]
            else:
                continue
            for cand in candidates:
                if cand in mods and cand != name and mods[cand].name != "__init__.py":
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
    mods = {}
    for path in pkg.rglob("*.py"):
        parts = list(path.relative_to(tmp_path).with_suffix("").parts)
        mods[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    got = import_edges(mods)
    assert {("ppaudit.mechanisms.a", "ppaudit.mechanisms.b"), ("ppaudit.mechanisms.b", "ppaudit.mechanisms.a"),
            ("ppaudit.mechanisms.a", "ppaudit.adversaries.c"), ("ppaudit.adversaries.c", "ppaudit.mechanisms.a")} <= got


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
