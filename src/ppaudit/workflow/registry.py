"""The figure registry of the workflow: ``workflow/figures.yaml``, one row per figure/table target.

Every figure and table of the papers is a named Snakemake target (``snakemake -c2 chadha_fig3``).
The registry is the one place that says, for each target, which paper it reproduces, which rule
produces it, which files it consists of and how they appear in ``snakemake --report``
(caption, category, subcategory, labels). ``workflow/rules/common.smk`` loads it with
:func:`load_registry`; the ``Snakefile`` generates one target rule per row and ``rule all``
from it; each producing rule takes its named outputs, wrapped in ``report()``, from
:meth:`Registry.outputs_of`. Adding a figure is one row and one rule.

A row (a mapping in the ``targets`` list)::

    - id: chadha_fig3               # the target rule's name (snake_case, unique)
      paper: chadha2024             # a key of the top-level ``papers`` mapping
      kind: figure                  # figure | table | group
      rule: plot_chadha_fig34       # the rule whose outputs these are
      wildcards: {fig34: fig3}      # values of the producing rule's wildcards for this target
      outputs:                      # named outputs of the producing rule (patterns)
        pdf: results/figures/chadha2024/{fig34}.pdf
        png: results/figures/chadha2024/{fig34}.png
        csv: results/figures/chadha2024/{fig34}.csv
      caption: workflow/report/chadha_fig34.rst   # repository-relative; null: not in the report
      category: Chadha et al. 2024
      subcategory: Figs. 3–4
      label: "{fig34}"              # report label (may use the rule's wildcards)
      includes: []                  # other targets this one also builds (a ``group``)
      params: {}                    # per-row values the producing rule passes to its script

Rows that share a producing rule (a rule with wildcards, e.g. Figs. 3 and 4) must agree on
everything that belongs to the rule (outputs, caption, category, label, kind); each row fills
the wildcards with its own values, and may have its own ``subcategory`` (the report resolves
it per job from the wildcards, :meth:`Registry.subcategory_of`) and its own ``params``.

``params`` are what differs between the figures of one rule beyond their file names (e.g.
the adversary, case, summary file and title of each appendix figure of Chadha et al. 2024):
a mapping of names to scalars (string, number, boolean, null) or lists of scalars. Every row
of one rule gives the same names, so the rule's script sees one interface; the rule reads a
row's values with :meth:`Registry.params_of` (``figure_params("<rule>")`` in ``common.smk``).
A row whose ``id`` equals its ``rule`` is a producing rule that is its own target (no target
rule is generated for it).
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from .config_checks import read_yaml

KINDS = ("figure", "table", "group")
"""Kinds of target: a figure (pdf/png + plotted numbers), a table, or a group of targets."""

ROW_KEYS = frozenset(
    {"id", "paper", "kind", "rule", "wildcards", "outputs", "caption", "category", "subcategory", "label", "includes", "params"}
)
REQUIRED_KEYS = frozenset({"id", "paper", "kind", "outputs"})
TOP_LEVEL_KEYS = frozenset({"papers", "targets"})

# Report label of an output file, by extension (figures' CSVs hold the plotted numbers).
FILE_LABELS = {"pdf": "PDF", "png": "PNG", "svg": "SVG", "csv": "CSV", "md": "Markdown", "json": "JSON", "html": "HTML"}

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_WILDCARD_VALUE = re.compile(r"^[A-Za-z0-9_.+-]+$")
_RULE_LEVEL = ("outputs", "caption", "category", "label", "kind")
_SCALAR = (str, int, float, bool, type(None))


@dataclass(frozen=True)
class OutputSpec:
    """One named output of a producing rule, with its report metadata.

    Attributes:
        path: the output path pattern (may hold the rule's wildcards).
        caption: repository-relative path of the caption ``.rst``; ``None``: not a report entry.
        category, subcategory: report grouping; ``subcategory`` is a function of the job's
            wildcards (:meth:`Registry.subcategory_of`) when the rule's rows differ in it.
        labels: report labels, e.g. ``{"figure": "{fig34}", "file": "PDF"}``.
    """

    path: str
    caption: str | None = None
    category: str | None = None
    subcategory: str | Callable[[object], str | None] | None = None
    labels: Mapping[str, str] | None = None

    @property
    def in_report(self) -> bool:
        return self.caption is not None


@dataclass(frozen=True)
class Target:
    """One row of the registry (see the module docstring for the fields)."""

    id: str
    paper: str
    kind: str
    rule: str | None
    outputs: Mapping[str, str]
    wildcards: Mapping[str, str] = field(default_factory=dict)
    caption: str | None = None
    category: str | None = None
    subcategory: str | None = None
    label: str | None = None
    includes: tuple[str, ...] = ()
    params: Mapping[str, object] = field(default_factory=dict)

    @property
    def own_files(self) -> list[str]:
        """The row's own output files, wildcards filled in (without those of ``includes``)."""
        return [pattern.format(**self.wildcards) for pattern in self.outputs.values()]

    @property
    def needs_target_rule(self) -> bool:
        """Whether a target rule must be generated (false when the producing rule is the target)."""
        return self.id != self.rule


class Registry:
    """The validated rows of ``workflow/figures.yaml``.

    Build it with :func:`load_registry` or :func:`parse_registry`; the constructor assumes
    validated rows.
    """

    def __init__(self, papers: Mapping[str, str], targets: Iterable[Target]):
        self.papers = dict(papers)
        self.targets = tuple(targets)
        self._by_id = {t.id: t for t in self.targets}

    def __getitem__(self, target_id: str) -> Target:
        try:
            return self._by_id[target_id]
        except KeyError:
            raise KeyError(f"no target {target_id!r} in the figure registry") from None

    def __contains__(self, target_id: object) -> bool:
        return target_id in self._by_id

    def __len__(self) -> int:
        return len(self.targets)

    def ids(self) -> list[str]:
        return [t.id for t in self.targets]

    def files(self, target_id: str) -> list[str]:
        """Every file a target builds: its own outputs, then those of its ``includes`` (no repeats)."""
        seen: dict[str, None] = {}
        stack = [target_id]
        order: list[str] = []
        while stack:  # depth-first, in row order; cycles are rejected at parse time
            tid = stack.pop(0)
            if tid in order:
                continue
            order.append(tid)
            stack = list(self[tid].includes) + stack
        for tid in order:
            for f in self[tid].own_files:
                seen.setdefault(f, None)
        return list(seen)

    def all_files(self) -> list[str]:
        """Every file of every target, in row order (the input of ``rule all``)."""
        seen: dict[str, None] = {}
        for t in self.targets:
            for f in t.own_files:
                seen.setdefault(f, None)
        return list(seen)

    def files_of(self, target_ids: Iterable[str] | None) -> list[str]:
        """The files of some targets (no repeats, in the given order): the input of ``rule all``
        under the config key ``targets``; ``None``: every file (:meth:`all_files`).

        Raises:
            ValueError: naming the ids that are not targets of the registry.
        """
        if target_ids is None:
            return self.all_files()
        ids = list(target_ids)
        unknown = [t for t in ids if t not in self]
        if unknown:
            raise ValueError(f"unknown target(s) {unknown}; targets are the ids of workflow/figures.yaml, e.g. {self.ids()[:3]}")
        seen: dict[str, None] = {}
        for tid in ids:
            for f in self.files(tid):
                seen.setdefault(f, None)
        return list(seen)

    def generated_targets(self) -> list[Target]:
        """Rows that need a generated target rule (every row whose id is not its producing rule)."""
        return [t for t in self.targets if t.needs_target_rule]

    def producing_rules(self) -> list[str]:
        """Names of the producing rules, in row order."""
        return list(dict.fromkeys(t.rule for t in self.targets if t.rule is not None))

    def rows_of(self, rule: str) -> list[Target]:
        """Rows whose producing rule is ``rule``, in registry order.

        Raises:
            KeyError: if no row names ``rule`` as its producing rule.
        """
        rows = [t for t in self.targets if t.rule == rule]
        if not rows:
            raise KeyError(f"no row of the figure registry has producing rule {rule!r} (have {self.producing_rules()})")
        return rows

    def row_for(self, rule: str, wildcards: object) -> Target:
        """The row of producing rule ``rule`` whose wildcard values are those of a job.

        Args:
            rule: name of a producing rule of the registry.
            wildcards: the job's wildcards: a mapping, or Snakemake's ``Wildcards`` (anything
                with ``items()``); names the rows do not fill are ignored.

        Returns:
            The matching :class:`Target`.

        Raises:
            KeyError: naming the rule and the wildcards when no row of the rule matches.
        """
        values = dict(wildcards.items()) if hasattr(wildcards, "items") else dict(wildcards)
        for t in self.rows_of(rule):
            if all(values.get(k) == v for k, v in t.wildcards.items()):
                return t
        raise KeyError(f"no row of the figure registry with producing rule {rule!r} has wildcards {values}")

    def params_of(self, rule: str, wildcards: object) -> dict[str, object]:
        """The ``params`` of the row of ``rule`` that a job's wildcards select (a copy).

        Args:
            rule, wildcards: as :meth:`row_for`.

        Returns:
            ``{name: value}`` (lists copied); empty when the row has no params.

        Raises:
            KeyError: as :meth:`row_for`.
        """
        return {k: (list(v) if isinstance(v, list) else v) for k, v in self.row_for(rule, wildcards).params.items()}

    def subcategory_of(self, rule: str, wildcards: object) -> str | None:
        """The report subcategory of the row of ``rule`` that a job's wildcards select."""
        return self.row_for(rule, wildcards).subcategory

    def wildcard_values(self, rule: str, name: str) -> list[str]:
        """Values the rows of ``rule`` give wildcard ``name``, in row order (for ``wildcard_constraints``).

        Raises:
            KeyError: if no row of the rule fills ``name`` (or no row names the rule).
        """
        values = [t.wildcards[name] for t in self.rows_of(rule) if name in t.wildcards]
        if not values:
            raise KeyError(f"no row of producing rule {rule!r} fills wildcard {name!r}")
        return list(dict.fromkeys(values))

    def outputs_of(self, rule: str) -> dict[str, OutputSpec]:
        """Named outputs of a producing rule with their report metadata.

        Args:
            rule: name of a producing rule of the registry.

        Returns:
            ``{output name: OutputSpec}`` in the order of the registry row; the report labels
            are ``{kind: label, "file": ...}`` (``kind`` is ``figure`` or ``table``). The
            subcategory is the rows' common one, or, when the rows differ in it, a function
            ``subcategory(wildcards)`` (Snakemake's ``report()`` calls it per job).

        Raises:
            KeyError: if no row names ``rule`` as its producing rule.
        """
        rows = self.rows_of(rule)
        row = rows[0]  # rows of one rule agree on the rule-level fields (checked at parse time)
        subcategory: str | Callable[[object], str | None] | None = row.subcategory
        if len({t.subcategory for t in rows}) > 1:

            def subcategory(wildcards: object, _rule: str = rule) -> str | None:
                return self.subcategory_of(_rule, wildcards)

        specs = {}
        for name, pattern in row.outputs.items():
            if row.caption is None:
                specs[name] = OutputSpec(pattern)
                continue
            ext = pattern.rsplit(".", 1)[-1].lower()
            file_label = FILE_LABELS.get(ext, ext.upper())
            if row.kind == "figure" and ext == "csv":
                file_label = "CSV (plotted numbers)"
            label_key = "table" if row.kind == "table" else "figure"
            specs[name] = OutputSpec(
                pattern,
                caption=row.caption,
                category=row.category,
                subcategory=subcategory,
                labels={label_key: row.label, "file": file_label},
            )
        return specs

    def check_producers(self, rule_names: Iterable[str], is_producer: Callable[[str, str], bool]) -> None:
        """Check that every row's producing rule exists and produces the row's files.

        Args:
            rule_names: names of the rules the workflow defines.
            is_producer: ``is_producer(rule, path)`` is true when ``rule`` can make ``path``
                (in Snakemake: ``workflow.get_rule(rule).is_producer(path)``).

        Raises:
            ValueError: naming the first row whose rule is missing or does not produce one
                of its files, and the file.
        """
        names = set(rule_names)
        for t in self.targets:
            if t.rule is None:
                continue
            if t.rule not in names:
                raise ValueError(f"figure registry row {t.id!r}: producing rule {t.rule!r} is not defined by the workflow")
            for f in t.own_files:
                if not is_producer(t.rule, f):
                    raise ValueError(f"figure registry row {t.id!r}: rule {t.rule!r} does not produce {f!r}")


def _fields(pattern: str, where: str) -> set[str]:
    """Wildcard names of a path pattern; rejects regex constraints and format specs."""
    names = set()
    try:
        parsed = list(string.Formatter().parse(pattern))
    except ValueError as exc:
        raise ValueError(f"{where}: bad pattern {pattern!r}: {exc}") from None
    for _, name, spec, conv in parsed:
        if name is None:
            continue
        if not name.isidentifier() or spec or conv:
            raise ValueError(f"{where}: wildcard {{{name}}} in {pattern!r} must be a plain name (constraints belong in the rule)")
        names.add(name)
    return names


def _text(row: Mapping, key: str, where: str, *, optional: bool = False) -> str | None:
    value = row.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{where}: {key} must be a non-empty string, got {value!r}")
    return value


def _params(params: object, rule: str | None, where: str) -> dict[str, object]:
    """Validate a row's ``params``: identifier names, scalar or list-of-scalar values."""
    if params is None:
        return {}
    if not isinstance(params, Mapping):
        raise ValueError(f"{where}: params must be a mapping name -> value, got {params!r}")
    if params and rule is None:
        raise ValueError(f"{where}: has params but no producing rule to pass them to")
    out: dict[str, object] = {}
    for name, value in params.items():
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"{where}: param name {name!r} must be a Python identifier (the script reads it by name)")
        items = value if isinstance(value, list) else [value]
        if not all(isinstance(v, _SCALAR) for v in items):
            raise ValueError(f"{where}: param {name} must be a string, number, boolean, null or a list of them, got {value!r}")
        out[name] = list(value) if isinstance(value, list) else value
    return out


