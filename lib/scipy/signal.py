"""`dualtape.scipy.signal`: convolve, differentiable in both inputs (as autograd's)."""

from ..ops.scipy_signal import scipy_convolve as convolve  # noqa: F401
