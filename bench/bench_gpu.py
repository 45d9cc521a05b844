"""GPU benchmarks of issue 17: Monte Carlo trials/s, teachers/s, and a determinism check.

Prints, each against a baseline measured in the same run on the same device:

1. **Monte Carlo** (``ppaudit.montecarlo``, sample mode, float32 torch path): ten-class
   trials/s of :func:`noisy_argmax_counts` on a fixed histogram and of
   :func:`model_noisy_argmax_counts` on PATE's vote model (k = 250 teachers: the histograms
   are drawn on the device too), against the raw ``torch.randn`` + ``argmax`` + ``bincount``
   loop with the same chunk size; the ratio ours / raw (goal on an H100: ≥ 1e9 trials/s and
   ≥ 25 % of raw). With ``--device cpu`` it also prints the numpy engine (``device="cpu"``).
   Issue 29: PATE's and a fitted CaPC vote model, each with the tabulated sampler and with
   the per-draw samplers it replaced, interleaved in one run, as ratios to the
   fixed-histogram rate of the same engine; then one PATE audit pair (both sides sampled
   plus the Monte Carlo exact value) and where its time goes. ``--mc-only`` stops there.
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


def capc_bench_model(c: int = 10, k: int = 250, instantiations: int = 8, seed: int = 0):
    """A CaPC vote model as the workflow fits one (:func:`ppaudit.vote_models.fit_capc`): ``k``
    teachers, each ``P^i_q`` the frequencies of its ``N_g = instantiations`` votes; teacher ``i``
    votes class 0 with probability ``a_i ~ U(0.55, 1)``, else a uniform other class. With the
    defaults: 72 deterministic teachers, about 80 random single teachers and 25 groups of
    identical ones (supports of 2–7 classes)."""
    from ppaudit.vote_models import capc_vote_model, fit_capc

    rng = np.random.default_rng(seed)
    acc = rng.uniform(0.55, 1.0, k)
    votes = np.where(rng.random((instantiations, k, 1)) < acc[None, :, None], 0, rng.integers(1, c, (instantiations, k, 1)))
    canary = np.where(rng.random((1, instantiations, 1)) < 0.5, 0, 3)
    fit = fit_capc(votes, canary, c)
    return capc_vote_model(fit.P_teachers[0], fit.P1_prime[0, 0])


def _timed(fn, dev):
    _sync(dev)
    t = time.perf_counter()
    fn()
    _sync(dev)
    return time.perf_counter() - t


def bench_mc(dev, device_arg, trials, c, numpy_too, repeat=3) -> dict:
    """Prints the Monte Carlo rates; returns them (trials/s) under the keys of
    :data:`ppaudit.workflow.gpu_budget.RATE_KEYS`.

    Issue 29: the vote-model rates of PATE (k = 250) and CaPC (:func:`capc_bench_model`) with
    the tabulated sampler (:mod:`ppaudit.vote_models.tables`) and with the per-draw samplers
    it replaced (:func:`ppaudit.vote_models.tables.per_draw_samplers`: ``torch.binomial`` /
    ``Generator.multinomial`` per group, one inverse CDF per single teacher),
    interleaved with the fixed-histogram run ``repeat`` times in one run (best of each), and
    each as a ratio to the fixed-histogram rate of the same engine."""
    import torch

    from ppaudit.montecarlo import (
        DEFAULT_TORCH_CHUNK_ELEMENTS,
        model_noisy_argmax_counts,
        noisy_argmax_counts,
    )
    from ppaudit.vote_models import pate_vote_model, tables

    hist = np.linspace(250.0 / c * 2, 0.0, c)
    hist = np.round(hist * 250.0 / hist.sum())
    sigma = 40.0
    rows = DEFAULT_TORCH_CHUNK_ELEMENTS // c
    scaled = torch.as_tensor(hist / sigma, dtype=torch.float32, device=dev)
    noisy_argmax_counts(hist, sigma, min(trials, 10_000), rng=0, device=device_arg)  # warm-up
    raw_rate(dev, min(trials, rows), c, rows, scaled)
    t_raw, _ = best_of(lambda: raw_rate(dev, trials, c, rows, scaled), dev)
    p = np.full(c, 1.0 / c) * 0.5
    p[0] += 0.5
    pp = np.roll(p, 1)
    models = {"PATE k=250": pate_vote_model(p, pp, 250), "CaPC k=250": capc_bench_model(c)}
    engines = [("torch", device_arg, trials)] + ([("numpy", "cpu", min(trials, 10**7))] if numpy_too else [])
    best: dict = {}

    def run(key, fn):
        best[key] = min(best.get(key, np.inf), _timed(fn, dev))

    for m in models.values():  # build the tables outside the timings (once per model, shared by S and S')
        m._plan()
        with tables.per_draw_samplers():
            m._plan()
    for _ in range(repeat):
        for eng, d, nt in engines:
            mt = max(c, nt // 4)
            run((eng, "fixed"), lambda: noisy_argmax_counts(hist, sigma, nt, rng=1, device=d))
            for name, m in models.items():
                run((eng, name, "tables"), lambda: model_noisy_argmax_counts(m.sampler("S_prime"), c, sigma, mt, rng=2, device=d))
                with tables.per_draw_samplers():
                    run((eng, name, "per-draw"), lambda: model_noisy_argmax_counts(m.sampler("S_prime"), c, sigma, mt, rng=2, device=d))
    threads = f", {torch.get_num_threads()} torch threads" if dev.type == "cpu" else ""
    print(f"MC, C={c}, σ={sigma}, best of {repeat} interleaved runs on {dev}{threads}:")
    print(f"  raw randn+argmax+bincount (torch): {trials / t_raw:12.4g} trials/s")
    out = {"mc_raw_trials_per_s": trials / t_raw}
    for eng, d, nt in engines:
        mt = max(c, nt // 4)
        fixed = nt / best[(eng, "fixed")]
        label = f"{eng} ({d})"
        print(f"  {label:<18} fixed histogram: {fixed:12.4g} trials/s" + (f"   ratio ours/raw = {fixed / (trials / t_raw):.2f}" if eng == "torch" else ""))
        for name in models:
            new, old = mt / best[(eng, name, "tables")], mt / best[(eng, name, "per-draw")]
            print(f"  {label:<18} {name} vote model: tables {new:11.4g} trials/s = {new / fixed:.3f} of fixed;"
                  f"  per-draw (before) {old:11.4g} = {old / fixed:.3f};  speed-up {new / old:.2f}x")
        if eng == "torch":
            out.update(mc_fixed_trials_per_s=fixed, mc_model_trials_per_s=mt / best[(eng, "PATE k=250", "tables")],
                       mc_model_capc_trials_per_s=mt / best[(eng, "CaPC k=250", "tables")])
    return out


def bench_audit_pair(dev, device_arg, trials, exact_draws=20_000) -> None:
    """One PATE audit pair (k = 250, C = 10, σ = 40): both sides sampled at ``trials`` plus the
    Monte Carlo exact value from ``exact_draws`` histograms (:func:`ppaudit.audit.per_query.audit_query`),
    and where its time goes (the two samplers, the exact value, the rest: bounds)."""
    from ppaudit.audit.per_query import VoteModelSource, audit_query
    from ppaudit.montecarlo import device_scope, spawn_generators
    from ppaudit.vote_models import pate_vote_model

    c = 10
    p = np.full(c, 1.0 / c) * 0.5
    p[0] += 0.5
    model = pate_vote_model(p, np.roll(p, 1), 250)
    source = VoteModelSource(model)
    orders = np.array([2.0, 8.0, 32.0])
    with device_scope(device_arg):
        t_tab = _timed(lambda: model._plan(), dev)
        t_all = _timed(lambda: audit_query(source, 40.0, trials, orders, 0.95, rng=0, count_mode="sample",
                                           exact="average", exact_draws=exact_draws), dev)
        g = spawn_generators(1, 3)
        t_sample = _timed(lambda: source.sample_counts(40.0, trials, g[:2], None, False), dev)
        t_exact = _timed(lambda: source.mixture_rdp(40.0, exact_draws, g[2], orders), dev)
    print(f"audit pair (PATE k=250, C=10, σ=40, T={trials:.0e} per side, exact value from {exact_draws} draws) on {device_arg}: "
          f"{t_all:.2f} s; of it: both samplers {t_sample:.2f} s, Monte Carlo exact value {t_exact:.2f} s, "
          f"rest (bounds) ≈ {max(0.0, t_all - t_sample - t_exact):.2f} s; tables built once per model: {t_tab:.3f} s")


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
    ap.add_argument("--mc-only", action="store_true", help="only the Monte Carlo rates and the audit pair (no teachers, no label DP)")
    ap.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's; use 1 on a shared, oversubscribed machine, where every "
                    "parallel torch op waits for a descheduled thread: measured 10–20 ms per op on 2 cores at load 9)")
    ap.add_argument("--pair-trials", type=float, default=None, help="T per side of the audit pair (default = --trials)")
    ap.add_argument("--json", default=None, metavar="FILE",
                    help="also write the measured rates to FILE (JSON; the --rates input of bench/gpu_hours.py)")
    args = ap.parse_args(argv)
    import torch

    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print("no CUDA device: skipped")
        return 0
    if args.threads:
        torch.set_num_threads(args.threads)
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
    bench_audit_pair(dev, device_arg, int(args.pair_trials or trials))
    ok = True
    for model in [] if args.mc_only else [args.model] if args.model else ["lenet5", "wrn16-4"]:
        datasets, xq, seeds, teacher_rates = bench_teachers(dev, model, teachers, block, size, epochs, nq, seq_teachers)
        rates.update(teacher_rates)
        ok &= bench_determinism(dev, model, datasets, xq, seeds, min(block, 8 if dev.type == "cpu" else 50), epochs)
    if not args.mc_only:
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
