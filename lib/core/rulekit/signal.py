"""Rule helper of scipy.signal.convolve / fftconvolve (dualtape.ops.scipy_signal): the
cotangent of a 'valid' or 'same' convolution embedded in the 'full' one, whose adjoint is a
'valid' convolution with the flipped other input (along the convolved axes)."""

import numpy as np

from .. import dnp

__all__ = ["conv_full_cotangent"]


def conv_full_cotangent(g, shape1, shape2, mode, axes=None):
    """g (the cotangent of convolve(in1, in2, mode, axes)) zero-padded to the 'full' output's
    shape along the convolved axes (all of them for axes=None; the others are not padded)."""
    if mode == "full":
        return g
    n = len(shape1)
    convolved = range(n) if axes is None else {int(a) % n for a in (axes if isinstance(axes, (list, tuple))
                                                                     else [axes])}  # (as the user wrote them)
    pads = []
    for i, (s1, s2, out) in enumerate(zip(shape1, shape2, np.shape(g))):
        if i not in convolved:
            pads.append((0, 0))
            continue
        full = s1 + s2 - 1
        start = min(s1, s2) - 1 if mode == "valid" else (full - out) // 2
        pads.append((start, full - start - out))
    return dnp.pad(g, pads)
