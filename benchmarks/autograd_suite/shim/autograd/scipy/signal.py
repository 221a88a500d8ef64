"""autograd.scipy.signal: autograd's convolve(A, B, axes=(axes_A, axes_B), dot_axes=..., mode) is
dualtape.scipy.signal.autograd_convolve (dualtape.scipy.signal.convolve has SciPy's signature)."""

import scipy.signal as _scipy_module

import dualtape.scipy.signal as _dualtape_module

from .fallback import first_of

convolve = getattr(_dualtape_module, "autograd_convolve", None) or _dualtape_module.convolve  # (older dualtape)


__getattr__ = first_of(_dualtape_module, _scipy_module)
