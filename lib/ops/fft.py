"""np.fft: the discrete Fourier transforms and fftshift, as registry ops.

Four N-D primitives carry NumPy's `s=`, `axes=` and `norm=` (FFT, IFFT, RFFT, IRFFT, named as
TF's ops); the 1-D and 2-D functions (`fft`, `rfft2`, ...) call them with one or two axes.
`hfft` and `ihfft` (1-D in NumPy) are two more, and `fftshift` / `ifftshift` two linear ops.
`fftfreq` and `rfftfreq` are constants (NumPy's own).

Every transform is linear over the reals, so its JVP is the op applied to the tangent
(LINEAR), and its VJP is its transpose: with the bilinear pairing <a, b> = Re sum(a * b),
Re sum(VJP(v) * u) == Re sum(v * JVP(u)) for complex u and v (JAX's convention; TF's
cotangents are the complex conjugates of these). The DFT matrix is symmetric, so the transpose
of `fftn(norm=k)` is `fftn(norm=k)`; the transpose of the zero-padding (truncation) that `s=`
makes is truncation (zero-padding) back; a real input's cotangent is the real part; rfft's
transpose zero-pads the half spectrum to the full one, and irfft's doubles the interior bins
of the half spectrum it returns (rulekit.fourier).
"""

import numpy as np

from ..core import dnp
from ..core.registry import LINEAR, defop
from ..core.rulekit import fft_axes, fft_lengths, fft_unresize, half_spectrum, real_like, swap_norm
from .reductions import refuse_out

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2",
           "fftn", "ifftn", "rfftn", "irfftn", "fftshift", "ifftshift"]

_NORMS = (None, "backward", "ortho", "forward")


# -- the N-D transforms: FFT, IFFT (complex to complex), RFFT (real to half spectrum), IRFFT -----

# (s without axes names the last len(s) axes: NumPy 2 deprecates leaving that implicit)

def _fftn(a, *, s=None, axes=None, norm=None):
    return np.fft.fftn(a, s, axes if s is None else fft_axes(np.ndim(a), s, axes), norm)


def _ifftn(a, *, s=None, axes=None, norm=None):
    return np.fft.ifftn(a, s, axes if s is None else fft_axes(np.ndim(a), s, axes), norm)


def _rfftn(a, *, s=None, axes=None, norm=None):
    return np.fft.rfftn(a, s, axes if s is None else fft_axes(np.ndim(a), s, axes), norm)


def _irfftn(a, *, s=None, axes=None, norm=None):
    return np.fft.irfftn(a, s, axes if s is None else fft_axes(np.ndim(a), s, axes), norm)


def fft_vjp(g, ans, a, *, s=None, axes=None, norm=None):
    # the DFT matrix is symmetric: the transpose of fftn is fftn; then the resizing s= made is undone
    return real_like(fft_unresize(dnp.fftn(g, axes=fft_axes(np.ndim(a), s, axes), norm=norm), a, s, axes), a)


def ifft_vjp(g, ans, a, *, s=None, axes=None, norm=None):
    return real_like(fft_unresize(dnp.ifftn(g, axes=fft_axes(np.ndim(a), s, axes), norm=norm), a, s, axes), a)


def rfft_vjp(g, ans, a, *, s=None, axes=None, norm=None):
    # rfftn keeps the first n // 2 + 1 bins of fftn: its transpose zero-pads them back to n
    return dnp.real(fft_unresize(dnp.fftn(g, s=fft_lengths(np.shape(a), s, axes), axes=fft_axes(np.ndim(a), s, axes),
                                          norm=norm), a, s, axes))


def irfft_vjp(g, ans, a, *, s=None, axes=None, norm=None):
    # irfftn = the Hermitian extension of the half spectrum, then ifftn: transpose each
    return real_like(fft_unresize(half_spectrum(dnp.ifftn(g, axes=fft_axes(np.ndim(a), s, axes), norm=norm),
                                                fft_axes(np.ndim(a), s, axes)[-1]), a, s, axes), a)


def _sample(shape, dtype=float, **static):
    """A sample `rng -> (args, static)`: a standard normal array of `shape` (complex: both parts)."""
    def sample(rng):
        a = rng.standard_normal(shape)
        if np.dtype(dtype).kind == "c":
            a = a + 1j * rng.standard_normal(shape)
        return (a,), dict(static)
    sample.__name__ = "sample_" + "x".join(map(str, shape)) + ("_complex" if np.dtype(dtype).kind == "c" else "") + \
        "".join(f"_{k}{v}" for k, v in static.items()).replace(" ", "")
    return sample


# `samples` are real inputs (the registry's real tests); `complex=` the complex ones (the
# complex tests). Lengths odd and even, padded and truncated (s=), every norm.

