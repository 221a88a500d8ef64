"""`dualtape.scipy.signal`: convolve and fftconvolve (with `axes=`), differentiable in both
inputs (as autograd's convolve with SciPy's arguments)."""

from ..ops.scipy_signal import scipy_convolve as convolve  # noqa: F401
from ..ops.scipy_signal import scipy_fftconvolve as fftconvolve  # noqa: F401
