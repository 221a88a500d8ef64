"""`dualtape.scipy.signal`: convolve and fftconvolve (with `axes=`), differentiable in both
inputs (as autograd's convolve with SciPy's arguments), and autograd_convolve: autograd's
convolve(A, B, axes=(axes_A, axes_B), dot_axes=(dot_A, dot_B), mode)."""

from ..ops.scipy_signal import autograd_convolve  # noqa: F401
from ..ops.scipy_signal import scipy_convolve as convolve  # noqa: F401
from ..ops.scipy_signal import scipy_fftconvolve as fftconvolve  # noqa: F401