def _c2c_samples(dtype):
    return (_sample((5,), dtype), _sample((6,), dtype, norm="ortho"), _sample((4,), dtype, s=(7,)),
            _sample((8,), dtype, s=(5,), norm="forward"), _sample((3, 4), dtype, axes=(0,)),
            _sample((3, 4), dtype, s=(2, 6), axes=(1, 0), norm="ortho"), _sample((2, 3, 4), dtype),
            _sample((2, 3), dtype, axes=(-1,), norm="backward"))


def _r2c_samples():
    return (_sample((6,)), _sample((5,), norm="ortho"), _sample((4,), s=(7,)), _sample((8,), s=(5,), norm="forward"),
            _sample((3, 4), axes=(0,)), _sample((3, 5), s=(4, 3), axes=(1, 0), norm="ortho"), _sample((2, 3, 4)),
            _sample((1,)))


def _c2r_samples(dtype):
    return (_sample((4,), dtype), _sample((5,), dtype, norm="ortho"), _sample((4,), dtype, s=(7,)),
            _sample((6,), dtype, s=(4,), norm="forward"), _sample((3, 4), dtype, axes=(0,)),
            _sample((3, 4), dtype, s=(5, 3), axes=(1, 0), norm="ortho"), _sample((2, 3, 4), dtype),
            _sample((1,), dtype, s=(1,)), _sample((2,), dtype, s=(2,)), _sample((3,), dtype, s=(8,)),
            _sample((2, 3), dtype, s=(3, 9), norm="forward"))


FFT = defop("FFT", _fftn, vjp=fft_vjp, jvp=LINEAR, samples=_c2c_samples(float), complex=_c2c_samples(complex))
IFFT = defop("IFFT", _ifftn, vjp=ifft_vjp, jvp=LINEAR, samples=_c2c_samples(float), complex=_c2c_samples(complex))
RFFT = defop("RFFT", _rfftn, vjp=rfft_vjp, jvp=LINEAR, samples=_r2c_samples(), complex=_r2c_samples())  # real a only
IRFFT = defop("IRFFT", _irfftn, vjp=irfft_vjp, jvp=LINEAR, samples=_c2r_samples(float),
              complex=_c2r_samples(complex))


# -- hfft, ihfft: a Hermitian signal's real spectrum and back (NumPy's are 1-D) -------------------

def _hfft(a, *, n=None, axis=-1, norm=None):
    return np.fft.hfft(a, n, axis, norm)


def _ihfft(a, *, n=None, axis=-1, norm=None):
    return np.fft.ihfft(a, n, axis, norm)


def hfft_vjp(g, ans, a, *, n=None, axis=-1, norm=None):
    # hfft(a) = irfft(conj(a)) with the swapped norm: the transpose of irfft's, conjugated
    return real_like(dnp.conj(fft_unresize(half_spectrum(dnp.ifft(g, axis=axis, norm=swap_norm(norm)), axis),
                                           a, None, axis)), a)


def ihfft_vjp(g, ans, a, *, n=None, axis=-1, norm=None):
    # ihfft(a) = conj(rfft(a)) with the swapped norm: the transpose of rfft's of conj(g)
    return dnp.real(fft_unresize(dnp.fft(dnp.conj(g), n=fft_lengths(np.shape(a), n, axis)[0], axis=axis,
                                         norm=swap_norm(norm)), a, None, axis))


def _hfft_samples(dtype):
    return (_sample((4,), dtype), _sample((5,), dtype, norm="ortho"), _sample((4,), dtype, n=7),
            _sample((6,), dtype, n=4, norm="forward"), _sample((3, 4), dtype, axis=0),
            _sample((2,), dtype, n=2, norm="backward"), _sample((1,), dtype, n=1), _sample((3,), dtype, n=10))


_IHFFT_SAMPLES = (_sample((6,)), _sample((5,), norm="ortho"), _sample((4,), n=7), _sample((8,), n=5, norm="forward"),
                  _sample((3, 4), axis=0), _sample((1,)), _sample((2, 3), axis=-1, norm="backward"))
HFFT = defop("HFFT", _hfft, vjp=hfft_vjp, jvp=LINEAR, samples=_hfft_samples(float), complex=_hfft_samples(complex))
IHFFT = defop("IHFFT", _ihfft, vjp=ihfft_vjp, jvp=LINEAR, samples=_IHFFT_SAMPLES, complex=_IHFFT_SAMPLES)  # real a


# -- fftshift, ifftshift: rolls by half the length, each the other's transpose ---------------------

def _fftshift(x, *, axes=None):
    return np.fft.fftshift(x, axes)


def _ifftshift(x, *, axes=None):
    return np.fft.ifftshift(x, axes)


def fftshift_vjp(g, ans, x, *, axes=None):
    return dnp.ifftshift(g, axes)


def ifftshift_vjp(g, ans, x, *, axes=None):
    return dnp.fftshift(g, axes)


