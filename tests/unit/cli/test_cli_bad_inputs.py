"""Issue 27, item 6: the CLI never crashes, and never with the violation code.

One table of bad inputs over every subcommand: each must exit 2 with exactly one line on
stderr that names the flag or file, shows the bad value where there is one, and carries no
traceback. Then the cases that must *work* (``.npy`` votes, ``--histograms``, ``--sep``), the
transposition warning, the internal-error handler with and without ``--debug``, and the
self-check's power-bar note.
"""

import json
import zipfile

import numpy as np
import pytest

import ppaudit.cli.audit_counts as cli_audit_counts
from ppaudit.blackbox.votes import VotesLayoutWarning, load_votes, votes_look_transposed
from cli_runner import call

GOOD_COUNTS = "output,counts0,counts1\na,7300,2700\nb,2700,7300\n"


def _votes(n_teachers=50, n_queries=6, seed=0):
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 4, n_queries)
    noise = rng.integers(0, 4, (n_teachers, n_queries))
    return np.where(rng.random((n_teachers, n_queries)) < 0.8, truth, noise)


def _files(d):
    """Every bad (and one good) input file, written once per test into ``d``."""
    np.savez(d / "good.npz", votes=_votes(), num_classes=4)
    (d / "good.csv").write_text(GOOD_COUNTS)
    (d / "empty.npz").write_bytes(b"")
    (d / "empty.npy").write_bytes(b"")
    (d / "empty.csv").write_bytes(b"")
    (d / "votes.csv").write_text("t0,t1,t2\n0,1,0\n1,1,1\n")
    np.save(d / "flat.npy", np.arange(10))
    np.save(d / "float.npy", np.full((5, 3), 0.5))
    np.save(d / "negative.npy", -np.ones((5, 3), dtype=int))
    np.save(d / "strings.npy", np.array([["a", "b"], ["c", "d"]]))
    np.save(d / "hist1.npy", np.ones((4, 1), dtype=int))
    np.savez(d / "wrongkey.npz", labels=_votes())
    np.savez(d / "nc_list.npz", votes=_votes(), num_classes=[10, 10])
    np.savez(d / "nc_one.npz", votes=np.zeros((5, 3), dtype=int), num_classes=1)
    np.savez(d / "label_high.npz", votes=_votes(), num_classes=3)
    np.savez(d / "object.npz", votes=np.array([[1, "a"], [2, None]], dtype=object))
    (d / "corrupt.npz").write_bytes(b"PK\x03\x04" + b"\x00" * 40)
    with zipfile.ZipFile(d / "badmember.npz", "w") as z:
        z.writestr("votes.npy", b"not a numpy array")
    (d / "folder.npz").mkdir()
    np.save(d / "huge_label.npy", np.full((3, 3), 2**40))
    np.savez(d / "no_votes.npz", histograms=np.zeros((2, 3), dtype=int))
    (d / "nocols.csv").write_text("a,b\n1,2\n3,4\n")
    (d / "negative.csv").write_text("counts0,counts1\n10,5\n-3,5\n")
    (d / "fraction.csv").write_text("counts0,counts1\n10,5\n2.5,5\n")
    (d / "semicolon.csv").write_text("counts0;counts1\n10;5\n3;5\n")
    (d / "onerow.csv").write_text("counts0,counts1\n10,5\n")
    (d / "zeros.csv").write_text("counts0,counts1\n0,5\n0,5\n")
    (d / "ragged.csv").write_text('counts0,counts1\n10,5\n"3,5\n')