def _parse_row(row: object, index: int, papers: Mapping[str, str], root: Path | None) -> Target:
    if not isinstance(row, Mapping):
        raise ValueError(f"targets[{index}] must be a mapping, got {row!r}")
    where = f"targets[{index}] ({row.get('id', '?')!s})"
    unknown = sorted(set(row) - ROW_KEYS)
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {unknown}; allowed: {sorted(ROW_KEYS)}")
    missing = sorted(REQUIRED_KEYS - set(row))
    if missing:
        raise ValueError(f"{where}: missing key(s) {missing}")
    tid = _text(row, "id", where)
    if not _NAME.match(tid):
        raise ValueError(f"{where}: id must be snake_case (a Snakemake rule name), got {tid!r}")
    where = f"target {tid!r}"
    paper = _text(row, "paper", where)
    if paper not in papers:
        raise ValueError(f"{where}: paper {paper!r} is not a key of papers {sorted(papers)}")
    kind = _text(row, "kind", where)
    if kind not in KINDS:
        raise ValueError(f"{where}: kind must be one of {list(KINDS)}, got {kind!r}")
    rule = _text(row, "rule", where, optional=True)
    if rule is not None and not _NAME.match(rule):
        raise ValueError(f"{where}: rule must be a snake_case rule name, got {rule!r}")

    outputs = row["outputs"] if row["outputs"] is not None else {}
    if not isinstance(outputs, Mapping):
        raise ValueError(f"{where}: outputs must be a mapping name -> path, got {outputs!r}")
    for name, path in outputs.items():
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"{where}: output name {name!r} must be a Python identifier (it names the rule's output)")
        if not isinstance(path, str) or not path.strip() or path.startswith("/"):
            raise ValueError(f"{where}: output {name} must be a relative path, got {path!r}")
    if outputs and rule is None:
        raise ValueError(f"{where}: has outputs but no producing rule")
    if not outputs and kind != "group":
        raise ValueError(f"{where}: a {kind} needs at least one output")

    wildcards = row.get("wildcards") or {}
    if not isinstance(wildcards, Mapping):
        raise ValueError(f"{where}: wildcards must be a mapping name -> value, got {wildcards!r}")
    for name, value in wildcards.items():
        if not isinstance(value, str) or not _WILDCARD_VALUE.match(value):
            raise ValueError(f"{where}: wildcard {name} must be a path-safe string, got {value!r}")
    for name, path in outputs.items():
        used = _fields(path, f"{where}, output {name}")
        if used != set(wildcards):
            raise ValueError(
                f"{where}: output {name} {path!r} uses wildcards {sorted(used)} but the row fills {sorted(wildcards)}"
            )

    caption = _text(row, "caption", where, optional=True)
    category = _text(row, "category", where, optional=True)
    subcategory = _text(row, "subcategory", where, optional=True)
    label = _text(row, "label", where, optional=True)
    if caption is not None:
        if not outputs:
            raise ValueError(f"{where}: a caption needs outputs to attach to")
        if category is None or label is None:
            raise ValueError(f"{where}: a report entry (caption {caption!r}) needs a category and a label")
        if not caption.endswith(".rst"):
            raise ValueError(f"{where}: caption must be an .rst file, got {caption!r}")
        if root is not None and not (root / caption).is_file():
            raise ValueError(f"{where}: caption file {caption!r} does not exist under {root}")
        stray = _fields(label, f"{where}, label") - set(wildcards)
        if stray:
            raise ValueError(f"{where}: label {label!r} uses wildcards {sorted(stray)} that the row does not fill")
    elif category is not None or subcategory is not None or label is not None:
        raise ValueError(f"{where}: category/subcategory/label are report fields; give a caption or drop them")

    params = _params(row.get("params"), rule, where)

    includes = row.get("includes") or []
    if not isinstance(includes, list) or not all(isinstance(i, str) for i in includes):
        raise ValueError(f"{where}: includes must be a list of target ids, got {includes!r}")
    if kind == "group" and not includes:
        raise ValueError(f"{where}: a group target needs includes")
    return Target(
        id=tid,
        paper=paper,
        kind=kind,
        rule=rule,
        outputs=dict(outputs),
        wildcards={k: str(v) for k, v in wildcards.items()},
        caption=caption,
        category=category,
        subcategory=subcategory,
        label=label,
        includes=tuple(includes),
        params=params,
    )