_SHIFT_SAMPLES = (_sample((5,)), _sample((4,)), _sample((3, 4), axes=(1,)), _sample((3, 5), axes=0),
                  _sample((2, 3, 5), axes=(0, 2)))
FFTSHIFT = defop("FFTShift", _fftshift, vjp=fftshift_vjp, jvp=LINEAR, samples=_SHIFT_SAMPLES, complex=True)
IFFTSHIFT = defop("IFFTShift", _ifftshift, vjp=ifftshift_vjp, jvp=LINEAR, samples=_SHIFT_SAMPLES, complex=True)


# -- NumPy's functions: arguments checked, naming the function, then one op -------------------

def _axis_error(api, shape, axes):
    return np.exceptions.AxisError(
        f"[{api}] axes={axes!r} is out of range for an input of shape {shape} ({len(shape)} axes). "
        f"Name axes in [-{len(shape)}, {len(shape)}), or reshape the input.")


def _check(api, a, s, axes, norm, out, *, real=False):
    """(s, axes) of an N-D transform as tuples of ints (None where not given), NumPy's errors
    with the function, the shapes and the fix otherwise."""
    refuse_out(api, out)
    if norm not in _NORMS:
        raise ValueError(f"[{api}] norm={norm!r} is not a normalization: pass 'backward' (the default: "
                         "scale the inverse by 1/n), 'ortho' (both by 1/sqrt(n)) or 'forward' (the forward by 1/n).")
    shape = tuple(dnp.shape(a))
    if real and dnp.result_dtype(a).kind == "c":
        raise TypeError(f"[{api}] transforms a real input, got {dnp.result_dtype(a)} of shape {shape}. "
                        f"Use the complex transform (np.fft.fft / fftn), or pass np.real(a).")
    if not shape:
        raise ValueError(f"[{api}] needs an input with at least one axis, got a scalar. Pass np.atleast_1d(a).")
    if axes is not None:
        items = (axes,) if isinstance(axes, (int, np.integer)) else tuple(axes)
        if not all(isinstance(i, (int, np.integer)) and -len(shape) <= i < len(shape) for i in items):
            raise _axis_error(api, shape, axes)
        if len({int(i) % len(shape) for i in items}) != len(items):
            raise ValueError(f"[{api}] axes={axes!r} names an axis twice (input of shape {shape}): NumPy would "
                             "transform it twice, which is rarely meant. Name each axis once (call the "
                             "transform again for a repeated one).")
        axes = tuple(int(i) for i in items)
    if s is not None:
        items = (s,) if isinstance(s, (int, np.integer)) else tuple(s)
        if not all(isinstance(n, (int, np.integer)) and n >= 1 for n in items):
            raise ValueError(f"[{api}] s={s!r}: every length must be an int of at least 1 (input of shape {shape}). "
                             "Pass the number of points along each transformed axis.")
        if axes is not None and len(items) != len(axes):
            raise ValueError(f"[{api}] s={s!r} and axes={axes!r} have different lengths (input of shape {shape}). "
                             "Give one length per transformed axis.")
        if axes is None and len(items) > len(shape):
            raise ValueError(f"[{api}] s={s!r} has more lengths than the input of shape {shape} has axes. "
                             "Give at most one length per axis, or pass axes=.")
        s = tuple(int(n) for n in items)
    if axes is not None and not axes:
        raise ValueError(f"[{api}] axes=() transforms no axis (input of shape {shape}). Name at least one axis.")
    return s, axes


def _check_1d(api, a, n, axis, norm, out, *, real=False):
    if n is not None and not (isinstance(n, (int, np.integer)) and n >= 1):
        raise ValueError(f"[{api}] n={n!r}: the number of points must be an int of at least 1 "
                         f"(input of shape {tuple(dnp.shape(a))}). Pass n=None for the input's length.")
    if not isinstance(axis, (int, np.integer)):
        raise TypeError(f"[{api}] axis={axis!r} must be one int (input of shape {tuple(dnp.shape(a))}); "
                        f"use the N-D transform with axes= for several.")
    return _check(api, a, None if n is None else (n,), (axis,), norm, out, real=real)


def _check_half(api, a, s, axes):
    """Refuse an inverse real transform whose default output length is 0 (a half spectrum of one bin)."""
    shape = tuple(dnp.shape(a))
    last = fft_axes(len(shape), s, axes)[-1]
    if s is None and shape[last] < 2:
        raise ValueError(f"[{api}] the default output length along axis {last} is 2 * ({shape[last]} - 1) = "
                         f"{2 * (shape[last] - 1)} for an input of shape {shape}. Pass the output length "
                         "(n= or s=).")


def fft(a, n=None, axis=-1, norm=None, out=None):
    """np.fft.fft: the DFT along one axis (zero-padded or truncated to n points)."""
    s, axes = _check_1d("fft", a, n, axis, norm, out)
    return FFT(a, s=s, axes=axes, norm=norm)


