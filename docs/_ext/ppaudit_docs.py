"""Sphinx extension of ppaudit's documentation site: what the code knows is generated, not typed.

* :func:`public_api` walks ``src/ppaudit`` and lists every public name: a sub-package's
  ``__all__`` where it has one (its modules' names are documented once, at the package), else
  each module's ``__all__``. ``builder-inited`` writes one reference page per package or
  top-level module into ``docs/api/`` (generated, git-ignored) with an autodoc entry per name;
  a public name without a docstring (for data: a ``#:`` comment or a docstring after the
  assignment) is a warning, i.e. an error under ``make docs`` (``-W``). The same check runs
  without Sphinx in ``tests/unit/docs/test_docs_site.py``.
* The directive ``ppaudit-figures`` is the figure registry (``workflow/figures.yaml``, loaded by
  :func:`ppaudit.workflow.registry.load_registry`) as a table: target, paper, figure, what it
  shows (the first sentence of the target's report caption, filled with its wildcards), its
  files, and its cost (the measured wall and CPU time of its target group, from the
  ``bench-default`` block of ``README.md`` that ``bench/bench_default.py --write-readme`` writes).

The command-line page is ``sphinx-argparse`` on :func:`ppaudit.cli.build_parser`.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import pkgutil
import re
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
API_DIR = REPO / "docs" / "api"


@dataclass(frozen=True)
class Page:
    """One reference page: a package (or top-level module) and the names it documents."""

    name: str
    entries: tuple[tuple[str, tuple[str, ...]], ...]
    """``(module documented at, its public names)``; one entry for a package with ``__all__``."""


def _modules(package):
    for m in pkgutil.iter_modules(package.__path__, package.__name__ + "."):
        if m.name.rsplit(".", 1)[1].startswith("_"):
            continue
        yield m.name, m.ispkg


def _walk(name: str):
    """Module names with an ``__all__`` under ``name`` (a package without ``__all__`` is walked)."""
    mod = importlib.import_module(name)
    if hasattr(mod, "__all__"):
        return [(name, tuple(mod.__all__))]
    out = []
    if hasattr(mod, "__path__"):
        for sub, _ in _modules(mod):
            out.extend(_walk(sub))
    return out


def public_api() -> list[Page]:
    """Every reference page of the site, in the order of ``ppaudit``'s sub-packages and modules.

    Returns:
        One :class:`Page` per sub-package or top-level module of ``ppaudit`` (``ppaudit`` itself,
        whose ``__all__`` re-exports names documented in their modules, is left out). Names come
        from ``__all__`` only.

    Raises:
        RuntimeError: if a module with public functions has neither an ``__all__`` nor a
            package above it that has one.
    """
    import ppaudit

    pages = []
    for name, _ in _modules(ppaudit):
        entries = _walk(name)
        if not entries:
            raise RuntimeError(f"{name} has no __all__ (nor have its modules): the reference cannot list it")
        pages.append(Page(name, tuple(entries)))
    return pages


@functools.lru_cache(maxsize=None)  # asked once per documented name: parse each module's source once
def _attribute_docs(module) -> dict[str, str]:
    """Module-level names of ``module`` with their documentation, by Sphinx's rules.

    A name is documented by a string statement right after its assignment or by ``#:`` comment
    lines right above it.

    Returns:
        ``{name: documentation}`` (dedented text) for the documented names only.
    """
    try:
        src = inspect.getsource(module)
    except (OSError, TypeError):
        return {}
    lines = src.splitlines()
    body = ast.parse(src).body
    found = {}
    for i, node in enumerate(body):
        targets = []
        if isinstance(node, ast.Assign):
            targets = [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            targets = [node.target.id]
        if not targets:
            continue
        nxt = body[i + 1] if i + 1 < len(body) else None
        doc = None
        if isinstance(nxt, ast.Expr) and isinstance(getattr(nxt, "value", None), ast.Constant) and isinstance(nxt.value.value, str):
            doc = inspect.cleandoc(nxt.value.value)
        else:
            comments, j = [], node.lineno - 2
            while j >= 0 and lines[j].strip().startswith("#:"):
                comments.insert(0, lines[j].strip()[2:].strip())
                j -= 1
            doc = "\n".join(comments) if comments else None
        if doc:
            for t in targets:
                found[t] = doc
    return found


def kind_of(obj) -> str:
    """The autodoc directive for ``obj``: ``autoclass``, ``autofunction`` or ``autodata``."""
    if inspect.isclass(obj):
        return "autoclass"
    if inspect.isroutine(obj) or callable(obj) and hasattr(obj, "__wrapped__"):
        return "autofunction"
    return "autodata"


def home_of(module_name: str, name: str) -> tuple[object, object]:
    """``(object, module that defines it)``: for data, the module whose source assigns it."""
    mod = importlib.import_module(module_name)
    obj = getattr(mod, name)
    if inspect.ismodule(obj):
        return obj, obj
    owner = getattr(obj, "__module__", None) if kind_of(obj) != "autodata" else None
    if owner is None:
        # data: the module whose source assigns this very object (the package itself, one of
        # its sub-modules, or the sibling it is re-exported from)
        for cand in [mod] + sorted((m for n, m in list(sys.modules.items()) if n.startswith("ppaudit.") and m is not None), key=lambda m: m.__name__):
            if name in _assigned(cand) and getattr(cand, name, None) is obj:
                return obj, cand
        return obj, mod
    return obj, sys.modules.get(owner, mod)


@functools.lru_cache(maxsize=None)
def _assigned(module) -> set[str]:
    try:
        tree = ast.parse(inspect.getsource(module))
    except (OSError, TypeError):
        return set()
    out = set()
    for node in tree.body:
        if isinstance(node, ast.Assign):
            out.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out.add(node.target.id)
    return out


def undocumented(pages: list[Page] | None = None) -> list[str]:
    """Public names without a docstring: ``["ppaudit.audit.X (function)", …]`` (empty: all good)."""
    missing = []
    for page in pages if pages is not None else public_api():
        for module_name, names in page.entries:
            for name in names:
                obj, home = home_of(module_name, name)
                kind = kind_of(obj)
                if inspect.ismodule(obj):
                    ok = bool((obj.__doc__ or "").strip())
                elif kind == "autodata":
                    ok = name in _attribute_docs(home)
                else:
                    ok = bool((obj.__doc__ or "").strip())
                if not ok:
                    missing.append(f"{module_name}.{name} ({kind.removeprefix('auto')}, defined in {home.__name__})")
    return missing


def _title(text: str, char: str) -> str:
    return f"{text}\n{char * len(text)}\n"


def write_api_pages(pages: list[Page], out: Path = API_DIR) -> list[str]:
    """Write ``docs/api/<package>.rst`` and ``docs/api/index.rst`` (removing the pages of modules that
    are gone); returns the page names."""
    out.mkdir(parents=True, exist_ok=True)
    names = []
    for page in pages:
        mod = importlib.import_module(page.name)
        summary = (inspect.getdoc(mod) or "").strip().split("\n\n")[0].replace("\n", " ")
        parts = [_title(f"``{page.name}``", "="), f".. automodule:: {page.name}\n   :no-members:\n"]
        for module_name, names_ in page.entries:
            if module_name != page.name:
                parts.append(_title(f"``{module_name}``", "-"))
                parts.append(f".. automodule:: {module_name}\n   :no-members:\n")
            parts.append(f".. currentmodule:: {module_name}\n")
            for name in names_:
                obj, _ = home_of(module_name, name)
                if inspect.ismodule(obj):
                    parts.append(f"* :mod:`{obj.__name__}` (sub-module)\n")
                    continue
                opts = "\n   :members:\n   :show-inheritance:" if inspect.isclass(obj) else ""
                if kind_of(obj) == "autodata":
                    # the documentation of the assignment in the module that makes it, never the
                    # docstring of the value's type (a dict's or an array's)
                    doc = _attribute_docs(home_of(module_name, name)[1]).get(name, "")
                    body = "\n".join(("   " + line) if line else "" for line in doc.splitlines())
                    parts.append(f".. py:data:: {name}\n   :type: {type(obj).__name__}\n\n{body}\n")
                    continue
                parts.append(f".. {kind_of(obj)}:: {name}{opts}\n")
        text = "\n".join(parts)
        stem = page.name.removeprefix("ppaudit.")
        path = out / f"{stem}.rst"
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
        names.append((stem, summary))
    index = [
        _title("API reference", "="),
        "Generated at build time from every ``__all__`` of ``ppaudit`` (``docs/_ext/ppaudit_docs.py``):",
        "one page per sub-package or top-level module, one entry per public name, with its docstring.",
        "``from ppaudit import …`` re-exports the most used names of these modules.\n",
        ".. toctree::\n   :maxdepth: 1\n",
    ]
    index += [f"   {stem}" for stem, _ in names]
    text = "\n".join(index) + "\n"
    path = out / "index.rst"
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
    # the folder is generated (git-ignored): a page of a module that is gone (ppaudit.cli_search
    # before the cli package) would be an orphan whose automodule fails, so it goes
    for stale in set(out.glob("*.rst")) - {out / f"{s}.rst" for s, _ in names} - {path}:
        stale.unlink()
    return [s for s, _ in names]


# --- the figure registry table ---------------------------------------------------------------

# a sentence ends at ". " not after an abbreviation (et al., Fig., Eq., App., e.g., i.e., vs.)
_SENTENCE = re.compile(r"^(.+?(?<!\bal)(?<!\bFig)(?<!\bFigs)(?<!\bEq)(?<!\bApp)(?<!\be\.g)(?<!\bi\.e)(?<!\bvs)(?<!\bSec)(?<!\bObs)(?<!\bTab)\.)(\s|$)", re.S)


def caption_summary(caption: str | None, wildcards: dict, params: dict | None = None) -> str:
    """First sentence of a report caption (a Jinja template over ``snakemake``), filled for one row.

    The caption is rendered with the row's wildcards and params and the default config; where a
    later line needs a config key that only the workflow fills in, the longest prefix of whole
    lines that renders is used (the first sentence lies in it).
    """
    if not caption:
        return ""
    import jinja2

    def obj(mapping):
        return type("Namespace", (), {k: obj(v) if isinstance(v, dict) else v for k, v in mapping.items()})()

    snake = type("Snakemake", (), {})()
    snake.wildcards = obj(dict(wildcards))
    snake.config = _default_config()
    snake.params = obj({"figure": obj(dict(params or {}))})
    lines = (REPO / caption).read_text(encoding="utf-8").splitlines()
    text = ""
    for n in range(len(lines), 0, -1):
        try:
            text = jinja2.Template("\n".join(lines[:n]), undefined=jinja2.ChainableUndefined).render(snakemake=snake)
            break
        except Exception:  # noqa: BLE001 - a prefix that does not parse or render: try a shorter one
            continue
    text = " ".join(text.replace("**", "").split())
    m = _SENTENCE.match(text)
    return (m.group(1) if m else text)[:400]


@functools.lru_cache(maxsize=1)
def _default_config() -> dict:
    """``config/config.yaml``, the embedded default the captions are filled with."""
    import yaml

    return yaml.safe_load((REPO / "config" / "config.yaml").read_text(encoding="utf-8"))


def group_costs(readme: Path = REPO / "README.md") -> dict[str, str]:
    """Group title → "wall / CPU" from the README's ``bench-default`` block (empty when absent)."""
    text = readme.read_text(encoding="utf-8")
    if "<!-- bench-default:begin -->" not in text:
        return {}
    block = text.split("<!-- bench-default:begin -->", 1)[1].split("<!-- bench-default:end -->", 1)[0]
    out = {}
    for line in block.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 5 and cells[2].isdigit():
            out[cells[0]] = f"{cells[3]} wall, {cells[4]} CPU"
    return out


