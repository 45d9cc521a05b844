"""`snakemake --report` renders every caption cleanly (issue 16 §4).

The report is built on tests/configs/tiny.yaml for `rule all` in a temporary directory where
every registry output is a placeholder file (a 1×1 PNG, a minimal PDF, a two-line CSV): the
report needs the files to exist, not their content, so no job runs and the test takes
seconds. It fails on any docutils message (a ``|…|`` in a caption is an undefined RST
substitution: "(ERROR/3) Undefined substitution referenced"), on a caption template that was
not rendered, and checks that captions show the run's numbers.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from snakemake.utils import validate
from workflow_runner import output_of, run_snakemake

from ppaudit.workflow import load_registry

REPO = Path(__file__).resolve().parents[2]
TINY = REPO / "tests" / "configs" / "tiny.yaml"

# A valid 1×1 RGBA PNG and a minimal PDF: the report embeds them, it does not render them.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
    "0000000d49444154789c6360000002000001e221bc330000000049454e44ae426082"
)
PLACEHOLDER = {".png": PNG, ".pdf": b"%PDF-1.4\n%%EOF\n"}
DOCUTILS_MESSAGE = re.compile(r"\((DEBUG|INFO|WARNING|ERROR|SEVERE)/\d\)")


def _merged_config() -> dict:
    """config/config.yaml updated by tests/configs/tiny.yaml, key by key (Snakemake's --configfile)."""

    def merge(base, over):
        out = dict(base)
        for k, v in over.items():
            out[k] = merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
        return out

    cfg = merge(yaml.safe_load((REPO / "config" / "config.yaml").read_text()), yaml.safe_load(TINY.read_text()))
    validate(cfg, str(REPO / "workflow" / "schemas" / "config.schema.yaml"))  # fills the defaults
    return cfg


def _words(text: str) -> str:
    """Only the words of a text (markup, HTML tags and punctuation dropped)."""
    return " ".join(re.sub(r"[^\w]+", " ", re.sub(r"<[^>]+>", " ", text)).split())


def _readable(html: str) -> str:
    """The report's embedded captions as text: JSON escapes decoded, whitespace collapsed."""
    text = re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), html)
    text = text.replace("\\n", " ").replace('\\"', '"')
    return re.sub(r"\s+", " ", text)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """(stdout + stderr of `snakemake --report`, the report's text) on placeholder outputs."""
    workdir = tmp_path_factory.mktemp("report")
    (workdir / "config").symlink_to(REPO / "config")
    reg = load_registry(REPO / "workflow" / "figures.yaml", root=REPO)
    for f in reg.all_files():
        path = workdir / f
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(PLACEHOLDER.get(path.suffix, b"a,b\n1,2\n"))
    out = workdir / "report.html"
    proc = run_snakemake("--directory", str(workdir), "--configfile", str(TINY), "--report", str(out), timeout=280)
    assert proc.returncode == 0, output_of(proc)
    return proc.stdout + proc.stderr, _readable(out.read_text(encoding="utf-8"))


@pytest.mark.workflow
@pytest.mark.timeout(300)
def test_no_docutils_error_or_warning(report):
    log, text = report
    assert not DOCUTILS_MESSAGE.search(log), DOCUTILS_MESSAGE.search(log).group(0) + "\n" + log[-3000:]
    assert "System Message" not in text and "system-message" not in text


@pytest.mark.workflow
@pytest.mark.timeout(300)
def test_every_caption_is_rendered(report):
    _, text = report
    reg = load_registry(REPO / "workflow" / "figures.yaml", root=REPO)
    captions = sorted({t.caption for t in reg.targets if t.caption})
    report_words = _words(text)
    for caption in captions:
        # The caption's first words (before any template expression) are in the report.
        head = re.split(r"\{\{|\{%", (REPO / caption).read_text(encoding="utf-8"))[0]
        words = " ".join(_words(head).split()[:10])
        assert words in report_words, f"caption {caption} is not in the report (looked for {words!r})"
    for unrendered in ("{{", "{%", "snakemake.config", "snakemake.params", "snakemake.wildcards"):
        assert unrendered not in text, unrendered


@pytest.mark.workflow
@pytest.mark.timeout(300)
def test_captions_show_the_runs_numbers(report):
    _, text = report
    cfg = _merged_config()
    ld, pp = cfg["labeldp"], cfg["chadha2024"]["promptpate"]
    expected = [
        "(max |ε_LIA − ε_MIA|)",  # the RST substitution of issue 16, now escaped
        f"(n = {ld['synthetic_rr']['n']} samples",
        f"one game with N = {ld['malek']['num_canaries']} canaries",
        f"k = {pp['num_teachers']} one-shot teachers, n_Q = {pp['num_queries']} queries",
    ]
    for snippet in expected:
        assert snippet in text, snippet
