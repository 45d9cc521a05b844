"""GPU benchmarks of issue 17: Monte Carlo trials/s, teachers/s, and a determinism check.

Prints, each against a baseline measured in the same run on the same device:

1. **Monte Carlo** (``ppaudit.montecarlo``, sample mode, float32 torch path): ten-class
   trials/s of :func:`noisy_argmax_counts` on a fixed histogram and of
   :func:`model_noisy_argmax_counts` on PATE's vote model (k = 250 teachers: the histograms
   are drawn on the device too), against the raw ``torch.randn`` + ``argmax`` + ``bincount``
   loop with the same chunk size; the ratio ours / raw (goal on an H100: ≥ 1e9 trials/s and
   ≥ 25 % of raw). With ``--device cpu`` it also prints the numpy engine (``device="cpu"``).
2. **Teachers** (``ppaudit.models``): teachers/s of ``--teachers`` teachers (LeNet-5 on
   1×28×28 or WRN-16-4 on 3×32×32; ``--train-size`` images each; Adam lr 0.03, batch 16,
   ``--epochs``), one at a time (:func:`train_and_predict`) vs. in blocks of ``--block``
   (:func:`train_and_predict_block`), the ratio (goal: ≥ 10× for the 250 teachers of one
   PATE instantiation), and the vote agreement of the two.
3. **Determinism**: a block trained twice with the same seed with deterministic kernels on
   (:func:`ppaudit.models.determinism.deterministic_torch`): identical votes yes/no, and its
   cost (teachers/s with the switch off vs. on).
4. **Label DP at the papers' scale**: images/s of the WRN-16-4 soft-label trainer
   (:func:`ppaudit.models.soft_label.torch_fit_predict_soft`, deterministic kernels) and the
   same probabilities from the same seed twice — to size Obs. Table 1 and Malek Tables 5–6.

Without a CUDA device the default run prints ``no CUDA device: skipped`` and exits 0.
``--device cpu`` runs everything on the CPU (use small sizes: ``--quick``).

Run: ``.venv/bin/python bench/bench_gpu.py`` on a GPU machine;
``.venv/bin/python bench/bench_gpu.py --device cpu --quick`` for a smoke run.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # before CUDA starts (determinism check)


def _sync(dev):
    import torch

    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def best_of(fn, dev, repeat=3):
    times, out = [], None
    for _ in range(repeat):
        _sync(dev)
        t = time.perf_counter()
        out = fn()
        _sync(dev)
        times.append(time.perf_counter() - t)
    return min(times), out


def raw_rate(dev, trials, c, rows, scaled):
    """The raw loop: ``randn`` + add + ``argmax`` + ``bincount`` in float32, chunks of ``rows``."""
    import torch

    g = torch.Generator(device=dev).manual_seed(0)
    counts = torch.zeros(c, dtype=torch.int64, device=dev)
    done = 0
    while done < trials:
        n = min(rows, trials - done)
        z = torch.randn((n, c), generator=g, device=dev, dtype=torch.float32)
        counts += torch.bincount((z + scaled).argmax(dim=1), minlength=c)
        done += n
    return counts


def bench_mc(dev, device_arg, trials, c, numpy_too) -> dict:
    """Prints the Monte Carlo rates; returns them (trials/s) under the keys of
    :data:`ppaudit.workflow.gpu_budget.RATE_KEYS`."""
    import torch

    from ppaudit.montecarlo import (
        DEFAULT_TORCH_CHUNK_ELEMENTS,
        model_noisy_argmax_counts,
        noisy_argmax_counts,
    )
    from ppaudit.vote_models import pate_vote_model

    hist = np.linspace(250.0 / c * 2, 0.0, c)
    hist = np.round(hist * 250.0 / hist.sum())
    sigma = 40.0
    rows = DEFAULT_TORCH_CHUNK_ELEMENTS // c
    scaled = torch.as_tensor(hist / sigma, dtype=torch.float32, device=dev)
    noisy_argmax_counts(hist, sigma, min(trials, 10_000), rng=0, device=device_arg)  # warm-up
    raw_rate(dev, min(trials, rows), c, rows, scaled)
    t_raw, _ = best_of(lambda: raw_rate(dev, trials, c, rows, scaled), dev)
    t_ours, _ = best_of(lambda: noisy_argmax_counts(hist, sigma, trials, rng=1, device=device_arg), dev)
    print(f"MC fixed histogram, C={c}, {trials:.0e} trials on {dev}:")
    print(f"  raw randn+argmax+bincount : {trials / t_raw:12.4g} trials/s")
    print(f"  ours (noisy_argmax_counts): {trials / t_ours:12.4g} trials/s   ratio ours/raw = {t_raw / t_ours:.2f}")
    p = np.full(c, 1.0 / c) * 0.5
    p[0] += 0.5
    pp = np.roll(p, 1)
    model = pate_vote_model(p, pp, 250)
    mtrials = max(c, trials // 4)
    t_model, _ = best_of(lambda: model_noisy_argmax_counts(model.sampler("S_prime"), c, sigma, mtrials, rng=2, device=device_arg), dev, repeat=2)
    print(f"  ours, PATE vote model k=250 (histograms drawn on the device): {mtrials / t_model:12.4g} trials/s")
    if numpy_too:
        nt = min(trials, 10**7)
        t_np, _ = best_of(lambda: noisy_argmax_counts(hist, sigma, nt, rng=1, device="cpu"), dev)
        t_npm, _ = best_of(lambda: model_noisy_argmax_counts(model.sampler("S_prime"), c, sigma, nt // 4, rng=2, device="cpu"), dev, repeat=2)
        print(f"  numpy engine (device='cpu'), fixed: {nt / t_np:12.4g} trials/s;  torch/numpy = {(nt / t_np and (trials / t_ours) / (nt / t_np)):.2f}")
        print(f"  numpy engine (device='cpu'), PATE model: {(nt // 4) / t_npm:12.4g} trials/s;  torch/numpy = {(mtrials / t_model) / ((nt // 4) / t_npm):.2f}")
    return {"mc_raw_trials_per_s": trials / t_raw, "mc_fixed_trials_per_s": trials / t_ours, "mc_model_trials_per_s": mtrials / t_model}


def _teacher_data(model, n_teachers, size, nq, seed=0):
    rng = np.random.default_rng(seed)
    shape = (1, 28, 28) if model == "lenet5" else (3, 32, 32)
    datasets = []
    for i in range(n_teachers):
        n = size + (i % 3) - 1  # ragged partitions, as with n not divisible by k
        datasets.append((rng.random((n,) + shape, dtype=np.float32), rng.integers(0, 10, n)))
    xq = rng.random((nq,) + shape, dtype=np.float32)
    seeds = [np.random.SeedSequence([seed, i]) for i in range(n_teachers)]
    return datasets, xq, seeds


def bench_teachers(dev, model, n_teachers, block, size, epochs, nq, seq_teachers):
    """Prints teachers/s one at a time and in blocks; returns ``(datasets, xq, seeds, rates)``,
    ``rates`` the seconds per teacher-image-epoch (batch 16) of both ways."""
    from ppaudit.models.batched import train_and_predict_block
    from ppaudit.models.teachers import _params, train_and_predict

    datasets, xq, seeds = _teacher_data(model, n_teachers, size, nq)
    over = {"epochs": epochs, "device": str(dev)}
    p = _params(model, over)
    ns = min(seq_teachers, n_teachers)
    # warm-up (lazy kernel initialisation, cuDNN handles) outside the timings
    warm = _params(model, {**over, "epochs": 1})
    train_and_predict(model, *datasets[0], xq[:8], 10, seeds[0], warm)
    train_and_predict_block(model, datasets[:2], xq[:8], 10, seeds[:2], warm)
    _sync(dev)
    t = time.perf_counter()
    seq = np.stack([train_and_predict(model, x, y, xq, 10, s, over) for (x, y), s in zip(datasets[:ns], seeds[:ns])])
    _sync(dev)
    t_seq = (time.perf_counter() - t) / ns
    t = time.perf_counter()
    votes = []
    for a in range(0, n_teachers, block):
        votes.append(train_and_predict_block(model, datasets[a : a + block], xq, 10, seeds[a : a + block], p))
    _sync(dev)
    t_blk = (time.perf_counter() - t) / n_teachers
    blk = np.concatenate(votes)
    agree = float((seq == blk[:ns]).mean())
    # Reference for the agreement: one-at-a-time training against itself with the inputs
    # moved by one ulp. Adam at lr 0.03 amplifies float-rounding differences (its first step
    # moves every weight by ±lr whatever the gradient's size), so where this is < 1 no
    # change of floating-point order can give identical votes either.
    ulp = np.stack([
        train_and_predict(model, np.nextafter(x, np.float32(2)).astype(np.float32), y, xq, 10, s, over)
        for (x, y), s in zip(datasets[:ns], seeds[:ns])
    ])
    agree_ulp = float((seq == ulp).mean())
    print(f"teachers: {model}, {size}±1 images, {epochs} epochs, batch 16, on {dev}:")
    print(f"  one at a time ({ns} teachers): {1 / t_seq:8.3f} teachers/s ({t_seq:.3f} s/teacher)")
    print(f"  blocks of {block} ({n_teachers} teachers): {1 / t_blk:8.3f} teachers/s ({t_blk:.3f} s/teacher)   ratio = {t_seq / t_blk:.2f}")
    print(f"  vote agreement block vs one at a time on {ns} teachers × {nq} queries: {agree:.4f}")
    print(f"  reference: one at a time vs itself with inputs moved by 1 ulp: {agree_ulp:.4f}")
    if dev.type == "cuda":
        import torch

        print(f"  peak GPU memory: {torch.cuda.max_memory_allocated(dev) / 2**30:.2f} GiB")
    image_epochs = size * epochs
    rates = {f"teacher_s_per_image_epoch:{model}:one_at_a_time": t_seq / image_epochs,
             f"teacher_s_per_image_epoch:{model}:block": t_blk / image_epochs}
    return datasets, xq, seeds, rates


def bench_determinism(dev, model, datasets, xq, seeds, block, epochs):
    from ppaudit.models.batched import train_and_predict_block
    from ppaudit.models.teachers import _params, train_and_predict

    p = _params(model, {"epochs": epochs, "device": str(dev), "deterministic": True})
    d, x, s = datasets[:block], xq, seeds[:block]
    _sync(dev)
    t = time.perf_counter()
    a = train_and_predict_block(model, d, x, 10, s, p)
    _sync(dev)
    t_det = (time.perf_counter() - t) / len(d)
    b = train_and_predict_block(model, d, x, 10, s, p)
    one = [train_and_predict(model, dd[0], dd[1], x, 10, ss, p) for dd, ss in zip(d[:2], s[:2])]
    two = [train_and_predict(model, dd[0], dd[1], x, 10, ss, p) for dd, ss in zip(d[:2], s[:2])]
    same_block = a.tobytes() == b.tobytes()
    same_one = all(u.tobytes() == v.tobytes() for u, v in zip(one, two))
    print("determinism (deterministic kernels on, same seed twice):")
    print(f"  block of {len(d)} teachers identical: {'yes' if same_block else 'no'};  one-at-a-time (2 teachers) identical: {'yes' if same_one else 'no'}")
    plain = _params(model, {"epochs": epochs, "device": str(dev)})
    _sync(dev)
    t = time.perf_counter()
    c = train_and_predict_block(model, d, x, 10, s, plain)
    _sync(dev)
    t_plain = (time.perf_counter() - t) / len(d)
    e = train_and_predict_block(model, d, x, 10, s, plain)
    print(f"  cost (block of {len(d)}): {1 / t_plain:8.3f} teachers/s without, {1 / t_det:8.3f} with (time with/without = {t_det / t_plain:.2f})")
    print(f"  without deterministic kernels, two runs identical: {'yes' if c.tobytes() == e.tobytes() else 'no'}")
    return same_block and same_one


def bench_labeldp(dev, images: int, epochs: int) -> tuple[bool, dict]:
    """Label DP at the papers' scale (issue 17 item 5): the WRN-16-4 soft-label trainer
    (ppaudit.models.soft_label) on ``images`` CIFAR-shaped uint8 images, ``epochs`` epochs,
    deterministic kernels: images/s (to size Obs. Table 1 and Malek Tables 5–6) and the same
    probabilities twice. Returns (identical, {"labeldp_images_per_s": rate})."""

    from ppaudit.models.soft_label import torch_fit_predict_soft

    rng = np.random.default_rng(0)
    x = rng.integers(0, 256, size=(images, 3, 32, 32), dtype=np.uint8)
    y = rng.integers(0, 10, images)
    model = {"arch": "wrn16-4", "epochs": epochs, "lr": 0.1, "batch_size": 128, "device": str(dev), "deterministic": True}
    t0 = time.perf_counter()
    a = torch_fit_predict_soft(x, y, [x[:512]], 10, model, seed=1)[0]
    t = time.perf_counter() - t0
    b = torch_fit_predict_soft(x, y, [x[:512]], 10, model, seed=1)[0]
    same = a.tobytes() == b.tobytes()
    print(f"label DP (WRN-16-4 on soft labels, {images} images × {epochs} epochs on {dev}): {images * epochs / t:10.4g} images/s "
          f"({t:.1f} s); same seed twice identical: {'yes' if same else 'no'}")
    return same, {"labeldp_images_per_s": images * epochs / t}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cuda", help="'cuda' (default), 'cuda:N' or 'cpu'")
    ap.add_argument("--quick", action="store_true", help="small sizes (smoke run)")
    ap.add_argument("--trials", type=float, default=None, help="MC trials (default 1e8; 1e6 with --quick)")
    ap.add_argument("--classes", type=int, default=10)
    ap.add_argument("--model", default=None, help="lenet5 or wrn16-4 (default: both)")
    ap.add_argument("--teachers", type=int, default=None, help="teachers (default 250; 8 with --quick)")
    ap.add_argument("--block", type=int, default=None, help="block size (default 250; 4 with --quick)")
    ap.add_argument("--seq-teachers", type=int, default=None, help="teachers trained one at a time for the baseline (default 10; 4 with --quick)")
    ap.add_argument("--train-size", type=int, default=None, help="images per teacher (default 240; 40 with --quick)")
    ap.add_argument("--epochs", type=int, default=None, help="epochs (default 10; 1 with --quick)")
    ap.add_argument("--queries", type=int, default=None, help="query points (default 1000; 50 with --quick)")
    ap.add_argument("--json", default=None, metavar="FILE",
                    help="also write the measured rates to FILE (JSON; the --rates input of bench/gpu_hours.py)")
    args = ap.parse_args(argv)
    import torch

    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print("no CUDA device: skipped")
        return 0
    dev = torch.device(args.device)
    device_arg = "torch-cpu" if dev.type == "cpu" else args.device
    q = args.quick
    trials = int(args.trials or (1e6 if q else 1e8))
    teachers = args.teachers or (8 if q else 250)
    block = args.block or (4 if q else 250)
    seq_teachers = args.seq_teachers or (4 if q else 10)
    size = args.train_size or (40 if q else 240)
    epochs = args.epochs or (1 if q else 10)
    nq = args.queries or (50 if q else 1000)
    print(f"torch {torch.__version__}, device {dev}" + (f" ({torch.cuda.get_device_name(dev)})" if dev.type == "cuda" else f", {torch.get_num_threads()} threads"))
    rates = bench_mc(dev, device_arg, trials, args.classes, numpy_too=dev.type == "cpu")
    ok = True
    for model in [args.model] if args.model else ["lenet5", "wrn16-4"]:
        datasets, xq, seeds, teacher_rates = bench_teachers(dev, model, teachers, block, size, epochs, nq, seq_teachers)
        rates.update(teacher_rates)
        ok &= bench_determinism(dev, model, datasets, xq, seeds, min(block, 8 if dev.type == "cpu" else 50), epochs)
    same, labeldp_rate = bench_labeldp(dev, 256 if q else 10_000, 1 if q else 2)
    ok &= same
    rates.update(labeldp_rate)
    if args.json:
        import json

        from ppaudit.io import atomic_path

        name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else f"cpu, {torch.get_num_threads()} threads"
        import datetime

        doc = {"source": f"bench/bench_gpu.py on {name}, torch {torch.__version__}" + (" (--quick sizes)" if q else ""), "rates": rates,
               "device": name, "torch": torch.__version__, "date": datetime.date.today().isoformat()}  # the table's label (bench/gpu_hours.py)
        with atomic_path(args.json) as tmp, open(tmp, "w") as fh:
            json.dump(doc, fh, indent=1, sort_keys=True)
        print(f"rates written to {args.json}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