# (id, argv with {d} for the files' folder, what the one line must contain)
CASES = [
    # audit-votes: files
    ("votes-missing", ["audit-votes", "{d}/nope.npz", "--sigma", "40"], ["nope.npz", "not found"]),
    ("votes-folder", ["audit-votes", "{d}/folder.npz", "--sigma", "40"], ["folder.npz", "not a file"]),
    ("votes-empty-npz", ["audit-votes", "{d}/empty.npz", "--sigma", "40"], ["empty.npz", "empty"]),
    ("votes-empty-npy", ["audit-votes", "{d}/empty.npy", "--sigma", "40"], ["empty.npy", "empty"]),
    ("votes-csv", ["audit-votes", "{d}/votes.csv", "--sigma", "40"], ["votes.csv", "not a numpy", "t0,t1"]),
    ("votes-npy-1d", ["audit-votes", "{d}/flat.npy", "--sigma", "40"], ["flat.npy", "(10,)"]),
    ("votes-npy-float", ["audit-votes", "{d}/float.npy", "--sigma", "40"], ["float.npy", "0.5"]),
    ("votes-npy-negative", ["audit-votes", "{d}/negative.npy", "--sigma", "40"], ["negative.npy", "-1"]),
    ("votes-npy-strings", ["audit-votes", "{d}/strings.npy", "--sigma", "40"], ["strings.npy", "dtype"]),
    ("votes-hist-one-class", ["audit-votes", "{d}/hist1.npy", "--sigma", "40", "--histograms"], ["hist1.npy", "C >= 2"]),
    ("votes-wrong-key", ["audit-votes", "{d}/wrongkey.npz", "--sigma", "40"], ["wrongkey.npz", "'votes'", "labels"]),
    ("votes-num-classes-list", ["audit-votes", "{d}/nc_list.npz", "--sigma", "40"], ["nc_list.npz", "num_classes", "[10, 10]"]),
    ("votes-num-classes-one", ["audit-votes", "{d}/nc_one.npz", "--sigma", "40"], ["nc_one.npz", "num_classes", "1"]),
    ("votes-label-too-high", ["audit-votes", "{d}/label_high.npz", "--sigma", "40"], ["label_high.npz", "num_classes=3"]),
    ("votes-object-array", ["audit-votes", "{d}/object.npz", "--sigma", "40"], ["object.npz", "pickled"]),
    ("votes-corrupt-zip", ["audit-votes", "{d}/corrupt.npz", "--sigma", "40"], ["corrupt.npz", "not a readable"]),
    ("votes-corrupt-member", ["audit-votes", "{d}/badmember.npz", "--sigma", "40"], ["badmember.npz"]),
    ("votes-histograms-flag-on-labels", ["audit-votes", "{d}/good.npz", "--sigma", "40", "--histograms"], ["good.npz", "--histograms"]),
    ("votes-num-classes-conflict", ["audit-votes", "{d}/good.npz", "--sigma", "40", "--num-classes", "7"], ["good.npz", "num_classes", "7"]),
    ("votes-huge-label", ["audit-votes", "{d}/huge_label.npy", "--sigma", "40"], ["huge_label.npy", str(2**40)]),
    ("votes-empty-histogram", ["audit-votes", "{d}/no_votes.npz", "--sigma", "40"], ["no_votes.npz", "row 0"]),
    # audit-votes: flags
    ("votes-orders-inf", ["audit-votes", "{d}/good.npz", "--sigma", "4", "--orders", "inf"], ["--orders", "inf"]),
    ("votes-sigma-zero", ["audit-votes", "{d}/good.npz", "--sigma", "0"], ["--sigma", "'0'"]),
    ("votes-sigma-text", ["audit-votes", "{d}/good.npz", "--sigma", "forty"], ["--sigma", "forty"]),
    ("votes-sigma-missing", ["audit-votes", "{d}/good.npz"], ["--sigma"]),
    ("votes-threshold-alone", ["audit-votes", "{d}/good.npz", "--sigma", "4", "--threshold", "3"], ["--threshold", "--sigma1", "3"]),
    ("votes-delta", ["audit-votes", "{d}/good.npz", "--sigma", "4", "--delta", "1.5"], ["--delta", "1.5"]),
    ("votes-orders", ["audit-votes", "{d}/good.npz", "--sigma", "4", "--orders", "0.5,2"], ["--orders", "0.5,2"]),
    ("votes-trials-small", ["audit-votes", "{d}/good.npz", "--sigma", "4", "--trials", "5"], ["--trials", "'5'"]),
    ("votes-confidence", ["audit-votes", "{d}/good.npz", "--sigma", "4", "--confidence", "1"], ["--confidence", "'1'"]),
    ("votes-exact-queries", ["audit-votes", "{d}/good.npz", "--sigma", "4", "--exact-queries", "0"], ["--exact-queries", "'0'"]),
    ("votes-num-classes-flag", ["audit-votes", "{d}/good.npz", "--sigma", "4", "--num-classes", "1"], ["--num-classes", "'1'"]),
    # audit-counts
    ("counts-missing", ["audit-counts", "{d}/nope.csv"], ["nope.csv", "not found"]),
    ("counts-empty", ["audit-counts", "{d}/empty.csv"], ["empty.csv", "empty"]),
    ("counts-binary", ["audit-counts", "{d}/good.npz"], ["good.npz", "not a text file"]),
    ("counts-no-columns", ["audit-counts", "{d}/nocols.csv"], ["nocols.csv", "counts0", "['a', 'b']"]),
    ("counts-negative", ["audit-counts", "{d}/negative.csv"], ["negative.csv", "counts0", "-3"]),
    ("counts-fraction", ["audit-counts", "{d}/fraction.csv"], ["fraction.csv", "counts0", "2.5"]),
    ("counts-semicolon", ["audit-counts", "{d}/semicolon.csv"], ["semicolon.csv", "--sep semicolon"]),
    ("counts-one-row", ["audit-counts", "{d}/onerow.csv"], ["onerow.csv", "at least 2"]),
    ("counts-zero-total", ["audit-counts", "{d}/zeros.csv"], ["zeros.csv", "counts0", "0"]),
    ("counts-ragged", ["audit-counts", "{d}/ragged.csv"], ["ragged.csv"]),
    ("counts-two-claims", ["audit-counts", "{d}/good.csv", "--claim-dp", "1", "--claim-gdp", "1"], ["--claim-dp", "--claim-gdp"]),
    ("counts-claim-rdp-shape", ["audit-counts", "{d}/good.csv", "--claim-rdp", "2-0.5"], ["--claim-rdp", "2-0.5"]),
    ("counts-claim-rdp-text", ["audit-counts", "{d}/good.csv", "--claim-rdp", "two:half"], ["--claim-rdp", "two:half"]),
    ("counts-claim-zcdp-negative", ["audit-counts", "{d}/good.csv", "--claim-zcdp", "-1"], ["--claim-zcdp", "-1"]),
    ("counts-claim-delta-alone", ["audit-counts", "{d}/good.csv", "--claim-delta", "1e-5"], ["--claim-delta", "--claim-dp"]),
    ("counts-claim-delta-range", ["audit-counts", "{d}/good.csv", "--claim-dp", "1", "--claim-delta", "2"], ["--claim-dp", "2"]),
    ("counts-selection", ["audit-counts", "{d}/good.csv", "--selection", "best"], ["--selection", "best"]),
    # one-run
    ("one-run-zero-guesses", ["one-run", "--guesses", "0", "--correct", "0", "--samples", "100"], ["--guesses", "0"]),
    ("one-run-correct-above", ["one-run", "--guesses", "10", "--correct", "20", "--samples", "100"], ["--correct", "20", "--guesses"]),
    ("one-run-guesses-above", ["one-run", "--guesses", "200", "--correct", "20", "--samples", "100"], ["--guesses", "200", "--samples"]),
    ("one-run-tau", ["one-run", "--guesses", "10", "--correct", "5", "--samples", "100", "--tau", "1.5"], ["--tau", "1.5"]),
    ("one-run-samples", ["one-run", "--guesses", "10", "--correct", "5", "--samples", "0"], ["--samples", "'0'"]),
    ("one-run-negative", ["one-run", "--guesses", "-1", "--correct", "5", "--samples", "100"], ["--guesses", "-1"]),
    ("one-run-missing", ["one-run", "--correct", "5", "--samples", "100"], ["--guesses"]),
    # selfcheck
    ("selfcheck-cases", ["selfcheck", "--cases", "nonsense", "--repetitions", "1"], ["--cases", "nonsense"]),
    ("selfcheck-cases-empty", ["selfcheck", "--cases", "", "--repetitions", "1"], ["--cases"]),
    ("selfcheck-repetitions", ["selfcheck", "--repetitions", "0"], ["--repetitions", "'0'"]),
    ("selfcheck-trials", ["selfcheck", "--trials", "many"], ["--trials", "many"]),
    ("selfcheck-csv-folder", ["selfcheck", "--repetitions", "1", "--csv", "{d}/no/such/t.csv"], ["--csv", "no/such/t.csv"]),
    # figure (never reaches snakemake)
    ("figure-cores", ["figure", "chadha_fig2", "--cores", "0"], ["--cores", "'0'"]),
    ("figure-profile", ["figure", "chadha_fig2", "--profile", "{d}/no-profile", "-n"], ["--profile", "no-profile"]),
    ("figure-configfile", ["figure", "chadha_fig2", "--configfile", "{d}/none.yaml", "-n"], ["--configfile", "none.yaml"]),
    # the command itself
    ("unknown-command", ["audit-everything"], ["audit-everything"]),
    ("unknown-flag", ["one-run", "--guesses", "1", "--correct", "1", "--samples", "2", "--gueses", "3"], ["--gueses"]),
]


