"""Teachers that answer with class names (ours) beside the paper's label numbers (App. D.2)."""

from __future__ import annotations

import numpy as np
import pytest

from ppaudit.models.llm import ANSWER_CUE, PromptTeacher, ScoredPrompts, all_same_prompt, get_template, teacher_prompt


def test_numbers_are_the_papers_prompt_unchanged():
    t = get_template("agnews")
    assert t.answers == "numbers" and t.labels == ("0", "1", "2", "3")
    assert t.instruction().startswith("Please classify the given text from news articles by topic as 0 (World) or 1 (Sports)")
    assert teacher_prompt(t, "a", 2, "b").prefix.endswith("Answer: 2\n")
    assert "labels as an integer" in all_same_prompt(t, 1, "q").prefix


def test_words_prompts():
    t = get_template("sst2", "words")
    assert t.labels == ("negative", "positive")
    assert "as negative or positive." in t.instruction() and "one of: negative, positive" in t.instruction()
    assert "as positive (negative) or negative (positive)" in t.instruction([1, 0])  # the Mapping adversary
    p = teacher_prompt(t, "a fine film", 1, "dull")
    assert p.prefix.endswith("Answer: positive\n") and p.text.endswith(f"Text: dull\n{ANSWER_CUE}")
    assert "Answer positive" in all_same_prompt(t, 1, "q").prefix and "integer" not in all_same_prompt(t, 1, "q").prefix
    assert get_template("rotten-tomatoes", "words").labels == ("negative", "positive")


def test_bad_answer_kind_names_the_value():
    with pytest.raises(ValueError, match="'letters'"):
        get_template("sst2", "letters")
    with pytest.raises(ValueError, match="in \\[0, 2\\)"):
        teacher_prompt(get_template("sst2", "words"), "a", 2, "b")


def test_teacher_uses_the_answer_strings():
    seen = {}

    class Scorer:
        def grammar(self, labels):
            seen["labels"] = list(labels)
            return type("G", (), {"labels": tuple(labels), "labels_split_at_first_branch": True})()

        def score(self, prompts, grammar):
            n = len(prompts)
            return ScoredPrompts(np.zeros(n, np.int64), np.zeros((n, 2), np.float32), np.zeros(n, bool), np.zeros(n, np.int64), np.zeros(n, bool))

    PromptTeacher(Scorer(), 2, labels=get_template("sst2", "words").labels)
    assert seen["labels"] == ["negative", "positive"]
    PromptTeacher(Scorer(), 2)
    assert seen["labels"] == ["0", "1"]
    with pytest.raises(ValueError, match="one answer per class"):
        PromptTeacher(Scorer(), 3, labels=["a", "b"])