def _check_cross_rows(targets: list[Target]) -> None:
    ids = [t.id for t in targets]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise ValueError(f"figure registry: duplicate target id(s) {dupes}")
    by_id = {t.id: t for t in targets}
    rules = {t.rule for t in targets if t.rule is not None}
    for t in targets:
        if t.id in rules and t.id != t.rule:
            raise ValueError(f"target {t.id!r} has the name of another row's producing rule")
        if t.id == t.rule and t.wildcards:
            raise ValueError(f"target {t.id!r}: a producing rule with wildcards cannot be its own target")
        for inc in t.includes:
            if inc not in by_id:
                raise ValueError(f"target {t.id!r} includes unknown target {inc!r}")
    # Rows sharing a producing rule agree on the rule-level fields.
    first: dict[str, Target] = {}
    for t in targets:
        if t.rule is None:
            continue
        ref = first.setdefault(t.rule, t)
        for key in _RULE_LEVEL:
            if getattr(t, key) != getattr(ref, key):
                raise ValueError(
                    f"targets {ref.id!r} and {t.id!r} share producing rule {t.rule!r} but differ in {key}: "
                    f"{getattr(ref, key)!r} vs {getattr(t, key)!r}"
                )
        if set(t.params) != set(ref.params):
            raise ValueError(
                f"targets {ref.id!r} and {t.id!r} share producing rule {t.rule!r} but give different params: "
                f"{sorted(ref.params)} vs {sorted(t.params)}"
            )
        if ref is not t and t.wildcards == ref.wildcards:
            raise ValueError(f"targets {ref.id!r} and {t.id!r} share producing rule {t.rule!r} with the same wildcards")
    # No file belongs to two rows.
    owner: dict[str, str] = {}
    for t in targets:
        for f in t.own_files:
            if f in owner:
                raise ValueError(f"file {f!r} is an output of both targets {owner[f]!r} and {t.id!r}")
            owner[f] = t.id
    # includes form no cycle.
    state: dict[str, int] = {}

    def visit(tid: str, path: tuple[str, ...]) -> None:
        if state.get(tid) == 2:
            return
        if state.get(tid) == 1:
            raise ValueError(f"targets include each other in a cycle: {' -> '.join((*path, tid))}")
        state[tid] = 1
        for inc in by_id[tid].includes:
            visit(inc, (*path, tid))
        state[tid] = 2

    for tid in ids:
        visit(tid, ())


