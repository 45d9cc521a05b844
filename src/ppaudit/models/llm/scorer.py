"""Label-restricted scoring of prompts with a causal LM (prefix reuse); the teacher callable built on it is :mod:`.teacher`."""

from __future__ import annotations

import copy
import hashlib
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from .cache import PredictionCache
from .grammar import AnswerGrammar
from .templates import ANSWER_CUE, Prompt

__all__ = [
    "ScoredPrompts",
    "PromptScorer",
]

# ---------------------------------------------------------------------------------------
# Scorer
# ---------------------------------------------------------------------------------------


@dataclass
class ScoredPrompts:
    """Predictions for a list of prompts (row ``i`` = prompt ``i``).

    Attributes:
        labels: ``(n,)`` predicted label index (greedy decoding restricted to the grammar).
        scores: ``(n, C)`` float32: per label, the logit of its token at the first
            branching step of the answer (for single-digit labels: the label logits).
        off_grammar: ``(n,)`` the unrestricted greedy token left the grammar at an
            evaluated step (see the module docstring).
        top_token: ``(n,)`` unrestricted greedy token at the first branching step.
        cached: ``(n,)`` the prediction came from the cache.
    """

    labels: np.ndarray
    scores: np.ndarray
    off_grammar: np.ndarray
    top_token: np.ndarray
    cached: np.ndarray

    @property
    def off_grammar_rate(self) -> float:
        return float(np.mean(self.off_grammar)) if self.off_grammar.size else 0.0


@dataclass
class ScorerStats:
    """Work counters of a :class:`PromptScorer` (the tests count forward calls)."""

    forward_calls: int = 0
    prompts_evaluated: int = 0
    prompts_from_cache: int = 0
    tokens_forwarded: int = 0
    seconds: float = 0.0