def ifft(a, n=None, axis=-1, norm=None, out=None):
    """np.fft.ifft: the inverse DFT along one axis."""
    s, axes = _check_1d("ifft", a, n, axis, norm, out)
    return IFFT(a, s=s, axes=axes, norm=norm)


def rfft(a, n=None, axis=-1, norm=None, out=None):
    """np.fft.rfft: the n // 2 + 1 non-negative frequencies of a real signal's DFT."""
    s, axes = _check_1d("rfft", a, n, axis, norm, out, real=True)
    return RFFT(a, s=s, axes=axes, norm=norm)


def irfft(a, n=None, axis=-1, norm=None, out=None):
    """np.fft.irfft: the real signal of n points (default 2 * (m - 1)) with half spectrum a."""
    s, axes = _check_1d("irfft", a, n, axis, norm, out)
    _check_half("irfft", a, s, axes)
    return IRFFT(a, s=s, axes=axes, norm=norm)


def hfft(a, n=None, axis=-1, norm=None, out=None):
    """np.fft.hfft: the real spectrum of a Hermitian signal given by its first half."""
    _check_1d("hfft", a, n, axis, norm, out)
    _check_half("hfft", a, None if n is None else (n,), (axis,))
    return HFFT(a, n=None if n is None else int(n), axis=int(axis), norm=norm)


def ihfft(a, n=None, axis=-1, norm=None, out=None):
    """np.fft.ihfft: the first half of the Hermitian signal whose spectrum is the real a."""
    _check_1d("ihfft", a, n, axis, norm, out, real=True)
    return IHFFT(a, n=None if n is None else int(n), axis=int(axis), norm=norm)


def fftn(a, s=None, axes=None, norm=None, out=None):
    """np.fft.fftn: the DFT over `axes` (every axis, or the last len(s))."""
    s, axes = _check("fftn", a, s, axes, norm, out)
    return FFT(a, s=s, axes=axes, norm=norm)


def ifftn(a, s=None, axes=None, norm=None, out=None):
    """np.fft.ifftn: the inverse DFT over `axes`."""
    s, axes = _check("ifftn", a, s, axes, norm, out)
    return IFFT(a, s=s, axes=axes, norm=norm)


def rfftn(a, s=None, axes=None, norm=None, out=None):
    """np.fft.rfftn: the DFT of a real input over `axes`, halved along the last of them."""
    s, axes = _check("rfftn", a, s, axes, norm, out, real=True)
    return RFFT(a, s=s, axes=axes, norm=norm)


def irfftn(a, s=None, axes=None, norm=None, out=None):
    """np.fft.irfftn: the real input whose rfftn is `a`."""
    s, axes = _check("irfftn", a, s, axes, norm, out)
    _check_half("irfftn", a, s, axes)
    return IRFFT(a, s=s, axes=axes, norm=norm)


def fft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """np.fft.fft2: fftn over the last two axes."""
    s, axes = _check("fft2", a, s, axes, norm, out)
    return FFT(a, s=s, axes=axes, norm=norm)


def ifft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """np.fft.ifft2: ifftn over the last two axes."""
    s, axes = _check("ifft2", a, s, axes, norm, out)
    return IFFT(a, s=s, axes=axes, norm=norm)


def rfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """np.fft.rfft2: rfftn over the last two axes."""
    s, axes = _check("rfft2", a, s, axes, norm, out, real=True)
    return RFFT(a, s=s, axes=axes, norm=norm)


def irfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """np.fft.irfft2: irfftn over the last two axes."""
    s, axes = _check("irfft2", a, s, axes, norm, out)
    _check_half("irfft2", a, s, axes)
    return IRFFT(a, s=s, axes=axes, norm=norm)


def _shift_axes(api, x, axes):
    shape = tuple(dnp.shape(x))
    if axes is None:
        return None
    items = (axes,) if isinstance(axes, (int, np.integer)) else tuple(axes)
    if not all(isinstance(i, (int, np.integer)) and -len(shape) <= i < len(shape) for i in items):
        raise _axis_error(api, shape, axes)
    return int(axes) if isinstance(axes, (int, np.integer)) else tuple(int(i) for i in items)


def fftshift(x, axes=None):
    """np.fft.fftshift: the zero frequency moved to the centre (a roll by n // 2)."""
    return FFTSHIFT(x, axes=_shift_axes("fftshift", x, axes))


def ifftshift(x, axes=None):
    """np.fft.ifftshift: fftshift undone (a roll by -(n // 2))."""
    return IFFTSHIFT(x, axes=_shift_axes("ifftshift", x, axes))


NUMPY_FFT = {getattr(np.fft, name): globals()[name] for name in __all__}
dnp.export(globals(), NUMPY_FFT)
