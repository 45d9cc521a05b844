"""The class probabilities Q(H) of the noisy argmax and their Jacobian (Wang et al. 2022, Thm 1)."""

from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtr, ndtri

from ..._validation import as_histograms, check_sigma

__all__ = [
    "class_probability_jacobian",
    "wang2022_trapezoid_probabilities",
]

_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
#: Half-width of the Jacobian's integration range: 2 Φ(−L) = 1e-13 (as in noisy_argmax).
_JAC_L = float(-ndtri(0.5e-13))
#: Beyond this abscissa Φ = 1 and φ = 0 in double precision.
_SATURATION = 9.0
_CHUNK_ELEMENTS = 1 << 17



# --------------------------------------------------------------------------------------
# Q and its Jacobian
# --------------------------------------------------------------------------------------


def _jacobian_grid(num_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """Trapezoid nodes and weights on ``[−L, L]`` for the Jacobian integrands.

    The integrand carries two Gaussian densities (variance 1/2 instead of 1), so the step
    is the one of :mod:`ppaudit.noisy_argmax` divided by √2: ``min(0.4, 0.33 (10/C)^¼)/√2``.
    """
    step = min(0.4, 0.33 * (10.0 / max(num_classes, 2)) ** 0.25) / math.sqrt(2.0)
    m = int(math.ceil(2.0 * _JAC_L / step)) + 1
    u, h = np.linspace(-_JAC_L, _JAC_L, m, retstep=True)
    w = np.full(m, h)
    w[0] *= 0.5
    w[-1] *= 0.5
    return u, w


def class_probability_jacobian(hist, sigma: float) -> np.ndarray:
    """Exact Jacobian ``J[c, j] = ∂Pr[c]/∂n_j`` of the noisy-argmax output distribution.

    Derivation (Wang et al. 2022, Thm 1, in the normalised variable of
    :mod:`ppaudit.noisy_argmax`): with ``d_i = (n_max − n_i)/σ ≥ 0`` and the shifted
    variable ``u``,

        Pr[c] = ∫ φ(u + d_c) ∏_{i≠c} Φ(u + d_i) du.

    Differentiating ``Φ(z + (n_c − n_j)/σ)`` in ``n_j`` gives, for ``j ≠ c``,

        ∂Pr[c]/∂n_j = −(1/σ) ∫ φ(u + d_c) φ(u + d_j) ∏_{i≠c,j} Φ(u + d_i) du =: −W_cj,

    i.e. minus the density of a tie of ``c`` and ``j`` at the top; ``W`` is symmetric. By
    the shift invariance of Wang Thm 2 the rows sum to zero, so ``∂Pr[c]/∂n_c = Σ_{j≠c} W_cj``:
    ``J = −(graph Laplacian of W)``, symmetric, with null space ``1``.

    The integral is a trapezoid rule on ``u ∈ [−L, L]`` (``2Φ(−L) = 1e-13``) with the step of
    :func:`ppaudit.noisy_argmax.class_probabilities` divided by √2; every factor
    ``Φ(u + d_i) ≥ Φ(−L)`` so the product is formed as ``∏Φ / (Φ_c Φ_j)`` without underflow
    of the divisors. Checked against central finite differences of ``class_probabilities``.

    Args:
        hist: histogram(s) ``(C,)`` or ``(N, C)``, non-negative and finite (real counts allowed).
        sigma: noise standard deviation, > 0.

    Returns:
        ``(C, C)`` or ``(N, C, C)`` array.

    Raises:
        ValueError: on a bad histogram or ``sigma``.

    Example:
        >>> J = class_probability_jacobian([30.0, 20.0, 10.0], 10.0)
        >>> bool(np.allclose(J.sum(axis=1), 0.0, atol=1e-12) and np.allclose(J, J.T))
        True
    """
    s = check_sigma(sigma)
    h, squeeze = as_histograms(hist)
    n, c = h.shape
    out = np.zeros((n, c, c))
    if c > 1:
        u, w = _jacobian_grid(c)
        m = u.size
        d = np.minimum((h.max(axis=1, keepdims=True) - h) / s, _JAC_L + _SATURATION + 1.0)
        chunk = max(1, _CHUNK_ELEMENTS // (m * c))
        eye = np.eye(c, dtype=bool)
        for a in range(0, n, chunk):
            x = u[None, :, None] + d[a : a + chunk, None, :]  # (n, m, C)
            cdf = ndtr(x)
            pdf = np.exp(-0.5 * x * x) * _INV_SQRT_2PI
            weight = cdf.prod(axis=-1) * w  # (n, m)
            ratio = pdf / cdf  # inverse Mills ratio, cdf >= Φ(−L) > 0
            tie = np.einsum("nmc,nm,nmj->ncj", ratio, weight, ratio) / s  # W_cj
            tie[:, eye] = 0.0
            block = -tie
            block[:, eye] = tie.sum(axis=2)
            out[a : a + chunk] = block
    return out[0] if squeeze else out


def wang2022_trapezoid_probabilities(hist, sigma: float, step: float = 1.0):
    """``Q(H)`` by the fixed-step trapezoid rule of Wang et al. 2022, §3.2 (torch, differentiable).

    As printed: ``[Q(H)]_k ≈ Σ_{α = H_k − 6σ}^{H_k + 6σ} ∏_{i≠k} Φ_i(α) φ_k(α)`` where ``Φ_i`` is
    the CDF of ``N(H_i, σ²)`` and ``φ_k`` the density of ``N(H_k, σ²)``. The sum runs over
    ``α = H_k + t`` with ``t`` on a grid of fixed ``step`` (in votes; the printed sum over
    ``H_k − 6σ … H_k + 6σ`` has unit step) with trapezoid weights — the grid moves with
    ``H_k``, as in the authors' automatic-differentiation code. Used only by
    :func:`reconstruct_histogram_wang2022`.

    Args:
        hist: a ``torch`` tensor ``(C,)`` (float64; may require grad) or an array.
        sigma: noise standard deviation, > 0.
        step: grid step in votes, > 0.

    Returns:
        ``torch`` tensor ``(C,)`` (not renormalised: its sum is ``1 − O(1e-9)``).
    """
    import torch

    s = check_sigma(sigma)
    if not (isinstance(step, (int, float)) and math.isfinite(step) and step > 0):
        raise ValueError(f"step must be a number > 0, got {step!r}")
    h = hist if isinstance(hist, torch.Tensor) else torch.as_tensor(np.asarray(hist, dtype=np.float64))
    c = h.shape[0]
    half = 6.0 * s
    count = int(math.floor(2.0 * half / step + 1e-9)) + 1
    t = -half + step * torch.arange(count, dtype=torch.float64)
    w = torch.full((count,), float(step), dtype=torch.float64)
    w[0] *= 0.5
    w[-1] *= 0.5
    alpha = h[:, None] + t[None, :]  # (C_k, T)
    cdf = torch.special.ndtr((alpha[:, :, None] - h[None, None, :]) / s)  # Φ_i(α): (C_k, T, C_i)
    eye = torch.eye(c, dtype=torch.bool)[:, None, :]
    cdf = torch.where(eye, torch.ones_like(cdf), cdf)
    pdf = torch.exp(-0.5 * (t / s) ** 2) * (_INV_SQRT_2PI / s)  # φ_k(H_k + t)
    return (cdf.prod(dim=-1) * (pdf * w)[None, :]).sum(dim=-1)
