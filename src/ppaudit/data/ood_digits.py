"""Out-of-domain digits drawn as MNIST draws its digits: printed digits in the font faces that
matplotlib ships, and the frame every out-of-domain digit set of the MNIST stand-in goes through.

The observational paper's LP-1ST (out-of-domain prior) takes its prior from "the top-k
predictions from a pretrained model ... out-of-domain" (§6.1; Ghazi et al. 2021): a model that
never saw the private data set. The embedded default's image stand-in is MNIST, and the model of
its out-of-domain prior (:func:`ppaudit.experiments.labeldp.data.ood_digit_prior`) is trained on
two other collections of the same ten digits, both shipped inside installed packages:

* :func:`printed_digits`: the digits 0–9 typeset in the 21 text faces of matplotlib's
  ``mpl-data/fonts/ttf`` (DejaVu Sans / Sans Mono / Serif, STIX General, each in four styles; five
  Computer Modern faces), each drawn ``per_glyph`` times with a random affine map (rotation, shear,
  anisotropic scale), a random stroke width (grey dilation or erosion) and a smooth random
  (elastic) displacement — printed digits made to vary as handwriting does;
* UCI's optical digits (:func:`ppaudit.experiments.labeldp.data.optdigits_in_mnist_frame`).

:func:`mnist_frame` puts any set of digit images into MNIST's frame (LeCun et al. 1998: the
digit's bounding box scaled to fit a 20 × 20 box, aspect ratio kept, anti-aliased, then placed
in a 28 × 28 field with its centre of mass at the centre). Everything is batched torch on the
CPU (sampling grids built as one matrix product, then ``grid_sample``; deterministic): 12,600
digits take 2–3 s on one core. The same ``rng`` gives the same bytes.
"""

from __future__ import annotations

import os

import numpy as np

__all__ = ["FONT_FACES", "mnist_frame", "printed_digits", "render_glyphs"]

#: The font files of matplotlib's ``mpl-data/fonts/ttf`` whose digits are drawn (text faces only:
#: no symbol or math-italic face, whose digits are old-style figures or absent).
FONT_FACES = (
    "DejaVuSans.ttf", "DejaVuSans-Bold.ttf", "DejaVuSans-Oblique.ttf", "DejaVuSans-BoldOblique.ttf",
    "DejaVuSansMono.ttf", "DejaVuSansMono-Bold.ttf", "DejaVuSansMono-Oblique.ttf", "DejaVuSansMono-BoldOblique.ttf",
    "DejaVuSerif.ttf", "DejaVuSerif-Bold.ttf", "DejaVuSerif-Italic.ttf", "DejaVuSerif-BoldItalic.ttf",
    "STIXGeneral.ttf", "STIXGeneralBol.ttf", "STIXGeneralItalic.ttf", "STIXGeneralBolIta.ttf",
    "cmr10.ttf", "cmb10.ttf", "cmss10.ttf", "cmti10.ttf", "cmtt10.ttf",
)
#: Side of the canvas a glyph is rendered and distorted on (pixels); the glyph is about 36 px tall.
CANVAS = 64
#: Ranges of the random distortions: rotation (degrees), shear, scale per axis, stroke width
#: (pixels of grey dilation > 0 / erosion < 0 on the canvas), elastic displacement (pixels).
ROTATION, SHEAR, SCALE, STROKE, ELASTIC = 15.0, 0.3, (0.75, 1.15), (-2, 4), 6.0


def _font_dir() -> str:
    import matplotlib

    return os.path.join(os.path.dirname(matplotlib.__file__), "mpl-data", "fonts", "ttf")


def render_glyphs(size: int = 48) -> tuple[np.ndarray, np.ndarray]:
    """The digits 0–9 in every face of :data:`FONT_FACES`, white on black, centred on a
    :data:`CANVAS` × :data:`CANVAS` canvas.

    Returns:
        ``(glyphs (21 · 10, CANVAS, CANVAS) float32 in [0, 1], labels (210,) int64)``.

    Raises:
        FileNotFoundError: a face is missing from matplotlib's font folder (naming it).
    """
    from PIL import Image, ImageDraw, ImageFont

    folder = _font_dir()
    glyphs, labels = [], []
    for face in FONT_FACES:
        path = os.path.join(folder, face)
        if not os.path.exists(path):
            raise FileNotFoundError(f"font face {face!r} is not in matplotlib's font folder {folder}")
        font = ImageFont.truetype(path, size)
        for digit in range(10):
            left, top, right, bottom = font.getbbox(str(digit))
            im = Image.new("L", (CANVAS, CANVAS), 0)
            ImageDraw.Draw(im).text(((CANVAS - (right - left)) / 2 - left, (CANVAS - (bottom - top)) / 2 - top), str(digit), fill=255, font=font)
            glyphs.append(np.asarray(im, dtype=np.float32) / 255.0)
            labels.append(digit)
    return np.stack(glyphs), np.asarray(labels, dtype=np.int64)


