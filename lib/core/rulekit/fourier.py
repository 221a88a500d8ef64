"""rulekit, fourier: the pieces of the FFT ops' rules (dualtape.ops.fft).

The FFTs are linear (the real ones real-linear), so each JVP is the op itself and each VJP is
its transpose. The DFT matrix is symmetric, so the transpose of `fftn` is `fftn` with the same
`norm`; what remains is the bookkeeping these helpers name: which axes are transformed
(NumPy's defaults), the zero-padding or truncation `s=` / `n=` applies (whose transpose is the
truncation or zero-padding back), the real part for a real input, and the half spectrum of
`irfft`, whose interior bins each stand for themselves and their mirror image.
"""

import numpy as np

from .. import dnp

__all__ = ["fft_axes", "fft_lengths", "fft_resize", "fft_unresize", "half_spectrum", "real_like",
           "swap_norm"]


def fft_axes(ndim, s=None, axes=None):
    """The axes an N-D FFT transforms, as ints in [0, ndim): NumPy's rule (every axis, or the
    last len(s) ones when only `s` is given; an int is one axis)."""
    if axes is None:
        axes = range(ndim) if s is None else range(ndim - len(s), ndim)
    elif isinstance(axes, (int, np.integer)):
        axes = (axes,)
    return tuple(int(a) % ndim for a in axes)


def fft_lengths(shape, s=None, axes=None):
    """The lengths an FFT of an input of `shape` transforms along its axes: `s`, else the
    input's own lengths (the real transforms' full lengths, before halving)."""
    if s is not None:
        return tuple(int(n) for n in ((s,) if isinstance(s, (int, np.integer)) else s))
    return tuple(shape[a] for a in fft_axes(len(shape), s, axes))


def fft_resize(x, lengths, axes):
    """`x` truncated or zero-padded (at the end) along each of `axes` to `lengths`: what an
    FFT's `s=` / `n=` does to its input. Its transpose is resizing back."""
    shape = dnp.shape(x)
    index = [slice(None)] * len(shape)
    pads = [(0, 0)] * len(shape)
    for axis, n in zip(axes, lengths):
        if n < shape[axis]:
            index[axis] = slice(0, n)
        elif n > shape[axis]:
            pads[axis] = (0, n - shape[axis])
    if any(i != slice(None) for i in index):
        x = dnp.getitem(x, tuple(index))
    if any(p != (0, 0) for p in pads):
        x = dnp.pad(x, tuple(pads))
    return x


def fft_unresize(x, a, s=None, axes=None):
    """`x` resized to `a`'s lengths along the axes an FFT of `a` (with `s`, `axes`) transforms:
    the transpose of the zero-padding (truncation) `s=` applies to `a` is truncation
    (zero-padding) back."""
    transformed = fft_axes(np.ndim(a), s, axes)
    return fft_resize(x, [np.shape(a)[i] for i in transformed], transformed)


def half_spectrum(x, axis):
    """The first n // 2 + 1 bins of `x` along `axis` (n: its length there), the interior ones
    doubled: the transpose of irfft's Hermitian extension, in which each interior bin also
    stands for its mirror image, and the DC bin and (for even n) the Nyquist bin only for
    themselves (their imaginary parts are ignored)."""
    n = dnp.shape(x)[axis]
    weights = np.full(n // 2 + 1, 2.0, dtype=np.finfo(dnp.result_dtype(x)).dtype)
    weights[0] = 1.0
    if n % 2 == 0:
        weights[-1] = 1.0
    shape = [1] * dnp.ndim(x)
    shape[axis] = n // 2 + 1
    return fft_resize(x, [n // 2 + 1], [axis]) * weights.reshape(shape)


def real_like(x, a):
    """`x`, or its real part where `a` is real: the cotangent of a real input of a complex op
    (the transpose of embedding the reals in the complex numbers)."""
    return x if dnp.result_dtype(a).kind == "c" else dnp.real(x)


def swap_norm(norm):
    """The `norm` of the transform in the other direction with the same scaling ('backward'
    <-> 'forward'): np.fft.hfft is irfft with the swapped norm, ihfft rfft."""
    return {None: "forward", "backward": "forward", "forward": "backward"}.get(norm, norm)