def figure_rows() -> list[list[str]]:
    """The rows of the registry table: target, paper, figure, what it shows, files, cost of its group."""
    sys.path.insert(0, str(REPO / "bench"))
    try:
        import bench_default as bd
    finally:
        sys.path.pop(0)
    from ppaudit.workflow.registry import load_registry

    reg = load_registry(REPO / "workflow" / "figures.yaml", REPO)
    costs = group_costs()
    rows = []
    for t in reg.targets:
        group = bd.GROUP_BY_KEY[bd.stage_of(t, reg)].title
        cost = f"{group}: {costs[group]}" if group in costs else group
        files = ", ".join(f"``{f}``" for f in reg.files(t.id)) or "–"
        what = caption_summary(t.caption, t.wildcards, t.params)
        if not what and t.params.get("title"):  # a caption that renders only with the workflow's config
            what = f"{t.category}, {t.subcategory}: {t.params['title']}."
        rows.append([f"``{t.id}``", reg.papers[t.paper].split(" (")[0], t.subcategory or t.kind, what, files, cost])
    return rows


def _figures_directive():
    from docutils import nodes
    from sphinx.util.docutils import SphinxDirective

    def cell(text: str):
        para = nodes.paragraph()
        for k, part in enumerate(re.split(r"``(.+?)``", text or "–")):
            if part:
                para += nodes.literal(part, part) if k % 2 else nodes.Text(part)
        return nodes.entry("", para)

    class FiguresDirective(SphinxDirective):
        """``ppaudit-figures`` — the registry table (see the module docstring); built as docutils
        nodes, so it reads the same from reST and from MyST pages."""

        def run(self):
            self.env.note_dependency(str(REPO / "workflow" / "figures.yaml"))
            self.env.note_dependency(str(REPO / "README.md"))
            header = ["target", "paper", "figure", "what it shows (report caption)", "files", "cost (its target group, make bench-default)"]
            widths = [12, 9, 8, 39, 20, 12]
            table = nodes.table(classes=["ppaudit-figures"])
            group = nodes.tgroup(cols=len(header))
            table += group
            for w in widths:
                group += nodes.colspec(colwidth=w)
            head = nodes.thead()
            head += nodes.row("", *[cell(h) for h in header])
            body = nodes.tbody()
            for r in figure_rows():
                body += nodes.row("", *[cell(c) for c in r])
            group += head
            group += body
            return [table]

    return FiguresDirective


def _on_builder_inited(app):
    pages = public_api()
    write_api_pages(pages)
    from sphinx.util import logging

    log = logging.getLogger(__name__)
    for item in undocumented(pages):
        log.warning(f"public name without a docstring: {item}", type="ppaudit", subtype="undocumented")


def setup(app):
    """Register the registry directive and the reference generator."""
    app.add_directive("ppaudit-figures", _figures_directive())
    app.connect("builder-inited", _on_builder_inited)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