class PromptScorer:
    """Temperature-0 answers of a causal LM restricted to the labels, batched, prefix-shared.

    Args:
        model: a ``transformers`` causal LM (in eval mode on its device).
        tokenizer: its tokenizer.
        model_id: a string that identifies the weights (cache key), e.g. from
            :func:`load_causal_lm`.
        batch_size: prompts per forward pass.
        prefix_reuse: share the longest common token prefix of a batch (default). ``False``
            shares only the first token (``<bos>``): every prompt is evaluated in full.
        cache: an optional :class:`PredictionCache`.
        max_prefix_cache: how many prefix key/value caches are kept (LRU).

    See the module docstring for the decoding rule and the prefix sharing.
    """

    def __init__(
        self,
        model,
        tokenizer,
        model_id: str,
        batch_size: int = 16,
        prefix_reuse: bool = True,
        cache: PredictionCache | None = None,
        max_prefix_cache: int = 4,
    ):
        if not isinstance(model_id, str) or not model_id:
            raise ValueError(f"model_id must be a non-empty string, got {model_id!r}")
        if int(batch_size) < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.model, self.tokenizer, self.model_id = model, tokenizer, model_id
        self.batch_size = int(batch_size)
        self.prefix_reuse = bool(prefix_reuse)
        self.cache = cache
        self.stats = ScorerStats()
        self._grammars: dict[tuple, AnswerGrammar] = {}
        self._prefix_lru: OrderedDict[tuple[int, ...], Any] = OrderedDict()
        self._max_prefix_cache = int(max_prefix_cache)
        self._window = _attention_window(getattr(model, "config", None))
        pad = getattr(tokenizer, "pad_token_id", None)
        self._pad_id = int(pad) if pad is not None else int(getattr(tokenizer, "eos_token_id", 0) or 0)

    @property
    def device(self):
        return next(self.model.parameters()).device

    def grammar(self, labels: Sequence[str], answer_prefix: str = " ", answer_suffix: str = "\n") -> AnswerGrammar:
        """The (memoised) :class:`AnswerGrammar` of ``labels`` for this tokenizer."""
        key = (tuple(str(x) for x in labels), answer_prefix, answer_suffix)
        if key not in self._grammars:
            self._grammars[key] = AnswerGrammar(self.tokenizer, key[0], answer_prefix, answer_suffix)
        return self._grammars[key]

    # -- public API ----------------------------------------------------------------------

    def score(self, prompts: Sequence[Prompt], grammar: AnswerGrammar) -> ScoredPrompts:
        """Predict every prompt (cache first, then the model for the misses).

        Raises:
            ValueError: if a prompt does not end with :data:`ANSWER_CUE`.
        """
        prompts = list(prompts)
        n, c = len(prompts), len(grammar.labels)
        for i, p in enumerate(prompts):
            if not isinstance(p, Prompt):
                raise ValueError(f"prompts must be Prompt objects, got {type(p).__name__} at position {i}")
            if not p.text.endswith(ANSWER_CUE):
                raise ValueError(f"prompt {i} must end with {ANSWER_CUE!r}, got ...{p.text[-40:]!r}")
        labels = np.full(n, -1, dtype=np.int64)
        scores = np.zeros((n, c), dtype=np.float32)
        off = np.zeros(n, dtype=bool)
        top = np.zeros(n, dtype=np.int64)
        cached = np.zeros(n, dtype=bool)
        gid = f"{grammar.identity}:{len(grammar.labels)}"
        keys = [PredictionCache.key(self.model_id, gid, p.text) for p in prompts]
        if self.cache is not None:
            hits = self.cache.get_many(keys)
            for i, k in enumerate(keys):
                if k in hits:
                    labels[i], off[i], top[i], scores[i] = hits[k][0], hits[k][1], hits[k][2], hits[k][3]
                    cached[i] = True
        # Deduplicate the misses by key (shared prompts are evaluated once).
        first: dict[str, int] = {}
        for i in np.flatnonzero(~cached):
            first.setdefault(keys[i], int(i))
        todo = sorted(first.values())
        self.stats.prompts_from_cache += int(cached.sum())
        if todo:

            def store(rows_done: list[int], res) -> None:
                # Called after every unit of work: a killed job keeps what it computed.
                rows = []
                for j, r in enumerate(rows_done):
                    i = todo[r]
                    labels[i], scores[i], off[i], top[i] = res[0][j], res[1][j], res[2][j], res[3][j]
                    rows.append((keys[i], self.model_id, gid, hashlib.sha256(prompts[i].text.encode()).hexdigest(),
                                 res[0][j], res[2][j], res[3][j], res[1][j]))
                if self.cache is not None:
                    self.cache.put_many(rows)

            t0 = time.perf_counter()
            self._evaluate([prompts[i] for i in todo], grammar, store)
            self.stats.seconds += time.perf_counter() - t0
            self.stats.prompts_evaluated += len(todo)
            for i in np.flatnonzero(~cached):
                src = first[keys[i]]
                if src != i:
                    labels[i], scores[i], off[i], top[i] = labels[src], scores[src], off[src], top[src]
        return ScoredPrompts(labels, scores, off, top, cached)

    # -- internals -----------------------------------------------------------------------

    def _evaluate(self, prompts: list[Prompt], grammar: AnswerGrammar, store: Callable[[list[int], tuple], None]) -> None:
        """Evaluate ``prompts``; ``store(rows, (labels, scores, off, top))`` after each unit."""
        import torch

        ids = [list(x) for x in self.tokenizer([p.text for p in prompts], add_special_tokens=True)["input_ids"]]
        # Units: prompts with the same declared prefix (>= 2 of them) form one unit;
        # the rest are pooled in chunks of batch_size.
        groups: OrderedDict[str, list[int]] = OrderedDict()
        for i, p in enumerate(prompts):
            groups.setdefault(p.prefix, []).append(i)
        units = [g for g in groups.values() if len(g) >= 2]
        singles = [g[0] for g in groups.values() if len(g) == 1]
        units += [singles[i:i + self.batch_size] for i in range(0, len(singles), self.batch_size)]
        max_answer = max(len(s) for s in grammar.sequences)
        with torch.inference_mode():
            for unit in units:
                toks = [ids[i] for i in unit]
                lcp = _common_prefix_length(toks)
                lcp = min(lcp, min(len(t) for t in toks) - 1)
                if not self.prefix_reuse:
                    lcp = min(lcp, 1)
                order = sorted(unit, key=lambda i: len(ids[i]))
                prefix = tuple(toks[0][:lcp])
                rows_by_batch: list[list[int]] = []
                longest = max(len(t) for t in toks)
                one_by_one = lcp == 0 or (self._window is not None and longest + max_answer + 1 >= self._window)
                if one_by_one:
                    rows_by_batch = [[i] for i in order]
                else:
                    rows_by_batch = [order[j:j + self.batch_size] for j in range(0, len(order), self.batch_size)]
                for rows in rows_by_batch:
                    if lcp == 0:
                        # No shared token at all: no prefix cache, one unpadded row.
                        res = self._decode(None, 0, [ids[rows[0]]], grammar)
                    else:
                        past = self._prefix_cache(prefix)
                        res = self._decode(past, lcp, [ids[i][lcp:] for i in rows], grammar)
                    store(rows, res)

    def _forward(self, input_ids, attention_mask, position_ids, past, keep: int):
        self.stats.forward_calls += 1
        self.stats.tokens_forwarded += int(attention_mask[:, -input_ids.shape[1]:].sum())
        try:
            out = self.model(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids,
                             past_key_values=past, use_cache=True, logits_to_keep=keep)
        except TypeError:  # a model without logits_to_keep
            out = self.model(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids,
                             past_key_values=past, use_cache=True)
        return out.logits[:, -keep:, :].float(), out.past_key_values

    def _prefix_cache(self, prefix: tuple[int, ...]):
        import torch

        if prefix in self._prefix_lru:
            self._prefix_lru.move_to_end(prefix)
            return self._prefix_lru[prefix]
        dev = self.device
        ids = torch.tensor([list(prefix)], dtype=torch.long, device=dev)
        mask = torch.ones_like(ids)
        pos = torch.arange(len(prefix), device=dev)[None]
        self.stats.forward_calls += 1
        self.stats.tokens_forwarded += len(prefix)
        out = self.model(input_ids=ids, attention_mask=mask, position_ids=pos, use_cache=True, logits_to_keep=1) \
            if _accepts_logits_to_keep(self.model) else self.model(input_ids=ids, attention_mask=mask, position_ids=pos, use_cache=True)
        self._prefix_lru[prefix] = out.past_key_values
        while len(self._prefix_lru) > self._max_prefix_cache:
            self._prefix_lru.popitem(last=False)
        return out.past_key_values

    def _decode(self, prefix_past, p_len: int, rows: list[list[int]], grammar: AnswerGrammar):
        """Restricted greedy decoding of ``len(rows)`` continuations of a shared prefix."""
        import torch

        dev = self.device
        b = len(rows)
        past = None
        if prefix_past is not None:
            past = copy.deepcopy(prefix_past)
            if b > 1:
                past.batch_repeat_interleave(b)
        mask_cols = [torch.ones((b, p_len), dtype=torch.long, device=dev)]
        next_pos = [p_len] * b
        # Step 1: every row feeds its remainder + the forced tokens up to the first branch;
        # its evaluated nodes are the root and each node along the forced path.
        forced0 = list(grammar.root_forced)
        path_nodes = [0]
        node = 0
        for tok in forced0:
            node = grammar.children[node][tok]
            path_nodes.append(node)
        feeds = [list(r) + forced0 for r in rows]
        evals: list[list[int]] = [list(path_nodes) for _ in range(b)]
        labels = np.full(b, -1, dtype=np.int64)
        scores = np.zeros((b, len(grammar.labels)), dtype=np.float32)
        off = np.zeros(b, dtype=bool)
        top = np.zeros(b, dtype=np.int64)
        first_step = True
        while True:
            active = [i for i in range(b) if feeds[i]]
            if not active:
                break
            width = max(len(feeds[i]) for i in range(b))
            keep = max(len(evals[i]) for i in active)
            inp = torch.full((b, width), self._pad_id, dtype=torch.long, device=dev)
            m = torch.zeros((b, width), dtype=torch.long, device=dev)
            pos = torch.full((b, width), 0, dtype=torch.long, device=dev)
            for i in range(b):
                f = feeds[i]
                # Padding sits between what is cached and the new tokens (mask 0, any
                # position); the real tokens continue the row's own positions.
                pos[i, :] = next_pos[i]
                if f:
                    inp[i, width - len(f):] = torch.tensor(f, dtype=torch.long)
                    m[i, width - len(f):] = 1
                    pos[i, width - len(f):] = torch.arange(next_pos[i], next_pos[i] + len(f))
                    next_pos[i] += len(f)
            mask_cols.append(m)
            full_mask = torch.cat(mask_cols, dim=1)
            logits, past = self._forward(inp, full_mask, pos, past, keep)
            lg = logits.cpu().numpy()
            new_feeds: list[list[int]] = [[] for _ in range(b)]
            new_evals: list[list[int]] = [[] for _ in range(b)]
            for i in active:
                nodes = evals[i]
                rl = lg[i, keep - len(nodes):, :]
                for j, nd in enumerate(nodes):
                    allowed = grammar.allowed(nd)
                    t = int(np.argmax(rl[j]))
                    if t not in grammar.children[nd]:
                        off[i] = True
                    if j == len(nodes) - 1:
                        al = np.array(allowed, dtype=np.int64)
                        choice = int(al[int(np.argmax(rl[j][al]))])
                        if first_step:
                            scores[i] = grammar.first_branch_scores(rl[j])
                            top[i] = t
                        child = grammar.children[nd][choice]
                        forced, end = grammar.forced_path(child)
                        if grammar.is_leaf(end):
                            labels[i] = grammar.leaf_label[end]
                        else:
                            new_feeds[i] = [choice] + forced
                            chain = [child]
                            cur = child
                            for tok in forced:
                                cur = grammar.children[cur][tok]
                                chain.append(cur)
                            new_evals[i] = chain
            feeds, evals = new_feeds, new_evals
            first_step = False
        return labels, scores, off, top


def _attention_window(cfg) -> int | None:
    """The smallest local-attention window of the model (sliding window / attention chunk), if any."""
    if cfg is None:
        return None
    if getattr(cfg, "use_sliding_window", True) is False:
        return None
    windows = [getattr(cfg, name, None) for name in ("sliding_window", "attention_chunk_size")]
    windows = [int(w) for w in windows if isinstance(w, (int, np.integer)) and w > 0]
    return min(windows) if windows else None


def _accepts_logits_to_keep(model) -> bool:
    import inspect

    try:
        return "logits_to_keep" in inspect.signature(model.forward).parameters
    except (TypeError, ValueError):
        return False


def _common_prefix_length(seqs: Sequence[Sequence[int]]) -> int:
    if not seqs:
        return 0
    first = seqs[0]
    n = min(len(s) for s in seqs)
    for j in range(n):
        t = first[j]
        if any(s[j] != t for s in seqs):
            return j
    return n
