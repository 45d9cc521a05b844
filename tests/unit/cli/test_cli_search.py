"""``ppaudit search module:function ...`` (issue 28 item 4): exit 0 / 1 / 2, the witness in text and JSON."""

import json
import textwrap

import pytest

from cli_runner import call

MECH = textwrap.dedent(
    """
    import numpy as np

    def rnm_ok(c, n, rng):      # Laplace report-noisy-max, scale 1/eps: (1, 0)-DP
        c = np.asarray(c, float)
        return np.argmax(c + rng.laplace(0, 1.0, (n, c.size)), axis=1)

    def rnm_bug(c, n, rng):     # scale halved: 2-DP claimed as 1-DP
        c = np.asarray(c, float)
        return np.argmax(c + rng.laplace(0, 0.5, (n, c.size)), axis=1)

    def em(votes, n, rng):      # exponential mechanism without the 1/2: true eps 2
        u = np.bincount(np.asarray(votes), minlength=2)
        p = np.exp(u - u.max()); p = p / p.sum()
        return rng.choice(2, size=n, p=p)
    """
)


@pytest.fixture
def mechdir(tmp_path, monkeypatch):
    (tmp_path / "search_cli_mechs.py").write_text(MECH)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_search_finds_violation_with_witness(capsys, mechdir):
    code, out, _ = call(capsys, "search", "search_cli_mechs:rnm_bug", "--neighbours", "count-vectors", "--length", 3,
                        "--claim-dp", 1, "--trials", "2e4", "--json")
    assert code == 1
    d = json.loads(out)
    assert d["verdict"] == "violation"
    assert {"dataset", "neighbour", "output_set", "p0", "p0_interval", "p1", "p1_interval"} <= set(d["witness"])
    assert len(d["pairs"]) == 12 and d["certified"] == 5
    code, out, _ = call(capsys, "search", "search_cli_mechs:rnm_bug", "--neighbours", "count-vectors", "--length", 3,
                        "--claim-dp", 1, "--trials", "2e4")
    assert code == 1 and "verdict: violation" in out and "witness: pair" in out and "invisible" in out


def test_search_consistent_and_pairs_file(capsys, mechdir):
    code, out, _ = call(capsys, "search", "search_cli_mechs:rnm_ok", "--neighbours", "count-vectors", "--length", 2,
                        "--claim-dp", 1, "--trials", "5000")
    assert code == 0 and "verdict: consistent" in out
    (mechdir / "pairs.json").write_text(json.dumps([[[0], [1]], [[0, 0, 0, 0, 0], [0, 0, 0, 0, 1]]]))
    code, out, _ = call(capsys, "search", "search_cli_mechs:em", "--pairs", "pairs.json", "--claim-dp", 1,
                        "--trials", "2e4", "--json")
    assert code == 1
    assert json.loads(out)["witness"]["dataset"] == [0, 0, 0, 0, 0]
    code, out, _ = call(capsys, "search", "search_cli_mechs:em", "--neighbours", "replace-one", "--database", "[0,0,0,0,0]",
                        "--values", "[0,1]", "--sample", 3, "--claim-dp", 1, "--trials", "2e4")
    assert code == 1 and out.count("\n") >= 6


@pytest.mark.parametrize("args, message", [
    (["search_cli_mechs:nope", "--neighbours", "count-vectors", "--length", "2"], "no attribute 'nope'"),
    (["no_such_module_xyz:f", "--neighbours", "count-vectors", "--length", "2"], "cannot import module"),
    (["search_cli_mechs", "--neighbours", "count-vectors", "--length", "2"], "module:function"),
    (["search_cli_mechs:em", "--neighbours", "count-vectors"], "needs --length"),
    (["search_cli_mechs:em"], "exactly one of --neighbours"),
    (["search_cli_mechs:em", "--pairs", "missing.json"], "pairs file not found"),
    (["search_cli_mechs:em", "--neighbours", "replace-one", "--database", "[0,", "--values", "[1]"], "must be JSON"),
    (["search_cli_mechs:em", "--neighbours", "count-vectors", "--length", "2", "--certify-top", "0"], "--certify-top"),
    (["search_cli_mechs:em", "--neighbours", "count-vectors", "--length", "2", "--trials", "1.5"], "--trials"),
])
def test_search_bad_input_exits_2(capsys, mechdir, args, message):
    code, _, err = call(capsys, "search", *args)
    assert code == 2
    assert message in err


def test_search_help(capsys):
    code, out, _ = call(capsys, "search", "--help")
    assert code == 0 and "usage: ppaudit search" in out and "--neighbours" in out and "--pairs" in out
