"""The workflow's layout rules (issue 12; shared/CONVENTIONS.md items 1, 7, 17, 19), checked on the files.

* Every rule's script is ``workflow/scripts/<rule>.py`` and has a module docstring naming the
  rule; no script serves two rules. Rules of stages not yet converted are listed in
  ``NOT_YET_RENAMED`` (the list may only shrink).
* ``common.smk`` is the only ``*common*.smk`` of the converted stages; no rule file appends to
  or extends a list defined in another file (no mutation of globals across files).
* The converted stages read the config through ``get_config`` only (no ``config[...]`` and
  no per-stage accessor family).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RULES = REPO / "workflow" / "rules"
SCRIPTS = REPO / "workflow" / "scripts"

# Stages converted to the layout (their rule files and their sections of common.smk).
CONVERTED = (
    "labeldp.smk", "prompts.smk", "download.smk", "features.smk", "report.smk", "wang2022.smk",
    "synthetic.smk", "pate_capc.smk", "knn.smk", "blackbox.smk",
)  # fmt: skip
# Rules whose scripts keep an old name (none left: every stage is converted). Never add one.
NOT_YET_RENAMED: set[str] = set()


def _rule_scripts() -> list[tuple[str, str, str | None]]:
    """(file, rule, script stem or None) of every rule in workflow/rules/."""
    out = []
    for smk in sorted(RULES.glob("*.smk")):
        text = smk.read_text(encoding="utf-8")
        for m in re.finditer(r"^rule (\w+):(.*?)(?=^rule |\Z)", text, flags=re.M | re.S):
            script = re.search(r'script:\s*\n\s*"\.\./scripts/([\w.]+)\.py"', m.group(2))
            out.append((smk.name, m.group(1), script.group(1) if script else None))
    return out


def test_every_script_is_named_after_its_rule_and_says_what_it_makes():
    rules = _rule_scripts()
    assert len(rules) > 40
    wrong = sorted(f"{rule} -> {script}.py ({smk})" for smk, rule, script in rules if script and script != rule and rule not in NOT_YET_RENAMED)
    assert not wrong, f"scripts not named after their rule: {wrong}"
    for smk, rule, script in rules:
        if script is None or rule in NOT_YET_RENAMED:
            continue
        doc = ast.get_docstring(ast.parse((SCRIPTS / f"{script}.py").read_text(encoding="utf-8")))
        first_line = (doc or "").splitlines()[0] if doc else ""
        assert re.search(rf"\brule {rule}\b", first_line, flags=re.I), f"{script}.py: the docstring's first line must name rule {rule} and say what it makes"
    converted = [(rule, script) for smk, rule, script in rules if smk in CONVERTED and script]
    assert all(rule == script for rule, script in converted)


def test_no_script_serves_two_rules_in_converted_stages():
    rules = [(smk, rule, script) for smk, rule, script in _rule_scripts() if script and rule not in NOT_YET_RENAMED]
    scripts = [script for _, _, script in rules]
    assert len(scripts) == len(set(scripts)), sorted({s for s in scripts if scripts.count(s) > 1})


def test_no_stage_common_file_or_cross_file_mutation():
    stage_commons = [p.name for p in RULES.glob("*common*.smk") if p.name != "common.smk"]
    assert not stage_commons, f"{stage_commons}: merge into common.smk"
    snakefile = (REPO / "Snakefile").read_text(encoding="utf-8")
    for name in ("labeldp_common", "prompts_common", "report_common", "wang2022_common", "pate_capc_common", "knn_common"):
        assert name not in snakefile
    common = (RULES / "common.smk").read_text(encoding="utf-8")
    defined = set(re.findall(r"^([A-Z][A-Z0-9_]+)\s*=", common, flags=re.M))
    assert {"CHADHA_FIG34_SUMMARIES", "CHADHA_FINDINGS_PARTS"} <= defined
    for smk in sorted(RULES.glob("*.smk")):
        text = smk.read_text(encoding="utf-8")
        for const in defined:
            assert not re.search(rf"\b{const}\s*(\.(append|extend|insert|update)\(|\+=|\[[^\]]*\]\s*=)", text), f"{smk.name} modifies {const}"
            if smk.name != "common.smk":
                assert not re.search(rf"^{const}\s*=", text, flags=re.M), f"{smk.name} redefines {const} of common.smk"


def test_converted_stages_read_the_config_through_get_config():
    for name in CONVERTED:
        text = (RULES / name).read_text(encoding="utf-8")
        assert not re.search(r"\bconfig\[", text), f"{name} reads config[...] directly: use get_config(*keys)"
        assert not re.search(r"\b(pp_config|labeldp|knn_config|pc_config)\(\)", text), f"{name} uses a per-stage config accessor"
        family = r"\b(synthetic_settings|synthetic_pair|pc_dataset|knn_dataset|pc_instantiations|pc_teacher_params)\("
        assert not re.search(family, text), f"{name} uses a per-stage config accessor"


def test_tests_are_filed_by_subpackage_workflow_and_reliability():
    """Issue 12 §5: library tests in tests/unit/<subpackage>/ (a sub-package or module of ppaudit),
    Snakemake runs in tests/workflow/, the drills in tests/reliability/; none at the top of tests/."""
    tests = REPO / "tests"
    assert not sorted(p.name for p in tests.glob("test_*.py")), "test files at the top of tests/"
    package = REPO / "src" / "ppaudit"
    names = {p.stem for p in package.glob("*.py")} | {p.name for p in package.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    unit = tests / "unit"
    for folder in sorted(p for p in unit.iterdir() if p.is_dir() and p.name != "__pycache__"):
        # tests/unit/docs holds the checks of the README's and docstrings' examples
        assert folder.name in names | {"docs"}, f"tests/unit/{folder.name}/ names no ppaudit sub-package or module"
    found = {p.parent.relative_to(tests).parts[0] for p in tests.rglob("test_*.py")}
    assert found <= {"unit", "workflow", "reliability"}, sorted(found)
