"""Goodness of fit for the sampler tests: a chi-square p-value of sampled counts against an exact law."""

import numpy as np
from scipy.stats import chisquare


def gof_pvalue(counts, p) -> float:
    """Chi-square p-value of ``counts`` against probabilities ``p`` (classes of expected count < 5 pooled)."""
    counts = np.asarray(counts, dtype=np.float64)
    exp = p * counts.sum()
    big = exp >= 5
    obs = np.append(counts[big], counts[~big].sum())
    ex = np.append(exp[big], exp[~big].sum())
    if ex[-1] == 0:
        obs, ex = obs[:-1], ex[:-1]
    return chisquare(obs, ex * obs.sum() / ex.sum()).pvalue