def _sampling_grid(theta, size: tuple[int, int]):
    """``affine_grid(theta, (m, 1, *size), align_corners=False)`` as one matrix product."""
    import torch

    h, w = size
    ys = (2 * torch.arange(h, dtype=torch.float32) + 1) / h - 1
    xs = (2 * torch.arange(w, dtype=torch.float32) + 1) / w - 1
    base = torch.stack([xs.repeat(h), ys.repeat_interleave(w), torch.ones(h * w)], dim=1)  # (h·w, 3): x, y, 1
    return (base @ theta.transpose(1, 2)).view(theta.shape[0], h, w, 2)


def _bilinear_matrix(n_out: int, n_in: int):
    """``(n_out, n_in)`` matrix of bilinear interpolation with aligned corners."""
    import torch

    pos = torch.linspace(0, n_in - 1, n_out)
    lo = pos.floor().clamp(max=n_in - 2).long()
    frac = pos - lo
    m = torch.zeros(n_out, n_in)
    m[torch.arange(n_out), lo] = 1 - frac
    m[torch.arange(n_out), lo + 1] += frac
    return m


def mnist_frame(images, threshold: float = 0.05, supersample: int = 2) -> np.ndarray:
    """Digit images in MNIST's frame (module doc): bounding box (pixels above ``threshold``)
    scaled to fit 20 × 20 with its aspect ratio (bilinear, anti-aliased by sampling
    ``supersample`` × ``supersample`` points per output pixel and averaging), in a 28 × 28 field whose centre of
    mass is at pixel index (14, 14), as MNIST's (measured on its training images: 13.99, 14.03).

    Args:
        images: ``(n, h, w)`` grey images in [0, 1], white digit on black.
        threshold: intensity that counts as ink for the bounding box.
        supersample: samples per output pixel and axis (1: plain bilinear).

    Returns:
        ``(n, 28, 28)`` float32 in [0, 1]; an image without ink stays black.
    """
    import torch
    import torch.nn.functional as F

    x = torch.as_tensor(np.asarray(images, dtype=np.float32))
    if x.ndim != 3:
        raise ValueError(f"images must be (n, height, width), got shape {tuple(x.shape)}")
    n, h, w = x.shape
    if n == 0:
        return np.zeros((0, 28, 28), dtype=np.float32)
    ss = int(supersample)
    if ss < 1:
        raise ValueError(f"supersample must be >= 1, got {supersample}")
    x = x[:, None]
    ink = x[:, 0] > threshold
    rows, cols = ink.any(2), ink.any(1)
    empty = ~rows.any(1)
    y0, y1 = _first_index(rows), _last_index(rows)
    x0, x1 = _first_index(cols), _last_index(cols)
    scale = 20.0 / torch.maximum(y1 - y0 + 1, x1 - x0 + 1).float()  # output pixels per input pixel
    cy, cx = (y0 + y1 + 1).float() / 2, (x0 + x1 + 1).float() / 2  # box centre, pixel-edge coordinates
    theta = torch.zeros(n, 2, 3)
    theta[:, 0, 0] = 28.0 / (scale * w)
    theta[:, 0, 2] = 2 * cx / w - 1
    theta[:, 1, 1] = 28.0 / (scale * h)
    theta[:, 1, 2] = 2 * cy / h - 1
    out = F.grid_sample(x, _sampling_grid(theta, (28 * ss, 28 * ss)), mode="bilinear", padding_mode="zeros", align_corners=False)
    if ss > 1:
        out = F.avg_pool2d(out, ss)
    # centre of mass (pixel-edge coordinates: index i is the interval [i, i + 1)) to 14.5 = index 14
    mass = out.sum(dim=(1, 2, 3)).clamp_min(1e-12)
    grid = torch.arange(28, dtype=torch.float32) + 0.5
    my = (out[:, 0].sum(2) * grid).sum(1) / mass
    mx = (out[:, 0].sum(1) * grid).sum(1) / mass
    shift = torch.zeros(n, 2, 3)
    shift[:, 0, 0] = shift[:, 1, 1] = 1.0
    shift[:, 0, 2] = 2 * (mx - 14.5) / 28
    shift[:, 1, 2] = 2 * (my - 14.5) / 28
    out = F.grid_sample(out, _sampling_grid(shift, (28, 28)), mode="bilinear", padding_mode="zeros", align_corners=False)
    out = out[:, 0].clamp(0.0, 1.0)
    out[empty] = 0.0
    return out.numpy()


