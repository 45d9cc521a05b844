"""The answer grammar of a prompt teacher: which token sequences spell each label after the answer cue."""

from __future__ import annotations

import hashlib
import json
from typing import Callable, Sequence

import numpy as np

from .templates import ANSWER_CUE

__all__ = [
    "AnswerGrammar",
]

# ---------------------------------------------------------------------------------------
# Answer grammar
# ---------------------------------------------------------------------------------------


class AnswerGrammar:
    """Token trie of the valid answers ``answer_prefix + label + answer_suffix``.

    The token sequence of each answer is the tokenization of ``ANSWER_CUE + answer`` minus
    that of ``ANSWER_CUE`` (checked to be a prefix, so the answers tokenize as they would
    after every prompt, which all end with the cue).

    Args:
        tokenizer: a ``transformers`` tokenizer.
        labels: the label strings, index = class.
        answer_prefix, answer_suffix: around the label (default ``" "`` and ``"\\n"``,
            the format of the one-shot example, App. D.2).

    Raises:
        ValueError: fewer than 2 labels, duplicates, a boundary merge between the cue and
            an answer, or an answer whose tokens are a prefix of another's.
    """

    def __init__(self, tokenizer, labels: Sequence[str], answer_prefix: str = " ", answer_suffix: str = "\n"):
        labs = [str(x) for x in labels]
        if len(labs) < 2 or len(set(labs)) != len(labs):
            raise ValueError(f"labels must be >= 2 distinct strings, got {labs}")
        self.labels = tuple(labs)
        self.answer_prefix, self.answer_suffix = answer_prefix, answer_suffix
        cue = _encode(tokenizer, ANSWER_CUE)
        seqs = []
        for lab in labs:
            full = _encode(tokenizer, ANSWER_CUE + answer_prefix + lab + answer_suffix)
            if full[: len(cue)] != cue or len(full) == len(cue):
                raise ValueError(f"the answer {answer_prefix + lab + answer_suffix!r} merges with {ANSWER_CUE!r} when tokenized: {cue} vs {full}")
            seqs.append(tuple(full[len(cue):]))
        for i, a in enumerate(seqs):
            for j, b in enumerate(seqs):
                if i != j and b[: len(a)] == a:
                    raise ValueError(f"the answer tokens of label {labs[i]!r} {a} are a prefix of those of {labs[j]!r} {b}: add a terminating answer_suffix")
        self.sequences: tuple[tuple[int, ...], ...] = tuple(seqs)
        # Trie: node 0 is the root; children[node] = {token: child}; leaf_label[node] = label index.
        self.children: list[dict[int, int]] = [{}]
        self.leaf_label: dict[int, int] = {}
        for li, seq in enumerate(seqs):
            node = 0
            for tok in seq:
                nxt = self.children[node].get(tok)
                if nxt is None:
                    nxt = len(self.children)
                    self.children.append({})
                    self.children[node][tok] = nxt
                node = nxt
            self.leaf_label[node] = li
        # The first branching node and the labels below each of its children.
        node, forced = 0, []
        while len(self.children[node]) == 1:
            (tok, nxt), = self.children[node].items()
            forced.append(tok)
            node = nxt
        self.root_forced: tuple[int, ...] = tuple(forced)
        self.first_branch = node
        self._label_first_child = np.array([seq[len(forced)] for seq in seqs], dtype=np.int64)
        self.identity = hashlib.sha256(json.dumps([list(s) for s in seqs]).encode()).hexdigest()[:16]

    def allowed(self, node: int) -> list[int]:
        """Sorted tokens allowed after ``node``."""
        return sorted(self.children[node])

    def forced_path(self, node: int) -> tuple[list[int], int]:
        """Tokens forced from ``node`` (single-child steps) and the node where they end."""
        toks = []
        while len(self.children[node]) == 1 and node not in self.leaf_label:
            (tok, nxt), = self.children[node].items()
            toks.append(tok)
            node = nxt
        return toks, node

    def is_leaf(self, node: int) -> bool:
        return node in self.leaf_label

    def prefix_allowed_tokens(self, answer_start: int, eos_token_id: int | None) -> Callable:
        """A ``prefix_allowed_tokens_fn`` for ``generate`` that walks this trie (test reference)."""

        def fn(batch_id: int, input_ids) -> list[int]:
            node = 0
            for tok in input_ids[answer_start:].tolist():
                if self.is_leaf(node):
                    break
                node = self.children[node].get(int(tok), -1)
                if node < 0:
                    break
            if node < 0 or self.is_leaf(node):
                return [eos_token_id] if eos_token_id is not None else [0]
            return self.allowed(node)

        return fn

    def label_of_tokens(self, tokens: Sequence[int]) -> int:
        """The label index of an answer token sequence (``-1`` if it is not a valid answer)."""
        node = 0
        for tok in tokens:
            if self.is_leaf(node):
                break
            node = self.children[node].get(int(tok), -1)
            if node < 0:
                return -1
        return self.leaf_label.get(node, -1)

    @property
    def labels_split_at_first_branch(self) -> bool:
        """Every label has its own token at the first branching node, so the first-branch
        scores are a full score vector over the labels (single-digit labels: always)."""
        return len(set(self._label_first_child.tolist())) == len(self.labels)

    def first_branch_scores(self, logits_at_branch: np.ndarray) -> np.ndarray:
        """Per label, the logit of its token at the first branching node."""
        return logits_at_branch[..., self._label_first_child]


def _encode(tokenizer, text: str) -> list[int]:
    return list(tokenizer(text, add_special_tokens=True)["input_ids"])