def parse_registry(data: object, root: str | Path | None = None) -> Registry:
    """Validate the parsed YAML of ``workflow/figures.yaml`` and build the registry.

    Args:
        data: the parsed document: ``{"papers": {key: citation}, "targets": [row, ...]}``.
        root: repository root; when given, every caption file must exist under it.

    Returns:
        The :class:`Registry`.

    Raises:
        ValueError: naming the row and the key of the first problem (unknown or missing key,
            bad id, unknown paper or kind, wildcards of a path not filled by the row, missing
            caption file, params that are not scalars or lists of scalars, rows of one rule
            that disagree or give different param names, a file claimed by two rows, an
            unknown or cyclic include).
    """
    if not isinstance(data, Mapping):
        raise ValueError(f"the figure registry must be a mapping with keys {sorted(TOP_LEVEL_KEYS)}, got {type(data).__name__}")
    unknown = sorted(set(data) - TOP_LEVEL_KEYS)
    if unknown:
        raise ValueError(f"figure registry: unknown top-level key(s) {unknown}; allowed: {sorted(TOP_LEVEL_KEYS)}")
    papers = data.get("papers")
    if not isinstance(papers, Mapping) or not papers:
        raise ValueError(f"figure registry: papers must be a non-empty mapping key -> citation, got {papers!r}")
    rows = data.get("targets")
    if not isinstance(rows, list) or not rows:
        raise ValueError(f"figure registry: targets must be a non-empty list, got {rows!r}")
    base = Path(root) if root is not None else None
    targets = [_parse_row(row, i, papers, base) for i, row in enumerate(rows)]
    _check_cross_rows(targets)
    return Registry(papers, targets)


def load_registry(path: str | Path, root: str | Path | None = None) -> Registry:
    """Read and validate a figure registry file (``workflow/figures.yaml``).

    Args:
        path: the YAML file.
        root: repository root for the caption check (see :func:`parse_registry`).

    Returns:
        The :class:`Registry`.

    Raises:
        ValueError: if the file does not parse or a row is invalid; the message starts with
            the file name.
    """
    path = Path(path)
    try:
        data = read_yaml(path)
        return parse_registry(data, root)
    except (ValueError, yaml.YAMLError) as exc:
        raise ValueError(f"{path}: {exc}") from None
