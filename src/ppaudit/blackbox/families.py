"""Derived features for the pilot's classifier family on integer outputs (#36 §1, CONVENTIONS item 23).

With ``outputs="auto"`` :func:`~ppaudit.blackbox.search_mechanism` counts integer outputs and
orders the cells by likelihood ratio on half the pilot. When the outputs take more distinct values
than the pilot can order (a sparse vector's answers packed into one integer, Lyu et al. 2017,
Alg. 1: 2^10 codes), most cells are seen a few times and the ordering is noise. A classifier on
derived features pools the cells: :func:`bit_features` writes each non-negative integer as its
binary digits (one feature per bit), so a logistic regression on them is a log-linear model of
the answers — the structure of a packed answer vector. The pilot scores this family beside the
counted ones and keeps the better (selection on pilot draws only: no confidence spent).
"""

from __future__ import annotations

import numpy as np

__all__ = ["bit_features", "bits_needed", "many_values", "MANY_VALUES_FRACTION"]

#: Distinct pilot values per pilot draw from which the cells are too many to order (then the
#: bit-feature classifier is tried too): at 1/20 a cell holds ≈ 20 pilot draws on average.
MANY_VALUES_FRACTION = 0.05


def bit_features(outputs, bits: int) -> np.ndarray:
    """Binary digits 0 … ``bits − 1`` of non-negative integer outputs, plus one feature "the output
    is ≥ 2^bits" (a value above the pilot's range): an ``(n, bits + 1)`` float array.

    ``bits`` is fixed on the pilot so every batch gets the same columns.

    Raises:
        ValueError: on outputs that are not non-negative integers (naming the first bad value).
    """
    x = np.asarray(outputs)
    if x.ndim != 1 or x.dtype.kind not in "iub":
        raise ValueError(f"bit_features needs a 1-D array of integers, got shape {x.shape} dtype {x.dtype}")
    x = x.astype(np.int64)
    if x.size and x.min() < 0:
        raise ValueError(f"bit_features needs non-negative integers, got {int(x.min())}")
    b = int(bits)
    low = (x[:, None] >> np.arange(b)) & 1
    return np.column_stack([low, x >= (1 << b)]).astype(np.float64)


def bits_needed(o0: np.ndarray, o1: np.ndarray) -> int:
    """Binary digits of the largest pilot output (at least 1)."""
    return max(1, int(max(o0.max(), o1.max())).bit_length())


def many_values(o0: np.ndarray, o1: np.ndarray, n: int) -> bool:
    """True iff the pilot outputs are 1-D non-negative integers with more than
    ``MANY_VALUES_FRACTION · n`` distinct values (too many cells for the pilot to order)."""
    if o0.ndim != 1 or o1.ndim != 1 or o0.dtype.kind not in "iub" or o1.dtype.kind not in "iub":
        return False
    both = np.concatenate([o0, o1])
    if both.size == 0 or both.min() < 0 or int(both.max()) >= 2**20:
        return False
    return np.unique(both).size > MANY_VALUES_FRACTION * n
