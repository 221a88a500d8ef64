"""`dualtape.signal`: TF's Fourier transforms over the innermost axes, on the FFT ops.

`tf.signal.fft(x)` is `np.fft.fft(x)` on the last axis (fft2d: the last two, fft3d: three),
and needs a complex input as TF's; `rfft(x, fft_length)` pads or crops the real input to
`fft_length` as NumPy's `n=` / `s=`. All are TF's "backward" normalization (the inverse
scaled by 1/n). Gradients follow TF's convention on the tape (dualtape.ops.fft).

>>> import dualtape as tf
>>> tf.signal.irfft(tf.signal.rfft(tf.constant([1.0, 2.0, 3.0, 4.0]))).numpy()
array([1., 2., 3., 4.], dtype=float32)
"""

from ..core import dnp as _dnp
from ..reverse.tensor import Tensor as _Tensor
from .tf_ops import output_tensor as _output_tensor, to_tensor as _to_tensor

__all__ = ["fft", "ifft", "fft2d", "ifft2d", "fft3d", "ifft3d", "rfft", "irfft", "rfft2d", "irfft2d", "rfft3d",
           "irfft3d", "fftshift", "ifftshift"]


def _complex(api, x):
    x = _to_tensor(x)
    dtype = _dnp.result_dtype(x)
    if dtype.kind != "c":
        raise TypeError(f"[tf.signal.{api}] needs a complex64 or complex128 input, as TF's, got {dtype} of shape "
                        f"{tuple(x.shape)}. Cast it first: tf.cast(x, tf.complex64).")
    return x


def _real(api, x):
    x = _to_tensor(x)
    dtype = _dnp.result_dtype(x)
    if dtype.kind != "f":
        raise TypeError(f"[tf.signal.{api}] needs a float32 or float64 input, as TF's, got {dtype} of shape "
                        f"{tuple(x.shape)}. Use tf.signal.fft for complex inputs, or tf.math.real(x).")
    return x


def _lengths(api, fft_length, rank, x):
    """`fft_length` (None, or `rank` ints) as a tuple of ints, or a ValueError naming the fix."""
    if fft_length is None:
        return None
    if isinstance(fft_length, _Tensor):
        fft_length = fft_length.numpy()
    lengths = tuple(int(n) for n in (fft_length if hasattr(fft_length, "__len__") else [fft_length]))
    if len(lengths) != rank:
        raise ValueError(f"[tf.signal.{api}] fft_length must hold {rank} length(s), one per transformed innermost "
                         f"axis, got {fft_length!r} for an input of shape {tuple(x.shape)}.")
    return lengths


def _innermost(api, x, rank):
    if len(x.shape) < rank:
        raise ValueError(f"[tf.signal.{api}] transforms the innermost {rank} axes, but the input has shape "
                         f"{tuple(x.shape)}. Add axes first (x[None]).")
    return tuple(range(-rank, 0))


def fft(input, name=None):  # noqa: A002  (TF's name)
    """The DFT over the innermost axis of a complex tensor (TF's FFT)."""
    x = _complex("fft", input)
    return _output_tensor(_dnp.fftn(x, axes=_innermost("fft", x, 1)))


def ifft(input, name=None):  # noqa: A002
    """The inverse DFT over the innermost axis (TF's IFFT)."""
    x = _complex("ifft", input)
    return _output_tensor(_dnp.ifftn(x, axes=_innermost("ifft", x, 1)))


def fft2d(input, name=None):  # noqa: A002
    """The DFT over the innermost two axes (TF's FFT2D)."""
    x = _complex("fft2d", input)
    return _output_tensor(_dnp.fftn(x, axes=_innermost("fft2d", x, 2)))


def ifft2d(input, name=None):  # noqa: A002
    """The inverse DFT over the innermost two axes (TF's IFFT2D)."""
    x = _complex("ifft2d", input)
    return _output_tensor(_dnp.ifftn(x, axes=_innermost("ifft2d", x, 2)))


def fft3d(input, name=None):  # noqa: A002
    """The DFT over the innermost three axes (TF's FFT3D)."""
    x = _complex("fft3d", input)
    return _output_tensor(_dnp.fftn(x, axes=_innermost("fft3d", x, 3)))


def ifft3d(input, name=None):  # noqa: A002
    """The inverse DFT over the innermost three axes (TF's IFFT3D)."""
    x = _complex("ifft3d", input)
    return _output_tensor(_dnp.ifftn(x, axes=_innermost("ifft3d", x, 3)))


def _rfftn(api, input_tensor, fft_length, rank):
    x = _real(api, input_tensor)
    axes = _innermost(api, x, rank)
    return _output_tensor(_dnp.rfftn(x, s=_lengths(api, fft_length, rank, x), axes=axes))


def _irfftn(api, input_tensor, fft_length, rank):
    x = _complex(api, input_tensor)
    axes = _innermost(api, x, rank)
    return _output_tensor(_dnp.irfftn(x, s=_lengths(api, fft_length, rank, x), axes=axes))


def rfft(input_tensor, fft_length=None, name=None):
    """The fft_length // 2 + 1 non-negative frequencies of a real signal's DFT over its
    innermost axis, padded or cropped to fft_length (TF's RFFT)."""
    return _rfftn("rfft", input_tensor, fft_length, 1)


def irfft(input_tensor, fft_length=None, name=None):
    """The real signal of fft_length points (default 2 * (n - 1)) whose half spectrum over the
    innermost axis is the input (TF's IRFFT)."""
    return _irfftn("irfft", input_tensor, fft_length, 1)


def rfft2d(input_tensor, fft_length=None, name=None):
    """rfft over the innermost two axes (TF's RFFT2D)."""
    return _rfftn("rfft2d", input_tensor, fft_length, 2)


def irfft2d(input_tensor, fft_length=None, name=None):
    """irfft over the innermost two axes (TF's IRFFT2D)."""
    return _irfftn("irfft2d", input_tensor, fft_length, 2)


def rfft3d(input_tensor, fft_length=None, name=None):
    """rfft over the innermost three axes (TF's RFFT3D)."""
    return _rfftn("rfft3d", input_tensor, fft_length, 3)


def irfft3d(input_tensor, fft_length=None, name=None):
    """irfft over the innermost three axes (TF's IRFFT3D)."""
    return _irfftn("irfft3d", input_tensor, fft_length, 3)


def fftshift(x, axes=None, name=None):
    """The zero frequency moved to the centre (TF's tf.signal.fftshift)."""
    return _output_tensor(_dnp.fftshift(_to_tensor(x), axes))


def ifftshift(x, axes=None, name=None):
    """fftshift undone (TF's tf.signal.ifftshift)."""
    return _output_tensor(_dnp.ifftshift(_to_tensor(x), axes))
