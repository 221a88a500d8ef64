"""rulekit, sliding windows of NHWC images: the windows conv2d and pooling read
(`dualtape.ops.convolution`, `dualtape.ops.pooling`), and the winners of a max pool, whose
cotangent goes to one input element per window (TF's MaxPoolGrad: the first maximum in
row-major order within the window wins a tie)."""

import numpy as np

from ..duck import primal_of

__all__ = ["padded_windows", "max_pool_index"]


def padded_windows(x, ksize, strides, padding, dilations=(1, 1), fill=0):
    """The windows of the NHWC array `x` as a read-only view of shape (N, Ho, Wo, C, kh, kw):
    x padded by `padding` ((top, bottom), (left, right)) with `fill`, every strides-th window
    of the dilated kernel size."""
    (top, bottom), (left, right) = padding
    if top or bottom or left or right:
        x = np.pad(x, ((0, 0), (top, bottom), (left, right), (0, 0)), constant_values=fill)
    (kh, kw), (dh, dw) = ksize, dilations
    views = np.lib.stride_tricks.sliding_window_view(x, ((kh - 1) * dh + 1, (kw - 1) * dw + 1), axis=(1, 2))
    return views[:, ::strides[0], ::strides[1], :, ::dh, ::dw]


def max_pool_index(x, ksize, strides, padding):
    """The fancy index (n, row, col, channel), shaped like the max pool's output, of the input
    element each window's maximum comes from: the first one in row-major order on ties, as TF.
    Padding never wins (it is -inf), so the index always names an element of `x`."""
    p = np.asarray(primal_of(x))
    low = -np.inf if p.dtype.kind in "fc" else np.iinfo(p.dtype).min
    windows = padded_windows(p, ksize, strides, padding, fill=low)
    n, rows, cols, channels, kh, kw = windows.shape
    first = np.argmax(windows.reshape(n, rows, cols, channels, kh * kw), axis=-1)
    row = np.arange(rows).reshape(1, rows, 1, 1) * strides[0] + first // kw - padding[0][0]
    col = np.arange(cols).reshape(1, 1, cols, 1) * strides[1] + first % kw - padding[1][0]
    return tuple(np.broadcast_arrays(np.arange(n).reshape(n, 1, 1, 1), row, col,
                                     np.arange(channels).reshape(1, 1, 1, channels)))
