"""The PromptPATE teacher callable on a :class:`~ppaudit.models.llm.scorer.PromptScorer`, with the
paper's plain decoding and our contextual calibration (Zhao et al. 2021) beside it."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .scorer import PromptScorer, ScoredPrompts
from .templates import ANSWER_CUE, Prompt

__all__ = ["PromptTeacher", "CALIBRATIONS", "CONTENT_FREE_INPUTS", "content_free_prompt", "contextual_calibration"]


#: The teacher's decoding: ``"none"`` = the paper's plain label-restricted greedy answer
#: (Chadha et al. 2024, §5.3: temperature 0); ``"contextual"`` = ours, contextual calibration
#: of the label scores (Zhao et al. 2021).
CALIBRATIONS = ("none", "contextual")
#: The content-free inputs of contextual calibration (Zhao et al. 2021, §5: "N/A", the empty
#: string and "[MASK]"; their label probabilities are averaged).
CONTENT_FREE_INPUTS = ("N/A", "", "[MASK]")


def content_free_prompt(prompt: Prompt, text: str) -> Prompt:
    """``prompt`` with its query replaced by the content-free ``text`` (same instruction and
    one-shot example): ``Prompt(prompt.prefix, "Text: <text>\\nAnswer:")``."""
    return Prompt(prompt.prefix, f"Text: {' '.join(str(text).split())}\n{ANSWER_CUE}")


def _log_softmax(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    m = x.max(axis=-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=-1, keepdims=True))


def contextual_calibration(scores, content_free_scores) -> tuple[np.ndarray, np.ndarray]:
    """Contextual calibration of label scores (Zhao et al. 2021, §5, Eq. on ``W = diag(p̂_cf)^{-1}``, ``b = 0``).

    ``p̂(y | x) = softmax(scores)`` over the labels; ``p̂_cf`` is the mean of
    ``softmax(content_free_scores)`` over the content-free inputs of the same context; the
    calibrated answer is ``argmax_y p̂(y | x) / p̂_cf(y)`` (ties → the smaller label).

    Args:
        scores: ``(n, C)`` label scores (logits) of ``n`` prompts.
        content_free_scores: ``(n, m, C)`` label scores of the ``m`` content-free prompts of
            each prompt's context (or ``(n, C)`` for ``m = 1``).

    Returns:
        ``(labels (n,), calibrated log-scores (n, C))`` with log-scores
        ``log p̂(y | x) − log p̂_cf(y)``.

    Raises:
        ValueError: shapes that do not match, or non-finite scores.
    """
    s = np.asarray(scores, dtype=np.float64)
    cf = np.asarray(content_free_scores, dtype=np.float64)
    if s.ndim != 2 or s.shape[1] < 2:
        raise ValueError(f"scores must have shape (n, C) with C >= 2, got {s.shape}")
    if cf.ndim == 2:
        cf = cf[:, None, :]
    if cf.ndim != 3 or cf.shape[0] != s.shape[0] or cf.shape[2] != s.shape[1] or cf.shape[1] < 1:
        raise ValueError(f"content_free_scores must have shape (n, m, C) = ({s.shape[0]}, m, {s.shape[1]}), got {cf.shape}")
    if not (np.all(np.isfinite(s)) and np.all(np.isfinite(cf))):
        raise ValueError("scores and content_free_scores must be finite")
    p_cf = np.exp(_log_softmax(cf)).mean(axis=1)
    cal = _log_softmax(s) - np.log(p_cf)
    return np.argmax(cal, axis=1).astype(np.int64), cal


class PromptTeacher:
    """A teacher callable for :mod:`ppaudit.mechanisms.promptpate`: ``teacher(prompts) -> labels``.

    Binds a :class:`PromptScorer` to the labels of a task and accumulates the off-grammar
    count over calls.

    Decoding (``calibration``):

    * ``"none"`` — the paper's procedure: the temperature-0 answer restricted to the labels.
    * ``"contextual"`` — ours: contextual calibration (Zhao et al. 2021). Every distinct
      prompt context (instruction + one-shot example, the prompt's ``prefix``) is also
      asked the content-free inputs :data:`CONTENT_FREE_INPUTS`; the answer is
      :func:`contextual_calibration` of the first-branch label scores. Small LMs answer one
      label for almost every query of a one-shot prompt (Gemma-3-270M: "positive" for
      every teacher); calibration removes that per-context bias, so the teachers classify.
      It is itself a deterministic function of the prompt, so PromptPATE's exact-histogram
      audit (§5.3) is unchanged. Needs every label to have its own token at the first
      branching step (single-digit labels, C ≤ 10).

    Args:
        scorer: the scorer.
        num_classes: ``C``; the labels are ``"0" … "C-1"``.
        calibration: ``"none"`` (paper) or ``"contextual"`` (ours).
        content_free: the content-free inputs.
        chunk: score at most this many prompts per call of the scorer (a progress bar over
            the chunks when ``progress`` is given).
        progress: a tqdm-like factory ``progress(total=..., desc=...)`` or ``None``.
        labels: the answer strings of the classes (default ``"0" … "C-1"``; a template's
            :attr:`~ppaudit.models.llm.TaskTemplate.labels`).

    Raises:
        ValueError: a bad ``num_classes``, ``calibration`` or ``chunk``, or contextual
            calibration of labels that share their first token.
    """

    def __init__(self, scorer: PromptScorer, num_classes: int, calibration: str = "none",
                 content_free: Sequence[str] = CONTENT_FREE_INPUTS, chunk: int | None = None, progress=None,
                 labels: Sequence[str] | None = None):
        if int(num_classes) < 2:
            raise ValueError(f"num_classes must be >= 2, got {num_classes}")
        if calibration not in CALIBRATIONS:
            raise ValueError(f"calibration must be one of {CALIBRATIONS}, got {calibration!r}")
        if chunk is not None and int(chunk) < 1:
            raise ValueError(f"chunk must be >= 1, got {chunk}")
        if calibration == "contextual" and len(tuple(content_free)) == 0:
            raise ValueError("content_free must hold at least one content-free input")
        self.scorer = scorer
        self.num_classes = int(num_classes)
        labs = [str(i) for i in range(self.num_classes)] if labels is None else [str(x) for x in labels]
        if len(labs) != self.num_classes:
            raise ValueError(f"labels must give one answer per class ({self.num_classes}), got {labs}")
        self.grammar = scorer.grammar(labs)
        if calibration == "contextual" and not self.grammar.labels_split_at_first_branch:
            raise ValueError(
                f"contextual calibration needs one token per label at the first branching step; the labels "
                f"{list(self.grammar.labels)} share first tokens (use calibration='none')"
            )
        self.calibration = calibration
        self.content_free = tuple(str(t) for t in content_free)
        self.chunk = None if chunk is None else int(chunk)
        self.progress = progress
        self.stage = "prompts"
        self.num_prompts = 0
        self.num_off_grammar = 0

    def __call__(self, prompts: Sequence[Prompt]) -> np.ndarray:
        return self.scored(prompts).labels

    def _score(self, prompts: list[Prompt]) -> ScoredPrompts:
        if self.chunk is None or len(prompts) <= self.chunk:
            return self.scorer.score(prompts, self.grammar)
        parts = []
        bar = self.progress(total=len(prompts), desc=self.stage) if self.progress is not None else None
        for i in range(0, len(prompts), self.chunk):
            parts.append(self.scorer.score(prompts[i:i + self.chunk], self.grammar))
            if bar is not None:
                bar.update(len(parts[-1].labels))
        if bar is not None:
            bar.close()
        return ScoredPrompts(*(np.concatenate([getattr(r, f) for r in parts]) for f in ("labels", "scores", "off_grammar", "top_token", "cached")))

    def scored(self, prompts: Sequence[Prompt]) -> ScoredPrompts:
        """Score ``prompts``; with contextual calibration ``labels`` are the calibrated answers
        and ``scores`` the calibrated log-scores."""
        prompts = list(prompts)
        res = self._score(prompts)
        self.num_prompts += len(res.labels)
        self.num_off_grammar += int(res.off_grammar.sum())
        if self.calibration == "contextual" and prompts:
            prefixes = list(dict.fromkeys(p.prefix for p in prompts))
            where = {pre: i for i, pre in enumerate(prefixes)}
            cf_prompts = [content_free_prompt(Prompt(pre, ""), t) for pre in prefixes for t in self.content_free]
            cf = self._score(cf_prompts).scores.reshape(len(prefixes), len(self.content_free), self.num_classes)
            rows = np.array([where[p.prefix] for p in prompts], dtype=np.int64)
            labels, cal = contextual_calibration(res.scores, cf[rows])
            res = ScoredPrompts(labels, cal.astype(np.float32), res.off_grammar, res.top_token, res.cached)
        return res

    @property
    def off_grammar_rate(self) -> float:
        return self.num_off_grammar / self.num_prompts if self.num_prompts else 0.0
