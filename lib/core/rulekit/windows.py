"""rulekit, sliding windows of NHWC images: the window taps conv2d and pooling read
(`dualtape.ops.convolution`, `dualtape.ops.pooling`), and the winners of a max pool, whose
cotangent goes to one input element per window (TF's MaxPoolGrad: the first maximum in
row-major order within the window wins a tie)."""

import numpy as np

from ..duck import primal_of

__all__ = ["tap_index", "window_taps", "max_pool_index"]


def tap_index(p, q, rows, cols, strides, dilations=(1, 1)):
    """The (rows, cols) slices of a padded image that tap (p, q) of every window reads: output
    (i, j) reads element (i * stride + p * dilation, j * stride + q * dilation)."""
    (sh, sw), (dh, dw) = strides, dilations
    return (slice(None), slice(p * dh, p * dh + sh * (rows - 1) + 1, sh),
            slice(q * dw, q * dw + sw * (cols - 1) + 1, sw), slice(None))


def window_taps(x, ksize, strides, padding, dilations=(1, 1), fill=0):
    """The kh * kw views of the NHWC array `x` padded by `padding` ((top, bottom), (left,
    right)) with `fill`, one per window tap in row-major order, each shaped (N, Ho, Wo, C)."""
    (top, bottom), (left, right) = padding
    if top or bottom or left or right:
        x = np.pad(x, ((0, 0), (top, bottom), (left, right), (0, 0)), constant_values=fill)
    (kh, kw), (dh, dw) = ksize, dilations
    rows = (x.shape[1] - (kh - 1) * dh - 1) // strides[0] + 1
    cols = (x.shape[2] - (kw - 1) * dw - 1) // strides[1] + 1
    return [x[tap_index(p, q, rows, cols, strides, dilations)] for p in range(kh) for q in range(kw)]


def max_pool_index(x, ksize, strides, padding):
    """The fancy index (n, row, col, channel), shaped like the max pool's output, of the input
    element each window's maximum comes from: the first one in row-major order on ties, as TF.
    Padding never wins (it is -inf), so the index always names an element of `x`."""
    p = np.asarray(primal_of(x))
    low = -np.inf if p.dtype.kind in "fc" else np.iinfo(p.dtype).min
    taps = window_taps(p, ksize, strides, padding, fill=low)
    best, first = taps[0], np.zeros(taps[0].shape, np.intp)
    for k, tap in enumerate(taps[1:], start=1):
        better = tap > best  # strictly: an equal value later in the window does not win
        best, first = np.where(better, tap, best), np.where(better, k, first)
    n, rows, cols, channels = best.shape
    kw = ksize[1]
    row = np.arange(rows).reshape(1, rows, 1, 1) * strides[0] + first // kw - padding[0][0]
    col = np.arange(cols).reshape(1, 1, cols, 1) * strides[1] + first % kw - padding[1][0]
    return tuple(np.broadcast_arrays(np.arange(n).reshape(n, 1, 1, 1), row, col,
                                     np.arange(channels).reshape(1, 1, 1, channels)))
