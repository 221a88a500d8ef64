"""Rule helper of scipy.signal.convolve (dualtape.ops.scipy_signal): the cotangent of a
'valid' or 'same' convolution embedded in the 'full' one, whose adjoint is a 'valid'
convolution with the flipped other input."""

import numpy as np

from . import dnp

__all__ = ["conv_full_cotangent"]


def conv_full_cotangent(g, shape1, shape2, mode):
    """g (the cotangent of convolve(in1, in2, mode)) zero-padded to the 'full' output's shape."""
    if mode == "full":
        return g
    pads = []
    for s1, s2, out in zip(shape1, shape2, np.shape(g)):
        full = s1 + s2 - 1
        start = min(s1, s2) - 1 if mode == "valid" else (full - out) // 2
        pads.append((start, full - start - out))
    return dnp.pad(g, pads)
