"""Contextual calibration of prompt teachers (Zhao et al. 2021) and the chunked teacher.

The scorer is a stand-in with fixed label logits per prompt text, so the calibrated answers
can be computed by hand: ``argmax_y softmax(s)_y / mean_cf softmax(s_cf)_y``.
"""

from __future__ import annotations

import numpy as np
import pytest

from ppaudit.models.llm import (
    ANSWER_CUE,
    CONTENT_FREE_INPUTS,
    Prompt,
    PromptTeacher,
    ScoredPrompts,
    content_free_prompt,
    contextual_calibration,
)


class FakeGrammar:
    def __init__(self, labels, split=True):
        self.labels = tuple(labels)
        self.labels_split_at_first_branch = split


class FakeScorer:
    """Label logits = a per-context bias + a per-query signal; counts the prompts it sees."""

    def __init__(self, bias: dict, signal: dict, split=True):
        self.bias, self.signal, self.split, self.seen = bias, signal, split, []

    def grammar(self, labels):
        return FakeGrammar(labels, self.split)

    def score(self, prompts, grammar):
        self.seen.extend(p.text for p in prompts)
        s = np.array([self.bias[p.prefix] + self.signal.get(p.suffix, 0.0) for p in prompts], dtype=np.float32)
        n = len(prompts)
        return ScoredPrompts(np.argmax(s, axis=1), s, np.zeros(n, bool), np.zeros(n, np.int64), np.zeros(n, bool))


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def q(text):
    return f"Text: {text}\n{ANSWER_CUE}"


def test_calibration_matches_hand_computation_and_removes_a_constant_bias():
    rng = np.random.default_rng(3)
    s = rng.normal(size=(6, 3))
    cf = rng.normal(size=(6, 3, 3))
    labels, cal = contextual_calibration(s, cf)
    ref = np.log(softmax(s)) - np.log(softmax(cf).mean(axis=1))
    np.testing.assert_allclose(cal, ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(labels, np.argmax(ref, axis=1))
    # A context that adds +5 to label 0 for every input: plain decoding always says 0,
    # calibration recovers the per-query signal.
    signal = np.array([[0.0, 1.0], [1.0, 0.0], [0.0, 2.0], [0.3, 0.0]])
    biased = signal + np.array([5.0, 0.0])
    assert np.all(np.argmax(biased, axis=1) == 0)
    lab, _ = contextual_calibration(biased, np.tile(np.array([5.0, 0.0]), (4, 1)))
    np.testing.assert_array_equal(lab, np.argmax(signal, axis=1))


@pytest.mark.parametrize(
    "s,cf",
    [(np.zeros(3), np.zeros((3, 1, 3))), (np.zeros((2, 3)), np.zeros((3, 1, 3))), (np.zeros((2, 3)), np.zeros((2, 1, 4))),
     (np.array([[0.0, np.inf]]), np.zeros((1, 1, 2)))],
)
def test_calibration_rejects_bad_shapes(s, cf):
    with pytest.raises(ValueError):
        contextual_calibration(s, cf)


def test_teacher_calibrates_per_context_and_scores_each_content_free_prompt_once():
    ctx_a, ctx_b = "Task.\nText: good\nAnswer: 1\n", "Task.\nText: bad\nAnswer: 0\n"
    bias = {ctx_a: np.array([0.0, 6.0]), ctx_b: np.array([4.0, 0.0])}
    signal = {q("nice"): np.array([0.0, 1.0]), q("awful"): np.array([1.0, 0.0])}
    prompts = [Prompt(c, q(t)) for c in (ctx_a, ctx_b) for t in ("nice", "awful", "nice")]
    plain = PromptTeacher(FakeScorer(bias, signal), 2, calibration="none")
    np.testing.assert_array_equal(plain(prompts), [1, 1, 1, 0, 0, 0])  # one label per context
    sc = FakeScorer(bias, signal)
    cal = PromptTeacher(sc, 2, calibration="contextual")
    np.testing.assert_array_equal(cal(prompts), [1, 0, 1, 1, 0, 1])  # the queries' own signal
    cf_seen = [t for t in sc.seen if any(t.endswith(q(x)) for x in CONTENT_FREE_INPUTS)]
    assert len(cf_seen) == 2 * len(CONTENT_FREE_INPUTS)  # one batch per distinct context
    assert content_free_prompt(prompts[0], "N/A").text == ctx_a + q("N/A")


def test_chunked_teacher_equals_unchunked_and_reports_progress():
    ctx = "T\n"
    bias = {ctx: np.array([0.5, 0.0, 0.2])}
    signal = {q(str(i)): np.eye(3)[i % 3] * (i % 4) for i in range(10)}
    prompts = [Prompt(ctx, q(str(i))) for i in range(10)]
    updates = []

    class Bar:
        def __init__(self, total, desc):
            updates.append(("start", total, desc))

        def update(self, n):
            updates.append(n)

        def close(self):
            updates.append("close")

    a = PromptTeacher(FakeScorer(bias, signal), 3, calibration="contextual").scored(prompts)
    b = PromptTeacher(FakeScorer(bias, signal), 3, calibration="contextual", chunk=3, progress=Bar).scored(prompts)
    np.testing.assert_array_equal(a.labels, b.labels)
    np.testing.assert_allclose(a.scores, b.scores)
    assert updates[0] == ("start", 10, "prompts") and sum(u for u in updates if isinstance(u, int)) == 10


def test_teacher_errors_name_the_value():
    sc = FakeScorer({}, {})
    with pytest.raises(ValueError, match="calibration"):
        PromptTeacher(sc, 2, calibration="zhao")
    with pytest.raises(ValueError, match="chunk"):
        PromptTeacher(sc, 2, chunk=0)
    with pytest.raises(ValueError, match="share first tokens"):
        PromptTeacher(FakeScorer({}, {}, split=False), 12, calibration="contextual")
