"""A 2-layer random Llama with a character tokenizer: the LLM of the workflow tests
(PromptPATE teachers in place of Gemma-3-270M or Mistral-7B; same transformers code path)."""

from __future__ import annotations

import string
from pathlib import Path


def build_tiny_model(folder: Path) -> None:
    """A 2-layer random Llama with a character tokenizer (as in tests/unit/models/test_llm.py), saved to ``folder``."""
    import torch
    from tokenizers import Tokenizer, decoders, models, processors
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    chars = sorted(set(string.printable) - set("\r\x0b\x0c\t"))
    vocab = {t: i for i, t in enumerate(["<pad>", "<bos>", "<eos>", "<unk>"] + chars)}
    tk = Tokenizer(models.BPE(vocab=vocab, merges=[], unk_token="<unk>"))
    tk.post_processor = processors.TemplateProcessing(single="<bos> $A", special_tokens=[("<bos>", vocab["<bos>"])])
    tk.decoder = decoders.BPEDecoder(suffix="")
    tok = PreTrainedTokenizerFast(tokenizer_object=tk, bos_token="<bos>", eos_token="<eos>", pad_token="<pad>", unk_token="<unk>")
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                      num_key_value_heads=2, max_position_embeddings=4096, pad_token_id=0, bos_token_id=1, eos_token_id=2,
                      initializer_range=1.0)
    LlamaForCausalLM(cfg).eval().save_pretrained(folder)
    tok.save_pretrained(folder)
