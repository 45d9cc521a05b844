"""Benchmarks of the Private-kNN layer (Chadha et al. 2024, §6, App. D.3).

1. Feature extraction throughput of the offline encoders (EfficientNet-Lite0 on
   Fashion-MNIST images resized to 224, all-MiniLM-L6-v2 on Rotten Tomatoes snippets):
   items per wall-clock second and per CPU second of this process (the CPU figure is the
   one to trust on a shared machine: ``cores × items/CPU-s`` ≈ uncontended throughput).
2. ``ν`` and ``E(x)`` for ``n_train = 10^4``, ``n_Q = 1000``, ``k = 200``, ``γ = 0.2``:

   * ``ν`` of every (query, training point) pair — vectorised
     :func:`ppaudit.mechanisms.private_knn.log_inclusion_probability` on the full ``(n_Q, n)`` rank matrix
     against a naive loop of scalar ``scipy.stats.binom.cdf`` calls (timed on a slice,
     extrapolated);
   * ``E(x)`` of every training point (:func:`ppaudit.mechanisms.private_knn.expected_inclusions_train`, one
     ``bincount`` over the ``J`` nearest neighbours) and of 10^4 outside points
     (:func:`~ppaudit.mechanisms.private_knn.expected_inclusions_points`) against a naive loop over points
     (rank by counting, then the paper's sum);

   each printed as a ratio naive / vectorised, with the largest difference between the two.

Run: ``.venv/bin/python bench/bench_knn.py`` (``--quick`` for smaller sizes, ``--no-encoders``
to skip part 1).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from scipy.stats import binom

from ppaudit.mechanisms import private_knn as knn


class Timer:
    def __enter__(self):
        self.wall = time.perf_counter()
        self.cpu = time.process_time()
        return self

    def __exit__(self, *exc):
        self.wall = time.perf_counter() - self.wall
        self.cpu = time.process_time() - self.cpu


def bench_encoders(n_images: int, n_sentences: int, threads: int) -> None:
    import torch

    from ppaudit.data import load_dataset
    from ppaudit.data import load_rotten_tomatoes
    from ppaudit.models.encoders import get_encoder

    torch.set_num_threads(threads)
    print(f"== feature extraction (torch threads = {threads}, device = {'cuda' if torch.cuda.is_available() else 'cpu'})")
    x = load_dataset("fashion-mnist", source="packaged")[0][:n_images]
    texts = load_rotten_tomatoes("full", deduplicate=True)[0][:n_sentences]
    for name, data, unit in (("efficientnet-lite0", x, "images"), ("all-minilm-l6-v2", texts, "sentences")):
        enc = get_encoder(name)
        with Timer() as t_load:
            enc.load()
        enc.encode(data[:4])  # warm-up
        with Timer() as t:
            feats = enc.encode(data)
        print(f"{name:>20}: {len(data)} {unit} -> {feats.shape[1]}-d in {t.wall:.1f} s wall / {t.cpu:.1f} s CPU: "
              f"{len(data) / t.wall:.1f} {unit}/s wall, {len(data) / t.cpu:.1f} {unit}/CPU-s "
              f"(≈ {threads * len(data) / t.cpu:.0f} {unit}/s on {threads} free cores); load {t_load.wall:.1f} s")


def naive_nu(rank: int, k: int, gamma: float) -> float:
    """§6 formula, one scalar scipy call per (query, point)."""
    return gamma if rank <= k else gamma * float(binom.cdf(k - 1, rank - 1, gamma))


def bench_nu_and_e(n_train: int, n_queries: int, n_points: int, k: int, gamma: float, naive_queries: int) -> None:
    rng = np.random.default_rng(0)
    d, c = 64, 10
    centers = rng.normal(size=(c, d)) * 2
    ytr = rng.integers(0, c, n_train)
    xtr = (centers[ytr] + rng.normal(size=(n_train, d))).astype(np.float32)
    xq = (centers[rng.integers(0, c, n_queries)] + rng.normal(size=(n_queries, d))).astype(np.float32)
    pts = (centers[rng.integers(0, c, n_points)] + rng.normal(size=(n_points, d))).astype(np.float32)
    print(f"\n== nu and E(x): n_train = {n_train}, n_Q = {n_queries}, outside points = {n_points}, k = {k}, gamma = {gamma}")

    with Timer() as t_ranks:
        ranks = knn.training_ranks(xtr, xq)
    with Timer() as t_nu:
        nu = np.exp(knn.log_inclusion_probability(ranks, k, gamma))
    nq_naive = min(naive_queries, n_queries)
    with Timer() as t_naive:
        nu_naive = np.array([[naive_nu(int(r), k, gamma) for r in row] for row in ranks[:nq_naive]])
    per_pair_vec = t_nu.wall / ranks.size
    per_pair_naive = t_naive.wall / nu_naive.size
    print(f"nu for all {ranks.size:.0e} pairs: vectorised {t_nu.wall:.2f} s wall / {t_nu.cpu:.2f} s CPU (ranks: {t_ranks.wall:.2f} s); "
          f"naive loop {t_naive.wall:.2f} s for {nu_naive.size:.0e} pairs -> {per_pair_naive * ranks.size:.0f} s extrapolated; "
          f"ratio naive/vectorised = {per_pair_naive / per_pair_vec:.0f}x (CPU: {t_naive.cpu / nu_naive.size / (t_nu.cpu / ranks.size):.0f}x); "
          f"max |diff| = {np.abs(nu[:nq_naive] - nu_naive).max():.1e}")

    j = knn.num_neighbors_needed(n_train, k, gamma)
    with Timer() as t_nn:
        nb = knn.nearest_neighbors(xtr, xq, j)
    with Timer() as t_e:
        e_train = knn.expected_inclusions_train(nb, k, gamma, duplicate=False)
    e_ref = nu.sum(axis=0)
    print(f"E(x) of all {n_train} training points: J = {j} neighbours (faiss + float64 re-sort {t_nn.wall:.2f} s), "
          f"bincount {t_e.wall:.3f} s vs the full nu matrix {t_ranks.wall + t_nu.wall:.2f} s; max |diff| = {np.abs(e_train - e_ref).max():.1e}")

    with Timer() as t_pts:
        e_pts = knn.expected_inclusions_points(nb, xq, pts, k, gamma)
    n_naive_pts = max(1, min(n_points, 20))
    with Timer() as t_pts_naive:
        ref = []
        for p in pts[:n_naive_pts]:
            dx = knn.squared_distances(xq, xtr)
            dp = knn.squared_distances(xq, p[None])[:, 0]
            r = 1 + (dx <= dp[:, None]).sum(axis=1)
            ref.append(sum(naive_nu(int(rr), k, gamma) for rr in r))
    per_pt_naive = t_pts_naive.wall / n_naive_pts
    print(f"E(x) of {n_points} outside points: vectorised {t_pts.wall:.2f} s wall / {t_pts.cpu:.2f} s CPU; naive loop "
          f"{per_pt_naive:.3f} s/point -> {per_pt_naive * n_points:.0f} s extrapolated; ratio = {per_pt_naive * n_points / t_pts.wall:.0f}x "
          f"(CPU: {t_pts_naive.cpu / n_naive_pts * n_points / t_pts.cpu:.0f}x); "
          f"max |diff| = {np.abs(e_pts[:n_naive_pts] - np.array(ref)).max():.1e}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--no-encoders", action="store_true")
    ap.add_argument("--threads", type=int, default=min(2, os.cpu_count() or 1))
    args = ap.parse_args()
    if not args.no_encoders:
        bench_encoders(32 if args.quick else 128, 128 if args.quick else 1024, args.threads)
    if args.quick:
        bench_nu_and_e(2000, 200, 2000, 200, 0.2, 2)
    else:
        bench_nu_and_e(10_000, 1000, 10_000, 200, 0.2, 3)


if __name__ == "__main__":
    main()