def test_the_table_covers_every_subcommand_with_at_least_30_cases():
    covered = {argv[0] for _, argv, _ in CASES}
    assert {"audit-votes", "audit-counts", "one-run", "selfcheck", "figure"} <= covered
    assert len(CASES) >= 30


@pytest.mark.parametrize("case_id, argv, expected", CASES, ids=[c[0] for c in CASES])
def test_bad_input_exits_2_with_one_line_naming_it(capsys, tmp_path, case_id, argv, expected):
    _files(tmp_path)
    code, out, err = call(capsys, *(a.replace("{d}", str(tmp_path)) for a in argv))
    assert code == 2, (code, out, err)
    assert "Traceback" not in err and "internal error" not in err, err
    lines = [x for x in err.splitlines() if x.strip()]
    assert len(lines) == 1, err
    for text in expected:
        assert text in lines[0], (text, lines[0])


# ----------------------------------------------------------------------------- what must work


def test_npy_labels_histograms_and_npz_agree(capsys, tmp_path):
    votes = _votes()
    np.savez(tmp_path / "v.npz", votes=votes, num_classes=4)
    np.save(tmp_path / "v.npy", votes)
    hist = load_votes(tmp_path / "v.npz")
    np.save(tmp_path / "h.npy", hist)
    assert load_votes(tmp_path / "v.npy", num_classes=4).tolist() == hist.tolist()
    assert load_votes(tmp_path / "h.npy", histograms=True).tolist() == hist.tolist()
    outs = []
    for name, extra in (("v.npz", []), ("v.npy", ["--num-classes", "4"]), ("h.npy", ["--histograms"])):
        code, out, err = call(capsys, "audit-votes", tmp_path / name, "--sigma", 5, "--trials", 2000, "--json", *extra)
        assert code == 0, err
        outs.append(json.loads(out))
    assert outs[0]["epsilon_data_dependent"] == outs[1]["epsilon_data_dependent"] == outs[2]["epsilon_data_dependent"]