def _first_index(mask):
    """Index of the first ``True`` along axis 1 of a 2-D boolean tensor (0 where none)."""
    return mask.float().argmax(1)


def _last_index(mask):
    """Index of the last ``True`` along axis 1 of a 2-D boolean tensor (0 where none)."""
    return (mask.shape[1] - 1 - mask.flip(1).float().argmax(1)) * mask.any(1)


def _stroke_bank(glyphs):
    """Every glyph at every stroke width of :data:`STROKE`: ``(widths, glyphs, 1, CANVAS, CANVAS)``
    (grey erosion by ``-k`` pixels for ``k < 0``, dilation by ``k`` for ``k > 0``)."""
    import torch
    import torch.nn.functional as F

    x = torch.as_tensor(glyphs)[:, None]
    bank = []
    for k in range(STROKE[0], STROKE[1] + 1):
        e = abs(k)
        pad = (e // 2, e - e // 2, e // 2, e - e // 2)
        if k > 0:
            bank.append(F.max_pool2d(F.pad(x, pad), e + 1, stride=1))
        elif k < 0:
            bank.append(-F.max_pool2d(F.pad(-x, pad, value=-1.0), e + 1, stride=1))
        else:
            bank.append(x)
    return torch.stack(bank)


def printed_digits(per_glyph: int, rng: np.random.Generator, chunk: int = 2048) -> tuple[np.ndarray, np.ndarray]:
    """``per_glyph`` distorted copies of every glyph of :func:`render_glyphs`, in MNIST's frame.

    Each copy draws (from ``rng``, each quantity for all copies at once, in this order): a
    rotation in ±15°, a shear in ±0.3, a scale per axis in [0.75, 1.15], a stroke width change
    in {−2, …, 4} pixels of the 64-px canvas (grey erosion below 0, dilation above; applied to
    the glyph first), and an elastic displacement: a 6 × 6 field of uniform vectors in ±6 px,
    upsampled bilinearly to the canvas and added to the affine map's sampling grid (one
    bilinear resampling per copy). Copies whose ink vanished are dropped.

    Args:
        per_glyph: copies per (face, digit) ≥ 1.
        rng: numpy Generator (the job's).
        chunk: copies distorted at once (bounds the memory: ``chunk`` × 64 × 64 floats a step).

    Returns:
        ``(images (n, 28, 28) float32 in [0, 1], labels (n,) int64)``, n ≤ 210 · per_glyph,
        in (copy, face, digit) order.
    """
    import torch
    import torch.nn.functional as F

    per_glyph = int(per_glyph)
    if per_glyph < 1:
        raise ValueError(f"per_glyph must be >= 1, got {per_glyph}")
    glyphs, labels = render_glyphs()
    g = len(glyphs)
    n = g * per_glyph
    base = np.tile(np.arange(g), per_glyph)
    angle = np.deg2rad(rng.uniform(-ROTATION, ROTATION, n))
    shear = rng.uniform(-SHEAR, SHEAR, n)
    sx, sy = rng.uniform(*SCALE, n), rng.uniform(*SCALE, n)
    stroke = rng.integers(STROKE[0], STROKE[1] + 1, n)
    field = rng.uniform(-ELASTIC, ELASTIC, (n, 2, 6, 6)).astype(np.float32)
    # output → input map of the sampling grid (normalised coordinates): (R · Sh · S)⁻¹
    cos, sin = np.cos(angle), np.sin(angle)
    fwd = np.empty((n, 2, 2))
    fwd[:, 0, 0], fwd[:, 0, 1] = cos * sx, (cos * shear - sin) * sy
    fwd[:, 1, 0], fwd[:, 1, 1] = sin * sx, (sin * shear + cos) * sy
    theta = torch.zeros(n, 2, 3)
    theta[:, :, :2] = torch.as_tensor(np.linalg.inv(fwd), dtype=torch.float32)
    bank = _stroke_bank(glyphs).reshape(-1, 1, CANVAS, CANVAS)
    source = torch.as_tensor((stroke - STROKE[0]) * g + base)
    up = _bilinear_matrix(CANVAS, 6)
    out = np.empty((n, 28, 28), dtype=np.float32)
    for a in range(0, n, chunk):
        sl = slice(a, min(a + chunk, n))
        disp = up @ torch.as_tensor(field[sl]) @ up.T  # (m, 2, CANVAS, CANVAS) pixels
        grid = _sampling_grid(theta[sl], (CANVAS, CANVAS)) + disp.permute(0, 2, 3, 1) * (2.0 / CANVAS)
        x = F.grid_sample(bank[source[sl]], grid, mode="bilinear", padding_mode="zeros", align_corners=False)
        out[sl] = mnist_frame(x[:, 0].numpy())
    keep = out.reshape(n, -1).max(1) > 0.2
    return out[keep], labels[base][keep]
