"""ppaudit.experiments.findings_causes: every findings row that does not hold gets a computed cause
(issue #34 §3), on fabricated tables whose numbers decide the cause; ~0.1 s in all."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from ppaudit.experiments.findings_causes import (
    CAUSES,
    cause_counts,
    chadha_causes,
    labeldp_causes,
    parse_values,
    require_causes,
    wang_causes,
)


def _chadha(rows) -> pd.DataFrame:
    cols = ("dataset", "algo", "finding", "adversary", "case", "values", "holds", "at_floor", "note")
    return pd.DataFrame([{**dict.fromkeys(cols, ""), "case": "worst", "at_floor": False, **r} for r in rows], columns=cols)


def _row(table: pd.DataFrame, finding: str) -> pd.Series:
    rows = table[table["finding"] == finding]
    assert len(rows) == 1, finding
    return rows.iloc[0]


def test_parse_values():
    assert parse_values("nat-advq audit=0.2151 ≤ pois-advq audit=0.1175") == {"nat-advq audit": 0.2151, "pois-advq audit": 0.1175}
    assert parse_values("lhs=0.1198 vs rhs=0.1847") == {"lhs": 0.1198, "rhs": 0.1847}
    v = parse_values("paper composed audit=0.4587 ≤ transcript law cap=inf")
    assert v["paper composed audit"] == 0.4587 and math.isinf(v["transcript law cap"])
    assert parse_values(float("nan")) == {}


def test_paper_procedure_needs_the_sound_row_to_hold():
    base = dict(dataset="d", algo="pate", adversary="nat-advq")
    paper = {**base, "finding": "paper audit<=exact transcript (estimate)", "holds": False,
             "values": "paper composed audit=0.7329 ≤ exact transcript (estimate)=0.3915"}
    sound = {**base, "finding": "audit<=exact<=dd<=di", "values": "audit=0.2151 ≤ exact=0.3915 ≤ dd=1.02 ≤ di=1.02"}
    out = chadha_causes(_chadha([paper, {**sound, "holds": True}]))
    r = _row(out, paper["finding"])
    assert r["cause"] == "paper procedure" and "0.7329" in r["cause_detail"] and "audit=0.2151" in r["cause_detail"]
    assert _row(out, "audit<=exact<=dd<=di")["cause"] == ""
    # the sound row fails as well: nothing explains it
    out = chadha_causes(_chadha([paper, {**sound, "holds": False}]))
    assert _row(out, paper["finding"])["cause"] == "open"
    # a sound row of another adversary does not count
    out = chadha_causes(_chadha([paper, {**sound, "adversary": "pois-advq", "holds": True}]))
    assert _row(out, paper["finding"])["cause"] == "open"


@pytest.mark.parametrize("rate, cause", [(0.4, "stand-in"), (0.95, "open"), (None, "open")])
def test_pois_advq_row_uses_the_poison_success_rate(rate, cause):
    row = dict(dataset="d", algo="pate", adversary="pois-advq", finding="pois-advq>=nat-advq", holds=False,
               values="nat-advq audit=0.2151 ≤ pois-advq audit=0.1175")
    teachers = dict(dataset="d", algo="pate", finding="stand-in teachers (accuracy, consensus)", holds=True,
                    values="mean_teacher_accuracy=0.7717; mean_top_vote_share=0.8433")
    table = _chadha([row, teachers])
    if rate is not None:
        table["poison_success_rate"] = [rate, float("nan")]
    r = _row(chadha_causes(table), "pois-advq>=nat-advq")
    assert r["cause"] == cause
    if rate is not None:
        assert f"{rate:g}" in r["cause_detail"]
    else:
        assert "not measured" in r["cause_detail"] and "0.7717" in r["cause_detail"]
    # the rate may also come as a value of another row of the same dataset and algorithm
    if rate is not None:
        for name in ("poison_success_rate", "poison success rate"):
            other = dict(dataset="d", algo="pate", finding="poison success", holds=True, values=f"{name}={rate}")
            assert _row(chadha_causes(_chadha([row, other])), "pois-advq>=nat-advq")["cause"] == cause
        # another algorithm's rate does not count
        other = dict(dataset="d", algo="capc", finding="poison success", holds=True, values=f"poison_success_rate={rate}")
        assert "not measured" in _row(chadha_causes(_chadha([row, other])), "pois-advq>=nat-advq")["cause_detail"]


def test_teachers_outside_the_regime_are_a_stand_in_cause():
    natq = dict(dataset="rt", algo="promptpate", adversary="pois-natq", finding="pois-natq<<advq", holds=False,
                values="pois-natq audit=4.383 ≤ 0.5·max advq audit=3.571")
    weak = dict(dataset="rt", algo="promptpate", finding="teachers classify", holds=True,
                values="teacher_accuracy=0.6631, majority_class_rate=0.625, vote_entropy=0.648")
    r = _row(chadha_causes(_chadha([natq, weak])), "pois-natq<<advq")
    assert r["cause"] == "stand-in" and "0.6631" in r["cause_detail"] and "0.03" in r["cause_detail"]
    strong = {**weak, "values": "teacher_accuracy=0.93, majority_class_rate=0.5"}
    assert _row(chadha_causes(_chadha([natq, strong])), "pois-natq<<advq")["cause"] == "open"
    # a bar of 0 never calls the teachers a stand-in limit
    assert _row(chadha_causes(_chadha([natq, weak]), margin_bar=0.0), "pois-natq<<advq")["cause"] == "open"


def test_ordering_names_the_broken_pair():
    row = dict(dataset="all", algo="promptpate", adversary="nat-advq", finding="pate<=capc<=promptpate", holds=False,
               values="pate audit/exact=0.955, capc audit/exact=0.9416, promptpate audit/exact=0.9964")
    r = _row(chadha_causes(_chadha([row])), "pate<=capc<=promptpate")
    assert r["cause"] == "open" and r["cause_detail"].startswith("pate audit/exact 0.955 > capc audit/exact 0.9416 by 0.0134")


def test_rows_that_hold_or_are_undetermined_have_no_cause():
    table = _chadha([dict(finding="a", holds=True, values="x=1"), dict(finding="b", holds=float("nan"), values="x=1"),
                     dict(finding="c", holds="False", values="x=1")])
    out = chadha_causes(table)
    assert list(out["cause"]) == ["", "", "open"]
    assert cause_counts([out]) == {"stand-in": 0, "paper procedure": 0, "open": 1}


def test_require_causes_fails_on_an_unexplained_false_row():
    table = _chadha([dict(dataset="d", algo="pate", finding="x", holds=False, values="a=1"), dict(finding="y", holds=True)])
    with pytest.raises(ValueError, match="no 'cause' column"):
        require_causes(table, "t")
    out = chadha_causes(table)
    require_causes(out, "t")  # every False row has one
    planted = out.copy()
    planted.loc[0, "cause"] = ""
    with pytest.raises(ValueError, match=r"t: 1 row\(s\) do not hold without a cause.*d / pate / x"):
        require_causes(planted, "t")
    planted.loc[0, "cause"] = "bad luck"
    with pytest.raises(ValueError, match="bad luck"):
        require_causes(planted, "t")
    require_causes(_chadha([dict(finding="y", holds=True)]), "t")  # no False row, no cause column needed


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="poison_bar must be in"):
        chadha_causes(_chadha([]), poison_bar=0.0)
    with pytest.raises(ValueError, match="margin_bar must be in"):
        chadha_causes(_chadha([]), margin_bar=2.0)
    with pytest.raises(ValueError, match=r"\['values'\]"):
        chadha_causes(pd.DataFrame({"finding": [], "holds": []}))
    with pytest.raises(ValueError, match="Wang findings table needs"):
        wang_causes(pd.DataFrame({"holds": []}))
    with pytest.raises(ValueError, match="label-DP findings table needs"):
        labeldp_causes(pd.DataFrame({"holds": []}))


def test_wang_causes():
    def r(procedure, check, value, ref, holds, dataset="mnist", finding="budget-limited attack is accurate (Wang 2022, Sec. 4.2: mean 0.11 on MNIST)"):
        return dict(dataset=dataset, finding=finding, procedure=procedure, check=check, description="mean error", value=value, reference=ref, holds=holds)
    table = pd.DataFrame([r("paper", "budget", 0.19, 0.11, False), r("ours", "budget", 0.047, 0.11, True),
                          r("ours", "budget", 0.055, 0.05, False, "fashion-mnist", "budget-limited attack is accurate (Wang 2022, Sec. 4.2: mean 0.05 on SVHN)"),
                          r("paper", "mono", 0.06, 0.15, False, finding="error falls as sigma grows (Wang 2022, Sec. 4.2)"),
                          r("ours", "mono", 0.04, 0.05, False, finding="error falls as sigma grows (Wang 2022, Sec. 4.2)"),
                          r("ours", "queries", 2786.0, float("nan"), "", finding="queries")])
    out = wang_causes(table)
    assert list(out["cause"]) == ["paper procedure", "", "stand-in", "open", "open", ""]
    assert "0.047" in out["cause_detail"][0] and "SVHN" in out["cause_detail"][2]
    assert "paper's solver fails the same check" in out["cause_detail"][4]
    require_causes(out, "wang")
    assert set(cause_counts([out])) == set(CAUSES)


def test_labeldp_causes():
    regime = dict(claim="image stand-in in the paper's accuracy regime (Obs. Table 4, CIFAR-10)", metric="max gap", value=81.3,
                  threshold="<= 10", holds=False, detail="pate eps=inf: ours 65.4 paper 92.5; pate eps=1.0: ours 10.0 paper 91.3")
    mia = dict(claim="observational LIA ~ calibration MIA (image, every mechanism and eps)", metric="max diff", value=0.87,
               threshold="<= 0.5", holds=False, detail="pate eps=inf: LIA 0.11 MIA 0.00")
    rr = dict(claim="RR audit tight", metric="min ratio", value=0.6, threshold=">= 0.75", holds=False, detail="k=2 eps=4: 2.39")
    ok = dict(claim="larger tau lowers eps", metric="m", value=1.0, threshold="", holds=True, detail="")
    out = labeldp_causes(pd.DataFrame([regime, mia, rr, ok]))
    assert list(out["cause"]) == ["stand-in", "stand-in", "open", ""]
    assert "pate eps=1.0: ours 10 vs paper 91.3" in out["cause_detail"][0] and "91.3" in out["cause_detail"][1]
    assert "k=2 eps=4: 2.39" in out["cause_detail"][2]
    # once the stand-in is in the regime, the image claim is open
    out = labeldp_causes(pd.DataFrame([{**regime, "holds": True}, mia]))
    assert list(out["cause"]) == ["", "open"]


@pytest.mark.parametrize("emb, pool, says", [(200.0, 167.0, "inclusions 200 ≥ 167"), (120.0, 167.0, "fewer expected top-k inclusions (120 < 167")])
def test_knn_embedding_row_reports_the_crafters_objective(emb, pool, says):
    row = dict(dataset="rt", algo="knn", adversary="pois-natq-embedding+test+train", finding="embedding >= test/train (audit)", holds=False,
               values=f"lhs=0.1198 vs rhs=0.1847; inclusions embedding={emb:g}, inclusions test/train={pool:g}")
    r = _row(chadha_causes(_chadha([row])), "embedding >= test/train (audit)")
    assert r["cause"] == "open" and says in r["cause_detail"] and "lhs=0.1198" in r["cause_detail"]


def test_readme_block_counts_the_causes(tmp_path):
    from ppaudit.experiments.findings_causes import README_BEGIN, README_END, write_readme_block

    tables = tmp_path / "results" / "tables"
    tables.mkdir(parents=True)
    _chadha([dict(dataset="d", algo="pate", finding="x", holds=False, values="a=1"), dict(finding="y", holds=True)]).to_csv(
        tables / "chadha2024_findings.csv", index=False)
    pd.DataFrame([dict(dataset="mnist", finding="f", procedure="ours", check="c", description="", value=1.0, reference=2.0, holds=False)]).to_csv(
        tables / "wang2022_findings.csv", index=False)
    readme = tmp_path / "README.md"
    readme.write_text(f"a\n{README_BEGIN}\nold\n{README_END}\nb\n")
    with pytest.raises(ValueError, match="labeldp_findings.csv"):
        write_readme_block(readme, tmp_path)
    pd.DataFrame([dict(claim="RR", metric="m", value=0.6, threshold=">= 0.75", holds=False, detail="")]).to_csv(tables / "labeldp_findings.csv", index=False)
    block = write_readme_block(readme, tmp_path)
    assert "chadha2024_findings.csv`: 2 rows, 1 hold, 1 do not — stand-in: 0, paper procedure: 0, open: 1" in block
    assert readme.read_text() == f"a\n{README_BEGIN}\n{block}\n{README_END}\nb\n" and "\nold\n" not in readme.read_text()
    with pytest.raises(ValueError, match="no <!-- findings-causes:begin -->"):
        write_readme_block(tmp_path / "results" / "tables" / "wang2022_findings.csv", tmp_path)
