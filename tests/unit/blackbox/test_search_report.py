"""Issue 36 §6: ``SearchResult.to_html`` / ``ppaudit search --report`` — a self-contained page, checked in a
real headless browser (Debian's chromium, driven over the DevTools pipe: ``tests/headless_browser.py``).

Cost: one search of 2 pairs at 6 000 draws per side (~0.2 s) shared by the tests; each browser load ~1–2 s.
"""

import os
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from ppaudit.blackbox import ClassifierOutputs, Claim, search_mechanism

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from headless_browser import find_chromium, load  # noqa: E402


def gauss_sum(c, n, rng):  # a Gaussian count with sigma 0.5 claimed as 1-DP: 1-D real outputs
    return float(np.sum(c)) + 0.5 * rng.standard_normal(n)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    res = search_mechanism(gauss_sum, [([0, 0], [0, 1]), ([0], [1])], 6_000, rng=7, claim=Claim.dp(1.0),
                           outputs=ClassifierOutputs("logistic"))
    path = tmp_path_factory.mktemp("report") / "search.html"
    text = res.to_html(path, command="pytest test_search_report")
    return res, path, text


def test_report_is_self_contained_and_complete(report):
    res, path, text = report
    assert path.read_text(encoding="utf-8") == text
    assert "<script" not in text.lower()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", text, re.I)  # nothing fetched
    for fact in (f'class="verdict {res.verdict}"', "(1, 0)-DP", "0.95 for the whole search", "<th>seed</th><td>7</td>",
                 "ppaudit version", "pytest test_search_report", f"{res.total_draws:,} in all", 'id="fig-distributions"',
                 'id="fig-probabilities"', "Every pair tried", f"Pair #{res.witness.pair}"):
        assert fact in text, fact
    assert text.count("<tr>") >= 2 + 11  # the facts table and one row per pair


def _browser():
    exe = find_chromium()
    if exe is None:
        if os.environ.get("CI"):
            pytest.fail("chromium not found in CI: make test installs it (TEST_DEB_PACKAGES)")
        pytest.skip("no chromium on this machine (apt-get install chromium; make test installs it)")
    return exe


VISIBLE = """(() => {
  const shown = (el) => { if (!el) return false; const r = el.getBoundingClientRect(), s = getComputedStyle(el);
    return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none'; };
  const fig = document.getElementById('fig-distributions');
  return {verdict: document.getElementById('verdict')?.innerText, verdict_shown: shown(document.getElementById('verdict')),
          figure_shown: shown(fig), bars: fig ? fig.querySelectorAll('rect').length : 0,
          probs_shown: shown(document.getElementById('fig-probabilities')), title: document.title};
})()"""


def test_report_loads_in_a_real_browser_without_errors(report):
    exe = _browser()
    res, path, _ = report
    out = load(path.as_uri(), VISIBLE, exe=exe)
    assert out["errors"] == []
    v = out["value"]
    assert v["verdict"] == res.verdict and v["verdict_shown"] and v["figure_shown"] and v["probs_shown"]
    assert v["bars"] > 20 and v["title"] == f"ppaudit search: {res.verdict}"


def test_the_browser_check_sees_errors(tmp_path):
    """Planted faults: a console error and a missing image must be reported (the check can fail)."""
    exe = _browser()
    bad = tmp_path / "bad.html"
    bad.write_text('<!DOCTYPE html><html><body><p id="verdict">x</p><img src="missing.png">'
                   "<script>console.error('planted')</script></body></html>")
    out = load(bad.as_uri(), VISIBLE, exe=exe)
    assert any("planted" in e for e in out["errors"]) and any("missing.png" in e for e in out["errors"])
    assert out["value"]["figure_shown"] is False
