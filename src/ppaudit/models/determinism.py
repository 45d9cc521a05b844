"""Deterministic torch kernels: the same seed gives the same votes on a GPU (issue 17, item 3).

On a GPU, cuDNN picks convolution algorithms by benchmarking (``cudnn.benchmark``) and
several of them, like cuBLAS's split-K matrix products, accumulate in an order that varies
from run to run; WRN-16-4 teachers on 3×32×32 inputs then give different votes on two runs
with the same seed. :func:`deterministic_torch` switches on

* ``torch.use_deterministic_algorithms(True)`` — deterministic implementations where they
  exist, a ``RuntimeError`` where none does (the teachers avoid those ops: the WRN's global
  average pooling is a ``mean``, not ``AdaptiveAvgPool2d``, whose CUDA backward has no
  deterministic version);
* ``torch.backends.cudnn.benchmark = False`` and ``torch.backends.cudnn.deterministic = True``
  — a fixed, deterministic cuDNN algorithm for every convolution;
* ``CUBLAS_WORKSPACE_CONFIG=:4096:8`` — a fixed cuBLAS workspace, which cuBLAS needs for
  reproducible results; cuBLAS reads it when its handle is created, so it must be in the
  environment *before* the first CUDA matrix product of the process. The function sets it
  when unset; the workflow sets it for the whole job (so it is there before CUDA starts).

Cost (``bench/bench_gpu.py`` measures it: teachers/s with and without the switch). On the
CPU the kernels these teachers use are deterministic already: two runs gave identical votes
with and without the switch, and the time ratio with/without was 1.05, 1.06 and 0.47 over
three runs on 2 shared, heavily loaded cores — no cost beyond that noise. On a GPU the fixed
cuDNN algorithms (no autotuning) and the fixed cuBLAS workspace make training slower; the
GPU figure comes from the benchmark on the GPU machine.

The switch is a context manager that restores the previous global settings, so one
library call does not change the rest of the process.

Start-up. ``torch.use_deterministic_algorithms`` imports ``torch._inductor.config`` (and with it
TorchDynamo) only to copy the flag into the compiler's config: 1.47 s of a 4.6 s teacher job in
the paper-shape test, on every job that trains. Nothing here compiles, so :func:`_set_flag` sets
the flag where the kernels read it (``torch._C._set_deterministic_algorithms``, the call
``use_deterministic_algorithms`` ends with) and goes through the public function only when the
compiler is already loaded in the process, so a caller's compiled code sees the flag as before.
"""

from __future__ import annotations

import contextlib
import os
import sys

__all__ = ["CUBLAS_WORKSPACE_CONFIG", "deterministic_torch"]

#: The cuBLAS workspace setting that makes cuBLAS reproducible (CUDA docs, "Results reproducibility").
CUBLAS_WORKSPACE_CONFIG = ":4096:8"


def _set_flag(torch, mode: bool, warn_only: bool) -> None:
    """``torch.use_deterministic_algorithms(mode, warn_only=warn_only)`` without importing the compiler."""
    if "torch._inductor.config" in sys.modules or not hasattr(torch._C, "_set_deterministic_algorithms"):
        torch.use_deterministic_algorithms(mode, warn_only=warn_only)
    else:
        torch._C._set_deterministic_algorithms(mode, warn_only=warn_only)


@contextlib.contextmanager
def deterministic_torch(enabled: bool = True):
    """Run the block with deterministic torch kernels (see the module doc); no-op when ``enabled`` is False.

    Args:
        enabled: switch the deterministic settings on inside the block.

    Raises:
        ValueError: if ``enabled`` is not a bool.

    Example:
        >>> with deterministic_torch(True):
        ...     pass
    """
    if not isinstance(enabled, bool):
        raise ValueError(f"enabled must be a bool, got {enabled!r}")
    if not enabled:
        yield
        return
    import torch

    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", CUBLAS_WORKSPACE_CONFIG)
    old = (
        torch.are_deterministic_algorithms_enabled(),
        torch.is_deterministic_algorithms_warn_only_enabled(),
        torch.backends.cudnn.benchmark,
        torch.backends.cudnn.deterministic,
    )
    _set_flag(torch, True, False)
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True
    try:
        yield
    finally:
        _set_flag(torch, old[0], old[1])
        torch.backends.cudnn.benchmark = old[2]
        torch.backends.cudnn.deterministic = old[3]
