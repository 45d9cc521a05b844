"""ppaudit.workflow.registry: parsing and validation of workflow/figures.yaml.

* The repository's registry loads, lists every target of today's workflow under its exact
  name, and its files are those `rule all` collected before the registry existed.
* Each rejected input (unknown key, unfilled wildcard, missing caption, rows of one rule
  that disagree, a file claimed twice, an include cycle, …) raises ValueError naming it.
* Report metadata, target files (with includes) and the producer check on small registries.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from ppaudit.workflow import OutputSpec, load_registry, parse_registry

REPO = Path(__file__).resolve().parents[3]
REGISTRY = REPO / "workflow" / "figures.yaml"

# Every figure/table target of the workflow before the registry (the 53 hand-written
# alias rules plus the two producing rules that were their own targets).
TARGETS_BEFORE = (
    [f"chadha_fig{n}" for n in range(2, 32)]
    + ["chadha_findings", "chadha_promptpate"]
    + [f"wang_fig{n}" for n in (1, 3, 4, 5, 6, 7)]
    + ["wang_defence_caching", "wang_findings"]
    + [f"obs_table{n}" for n in (1, 2, 4, 5, 6, 7)]
    + [f"obs_fig{n}" for n in range(1, 6)]
    + ["malek_table5", "malek_table6", "labeldp_findings", "paper_comparison"]
)


def _files_before() -> set[str]:
    """The inputs of `rule all` before the registry (the removed *_targets() functions)."""
    chadha = [f"results/figures/chadha2024/fig{n}.{e}" for n in range(2, 32) for e in ("pdf", "png", "csv")]
    pp = ["results/chadha2024/private_prediction/promptpate/summary.csv",
          "results/chadha2024/private_prediction/promptpate/summary_variants.csv"]
    wang = [f"results/figures/wang2022/{f}.{e}" for f in ("fig1", "fig3", "fig4", "fig5", "fig6", "fig7", "defence_caching")
            for e in ("pdf", "png", "csv")]
    obs_figs = [f"results/figures/labeldp/obs_fig{n}.{e}" for n in range(1, 6) for e in ("pdf", "png", "csv")]
    tables = [f"results/tables/labeldp/{t}.{e}" for t in ("obs_table1", "obs_table2", "obs_table4", "obs_table5",
                                                            "obs_table6", "obs_table7", "malek_table5", "malek_table6")
              for e in ("csv", "md")]
    single = ["results/tables/chadha2024_findings.csv", "results/tables/wang2022_findings.csv",
              "results/tables/labeldp_findings.csv", "results/tables/paper_comparison.csv"]
    return set(chadha + pp + wang + obs_figs + tables + single)


def _minimal() -> dict:
    """A valid two-row registry: a wildcard rule with two targets."""
    row = {
        "id": "fig_a", "paper": "p", "kind": "figure", "rule": "plot_fig",
        "wildcards": {"fig": "a"},
        "outputs": {"pdf": "results/{fig}.pdf", "csv": "results/{fig}.csv"},
        "caption": "cap.rst", "category": "Paper", "subcategory": "Figs.", "label": "{fig}",
    }
    other = copy.deepcopy(row)
    other.update(id="fig_b", wildcards={"fig": "b"})
    return {"papers": {"p": "A paper"}, "targets": [row, other]}


# --- the repository's registry -----------------------------------------------------------


# Targets added since (issue 15's auditor self-check, the worst-case study).
TARGETS_ADDED = {"selfcheck", "chadha_worstcase", "blackbox_benchmark"}


def test_repository_registry_keeps_every_target_name_and_file():
    reg = load_registry(REGISTRY, root=REPO)
    ids = set(reg.ids())
    assert set(TARGETS_BEFORE) <= ids, sorted(set(TARGETS_BEFORE) - ids)
    assert ids - set(TARGETS_BEFORE) <= TARGETS_ADDED, sorted(ids - set(TARGETS_BEFORE) - TARGETS_ADDED)
    # `rule all` collects the same files as before, plus only those of the added targets.
    added = {f for t in ids & TARGETS_ADDED for f in reg.files(t)}
    assert set(reg.all_files()) - added == _files_before()
    # Only the producing rule that carries its target's name gets no generated rule.
    assert {t.id for t in reg.targets if not t.needs_target_rule} == {"paper_comparison"}
    assert len(reg.generated_targets()) == len(ids) - 1


def test_repository_registry_targets_list_their_own_files():
    reg = load_registry(REGISTRY, root=REPO)
    assert reg.files("chadha_fig3") == [f"results/figures/chadha2024/fig3.{e}" for e in ("pdf", "png", "csv")]
    assert reg.files("obs_table2") == ["results/tables/labeldp/obs_table2.csv", "results/tables/labeldp/obs_table2.md"]
    group = reg.files("chadha_promptpate")
    assert group[:2] == ["results/chadha2024/private_prediction/promptpate/summary.csv",
                         "results/chadha2024/private_prediction/promptpate/summary_variants.csv"]
    assert set(group[2:]) == {f"results/figures/chadha2024/fig{n}.{e}" for n in range(17, 25) for e in ("pdf", "png", "csv")}


def test_repository_registry_report_entries_have_captions_that_exist():
    reg = load_registry(REGISTRY, root=REPO)
    for rule in reg.producing_rules():
        for name, spec in reg.outputs_of(rule).items():
            if spec.in_report:
                assert (REPO / spec.caption).is_file(), (rule, name, spec.caption)
                assert spec.category and spec.labels["file"], (rule, name)
    assert reg.outputs_of("plot_chadha_synthetic")["csv"].labels == {"figure": "{experiment}", "file": "CSV (plotted numbers)"}
    assert reg.outputs_of("tabulate_labeldp")["csv"].labels == {"table": "{table}", "file": "CSV"}
    assert reg.outputs_of("tabulate_wang_findings")["table"] == OutputSpec("results/tables/wang2022_findings.csv")


# --- small registries ---------------------------------------------------------------------


def test_minimal_registry_outputs_and_files(tmp_path):
    (tmp_path / "cap.rst").write_text("caption")
    reg = parse_registry(_minimal(), root=tmp_path)
    assert reg.files("fig_b") == ["results/b.pdf", "results/b.csv"]
    specs = reg.outputs_of("plot_fig")
    assert list(specs) == ["pdf", "csv"]
    assert specs["pdf"] == OutputSpec("results/{fig}.pdf", "cap.rst", "Paper", "Figs.", {"figure": "{fig}", "file": "PDF"})
    assert specs["csv"].labels["file"] == "CSV (plotted numbers)"
    with pytest.raises(KeyError, match="plot_other"):
        reg.outputs_of("plot_other")
    with pytest.raises(KeyError, match="nope"):
        reg["nope"]


def test_group_target_collects_included_files_once():
    data = _minimal()
    data["targets"].append({"id": "both", "paper": "p", "kind": "group", "outputs": {}, "includes": ["fig_a", "fig_b", "fig_a"]})
    reg = parse_registry(data)
    assert reg.files("both") == ["results/a.pdf", "results/a.csv", "results/b.pdf", "results/b.csv"]
    assert reg.all_files() == ["results/a.pdf", "results/a.csv", "results/b.pdf", "results/b.csv"]


def test_files_of_some_targets_is_rule_all_under_the_config_key_targets():
    data = _minimal()
    data["targets"].append({"id": "both", "paper": "p", "kind": "group", "outputs": {}, "includes": ["fig_a", "fig_b"]})
    reg = parse_registry(data)
    assert reg.files_of(None) == reg.all_files()
    assert reg.files_of(["fig_b"]) == ["results/b.pdf", "results/b.csv"]
    assert reg.files_of(["fig_b", "both"]) == ["results/b.pdf", "results/b.csv", "results/a.pdf", "results/a.csv"]
    with pytest.raises(ValueError, match=r"unknown target\(s\) \['fig_c'\]"):
        reg.files_of(["fig_a", "fig_c"])


def _mutated(change) -> dict:
    data = _minimal()
    change(data)
    return data


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["targets"][0].update(colour="red"), r"unknown key\(s\) \['colour'\]"),
        (lambda d: d["targets"][0].pop("outputs"), r"missing key\(s\) \['outputs'\]"),
        (lambda d: d["targets"][0].update(id="Fig-A"), "snake_case"),
        (lambda d: d["targets"][0].update(paper="q"), "paper 'q'"),
        (lambda d: d["targets"][0].update(kind="plot"), "kind must be one of"),
        (lambda d: d["targets"][0].update(wildcards={}), r"uses wildcards \['fig'\] but the row fills \[\]"),
        (lambda d: d["targets"][0]["outputs"].update(pdf="results/{fig,[a-z]+}.pdf"), "plain name"),
        (lambda d: d["targets"][0]["outputs"].update(pdf="/abs/a.pdf"), "relative path"),
        (lambda d: d["targets"][0]["outputs"].update({"bad-name": "results/{fig}.x"}), "Python identifier"),
        (lambda d: d["targets"][0].update(caption="cap.txt"), r"\.rst"),
        (lambda d: d["targets"][0].pop("category"), "needs a category and a label"),
        (lambda d: d["targets"][0].update(label="{other}"), r"label '\{other\}' uses wildcards \['other'\]"),
        (lambda d: d["targets"][1].update(caption="other.rst"), "share producing rule 'plot_fig' but differ in caption"),
        (lambda d: d["targets"][1].update(wildcards={"fig": "a"}), "same wildcards"),
        (lambda d: d["targets"][1].update(id="fig_a"), "duplicate target id"),
        (lambda d: d["targets"].append({"id": "t", "paper": "p", "kind": "table", "rule": "fig_a", "outputs": {"csv": "t.csv"}}),
         "'fig_a' has the name of another row's producing rule"),
        (lambda d: d["targets"][1].update(id="plot_fig"), "rule with wildcards cannot be its own target"),
        (lambda d: d["targets"][0].update(includes=["missing"]), "unknown target 'missing'"),
        (lambda d: d.update(extra=1), "unknown top-level key"),
        (lambda d: d.update(targets=[]), "targets must be a non-empty list"),
        (lambda d: d["targets"][0].update(wildcards={"fig": "a/b"}), "path-safe"),
    ],
)
def test_invalid_rows_raise_value_error_naming_the_problem(change, message):
    with pytest.raises(ValueError, match=message):
        parse_registry(_mutated(change))


def test_missing_caption_file_is_named(tmp_path):
    with pytest.raises(ValueError, match="caption file 'cap.rst' does not exist"):
        parse_registry(_minimal(), root=tmp_path)


def test_file_claimed_by_two_rules_is_rejected():
    data = _minimal()
    data["targets"].append({"id": "again", "paper": "p", "kind": "table", "rule": "tabulate", "outputs": {"csv": "results/a.csv"}})
    with pytest.raises(ValueError, match="'results/a.csv' is an output of both targets 'fig_a' and 'again'"):
        parse_registry(data)


def test_include_cycle_is_rejected():
    data = _minimal()
    data["targets"] += [
        {"id": "g1", "paper": "p", "kind": "group", "outputs": {}, "includes": ["g2"]},
        {"id": "g2", "paper": "p", "kind": "group", "outputs": {}, "includes": ["fig_a", "g1"]},
    ]
    with pytest.raises(ValueError, match="cycle: g1 -> g2 -> g1"):
        parse_registry(data)


def test_group_without_includes_and_figure_without_outputs_are_rejected():
    data = _minimal()
    data["targets"].append({"id": "g", "paper": "p", "kind": "group", "outputs": {}})
    with pytest.raises(ValueError, match="group target needs includes"):
        parse_registry(data)
    data = _minimal()
    data["targets"].append({"id": "t", "paper": "p", "kind": "table", "rule": "x", "outputs": {}})
    with pytest.raises(ValueError, match="needs at least one output"):
        parse_registry(data)


def test_check_producers_names_missing_rule_and_unproduced_file():
    reg = parse_registry(_minimal())
    made = {"results/a.pdf", "results/a.csv", "results/b.pdf", "results/b.csv"}
    reg.check_producers(["plot_fig"], lambda rule, path: rule == "plot_fig" and path in made)  # consistent: no error
    with pytest.raises(ValueError, match="producing rule 'plot_fig' is not defined"):
        reg.check_producers(["other"], lambda rule, path: True)
    with pytest.raises(ValueError, match="rule 'plot_fig' does not produce 'results/b.csv'"):
        reg.check_producers(["plot_fig"], lambda rule, path: path != "results/b.csv")


def test_load_registry_prefixes_the_file_name(tmp_path):
    bad = tmp_path / "figures.yaml"
    bad.write_text(yaml.safe_dump({"papers": {"p": "x"}, "targets": [{"id": "a"}]}))
    with pytest.raises(ValueError, match=r"figures\.yaml: targets\[0\] \(a\): missing key"):
        load_registry(bad)
    bad.write_text("targets: [unclosed")
    with pytest.raises(ValueError, match=r"figures\.yaml"):
        load_registry(bad)
