"""Before/after of the speed-ups of the ML rules (issue 30 §1), old and new code side by side in one run.

Each case runs the old and the new code path in this process, alternately (old, new, new, old,
…; ``--repeat`` pairs), on the same inputs, and prints the median wall and CPU seconds of each,
the ratio old/new and whether the outputs are bitwise identical:

* ``efficientnet`` — rule ``extract_features`` (Fashion-MNIST through EfficientNet-Lite0):
  ``EfficientNetLite0Encoder(fold_padding=False)`` (the TF "same" padding as ``nn.ZeroPad2d``
  copies, out-of-place ReLU6) against the default (padding folded into the convolutions,
  ReLU6 in place; ``ppaudit.models.encoders._fold_same_padding``), on ``--images`` training
  images of the embedded default's subset.
* ``convert`` — rule ``convert_llm`` (the packaged Gemma-3-270M GGUF → safetensors folder):
  ``convert_gguf`` with gguf-py's reader built for each of transformers' three reads
  (``_one_gguf_reader`` replaced by a no-op) against the default (one reader); "identical" =
  every file of the two output folders has the same bytes. Needs ``--gguf`` (e.g.
  ``resources/models/gemma3-270m-q4_k_m.gguf`` of a run; else it is assembled into a temporary
  folder first, ~1 s).

* ``threads`` — the one-thread default of ``extract_features`` / ``prompt_teachers``: the
  Rotten Tomatoes sentences (``--sentences``) through all-MiniLM-L6-v2 on 2 torch threads (old)
  and on 1 (new). The wall ratio is < 1 by design (one job is slower on one core); what the
  default buys is the CPU ratio: the second core is free for another job.

Timings share the machine with whatever else runs: the interleaving makes the ratio fair, not
the absolute seconds. Run: ``.venv/bin/python bench/bench_ml_rules.py [--cases efficientnet]
[--images 256] [--repeat 2] [--threads 1] [--gguf resources/models/gemma3-270m-q4_k_m.gguf]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))  # a checkout without the editable install still works


def _timed(fn: Callable[[], np.ndarray]) -> tuple[float, float, np.ndarray]:
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - t0, time.process_time() - c0, out


def ab(old: Callable[[], np.ndarray], new: Callable[[], np.ndarray], repeat: int) -> dict:
    """Run ``old`` and ``new`` alternately ``repeat`` times each; medians and bitwise equality."""
    runs: dict[str, list[tuple[float, float]]] = {"old": [], "new": []}
    outs: dict[str, list[np.ndarray]] = {"old": [], "new": []}
    for i in range(repeat):
        order = (("old", old), ("new", new)) if i % 2 == 0 else (("new", new), ("old", old))
        for name, fn in order:
            wall, cpu, out = _timed(fn)
            runs[name].append((wall, cpu))
            outs[name].append(out)
    med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in runs.items()}
    same = all(np.array_equal(a, outs["old"][0]) for a in outs["old"] + outs["new"])
    return {"old_wall": med["old"][0], "old_cpu": med["old"][1], "new_wall": med["new"][0], "new_cpu": med["new"][1],
            "ratio_wall": med["old"][0] / med["new"][0], "ratio_cpu": med["old"][1] / med["new"][1], "identical": same}


def case_efficientnet(args: argparse.Namespace) -> dict:
    from ppaudit.experiments.chadha2024.private_knn import load_knn_inputs
    from ppaudit.models.encoders import get_encoder

    x_train, _, _, _ = load_knn_inputs("fashion-mnist", 3000, 1000, 2024, source="packaged")
    x = x_train[: args.images]
    old = get_encoder("efficientnet-lite0", batch_size=64, device="cpu", fold_padding=False).load()
    new = get_encoder("efficientnet-lite0", batch_size=64, device="cpu").load()
    new.encode(x[:8])  # warm-up: the first call pays oneDNN's kernel creation
    old.encode(x[:8])
    res = ab(lambda: old.encode(x), lambda: new.encode(x), args.repeat)
    res["what"] = f"extract_features: EfficientNet-Lite0 on {len(x)} Fashion-MNIST images, batch 64"
    return res


def _folder_bytes(folder: Path) -> np.ndarray:
    """The files of a folder (not the manifest's timestamps: it has none) as one byte array, names included."""
    parts = []
    for f in sorted(p for p in folder.rglob("*") if p.is_file()):
        parts.append(np.frombuffer(f.relative_to(folder).as_posix().encode() + b"\0" + f.read_bytes(), dtype=np.uint8))
    return np.concatenate(parts)


def case_convert(args: argparse.Namespace) -> dict:
    import contextlib
    import os
    import shutil
    import tempfile

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from ppaudit.models.llm import loading

    tmp = Path(tempfile.mkdtemp(prefix="bench-convert-"))
    gguf = Path(args.gguf) if args.gguf else loading.assemble_packaged_gguf(tmp / "model.gguf")
    shared = loading._one_gguf_reader

    def run(one_reader: bool) -> np.ndarray:
        out = tmp / ("new" if one_reader else "old")
        shutil.rmtree(out, ignore_errors=True)
        loading._one_gguf_reader = shared if one_reader else contextlib.nullcontext
        try:
            loading.convert_gguf(gguf, out)
        finally:
            loading._one_gguf_reader = shared
        return _folder_bytes(out)

    try:
        res = ab(lambda: run(False), lambda: run(True), args.repeat)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    res["what"] = f"convert_llm: {gguf.name} → safetensors folder"
    return res


def case_threads(args: argparse.Namespace) -> dict:
    import torch

    from ppaudit.experiments.chadha2024.private_knn import load_knn_inputs
    from ppaudit.models.encoders import get_encoder

    x_train, _, _, _ = load_knn_inputs("rotten-tomatoes", 6000, 1000, 2024, source="packaged")
    x = x_train[: args.sentences]
    enc = get_encoder("all-minilm-l6-v2", batch_size=64, device="cpu").load()
    enc.encode(x[:64])

    def on(threads: int) -> np.ndarray:
        torch.set_num_threads(threads)
        try:
            return enc.encode(x)
        finally:
            torch.set_num_threads(args.threads)

    res = ab(lambda: on(2), lambda: on(1), args.repeat)
    res["what"] = f"extract_features (text): all-MiniLM-L6-v2 on {len(x)} sentences, 2 torch threads (old) vs 1 (new)"
    return res


CASES = {"efficientnet": case_efficientnet, "convert": case_convert, "threads": case_threads}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--cases", default=",".join(CASES), help=f"comma-separated, of {', '.join(CASES)}")
    ap.add_argument("--images", type=int, default=256, help="images for the efficientnet case (default 256)")
    ap.add_argument("--sentences", type=int, default=600, help="sentences for the threads case (default 600)")
    ap.add_argument("--repeat", type=int, default=2, help="runs of each side, interleaved (default 2)")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (default 1, the rules' threads)")
    ap.add_argument("--gguf", default=None, help="the GGUF for the convert case (default: assemble the packaged one)")
    args = ap.parse_args(argv)
    import torch

    torch.set_num_threads(args.threads)
    names = [c.strip() for c in args.cases.split(",") if c.strip()]
    bad = [c for c in names if c not in CASES]
    if bad:
        raise ValueError(f"unknown case(s) {bad}; cases are {sorted(CASES)}")
    print("| case | what | old: wall / CPU | new: wall / CPU | old/new wall | old/new CPU | bitwise identical |")
    print("| --- | --- | ---: | ---: | ---: | ---: | --- |")
    for name in names:
        r = CASES[name](args)
        print(f"| {name} | {r['what']} | {r['old_wall']:.2f} s / {r['old_cpu']:.2f} s | {r['new_wall']:.2f} s / {r['new_cpu']:.2f} s "
              f"| {r['ratio_wall']:.2f}x | {r['ratio_cpu']:.2f}x | {'yes' if r['identical'] else 'NO'} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