@pytest.mark.parametrize("sep, text", [("semicolon", "counts0;counts1\n7300;2700\n2700;7300\n"),
                                       ("tab", "counts0\tcounts1\n7300\t2700\n2700\t7300\n"),
                                       (";", "counts0;counts1\n7300;2700\n2700;7300\n")])
def test_sep_reads_other_separators(capsys, tmp_path, sep, text):
    (tmp_path / "c.csv").write_text(text)
    code, out, err = call(capsys, "audit-counts", tmp_path / "c.csv", "--sep", sep, "--json")
    assert code == 0, err
    assert json.loads(out)["epsilon_lower_bound"] > 0.5


def test_transposed_votes_are_warned_about(capsys, tmp_path):
    votes = _votes(n_teachers=250, n_queries=100)  # teachers agree per query
    assert not votes_look_transposed(votes) and votes_look_transposed(votes.T)
    np.savez(tmp_path / "t.npz", votes=votes.T, num_classes=4)  # saved as queries x teachers
    with pytest.warns(VotesLayoutWarning, match="transposed"):
        load_votes(tmp_path / "t.npz")
    code, _, err = call(capsys, "audit-votes", tmp_path / "t.npz", "--sigma", 40, "--trials", 1000)
    assert code == 0 and "warning:" in err and "looks transposed" in err and "(100, 250)" in err
    # many more queries than teachers is a normal deployment: no warning
    many = _votes(n_teachers=20, n_queries=500)
    assert not votes_look_transposed(many)


def test_internal_error_is_exit_2_with_traceback_only_under_debug(capsys, tmp_path, monkeypatch):
    def boom(args):
        raise KeyError("surprise")

    (tmp_path / "c.csv").write_text(GOOD_COUNTS)
    monkeypatch.setattr(cli_audit_counts, "run", boom)
    code, _, err = call(capsys, "audit-counts", tmp_path / "c.csv")
    assert code == 2 and "internal error: KeyError" in err and "--debug" in err and "Traceback" not in err
    code, _, err = call(capsys, "audit-counts", tmp_path / "c.csv", "--debug")
    assert code == 2 and "Traceback" in err and "internal error" in err
    code, _, err = call(capsys, "--debug", "audit-counts", tmp_path / "c.csv")
    assert code == 2 and "Traceback" in err


def test_selfcheck_help_has_no_doubled_percent(capsys):
    code, out, _ = call(capsys, "selfcheck", "--help")
    assert code == 0 and "%%" not in out and "5%" in out


def test_selfcheck_below_the_power_bar_trials_says_so(capsys):
    code, out, _ = call(capsys, "selfcheck", "--repetitions", 2, "--trials", 300, "--cases", "gnmax_sigma_halved")
    assert "the 90% power bar assumes ≈ 30,000 trials per side" in out and "--trials 300 is below it" in out
    assert code in (0, 1)
