"""ppaudit.workflow.registry: per-row ``params`` and per-row report subcategories.

* A row's params reach its producing rule through ``params_of(rule, wildcards)``, selected by
  the job's wildcards (a mapping or Snakemake's ``Wildcards``); bad params raise ValueError.
* Rows of one rule may differ in subcategory: the report gets a function of the wildcards.
* The repository's appendix figures (Chadha et al. 2024, Figs. 7–31) are one rule whose rows
  carry the per-figure differences.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from ppaudit.plots.pate_capc import APPENDIX_BARS
from ppaudit.workflow import load_registry, parse_registry

REPO = Path(__file__).resolve().parents[3]


def _registry_data() -> dict:
    row = {
        "id": "fig_a", "paper": "p", "kind": "figure", "rule": "plot_fig", "wildcards": {"fig": "a"},
        "params": {"adversary": "nat-advq", "columns": ["exact", "k_cut"], "variant": None, "na": True},
        "outputs": {"pdf": "results/{fig}.pdf"}, "caption": "cap.rst", "category": "Paper", "subcategory": "A", "label": "{fig}",
    }
    other = copy.deepcopy(row)
    other.update(id="fig_b", wildcards={"fig": "b"}, subcategory="B")
    other["params"].update(adversary="pois-advq", columns=[], na=False)
    return {"papers": {"p": "A paper"}, "targets": [row, other]}


class _Wildcards:
    """What Snakemake passes to params functions: names with items() (a Namedlist)."""

    def __init__(self, **values):
        self._values = values

    def items(self):
        return self._values.items()


def test_params_of_selects_the_row_by_wildcards_and_returns_a_copy():
    reg = parse_registry(_registry_data())
    assert reg.params_of("plot_fig", {"fig": "b"}) == {"adversary": "pois-advq", "columns": [], "variant": None, "na": False}
    got = reg.params_of("plot_fig", _Wildcards(fig="a", other="ignored"))
    assert got["adversary"] == "nat-advq" and got["columns"] == ["exact", "k_cut"]
    got["columns"].append("x")
    assert reg.params_of("plot_fig", {"fig": "a"})["columns"] == ["exact", "k_cut"]
    assert reg.wildcard_values("plot_fig", "fig") == ["a", "b"]
    with pytest.raises(KeyError, match="producing rule 'plot_fig' has wildcards {'fig': 'c'}"):
        reg.params_of("plot_fig", {"fig": "c"})
    with pytest.raises(KeyError, match="fills wildcard 'nope'"):
        reg.wildcard_values("plot_fig", "nope")


def test_subcategory_per_row_is_a_function_of_the_wildcards():
    reg = parse_registry(_registry_data())
    sub = reg.outputs_of("plot_fig")["pdf"].subcategory
    assert callable(sub) and sub(_Wildcards(fig="a")) == "A" and sub({"fig": "b"}) == "B"
    same = _registry_data()
    same["targets"][1]["subcategory"] = "A"
    assert parse_registry(same).outputs_of("plot_fig")["pdf"].subcategory == "A"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["targets"][1]["params"].pop("na"), r"give different params: \['adversary', 'columns', 'na', 'variant'\] vs"),
        (lambda d: d["targets"][0]["params"].update(nested={"a": 1}), "param nested must be a string, number, boolean, null"),
        (lambda d: d["targets"][0]["params"].update(columns=[["a"]]), "param columns must be"),
        (lambda d: d["targets"][0]["params"].update({"bad-name": 1}), "param name 'bad-name' must be a Python identifier"),
        (lambda d: d["targets"][0].update(params=["a"]), "params must be a mapping"),
        (lambda d: d["targets"].append({"id": "g", "paper": "p", "kind": "group", "outputs": {}, "includes": ["fig_a"],
                                        "params": {"x": 1}}), "has params but no producing rule"),
    ],
)
def test_bad_params_raise_value_error_naming_them(change, message):
    data = _registry_data()
    change(data)
    with pytest.raises(ValueError, match=message):
        parse_registry(data)


def test_repository_appendix_figures_are_one_rule_with_per_row_params():
    reg = load_registry(REPO / "workflow" / "figures.yaml", root=REPO)
    rows = reg.rows_of("plot_chadha_appendix")
    assert [r.id for r in rows] == [f"chadha_fig{n}" for n in range(7, 32)]
    mechanisms = {"pate": range(7, 12), "capc": range(12, 17), "promptpate": range(17, 25), "knn": range(25, 32)}
    for row in rows:
        n = int(row.wildcards["appfig"][3:])
        p = row.params
        assert n in mechanisms[p["mechanism"]], row.id
        assert p["title"].startswith(f"Fig. {n}: ") and p["case"] in ("worst", "average"), row.id
        summary = "summary_variants.csv" if p["mechanism"] == "promptpate" else "summary.csv"
        algo = p["mechanism"]
        assert p["summary"] == f"results/chadha2024/private_prediction/{algo}/{summary}", row.id
        # As before the rules were merged: PromptPATE's CSVs are read without pandas' NA parsing.
        assert p["keep_default_na"] is (p["mechanism"] != "promptpate"), row.id
        assert (p["variant"] is not None) is (p["mechanism"] == "promptpate"), row.id
        # Private-kNN has no data-dependent theory; the others draw the default bars.
        assert p["columns"] == (["data_independent", "exact", "two_cut_cp", "k_cut"] if algo == "knn" else None), row.id
        assert set(p["columns"] or ()) <= set(APPENDIX_BARS), row.id
    sub = reg.outputs_of("plot_chadha_appendix")["pdf"].subcategory
    assert [sub({"appfig": f}) for f in ("fig7", "fig17", "fig31")] == ["App. E.1–E.2", "App. E.3 (PromptPATE)", "App. E.4 (Private-kNN)"]
